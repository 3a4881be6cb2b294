"""LETOR fold layouts: ``Fold1..FoldK/{train,vali,test}.txt`` or parts ``S1..Sk.txt``.

A folder of parts does not say how its folds are built, and the LETOR versions build them
differently, so a parts folder needs its layout named: :data:`LAYOUTS` says what each one's folds
are (LETOR 4.0's concatenated train parts reproduce its ``FoldK/train.txt`` row for row);
docs/data.md, "Folds", shows them.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import NamedTuple, Sequence

from .dataset import RankingData
from .letor import load_letor

__all__ = [
    "LAYOUTS", "Layout", "letor_layout", "fold_plan", "load_letor_folds", "load_letor_parts", "folds_from_parts",
]

PathLike = str | os.PathLike
Fold = tuple[RankingData, RankingData, RankingData]
_SPLITS = ("train", "vali", "test")

#: The layouts :func:`load_letor_folds` knows, with what each means.
LAYOUTS = {
    "letor4": "LETOR 4.0 parts S1..S5 (MQ2007, MQ2008; 46 features): Fold1 trains on S1,S2,S3, validates on S4, "
              "tests on S5, the next folds rotate by one part",
    "letor3": "LETOR 3.0 parts S1..S5 (OHSUMED, 45 features; .gov sets, 64): Fold1 trains on S2,S3,S4, validates "
              "on S5, tests on S1, the next folds rotate by one part",
    "rotate": "parts S1..Sk (k >= 3, any features): fold i trains on S(i)..S(i+k-3), validates on S(i+k-2), tests "
              "on S(i+k-1)",
    "folds": "folders Fold1..FoldK/{train,vali,test}.txt, read as they are",
}
_PART_LAYOUTS = ("letor4", "letor3", "rotate")
#: the feature counts of the LETOR versions' data sets
_FEATURES = {"letor4": (46,), "letor3": (45, 64)}
_VERSION = {"letor4": "LETOR 4.0 (MQ2007, MQ2008)", "letor3": "LETOR 3.0 (OHSUMED; the .gov sets)"}


class Layout(NamedTuple):
    """Files of a LETOR folder: ``kind`` is ``"folds"`` (``files`` holds one
    ``(train, vali, test)`` triple per fold) or ``"parts"`` (one ``(part,)`` per part)."""

    kind: str
    files: list[tuple[Path, ...]]


def _numbered(root: Path, pattern: str, want_dir: bool) -> list[tuple[int, Path]]:
    rx = re.compile(pattern)
    return sorted((int(m.group(1)), entry) for entry in root.iterdir()
                  if (m := rx.fullmatch(entry.name)) and entry.is_dir() == want_dir)


def letor_layout(root: PathLike) -> Layout:
    """Recognise a fold folder (``Fold1..``) or a parts folder (``S1.txt..``).

    Says what the folder holds, not how parts make folds (that is :func:`fold_plan`'s
    ``layout``). Raises ``FileNotFoundError`` when ``root`` is absent, a fold lacks a split
    file or a part is missing (parts are numbered ``S1..Sk`` without gaps), ``ValueError`` when
    the folder has neither layout.
    """
    r = Path(root)
    if not r.is_dir():
        raise FileNotFoundError(f"{r}: no such folder")
    folds = _numbered(r, r"Fold(\d+)", want_dir=True)
    if folds:
        files = [tuple(fold / f"{s}.txt" for s in _SPLITS) for _, fold in folds]
        missing = next((f for triple in files for f in triple if not f.exists()), None)
        if missing is not None:  # present but not a regular file: load_letor says what it is
            raise FileNotFoundError(f"{missing}: missing (a fold folder needs train.txt, vali.txt, test.txt)")
        return Layout("folds", files)
    parts = _numbered(r, r"S(\d+)\.txt", want_dir=False)
    gaps = sorted(set(range(1, parts[-1][0] + 1)) - {n for n, _ in parts}) if len(parts) >= 3 else []
    if gaps:
        raise FileNotFoundError(f"{r}: part(s) {', '.join(f'S{n}.txt' for n in gaps)} missing (found "
                                f"{', '.join(p.name for _, p in parts)}); parts are numbered S1..Sk without gaps")
    if len(parts) >= 3:
        return Layout("parts", [(p,) for _, p in parts])
    raise ValueError(
        f"{r}: not a LETOR folder (expected Fold1..FoldK/{{train,vali,test}}.txt or at least three parts "
        f"S1.txt..Sk.txt; found {len(parts)} part(s))"
    )


def _choices(names: Sequence[str] = tuple(LAYOUTS)) -> str:
    return "; ".join(f"layout {name!r} ({LAYOUTS[name]})" for name in names)


def fold_plan(layout: str, n_parts: int) -> list[tuple[tuple[int, ...], int, int]]:
    """``(train parts, vali part, test part)`` per fold, 0-based part indices, for a parts
    ``layout`` over ``n_parts`` parts; ``ValueError`` for another layout or a part count the
    layout does not have (LETOR 3.0 and 4.0: five)."""
    if layout not in _PART_LAYOUTS:
        raise ValueError(f"layout {layout!r} does not build folds from parts; the parts layouts are "
                         f"{', '.join(map(repr, _PART_LAYOUTS))}")
    k = n_parts
    if layout == "rotate" and k < 3:
        raise ValueError(f"layout 'rotate' needs at least 3 parts, got {k}")
    if layout != "rotate" and k != 5:
        raise ValueError(f"layout {layout!r} has five parts S1..S5, got {k}")
    # letor4 is the rotation over five parts; letor3 the same started one part later (fold i tests on S(i+1))
    s = 1 if layout == "letor3" else 0
    return [(tuple((i + s + j) % k for j in range(k - 2)), (i + s + k - 2) % k, (i + s + k - 1) % k) for i in range(k)]


def _same_width(datas: Sequence[RankingData]) -> list[RankingData]:
    width = max(d.n_features for d in datas)
    return [d.with_n_features(width) for d in datas]


def load_letor_parts(root: PathLike, *, with_comments: bool = False, dense: bool = True) -> list[RankingData]:
    """The parts ``S1..Sk.txt`` of a LETOR folder, in numeric order, all the same width."""
    layout = letor_layout(root)
    if layout.kind != "parts":
        raise ValueError(f"{root}: has fold folders, not S1..Sk.txt parts")
    return _same_width([load_letor(f, with_comments=with_comments, dense=dense) for (f,) in layout.files])


def folds_from_parts(parts: Sequence[RankingData], layout: str = "rotate", *,
                     folds: Sequence[int] | None = None) -> list[Fold]:
    """The folds of loaded parts by a parts ``layout`` (:func:`fold_plan`; default
    ``"rotate"``: fold ``i`` (0-based) trains on parts ``i, i+1, .., i+k-3`` (concatenated in
    that order), validates on part ``i+k-2`` and tests on part ``i+k-1``, indices modulo ``k``).

    ``folds``: build only these folds (0-based, in this order; each training part is a copy of
    its parts, so k folds hold the data some k-2 times). Parts of different widths are widened
    with zero columns to the widest.
    """
    parts = list(parts)
    plan = fold_plan(layout, len(parts))
    chosen = _chosen_folds(folds, len(plan))
    parts = _same_width(parts)
    return [(RankingData.concat(*(parts[j] for j in plan[i][0])), parts[plan[i][1]], parts[plan[i][2]])
            for i in chosen]


def _chosen_folds(folds: Sequence[int] | None, n_folds: int) -> list[int]:
    """``folds`` checked against ``n_folds`` (None: all): ``ValueError`` naming one out of range."""
    if folds is None:
        return list(range(n_folds))
    chosen = [int(i) for i in folds]
    bad = [i for i in chosen if not 0 <= i < n_folds]
    if bad:
        raise ValueError(f"fold index {bad[0]} is out of range: there are {n_folds} folds (0-based indices "
                         f"0..{n_folds - 1})")
    return chosen


def letor_fold_count(root: PathLike, layout: str | None = None) -> int:
    """How many folds :func:`load_letor_folds` makes of ``root`` with ``layout``, from the file
    names alone (nothing is read); the same ``ValueError``/``FileNotFoundError`` it raises for
    a layout that does not fit the folder."""
    if layout is not None and layout not in LAYOUTS:
        raise ValueError(f"unknown layout {layout!r}; choose one of: {_choices()}")
    found = letor_layout(root)
    r = Path(root)
    if found.kind == "folds":
        if layout not in (None, "folds"):
            raise ValueError(f"{r}: holds fold folders Fold1..Fold{len(found.files)}, read as they are; layout "
                             f"{layout!r} is for parts S1..Sk.txt alone (give layout 'folds' or none)")
        return len(found.files)
    files = [f for (f,) in found.files]
    if layout in (None, "folds"):  # the LETOR versions make folds of five parts differently: no guess
        what = "but no layout says how they make folds" if layout is None else "not Fold1..FoldK folders"
        raise ValueError(f"{r}: holds parts {files[0].name}..{files[-1].name}, {what}; name one: "
                         f"{_choices(_PART_LAYOUTS)}")
    try:
        return len(fold_plan(layout, len(files)))
    except ValueError as e:
        raise ValueError(f"{r}: {e} ({', '.join(f.name for f in files)})") from None


def load_letor_folds(root: PathLike, layout: str | None = None, *, with_comments: bool = False,
                     dense: bool = True, folds: Sequence[int] | None = None) -> list[Fold]:
    """``(train, vali, test)`` per fold of a LETOR folder.

    ``layout`` (:data:`LAYOUTS`): ``"letor4"``, ``"letor3"`` or ``"rotate"`` build the folds
    from the parts ``S1..Sk.txt``; ``"folds"`` or ``None`` read ``Fold1..FoldK`` folders as they
    are. A parts folder without a layout is a ``ValueError`` naming the choices (the LETOR
    versions partition five parts differently, and a wrong guess mixes the folds up silently).
    A layout that does not fit the folder (fold folders given a parts layout or the reverse,
    another number of parts, a part missing, a feature count that is not the named LETOR
    version's) is a ``ValueError``, a missing folder or part a ``FileNotFoundError``. All splits
    of all folds share one ``n_features`` (the widest file's).

    ``folds``: only these folds (0-based, in this order): of fold folders only their files are
    read (one MSLR-WEB30K fold instead of five copies of the data; the width is then the widest
    of the files read), of parts every part is read and only these folds are built.
    """
    n_folds = letor_fold_count(root, layout)
    found = letor_layout(root)
    r = Path(root)
    chosen = _chosen_folds(folds, n_folds)
    if found.kind == "folds":
        flat = [load_letor(f, with_comments=with_comments, dense=dense) for i in chosen for f in found.files[i]]
        flat = _same_width(flat)
        return [(flat[i], flat[i + 1], flat[i + 2]) for i in range(0, len(flat), 3)]
    parts = [load_letor(f, with_comments=with_comments, dense=dense) for (f,) in found.files]
    width = max(p.n_features for p in parts)
    if layout in _FEATURES and width not in _FEATURES[layout]:
        want = " or ".join(map(str, _FEATURES[layout]))
        other = {"letor4": "letor3", "letor3": "letor4"}[layout]
        raise ValueError(f"{r}: layout {layout!r} is for {_VERSION[layout]} data, which have {want} features, but "
                         f"these parts have {width} (for {_VERSION[other]} data use layout {other!r}; layout 'rotate' "
                         "takes parts of any width)")
    return folds_from_parts(parts, layout, folds=chosen)
