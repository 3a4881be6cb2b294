"""What a (method, fold) run builds from its fold's data alone, built once per process.

A ``--tune`` study trains one fold many times (every trial of every method), and each training
built the same LightGBM Dataset, XGBoost DMatrix or checked dense features again. Here they are
kept per process (a parallel comparison's worker keeps its own), keyed by the content of the data
part (a fingerprint of its arrays: each task hands a worker its own unpickled copy of the fold)
and by what else the object depends on, so that a reused object trains exactly as a fresh one:

* a LightGBM Dataset bins its features when it is constructed, from the Dataset parameters, and
  (``feature_pre_filter``, LightGBM's default) leaves out the features no split can use with
  ``min_data_in_leaf`` rows on each side. It is reused only under equal parameters, all but the
  tree parameters that construction does not read; for ``min_data_in_leaf``, only where the
  features kept are known to be the same: at an equal value, or between two values whose
  Datasets keep the same features (the features kept only shrink as ``min_data_in_leaf`` grows).
  It is kept only once constructed, and it carries each training's own parameters as a fresh one
  would (an objective reads them from it: no training sees another's);
* an XGBoost DMatrix holds the data as given (the histogram index it builds on first use is
  built again under another ``max_bin``);
* a CatBoost Pool holds the data as given (each fit quantizes it afresh);
* the reference boosters' dense, checked features.

:func:`disabled` turns the cache off (every object built fresh), to show that it changes nothing.
"""

from __future__ import annotations

import bisect
import copy
import hashlib
import weakref
from collections import OrderedDict
from contextlib import contextmanager, suppress
from typing import Any, Callable, Iterator

import numpy as np
import scipy.sparse as sp

__all__ = ["fingerprint", "cached", "lightgbm_train", "disabled", "clear", "LIGHTGBM_TREE_ONLY"]

#: LightGBM parameters that Dataset construction does not read (``min_data_in_leaf`` is not one:
#: the feature pre-filter reads it; see the module's docstring).
LIGHTGBM_TREE_ONLY = frozenset({"learning_rate", "num_leaves", "lambda_l2", "feature_fraction",
                                "min_sum_hessian_in_leaf", "objective",
                                "lambdarank_truncation_level", "sigmoid"})  # lambdarank's, searched by --tune
#: Data parts (folds' training, validation and test parts) whose objects are kept at once.
MAX_KEYS = 24
#: LightGBM Datasets kept per data part and parameters (one per ``min_data_in_leaf`` seen).
MAX_DATASETS = 32

_store: "OrderedDict[Any, Any]" = OrderedDict()
_prints: "weakref.WeakKeyDictionary[Any, str]" = weakref.WeakKeyDictionary()
_on = True


@contextmanager
def disabled() -> Iterator[None]:
    """Build every object fresh inside the block (and keep nothing built there)."""
    global _on
    was, _on = _on, False
    try:
        yield
    finally:
        _on = was


def clear() -> None:
    _store.clear()


def _digest(h: Any, a: Any) -> None:
    if a is None:
        h.update(b"none")
    elif sp.issparse(a):
        a = sp.csr_matrix(a)
        h.update(f"csr{a.shape}".encode())
        for part in (a.data, a.indices, a.indptr):
            _digest(h, part)
    else:
        arr = np.ascontiguousarray(np.asarray(a))
        if arr.dtype == object:
            raise TypeError("object arrays have no byte fingerprint")
        h.update(f"{arr.dtype.str}{arr.shape}".encode())
        h.update(arr.data)


def fingerprint(part: Any) -> str | None:
    """The content of a data part (features, labels, groups and the training extras: positions,
    pairs, weights, initial scores) as a digest, once per part object; ``None`` for features
    without a byte form (they are never cached)."""
    known = None
    with suppress(TypeError):  # a part that cannot be weakly referenced is digested every time
        known = _prints.get(part)
    if known is not None:
        return known
    h = hashlib.blake2b(digest_size=20)
    try:
        for name in ("X", "y", "group_ptr", "position", "pairs", "weight", "init_score"):
            h.update(name.encode())
            _digest(h, getattr(part, name, None))
    except TypeError:
        return None
    out = h.hexdigest()
    with suppress(TypeError):
        _prints[part] = out
    return out


def _slot(key: Any, make: Callable[[], Any]) -> Any:
    """The stored value of ``key`` (made on first use), most recently used last."""
    if key in _store:
        _store.move_to_end(key)
        return _store[key]
    value = _store[key] = make()
    while len(_store) > MAX_KEYS:
        _store.popitem(last=False)
    return value


def cached(kind: str, part: Any, build: Callable[[], Any]) -> Any:
    """``build()``'s object for ``part``, built once per process for the same ``kind`` and data."""
    fp = fingerprint(part) if _on else None
    if fp is None:
        return build()
    return _slot((kind, fp), build)


class _Datasets:
    """The LightGBM Datasets of one data part under one set of parameters, by ``min_data_in_leaf``."""

    def __init__(self) -> None:
        self.levels: list[float] = []  # sorted min_data_in_leaf of the entries
        self.entries: list[tuple[Any, tuple[int, ...], dict[str, Any]]] = []  # (Dataset, bins per feature, its
        # parameters as built)

    def find(self, level: float) -> Any | None:
        i = bisect.bisect_left(self.levels, level)
        if i < len(self.levels) and self.levels[i] == level:
            return self.entries[i]
        if 0 < i < len(self.levels) and self.entries[i - 1][1] == self.entries[i][1]:
            # the features kept at the levels on either side are the same, so they are at this one
            return self.entries[i - 1]
        return None

    def add(self, level: float, dataset: Any, built: dict[str, Any]) -> None:
        if len(self.levels) >= MAX_DATASETS:
            return
        bins = tuple(dataset.feature_num_bin(j) for j in range(dataset.num_feature()))  # 0: left out
        i = bisect.bisect_left(self.levels, level)
        self.levels.insert(i, level)
        self.entries.insert(i, (dataset, bins, built))


def _frozen(params: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((k, repr(v)) for k, v in params.items()))


def lightgbm_train(params: dict[str, Any], part: Any, build: Callable[[], Any],
                   train: Callable[[Any], Any]) -> Any:
    """``train(dataset)`` on a Dataset of ``part`` that trains with ``params`` exactly as a fresh
    ``build()`` would: a kept one (see the module's docstring), else ``build()``, kept once it
    is constructed."""
    fp = fingerprint(part) if _on else None
    if fp is None:
        return train(build())
    pre_filter = params.get("feature_pre_filter", True) not in (False, "false", 0)
    level = float(params.get("min_data_in_leaf", 20)) if pre_filter else 0.0
    rest = {k: v for k, v in params.items() if k not in LIGHTGBM_TREE_ONLY and k != "min_data_in_leaf"}
    table = _slot(("lightgbm", fp, _frozen(rest)), _Datasets)
    entry = table.find(level)
    if entry is not None:
        dataset, _, built = entry
        # lgb.train merges a training's parameters into a Dataset's only until it is constructed:
        # this training's, as on a fresh one (an objective reads them there; lgb.train holds a callable one)
        dataset.params = copy.deepcopy({**built, **{k: v for k, v in params.items() if not callable(v)}})
        return train(dataset)
    dataset = build()
    built = copy.deepcopy(dataset.params or {})
    try:
        return train(dataset)
    finally:  # a pruned trial's Dataset too (constructed before training stopped), not a failed construction's
        if getattr(dataset, "_handle", None):  # a null handle is false
            table.add(level, dataset, built)
