"""LETOR fold layouts: ``Fold1..FoldK/{train,vali,test}.txt`` or parts ``S1..Sk.txt``.

LETOR 4.0 ships five parts and builds its folds by rotation (``readme.txt``)::

    Fold1: train S1, S2, S3   vali S4   test S5
    Fold2: train S2, S3, S4   vali S5   test S1
    ...
    Fold5: train S5, S1, S2   vali S3   test S4

Concatenating the train parts in that order reproduces the official
``FoldK/train.txt`` row for row.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import NamedTuple, Sequence

from .dataset import RankingData
from .letor import load_letor

__all__ = ["Layout", "letor_layout", "load_letor_folds", "load_letor_parts", "folds_from_parts"]

PathLike = str | os.PathLike
Fold = tuple[RankingData, RankingData, RankingData]
_SPLITS = ("train", "vali", "test")


class Layout(NamedTuple):
    """Files of a LETOR folder: ``kind`` is ``"folds"`` (``files`` holds one
    ``(train, vali, test)`` triple per fold) or ``"parts"`` (one ``(part,)`` per part)."""

    kind: str
    files: list[tuple[Path, ...]]


def _numbered(root: Path, pattern: str, want_dir: bool) -> list[tuple[int, Path]]:
    rx = re.compile(pattern)
    found = []
    for entry in root.iterdir():
        m = rx.fullmatch(entry.name)
        if m and entry.is_dir() == want_dir:
            found.append((int(m.group(1)), entry))
    return sorted(found)


def letor_layout(root: PathLike) -> Layout:
    """Recognise a fold folder (``Fold1..``) or a parts folder (``S1.txt..``).

    Raises ``FileNotFoundError`` when ``root`` is absent or a fold lacks a
    split file, ``ValueError`` when the folder has neither layout.
    """
    r = Path(root)
    if not r.is_dir():
        raise FileNotFoundError(f"{r}: no such folder")
    folds = _numbered(r, r"Fold(\d+)", want_dir=True)
    if folds:
        files = []
        for _, fold in folds:
            triple = tuple(fold / f"{s}.txt" for s in _SPLITS)
            for f in triple:
                if not f.exists():  # present but not a regular file: load_letor says what it is
                    raise FileNotFoundError(f"{f}: missing (a fold folder needs train.txt, vali.txt, test.txt)")
            files.append(triple)
        return Layout("folds", files)
    parts = _numbered(r, r"S(\d+)\.txt", want_dir=False)
    if len(parts) >= 3:
        return Layout("parts", [(p,) for _, p in parts])
    raise ValueError(
        f"{r}: not a LETOR folder (expected Fold1..FoldK/{{train,vali,test}}.txt or at least three parts "
        f"S1.txt..Sk.txt; found {len(parts)} part(s))"
    )


def _same_width(datas: Sequence[RankingData]) -> list[RankingData]:
    width = max(d.n_features for d in datas)
    return [d.with_n_features(width) for d in datas]


def load_letor_parts(root: PathLike, *, with_comments: bool = False, dense: bool = True) -> list[RankingData]:
    """The parts ``S1..Sk.txt`` of a LETOR 4.0 folder, in numeric order, all the same width."""
    layout = letor_layout(root)
    if layout.kind != "parts":
        raise ValueError(f"{root}: has fold folders, not S1..Sk.txt parts")
    return _same_width([load_letor(f, with_comments=with_comments, dense=dense) for (f,) in layout.files])


def folds_from_parts(parts: Sequence[RankingData]) -> list[Fold]:
    """The LETOR rotation over ``k >= 3`` parts: fold ``i`` (0-based) trains on
    parts ``i, i+1, .., i+k-3`` (concatenated in that order), validates on
    part ``i+k-2`` and tests on part ``i+k-1`` (indices modulo ``k``).

    Parts of different widths are widened with zero columns to the widest.
    """
    parts = list(parts)
    if len(parts) < 3:
        raise ValueError(f"folds_from_parts needs at least 3 parts, got {len(parts)}")
    parts = _same_width(parts)
    k = len(parts)
    folds = []
    for i in range(k):
        train = RankingData.concat(*(parts[(i + j) % k] for j in range(k - 2)))
        folds.append((train, parts[(i + k - 2) % k], parts[(i + k - 1) % k]))
    return folds


def load_letor_folds(root: PathLike, *, with_comments: bool = False, dense: bool = True) -> list[Fold]:
    """``(train, vali, test)`` per fold, from either LETOR layout.

    ``root`` holds ``Fold1..FoldK/{train,vali,test}.txt`` (read as they are)
    or the parts ``S1..Sk.txt`` (folds built by :func:`folds_from_parts`). All
    splits of all folds share one ``n_features`` (the widest file's).
    """
    layout = letor_layout(root)
    if layout.kind == "parts":
        return folds_from_parts(load_letor_parts(root, with_comments=with_comments, dense=dense))
    flat = [load_letor(f, with_comments=with_comments, dense=dense) for triple in layout.files for f in triple]
    flat = _same_width(flat)
    return [(flat[i], flat[i + 1], flat[i + 2]) for i in range(0, len(flat), 3)]
