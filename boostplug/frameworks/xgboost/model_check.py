"""An XGBoost model (JSON or UBJSON) checked before XGBoost reads it, as LightGBM's model text is
(:mod:`..lightgbm.model_text`).

XGBoost 3.2 trusts the trees it loads: a child index out of range, a cycle or a split feature
beyond the model's width makes ``predict`` read outside its arrays (SIGSEGV), a tree's output group
beyond the model's outputs writes outside them (heap corruption), and a parent index out of range
is read while the model loads. :func:`check_model_data` parses the model (UBJSON by
:func:`~.ubjson.parse_ubjson`, JSON text by Python's ``json``) and refuses, naming the source and
the tree, node or field, what does not hold together (the list: ``docs/reliability.md``, "XGBoost
model files"): the learner's counts, ``base_score``, attributes and booster; the trees' ids,
output groups and ``iteration_indptr``; each tree's per-node arrays (lengths and integer types),
finite leaf values, children that form one tree, split features below ``num_feature``, parents
that match the splits, categorical splits and a multi-target tree's leaf weights within their
arrays; the category encodings (``cats``); ``gblinear``'s and ``dart``'s weights.

A file saved by boostplug with its objective record carries the SHA-256 of its content, the
record included (:func:`content_sha256`), in the record; when it does, any other content is
refused too (:func:`check_model_data`). What XGBoost checks and refuses cleanly itself (its
parameters' text, ``num_deleted``) is left to it; its error is a ``ValueError`` naming the source
(:func:`load_checked`).
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any, Callable

import numpy as np

from ..._validation import special_kind
from ..model_record import RECORD_KEY, checksum_of, refuse_mismatch, without_checksum
from .ubjson import MAX_DEPTH, looks_like_ubjson, parse_ubjson

__all__ = ["checked_model_source", "check_model_data", "content_sha256", "load_checked", "forget_checksum"]

_NODE_MAX = 2**31 - 1
#: XGBoost reads a category as a float and treats one at 2**24 or above as invalid.
_CATEGORY_END = 2**24
_ROOT_PARENTS = (-1, _NODE_MAX)  # XGBoost writes 2147483647 (a multi-target tree -1); both read as "none"
_PER_NODE_FLOATS = ("split_conditions", "loss_changes", "sum_hessian")


class _Refused(ValueError):
    """What is wrong (the caller adds the source)."""


def checked_model_source(fname: Any) -> None:
    """Check a model XGBoost is about to load (a path, or the bytes of ``Booster.load_model``):
    :func:`check_model_data` on its content, UBJSON by content or a ``.ubj`` path, JSON text
    otherwise; anything else is refused where XGBoost reads nothing else (3.0 on), and so are a
    FIFO, a socket and a device: each a ``ValueError`` naming the file."""
    if isinstance(fname, (bytes, bytearray, memoryview)):
        data, source, named_ubj = bytes(fname), "the model bytes", False
    elif isinstance(fname, (str, os.PathLike)):
        path = os.fspath(fname)
        kind = special_kind(path)
        if kind is not None:  # a FIFO would block the read; /dev/null reads as nothing
            raise ValueError(f"{path}: {kind}, not a model file")
        with open(path, "rb") as f:
            data = f.read()
        source, named_ubj = str(path), str(path).lower().endswith(".ubj")
    else:
        return
    if named_ubj or looks_like_ubjson(data) or data[:1] == b"{":
        check_model_data(data, source, ubj=named_ubj or looks_like_ubjson(data))
    elif _json_models_only():  # XGBoost's own error quotes the bytes, often as invalid UTF-8
        start = "is empty" if not data else f"starts with {data[:8]!r}"
        raise ValueError(f"{source}: not an XGBoost model: XGBoost reads JSON and UBJSON models, which start with "
                         f"'{{', and this {start}")


def _json_models_only() -> bool:
    """Whether the installed XGBoost reads JSON and UBJSON models only (3.0 and later; 2.x still
    reads its old binary format)."""
    import xgboost

    try:
        return int(xgboost.__version__.split(".")[0]) >= 3
    except ValueError:
        return True


def check_model_data(data: bytes, source: str, *, ubj: bool) -> None:
    """``data``, a UBJSON (``ubj``) or JSON model, parsed and checked as the module docstring says,
    and its checksum, when its objective record carries one, compared with its content: a
    ``ValueError`` naming ``source`` otherwise (``"<source>: <what is wrong>; a damaged XGBoost
    model, not loaded"`` for a model that does not hold together)."""
    if ubj:
        doc = parse_ubjson(data, source)
    else:
        try:
            doc = json.loads(data)
        except (ValueError, RecursionError) as e:  # (XGBoost's own error for a cut one is not even UTF-8)
            raise ValueError(f"{source}: not a complete JSON model (cut short or damaged): {e}") from None
    try:
        _check_depth(doc)
        _check_learner(doc)
    except _Refused as e:
        raise ValueError(f"{source}: {e}; a damaged XGBoost model, not loaded") from None
    record = doc["learner"].get("attributes", {}).get(RECORD_KEY)
    expected = None if record is None else checksum_of(record, source)
    if expected is not None:
        refuse_mismatch(expected, content_sha256(doc), source)


def load_checked(fname: Any, load: Callable[[Any], Any]) -> Any:
    """``load(fname)``, XGBoost reading a model (a path, or the bytes of ``Booster.load_model``),
    after :func:`checked_model_source`; XGBoost's own error is a ``ValueError`` naming the source."""
    import xgboost as xgb

    checked_model_source(fname)
    source = "the model bytes" if isinstance(fname, (bytes, bytearray, memoryview)) else str(fname)
    try:
        return load(fname)
    except xgb.core.XGBoostError as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ValueError(f"{source}: XGBoost refused it ({first}); a damaged XGBoost model, not loaded") from None


def forget_checksum(booster: Any) -> Any:
    """``booster`` (just loaded) with its record's checksum taken out: it described the file the
    booster came from, and XGBoost's own writer would save it with whatever the booster becomes
    (more rounds, fewer trees). Returns ``booster``."""
    record = booster.attr(RECORD_KEY)
    if record is not None and without_checksum(record) != record:
        booster.set_attr(**{RECORD_KEY: without_checksum(record)})
    return booster


# ---- the content's checksum ---------------------------------------------------------------------
def content_sha256(doc: dict) -> str:
    """The SHA-256 (hex) of a parsed model's content, its objective record without the checksum
    included: the same for the JSON and the UBJSON file of one model (numbers by value: XGBoost's
    floats as float32, its integers as int64; objects by sorted keys; the record's JSON compact
    with sorted keys)."""
    h = hashlib.sha256()
    learner = doc.get("learner")
    attributes = learner.get("attributes") if isinstance(learner, dict) else None
    if isinstance(attributes, dict) and isinstance(attributes.get(RECORD_KEY), str):
        attributes = {**attributes, RECORD_KEY: without_checksum(attributes[RECORD_KEY])}
        doc = {**doc, "learner": {**learner, "attributes": attributes}}
    _feed(h, doc)
    return h.hexdigest()


def _feed(h: Any, v: Any) -> None:
    if isinstance(v, dict):
        h.update(b"{%d:" % len(v))
        for k in sorted(v):
            _feed(h, str(k))
            _feed(h, v[k])
    elif isinstance(v, str):
        raw = v.encode("utf-8", "surrogatepass")
        h.update(b"s%d:" % len(raw) + raw)
    elif isinstance(v, (bool, np.bool_)) or v is None:
        h.update({True: b"T", False: b"F", None: b"Z"}[None if v is None else bool(v)])
    elif isinstance(v, (int, float, np.integer, np.floating)):
        _feed_numbers(h, np.asarray([v]), scalar=True)
    elif isinstance(v, np.ndarray) or (isinstance(v, list) and all(_plain_number(x) for x in v)):
        _feed_numbers(h, np.asarray(v), scalar=False)
    elif isinstance(v, list):
        h.update(b"[%d:" % len(v))
        for x in v:
            _feed(h, x)
    else:
        raise TypeError(f"a model document holds {type(v).__name__}")


def _feed_numbers(h: Any, arr: np.ndarray, scalar: bool) -> None:
    """Numbers by value: floats as float32 (XGBoost's), integers as int64 (beyond it, as text)."""
    tag = b"n" if scalar else b"a%d:" % arr.size
    if arr.size == 0:
        h.update(tag)
    elif arr.dtype.kind == "f":
        h.update(tag + b"f" + arr.astype("<f4").tobytes())
    elif arr.dtype.kind in "iu" and (arr.dtype.kind == "i" or int(arr.max()) < 2**63):
        h.update(tag + b"i" + arr.astype("<i8").tobytes())
    elif arr.dtype.kind == "b":
        h.update(tag + b"b" + arr.astype("<i1").tobytes())
    else:  # integers beyond int64 (JSON can spell them): their text
        h.update(tag + b"t" + ",".join(str(x) for x in arr.tolist()).encode("ascii"))


# ---- the structure --------------------------------------------------------------------------------
def _plain_number(x: Any) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, (bool, np.bool_))


