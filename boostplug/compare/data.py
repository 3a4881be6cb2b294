"""The data ``boostplug compare`` runs on, as a list of ``(train, vali, test)`` folds.

* ``"example"``: the embedded LightGBM example (:func:`example_split`);
* a LETOR file: query-level k-fold (:func:`file_folds`);
* a LETOR fold folder (``Fold1..FoldK``, read as it is) or parts folder (``S1..Sk.txt``, whose
  ``layout`` must be named: :data:`boostplug.data.LAYOUTS`): :func:`boostplug.data.load_letor_folds`.
  A folder as LETOR 4.0 ships it (``Fold1..FoldK`` beside ``S1..Sk.txt``): its Fold folders (:func:`layout_note`).
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import os
import re
from importlib import resources
from pathlib import Path
from typing import Iterator, Sequence

from .._validation import special_kind
from ..data import (
    LAYOUTS, RankingData, kfold_by_query, letor_fold_count, letor_layout, load_example, load_letor, load_letor_folds,
    train_test_split_by_query,
)

__all__ = ["Fold", "VALI_FRACTION", "example_split", "file_folds", "load_folds", "fold_count", "parse_fold_selection",
           "data_files", "file_digests", "layout_note"]

Fold = tuple[RankingData, RankingData, RankingData]

#: Share of the training queries held out for validation when the data has no validation part.
VALI_FRACTION = 0.2


def example_split(seed: int = 0, vali_fraction: float = VALI_FRACTION) -> Fold:
    """The embedded LightGBM example: its train/test as shipped, a validation part
    (``vali_fraction`` of the training queries, seeded) split off the training part."""
    train_full, test = load_example()
    train, vali = train_test_split_by_query(train_full, test_size=vali_fraction, seed=seed)
    return train, vali, test


def file_folds(data: RankingData, n_folds: int, seed: int = 0, vali_fraction: float = VALI_FRACTION, *,
               folds: Sequence[int] | None = None) -> list[Fold]:
    """Query-level ``n_folds``-fold split of one data set (:func:`boostplug.data.kfold_by_query`); each
    training part gives ``vali_fraction`` of its queries to validation (seeded). ``folds``: build only these
    (0-based; every fold copies the whole data once).

    ``ValueError`` naming ``--kfold`` and the values that work when a test part would be
    empty or a training part too small to give one query to validation and keep one.
    """
    _check_kfold(data.n_queries, n_folds)
    splits = kfold_by_query(data, n_folds, seed=seed)
    return [(*train_test_split_by_query(data.subset(splits[i][0]), test_size=vali_fraction, seed=seed),
             data.subset(splits[i][1])) for i in (range(n_folds) if folds is None else folds)]


def _check_kfold(n_queries: int, n_folds: int) -> None:
    # the largest test part has ceil(n / k) queries; the training part left must keep >= 2
    # (train_test_split_by_query gives validation ceil(fraction * m) <= m - 1 queries of m >= 2)
    works = [k for k in range(2, n_queries + 1) if n_queries - math.ceil(n_queries / k) >= 2]
    if n_folds in works:
        return
    if not works:
        raise ValueError(f"--kfold {n_folds}: the data has only {n_queries} quer{'y' if n_queries == 1 else 'ies'}; "
                         "compare needs at least 3 (training, validation and test parts)")
    what = f"--kfold {works[0]}" if len(works) == 1 else f"--kfold between {works[0]} and {works[-1]}"
    if n_folds > n_queries:
        why = f"more folds than the data's {n_queries} queries"
    elif n_folds < 2:
        why = "at least 2 folds are needed"
    else:
        why = (f"on {n_queries} queries this leaves a training part of 1 query, too few to split off a "
               "validation part")
    raise ValueError(f"--kfold {n_folds}: {why}; use {what}")


def parse_fold_selection(text: str | None, n_available: int | None) -> list[int] | None:
    """``"all"``/``None`` -> None (every fold); ``"1,3"`` -> ``[0, 2]`` (0-based, sorted, unique).

    ``ValueError`` for a non-number or a fold outside ``1..n_available`` (when known).
    """
    if text is None or text.strip().lower() == "all":
        return None
    chosen = set()
    for tok in (t.strip() for t in text.split(",")):
        if not (tok.isascii() and tok.isdigit()) or int(tok) < 1:
            raise ValueError(f"--folds: {tok!r} is not a fold number (use e.g. 1,3 or all)")
        if n_available is not None and int(tok) > n_available:
            has = "one fold" if n_available == 1 else f"folds 1..{n_available}"
            raise ValueError(f"--folds: fold {tok} does not exist; the data has {has}: name some of them, or all")
        chosen.add(int(tok) - 1)
    return sorted(chosen)


def _check_queries(data: Path, path: Path) -> None:
    """``ValueError`` naming ``path`` (a file of ``--data``) when its first data line has no ``qid:`` and
    no ``.query`` file gives its group sizes: not LETOR, or without the queries compare needs."""
    sidecar = Path(str(path) + ".query")
    if path.is_file() and not _has_qid(path) and not sidecar.is_file():  # (a FIFO: the reader says what it is)
        where = "" if path == data else f" {path.relative_to(data)}:"
        raise ValueError(f"--data {data}:{where} no qid: on the first data line and no {sidecar.name}; expected LETOR "
                         "lines with queries, LABEL qid:QUERY INDEX:VALUE ... (or group sizes in that .query file)")


def _has_qid(path: Path) -> bool:
    """Whether the first data line of a (plain-text) LETOR file carries ``qid:``."""
    if path.suffix in (".gz", ".bz2"):
        return True  # compressed: let load_letor decide
    with open(path, "rb") as f:
        for line in f:
            body = line.split(b"#", 1)[0].strip()
            if body:
                return b"qid:" in body
    return True


def load_folds(data: str | Path, *, n_folds: int = 5, select: str | None = None, seed: int = 0,
               layout: str | None = None) -> list[tuple[int, Fold]]:
    """``(fold_index, (train, vali, test))`` for the data named by ``data`` (see the module notes).

    ``layout`` (``--layout``): how a LETOR folder's parts make folds (:data:`boostplug.data.LAYOUTS`);
    required for a parts folder, refused for a file or ``example``, which it would not apply to.
    Raises ``FileNotFoundError`` for a missing path and ``ValueError`` for a path that is
    not a regular file or folder (a FIFO is refused before it is opened), a file without
    query ids, a layout that is missing, unknown or does not fit the folder, or a bad fold selection.
    """
    if layout is not None and layout not in LAYOUTS:
        raise ValueError(f"--layout {layout!r}: unknown; choose one of {', '.join(LAYOUTS)}")
    if str(data) != "example" and not Path(data).exists():  # before what --layout applies to: the data is missing
        where = "" if Path(data).is_absolute() else f" ({Path(data).absolute()})"
        raise FileNotFoundError(f"--data {data}: no such file or folder{where}; give a LETOR file or folder, "
                                "or 'example'")
    if layout is not None and (str(data) == "example" or not Path(data).is_dir()):
        raise ValueError(f"--layout {layout}: applies to a LETOR folder only, and --data {data} is not one "
                         "(leave --layout out)")
    # Only the chosen folds are built (or, of fold folders, read): each is a copy of the data.
    if str(data) == "example":
        parse_fold_selection(select, 1)  # refuses any fold but 1
        return [(0, example_split(seed=seed))]
    path = Path(data)
    if path.is_dir():
        n_available = fold_count(path, layout=layout)
        chosen = parse_fold_selection(select, n_available)
        for f in data_files(path):
            _check_queries(path, f)
        with _layout_errors(path):
            folds = load_letor_folds(path, layout, folds=chosen)
        return list(zip(range(n_available) if chosen is None else chosen, folds))
    if not path.is_file():  # a FIFO would block the first read forever
        raise ValueError(f"--data {path}: not a regular file ({special_kind(path) or 'not a file or folder'}); give "
                         "a LETOR file or folder, or 'example'")
    _check_queries(path, path)
    d = load_letor(path)
    _check_kfold(d.n_queries, n_folds)
    chosen = parse_fold_selection(select, n_folds)
    which = list(range(n_folds)) if chosen is None else chosen
    return list(zip(which, file_folds(d, n_folds, seed=seed, folds=which)))


def fold_count(data: str | Path, *, n_folds: int = 5, layout: str | None = None) -> int:
    """How many folds :func:`load_folds` makes of ``data`` before a selection: 1 of the embedded
    example, a LETOR folder's (from its file names), ``n_folds`` of a file."""
    if str(data) == "example":
        return 1
    if Path(data).is_dir():
        with _layout_errors(Path(data)):
            return letor_fold_count(data, layout)
    return n_folds