def _check_depth(doc: Any) -> None:
    """Containers nested at most :data:`~.ubjson.MAX_DEPTH` deep (XGBoost's reader recurses)."""
    level = [doc]
    for depth in range(MAX_DEPTH + 1):
        level = [c for v in level for c in (v.values() if isinstance(v, dict) else v if isinstance(v, list) else ())
                 if isinstance(c, (dict, list))]
        if not level:
            return
    raise _Refused(f"containers nested more than {MAX_DEPTH} deep")


def _get(obj: Any, key: str, where: str, kind: type = dict) -> Any:
    if not isinstance(obj, dict) or key not in obj:
        raise _Refused(f"{where} has no {key!r}")
    value = obj[key]
    if not isinstance(value, kind):
        raise _Refused(f"{where}: {key} is not a JSON {_KIND_NAMES[kind]}")
    return value


_KIND_NAMES = {dict: "object", list: "array", str: "string"}


def _count(obj: dict, key: str, where: str, low: int, high: int = _NODE_MAX, default: int | None = None) -> int:
    """An integer XGBoost keeps as text (its parameters: ``"num_feature": "46"``) in ``[low, high]``."""
    if key not in obj and default is not None:
        return default
    text = _get(obj, key, where, str)
    try:
        value = int(text, 10)
    except ValueError:
        raise _Refused(f"{where}: {key} = {text[:40]!r} is not an integer") from None
    if not low <= value <= high:
        raise _Refused(f"{where}: {key} = {value} is outside [{low}, {high}]")
    return value