def layout_note(data: str | Path, layout: str | None) -> str:
    """What ``boostplug compare`` says when ``data`` holds Fold folders beside parts (as LETOR 4.0 ships
    them) and ``layout`` names a parts layout: that the Fold folders are read (``layout="folds"``); else ``""``."""
    if layout in (None, "folds") or str(data) == "example" or not Path(data).is_dir():
        return ""
    with _layout_errors(Path(data)):
        found = letor_layout(data)
    return "" if found.kind != "folds" or not any(p.is_file() for p in Path(data).glob("S[0-9]*.txt")) else (
        f"--data {data} holds Fold1..Fold{len(found.files)} beside parts S1..Sk.txt: the Fold folders are read, as "
        f"shipped (--layout {layout} is for a folder of parts alone)")


@contextlib.contextmanager
def _layout_errors(path: Path) -> Iterator[None]:
    """The folder errors of :mod:`boostplug.data` in the words of the command line: after ``--data PATH``,
    with the paths inside it relative to it and a layout named as the option (``--layout letor4``)."""
    try:
        yield
    except (ValueError, FileNotFoundError) as e:
        message = re.sub(r"layout '(\w+)'", r"--layout \1", str(e).removeprefix(f"{path}: "))
        raise ValueError(f"--data {path}: {message.removeprefix(f'{path}{os.sep}')}") from None


def data_files(data: str | Path) -> list[Path]:
    """The files :func:`load_folds` reads for ``data``: the embedded example's, a file (and its
    ``.query`` sidecar when present), or every file of a LETOR folder."""
    if str(data) == "example":
        root = resources.files("boostplug.data").joinpath("_example")
        return [Path(str(root.joinpath(n))) for n in ("train.npz", "test.npz")]
    path = Path(data)
    if path.is_dir():
        return [f for files in letor_layout(path).files for f in files]
    sidecar = Path(str(path) + ".query")
    return [path, sidecar] if sidecar.is_file() else [path]


def file_digests(paths: Sequence[Path]) -> dict[str, str]:
    """``{path: SHA-256 hex digest}`` of each file, read in blocks."""
    out = {}
    for p in paths:
        h = hashlib.sha256()
        with open(p, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        out[str(p)] = h.hexdigest()
    return out