def _ints(obj: dict, key: str, where: str, length: int | None = None) -> np.ndarray:
    """An array of integers as int64 (``length`` values when given)."""
    arr = _numbers(obj, key, where, length)
    if arr.dtype.kind not in "iu":
        raise _Refused(f"{where}: {key} holds something other than integers")
    if arr.dtype.kind == "u" and arr.size and int(arr.max()) >= 2**63:
        raise _Refused(f"{where}: {key} holds {int(arr.max())}, beyond a 64-bit integer")
    return arr.astype(np.int64)


def _numbers(obj: dict, key: str, where: str, length: int | None = None) -> np.ndarray:
    if key not in obj:
        raise _Refused(f"{where} has no {key!r}")
    value = obj[key]
    if isinstance(value, np.ndarray):
        arr = value
    elif isinstance(value, list) and all(_plain_number(x) for x in value):
        try:
            arr = np.asarray(value) if value else np.zeros(0, dtype=np.int64)
        except OverflowError:
            raise _Refused(f"{where}: {key} holds an integer beyond 64 bits") from None
        if arr.dtype == object:
            raise _Refused(f"{where}: {key} holds an integer beyond 64 bits")
    else:
        raise _Refused(f"{where}: {key} is not an array of numbers")
    if length is not None and arr.size != length:
        raise _Refused(f"{where}: {key} has {arr.size} values, not {length}")
    return arr


def _check_learner(doc: Any) -> None:
    if not isinstance(doc, dict):
        raise _Refused("the file holds no JSON object")
    learner = _get(doc, "learner", "the model")
    params = _get(learner, "learner_model_param", "learner")
    where = "learner_model_param"
    n_features = _count(params, "num_feature", where, 0)
    n_class = _count(params, "num_class", where, 0, default=0)
    n_target = _count(params, "num_target", where, 1, default=1)
    n_out = max(n_class, n_target, 1)
    if "base_score" in params:
        _check_base_score(_get(params, "base_score", "learner", str), n_out)
    attributes = learner.get("attributes", {})
    if not isinstance(attributes, dict) or not all(isinstance(v, str) for v in attributes.values()):
        raise _Refused("learner.attributes is not an object of strings")
    for key in ("feature_names", "feature_types"):
        names = learner.get(key, [])
        if not isinstance(names, list) or not all(isinstance(v, str) for v in names):
            raise _Refused(f"learner.{key} is not an array of strings")
        if names and len(names) != n_features:
            raise _Refused(f"learner.{key} has {len(names)} entries, num_feature={n_features}")
    booster = _get(learner, "gradient_booster", "learner")
    name = booster.get("name")
    if name == "gbtree":
        _check_gbtree(_get(booster, "model", "gbtree"), n_features, n_out)
    elif name == "dart":
        n_trees = _check_gbtree(_get(_get(booster, "gbtree", "dart"), "model", "dart.gbtree"), n_features, n_out)
        _numbers(booster, "weight_drop", "dart", n_trees)
    elif name == "gblinear":
        model = _get(booster, "model", "gblinear")
        _numbers(model, "weights", "gblinear.model", (n_features + 1) * n_out)
    else:
        raise _Refused(f"gradient_booster.name = {str(name)[:40]!r} is none of gbtree, dart, gblinear")


def _check_base_score(text: str, n_out: int) -> None:
    """``base_score``: one number, or one per output (``"[5E-1]"``; models before 2.0: ``"5E-1"``)."""
    values = text.strip().removeprefix("[").removesuffix("]").split(",")
    try:
        [float(v) for v in values]
    except ValueError:
        raise _Refused(f"learner_model_param: base_score = {text[:40]!r} is not a list of numbers") from None
    if len(values) not in (1, n_out):
        raise _Refused(f"learner_model_param: base_score holds {len(values)} values, the model has {n_out} outputs")


def _check_gbtree(model: dict, n_features: int, n_out: int) -> int:
    """The trees of a gbtree model; their number."""
    where = "gbtree_model_param"
    param = _get(model, where, "the gbtree model")
    n_trees = _count(param, "num_trees", where, 0)
    _count(param, "num_parallel_tree", where, 1, default=1)
    trees = _get(model, "trees", "the gbtree model", list)
    if len(trees) != n_trees:
        raise _Refused(f"the model holds {len(trees)} trees, num_trees={n_trees}")
    info = _ints(model, "tree_info", "the gbtree model", n_trees)
    bad = np.flatnonzero((info < 0) | (info >= n_out))
    if bad.size:
        raise _Refused(f"tree_info[{int(bad[0])}] = {int(info[bad[0]])} is no output of the model's {n_out}")
    if "iteration_indptr" in model:
        indptr = _ints(model, "iteration_indptr", "the gbtree model")
        if indptr.size == 0 or indptr[0] != 0 or indptr[-1] != n_trees or np.any(np.diff(indptr) < 0):
            raise _Refused(f"iteration_indptr must rise from 0 to num_trees={n_trees}")
    for t, tree in enumerate(trees):
        if not isinstance(tree, dict):
            raise _Refused(f"trees[{t}] is not a JSON object")
        tree_id = tree.get("id")
        if not _plain_number(tree_id) or tree_id != t:
            raise _Refused(f"trees[{t}] has id {str(tree_id)[:20]}, not {t}")
        _check_tree(tree, f"tree {t}", n_features, n_out)
    if "cats" in model:
        _check_categories(_get(model, "cats", "the gbtree model"), n_features)
    return n_trees


def _check_tree(tree: dict, name: str, n_features: int, n_out: int) -> None:
    param = _get(tree, "tree_param", name)
    where = f"{name}: tree_param"
    n = _count(param, "num_nodes", where, 1)
    _count(param, "num_feature", where, 0)
    _count(param, "num_deleted", where, 0, n - 1)
    width = _count(param, "size_leaf_vector", where, 0, default=1)
    multi = width > 1
    if multi and width != n_out:
        raise _Refused(f"{where}: size_leaf_vector = {width}, but the model has {n_out} outputs")
    left = _ints(tree, "left_children", name, n)
    right = _ints(tree, "right_children", name, n)
    parents = _ints(tree, "parents", name, n)
    split = _ints(tree, "split_indices", name, n)
    default_left = _ints(tree, "default_left", name, n)
    conditions = [_numbers(tree, key, name, n) for key in _PER_NODE_FLOATS][0]
    _numbers(tree, "base_weights", name, n * width if multi else n)
    if np.any((default_left != 0) & (default_left != 1)):
        raise _Refused(f"{name}: default_left holds a value other than 0 and 1")
    # A node whose left child is -1 is a leaf (XGBoost reads nothing else of its children); every
    # split's children are nodes, and no node is the child of two splits: then the root, which no
    # split has as a child, reaches one tree (no cycle, nothing shared).
    splits = np.flatnonzero(left != -1)
    for key, child in (("left_children", left), ("right_children", right)):
        bad = splits[(child[splits] < 1) | (child[splits] >= n)]
        if bad.size:
            raise _Refused(f"{name}: {key}[{int(bad[0])}] = {int(child[bad[0]])} is no node of its {n} "
                           f"(1..{n - 1}, or -1 for a leaf)")
    children = np.concatenate([left[splits], right[splits]])
    counts = np.bincount(children, minlength=n)
    if np.any(counts > 1):
        twice = int(np.argmax(counts > 1))
        raise _Refused(f"{name}: node {twice} is the child of two splits (or of one twice)")
    bad = splits[(split[splits] < 0) | (split[splits] >= n_features)]
    if bad.size:
        raise _Refused(f"{name}: split_indices[{int(bad[0])}] = {int(split[bad[0]])} is outside [0, {n_features - 1}] "
                       f"(num_feature={n_features})")
    if int(parents[0]) not in _ROOT_PARENTS:
        raise _Refused(f"{name}: parents[0] = {int(parents[0])}, but node 0 is the root (its parent: "
                       f"{_NODE_MAX})")
    bad = np.flatnonzero((parents[1:] < 0) | (parents[1:] >= n)) + 1
    if bad.size:
        raise _Refused(f"{name}: parents[{int(bad[0])}] = {int(parents[bad[0]])} is no node of its {n}")
    of = np.full(n, -1, dtype=np.int64)
    of[left[splits]] = splits
    of[right[splits]] = splits
    bad = np.flatnonzero((of >= 0) & (parents != of))
    if bad.size:
        c = int(bad[0])
        raise _Refused(f"{name}: parents[{c}] = {int(parents[c])}, but node {c} is a child of node {int(of[c])}")
    if "split_type" in tree:
        _check_categorical_splits(tree, name, n, left != -1)
    if not multi:  # a leaf's value is its split_conditions entry
        _refuse_non_finite_leaves(name, "split_conditions", conditions, np.flatnonzero(left == -1))
    if multi:
        leaves = _reached_leaves(left, right, n)
        weights = _numbers(tree, "leaf_weights", name)
        if weights.size % width:
            raise _Refused(f"{name}: leaf_weights has {weights.size} values, not a multiple of "
                           f"size_leaf_vector={width}")
        slot = right[leaves]
        bad = leaves[(slot < 0) | (slot >= weights.size // width)]
        if bad.size:
            raise _Refused(f"{name}: leaf {int(bad[0])} points to leaf weights {int(right[bad[0]])}, outside the "
                           f"{weights.size // width} of leaf_weights")
        _refuse_non_finite_leaves(name, "leaf_weights", weights, np.arange(weights.size))


def _refuse_non_finite_leaves(name: str, key: str, values: np.ndarray, leaves: np.ndarray) -> None:
    """A NaN or infinite leaf value (``values[leaves]``): every prediction reaching it would be one."""
    bad = leaves[~np.isfinite(values[leaves].astype(np.float64))]
    if bad.size:
        raise _Refused(f"{name}: {key}[{int(bad[0])}] = {float(values[bad[0]])!r} is a leaf value that is not "
                       "finite (every prediction reaching it would be NaN or infinite)")


def _reached_leaves(left: np.ndarray, right: np.ndarray, n: int) -> np.ndarray:
    """The leaves the root reaches (the children checked: one tree)."""
    reached = np.zeros(n, dtype=bool)
    frontier = np.array([0])
    while frontier.size:
        reached[frontier] = True
        splits = frontier[left[frontier] != -1]
        frontier = np.concatenate([left[splits], right[splits]])
    return np.flatnonzero(reached & (left == -1))


def _check_categorical_splits(tree: dict, name: str, n: int, is_split: np.ndarray) -> None:
    kind = _ints(tree, "split_type", name, n)
    if np.any((kind != 0) & (kind != 1)):
        raise _Refused(f"{name}: split_type holds a value other than 0 (numerical) and 1 (categorical)")
    nodes = _ints(tree, "categories_nodes", name)
    expected = np.flatnonzero(kind == 1)
    if not np.array_equal(nodes, expected) or not np.all(is_split[expected]):
        raise _Refused(f"{name}: categories_nodes must be the splits whose split_type is 1, in order")
    segments = _ints(tree, "categories_segments", name, nodes.size)
    sizes = _ints(tree, "categories_sizes", name, nodes.size)
    categories = _ints(tree, "categories", name)
    if np.any(sizes < 1) or np.any(segments < 0) or np.any(segments + sizes > categories.size):
        raise _Refused(f"{name}: a categorical split's categories_segments/categories_sizes reach outside the "
                       f"{categories.size} categories")
    if categories.size and (categories.min() < 0 or categories.max() >= _CATEGORY_END):
        raise _Refused(f"{name}: categories holds a category outside [0, {_CATEGORY_END})")


def _check_categories(cats: dict, n_features: int) -> None:
    """The category encodings of a model trained on categorical data (empty otherwise)."""
    where = "cats"
    enc = _get(cats, "enc", where, list)
    segments = _ints(cats, "feature_segments", where)
    sorted_idx = _ints(cats, "sorted_idx", where)
    if not enc:
        if segments.size > 1 or sorted_idx.size:
            raise _Refused("cats has segments but no encodings")
        return
    if len(enc) != n_features:
        raise _Refused(f"cats.enc has {len(enc)} features, num_feature={n_features}")
    if segments.size != len(enc) + 1 or segments[0] != 0 or np.any(np.diff(segments) < 0):
        raise _Refused(f"cats.feature_segments must rise from 0 in {len(enc) + 1} values")
    if sorted_idx.size != segments[-1]:
        raise _Refused(f"cats.sorted_idx has {sorted_idx.size} values, feature_segments ends at {int(segments[-1])}")
    for f, column in enumerate(enc):
        at = f"cats.enc[{f}]"
        size = int(segments[f + 1] - segments[f])
        if not isinstance(column, dict):
            raise _Refused(f"{at} is not a JSON object")
        if "offsets" in column:
            offsets = _ints(column, "offsets", at)
            values = _numbers(column, "values", at)
            if size == 0:
                if offsets.size > 1 or values.size:
                    raise _Refused(f"{at} holds categories, its feature_segments none")
            elif (offsets.size != size + 1 or offsets[0] != 0 or offsets[-1] != values.size
                  or np.any(np.diff(offsets) < 0)):
                raise _Refused(f"{at}.offsets must rise from 0 to the {values.size} values, one per category + 1")
        else:
            _numbers(column, "values", at, size)
        part = np.sort(sorted_idx[segments[f]:segments[f + 1]])
        if not np.array_equal(part, np.arange(size)):
            raise _Refused(f"cats.sorted_idx of feature {f} is not an order of its {size} categories")

