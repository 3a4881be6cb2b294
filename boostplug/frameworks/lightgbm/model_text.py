"""Checking LightGBM model text before LightGBM parses it.

Measured with LightGBM 4.7.0 unguarded (docs/results/lightgbm_model_text): 8,455 of 12,428 cuts kill the process, 1,375 drop the record, 11 of 27 damage cases kill or hang it; only checks these need stay.

LightGBM parses the trees in an OpenMP loop, where any format error it finds aborts the
process (SIGABRT), and its prediction follows the children it is given (a cycle hangs, an
index out of range reads outside the arrays); a model file cut short (a copy interrupted, a
full disk) dies so, or loads without its parameters section, and with it boostplug's
objective record. :func:`check_model_text` refuses, naming the source and the line, what does not
hold together (the list: docs/reliability.md, "LightGBM model files"): the header's counts and
``tree_sizes`` against the tree blocks (one size too few loads one tree too few); each ``Tree=``
block (at most the 22 lines LightGBM reads) with its fields, array lengths, finite leaf values,
children that form one tree, split features and categories in range; ``end of trees``, a tree
count that is a multiple of ``num_tree_per_iteration``, closed sections and a complete ending
(text holding boostplug's record ends with the ``pandas_categorical:`` line the Python package
writes last; text LightGBM wrote itself, with ``end of parameters``/``end of parser``).

What LightGBM refuses cleanly itself (a header without ``feature_infos``, feature names of the
wrong count, a damaged ``pandas_categorical:`` line) or reads safely (the first line, the
numbers after ``Tree=``, a field repeated or unknown within the 22 lines) is left to it. The
checks are linear in the text's length (each line is matched once).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator

import numpy as np

from ..model_record import RECORD_KEY

__all__ = ["check_model_text"]

_INT = r"[+-]?[0-9]+"
_FLOAT = r"[+-]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[nN][aA][nN]|[iI][nN][fF](?:[iI][nN][iI][tT][yY])?)"
# Arrays are only screened for their characters (one fast match per line): the values that could
# make LightGBM index out of range are parsed and range-checked below; LightGBM turns any other
# malformed number into NaN or an error, never a crash. (Doubles: LightGBM's %g-style output
# and the nan/inf spellings its readers take.)
_INTS = re.compile(r"[-+0-9 ]*")
_FLOATS = re.compile(r"[-+0-9.eEnNaAiIfFtTyY ]*")
_TREE_LINE = re.compile(r"Tree=([0-9]+)")

# Fields of a Tree= block: (kind, length) where length is "k" (num_leaves) or "k-1".
_ARRAYS: dict[str, tuple[re.Pattern[str], str]] = {
    "split_feature": (_INTS, "k-1"),
    "split_gain": (_FLOATS, "k-1"),
    "threshold": (_FLOATS, "k-1"),
    "decision_type": (_INTS, "k-1"),
    "left_child": (_INTS, "k-1"),
    "right_child": (_INTS, "k-1"),
    "leaf_value": (_FLOATS, "k"),
    "leaf_weight": (_FLOATS, "k"),
    "leaf_count": (_INTS, "k"),
    "internal_value": (_FLOATS, "k-1"),
    "internal_weight": (_FLOATS, "k-1"),
    "internal_count": (_INTS, "k-1"),
    "leaf_const": (_FLOATS, "k"),
    "num_features": (_INTS, "k"),
}
_SCALARS = {"num_leaves": _INT, "num_cat": _INT, "is_linear": _INT, "shrinkage": _FLOAT}
_REQUIRED = ("num_leaves", "num_cat", "leaf_value")
_SPLIT_REQUIRED = ("left_child", "right_child", "split_feature", "threshold")
_ONE_LEAF_READS = ("leaf_value", "leaf_count")
# Tree(const char*) reads at most this many lines of a block.
_MAX_TREE_LINES = 22
_HEADER_INTS = ("num_class", "num_tree_per_iteration", "max_feature_idx")
_ENDINGS = ("end of parameters", "end of parser")
_PANDAS = "pandas_categorical:"
_RECORD_LINE = f"[{RECORD_KEY}: "


class _Refused(ValueError):
    """What is wrong, and on which 0-based line (None: the text as a whole)."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


@dataclass
class _Lines:
    """The text's lines (without their ``\\r\\n``/``\\n``) and each line's start offset."""

    text: list[str]
    start: list[int]

    @classmethod
    def of(cls, model: str) -> "_Lines":
        raw = model.split("\n")
        starts = np.zeros(len(raw), dtype=np.int64)
        np.cumsum([len(s) + 1 for s in raw[:-1]], out=starts[1:])
        return cls([s[:-1] if s.endswith("\r") else s for s in raw], starts.tolist())


def check_model_text(model: str, source: str) -> None:
    """Refuse LightGBM model text that LightGBM would not read safely and completely.

    Raises ``ValueError`` naming ``source`` (a path, or "the model string") and, where one is
    to blame, the 1-based line: what is missing, malformed or inconsistent.
    """
    try:
        _check(model)
    except _Refused as exc:
        where = source if exc.line is None else f"{source}, line {exc.line + 1}"
        raise ValueError(f"{where}: {exc}; an incomplete or damaged LightGBM model, not loaded") from None


def _check(model: str) -> None:
    if not model.strip():
        raise _Refused("the model text is empty")
    if "\0" in model:
        raise _Refused(f"the model text holds a NUL character (at offset {model.index(chr(0))})")
    lines = _Lines.of(model)
    header, first_tree = _header(lines)
    n_features = header["max_feature_idx"] + 1
    trees, end_line = _trees(lines, first_tree, n_features)
    per_iteration = header["num_tree_per_iteration"]
    if len(trees) % per_iteration:
        raise _Refused(f"{_trees_text(len(trees))} is not a multiple of num_tree_per_iteration={per_iteration}",
                       end_line)
    if "tree_sizes" in header:
        _check_tree_sizes(lines, header["tree_sizes"], trees, end_line)
    _check_tail(lines, end_line)


def _header(lines: _Lines) -> tuple[dict, int]:
    """The header's checked values and the index of the first line after it."""
    fields: dict[str, tuple[str, int]] = {}
    i = 1
    while i < len(lines.text):
        line = lines.text[i]
        if line.startswith("Tree=") or line == "end of trees":
            break
        if line:
            key, _, value = line.partition("=")
            fields[key] = (value, i)  # LightGBM keeps the last of repeated keys
        i += 1
    else:
        raise _Refused("the text ends in the header, before any 'Tree=' block or 'end of trees'", len(lines.text) - 1)
    out: dict = {}
    for key in _HEADER_INTS:
        if key not in fields:
            if key == "num_tree_per_iteration":
                continue
            raise _Refused(f"the header has no {key}=", i)
        value, at = fields[key]
        if not re.fullmatch(_INT, value):
            raise _Refused(f"{key}={_clip(value)} is not an integer", at)
        out[key] = int(value)
    out.setdefault("num_tree_per_iteration", out["num_class"])
    for key, low in (("num_class", 1), ("num_tree_per_iteration", 1), ("max_feature_idx", 0)):
        if out[key] < low or out[key] > 2**31 - 1:
            raise _Refused(f"{key}={out[key]} is outside [{low}, 2147483647]", fields[key][1] if key in fields else i)
    if "tree_sizes" in fields:
        value, at = fields["tree_sizes"]
        if not _INTS.fullmatch(value):
            raise _Refused(f"tree_sizes={_clip(value)} is not a list of integers", at)
        out["tree_sizes"] = _ints(_tokens(value), "tree_sizes", at, low=0, high=2**63 - 1).tolist()
    return out, i


def _trees(lines: _Lines, i: int, n_features: int) -> tuple[list[int], int]:
    """The first line (``Tree=<i>``) of every tree block, each block checked, and the index of the
    'end of trees' line."""
    trees: list[int] = []
    n = len(lines.text)
    while True:
        while i < n and not lines.text[i]:
            i += 1
        if i == n:
            raise _Refused(f"the text ends after {_trees_text(len(trees))}, without 'end of trees'", n - 1)
        line = lines.text[i]
        if line == "end of trees":
            return trees, i
        if _TREE_LINE.fullmatch(line) is None:  # LightGBM does not read the number
            raise _Refused(f"expected 'Tree={len(trees)}' or 'end of trees', found {_clip(line)}", i)
        first = i
        fields: dict[str, tuple[str, int]] = {}
        i += 1
        while i < n and lines.text[i]:
            key, eq, value = lines.text[i].partition("=")
            if not eq:
                raise _Refused(f"Tree={len(trees)}: {_clip(lines.text[i])} is not a key=value field", i)
            fields[key] = (value, i)  # LightGBM keeps the last of repeated keys
            i += 1
        if i - first - 1 > _MAX_TREE_LINES:  # LightGBM would start the next block inside this one
            raise _Refused(f"Tree={len(trees)} has {i - first - 1} lines, more than LightGBM reads ({_MAX_TREE_LINES})",
                           first)
        if i == n:  # a block ends with a blank line: without it the text stops inside the tree
            raise _Refused(f"the text ends inside Tree={len(trees)}", n - 1)
        _check_tree(fields, len(trees), first, n_features)
        trees.append(first)


def _check_tree(fields: dict[str, tuple[str, int]], t: int, first: int, n_features: int) -> None:
    """One Tree= block's fields: presence, lengths, syntax and the tree they describe."""
    name = f"Tree={t}"
    for key in _REQUIRED:
        if key not in fields:
            raise _Refused(f"{name} has no {key}=", first)
    scalars: dict[str, float] = {}
    for key, pattern in _SCALARS.items():
        if key in fields:
            value, at = fields[key]
            if not re.fullmatch(pattern, value):
                raise _Refused(f"{name}: {key}={_clip(value)} is not a number", at)
            scalars[key] = float(value) if key == "shrinkage" else int(value)
    k = int(scalars["num_leaves"])
    num_cat = int(scalars["num_cat"])
    is_linear = int(scalars.get("is_linear", 0))
    if not 1 <= k <= 2**31 - 1:
        raise _Refused(f"{name}: num_leaves={k} is outside [1, 2147483647]", fields["num_leaves"][1])
    if not 0 <= num_cat < max(k, 1):
        raise _Refused(f"{name}: num_cat={num_cat} is outside [0, {max(k - 1, 0)}]", fields["num_cat"][1])
    if is_linear not in (0, 1):
        raise _Refused(f"{name}: is_linear={is_linear} is neither 0 nor 1", fields["is_linear"][1])
    splits = k > 1 or is_linear
    if splits:
        for key in _SPLIT_REQUIRED:
            if key not in fields:
                raise _Refused(f"{name} has {k} leaves but no {key}=", first)
    arrays: dict[str, list[str]] = {}
    for key, (pattern, length) in _ARRAYS.items():
        if key not in fields or (not splits and key not in _ONE_LEAF_READS):
            continue  # LightGBM reads only these of a one-leaf tree (it writes the others empty or not at all)
        value, at = fields[key]
        if not pattern.fullmatch(value):
            kind = "integers" if pattern is _INTS else "numbers"
            raise _Refused(f"{name}: {key} holds something other than {kind}: {_clip(value)}", at)
        arrays[key] = _tokens(value)
        need = k if length == "k" else k - 1
        if len(arrays[key]) != need:
            raise _Refused(f"{name}: {key} has {len(arrays[key])} values, num_leaves={k} needs {need}", at)
    for key in ("leaf_value", "leaf_const"):  # what a leaf predicts (a linear leaf: its constant and terms)
        if key in arrays:
            _refuse_non_finite(name, key, arrays[key], fields[key][1])
    if splits:
        _check_nodes(name, fields, arrays, k, num_cat, n_features)
    if num_cat > 0:
        _check_categories(name, fields, first, num_cat)
    if is_linear:
        _check_linear(name, fields, arrays, n_features)


def _refuse_non_finite(name: str, key: str, values: list[str], at: int) -> None:
    """A NaN or infinite leaf value: every prediction reaching it would be one (a malformed number
    LightGBM would read as NaN too)."""
    try:
        bad = np.flatnonzero(~np.isfinite(np.array(values, dtype=np.float64)))
    except ValueError:  # a malformed number somewhere: find it
        bad = np.array([i for i, v in enumerate(values) if not re.fullmatch(_FLOAT, v) or not np.isfinite(float(v))])
    if bad.size:
        raise _Refused(f"{name}: {key} of leaf {int(bad[0])} is {_clip(values[bad[0]])}, not a finite number (every "
                       "prediction reaching it would be NaN or infinite)", at)


def _ints(values: list[str], what: str, at: int, low: int = -(2**31), high: int = 2**31 - 1) -> np.ndarray:
    """Integer tokens as int64, each in ``[low, high]`` (by default a C int, which LightGBM parses
    them into); ``what`` names them in the message."""
    try:
        out = np.array(values, dtype=np.int64)
    except (ValueError, OverflowError):
        bad = next((v for v in values if not re.fullmatch(_INT, v) or abs(int(v)) >= 2**63), values[0])
        raise _Refused(f"{what} holds {_clip(bad)}, not a 64-bit integer", at) from None
    if out.size and (out.min() < low or out.max() > high):
        bad = out[(out < low) | (out > high)][0]
        raise _Refused(f"{what} holds {int(bad)}, outside [{low}, {high}]", at)
    return out


def _check_nodes(name: str, fields: dict[str, tuple[str, int]], arrays: dict[str, list[str]], k: int,
                 num_cat: int, n_features: int) -> None:
    """Children that form one tree (each node and leaf reached once from the root), split features
    within the model's width, decision types LightGBM knows and categorical thresholds in range."""
    if k == 1:
        return  # a linear tree of one leaf: no split
    left = _ints(arrays["left_child"], f"{name}: left_child", fields["left_child"][1])
    right = _ints(arrays["right_child"], f"{name}: right_child", fields["right_child"][1])
    for key, child in (("left_child", left), ("right_child", right)):
        bad = np.flatnonzero((child < -k) | (child > k - 2) | (child == 0))
        if bad.size:
            raise _Refused(f"{name}: {key}[{int(bad[0])}] = {int(child[bad[0]])} is no node or leaf of a tree of "
                           f"{k} leaves (nodes 1..{k - 2}, leaves -1..-{k})", fields[key][1])
    # LightGBM numbers internal nodes in the order it creates them, so a node's children come after
    # it: with every node but the root and every leaf a child exactly once, that makes one tree
    # (no cycle, nothing unreachable from the root).
    children = np.concatenate([left, right])
    expected = np.concatenate([np.arange(-k, 0), np.arange(1, k - 1)])
    if not np.array_equal(np.sort(children), expected):
        counts = np.bincount(children + k, minlength=2 * k - 1)
        twice, never = np.flatnonzero(counts > 1), np.flatnonzero(counts[np.r_[0:k, k + 1:2 * k - 1]] == 0)
        if twice.size:
            what = f"{_node(int(twice[0]) - k)} is the child of two splits"
        else:
            j = int(never[0])
            what = f"{_node(j - k if j < k else j - k + 1)} is no split's child (unreachable)"
        raise _Refused(f"{name}: {what}", fields["left_child"][1])
    parents = np.arange(k - 1)
    later = ((left < 0) | (left > parents)) & ((right < 0) | (right > parents))
    if not later.all():
        node = int(np.argmin(later))
        child = int(left[node]) if 0 < left[node] <= node else int(right[node])
        raise _Refused(f"{name}: node {node}'s child node {child} comes before it (LightGBM numbers each node "
                       "after its parent)", fields["left_child"][1])
    feature = _ints(arrays["split_feature"], f"{name}: split_feature", fields["split_feature"][1])
    bad = np.flatnonzero((feature < 0) | (feature >= n_features))
    if bad.size:
        raise _Refused(f"{name}: split_feature[{int(bad[0])}] = {int(feature[bad[0]])} is outside "
                       f"[0, {n_features - 1}] (max_feature_idx)", fields["split_feature"][1])
    if "decision_type" not in arrays:
        return
    decision = _ints(arrays["decision_type"], f"{name}: decision_type", fields["decision_type"][1])
    # bit 0: categorical, bit 1: default left, bits 2-3: missing type 0 (none), 1 (zero), 2 (NaN)
    bad = np.flatnonzero((decision < 0) | (decision > 11))
    if bad.size:
        raise _Refused(f"{name}: decision_type[{int(bad[0])}] = {int(decision[bad[0]])} is not one LightGBM writes "
                       "(0..11)", fields["decision_type"][1])
    categorical = np.flatnonzero(decision & 1)
    if categorical.size:
        if num_cat == 0:
            raise _Refused(f"{name}: split {int(categorical[0])} is categorical but num_cat=0",
                           fields["decision_type"][1])
        try:
            threshold = np.array(arrays["threshold"], dtype=np.float64)[categorical]
        except ValueError:
            raise _Refused(f"{name}: threshold holds something other than numbers", fields["threshold"][1]) from None
        bad = np.flatnonzero(~((threshold >= 0) & (threshold < num_cat) & (threshold == np.floor(threshold))))
        if bad.size:
            raise _Refused(f"{name}: the categorical split {int(categorical[bad[0]])} has threshold "
                           f"{float(threshold[bad[0]])!r}, not a category set in [0, {num_cat})", fields["threshold"][1])


def _node(child: int) -> str:
    """A child reference as text: leaves are written ~index (negative)."""
    return f"leaf {~child}" if child < 0 else f"node {child}"


def _check_categories(name: str, fields: dict[str, tuple[str, int]], first: int, num_cat: int) -> None:
    """cat_boundaries: num_cat + 1 increasing offsets from 0 to the length of cat_threshold (uint32)."""
    for key in ("cat_boundaries", "cat_threshold"):
        if key not in fields:
            raise _Refused(f"{name} has num_cat={num_cat} but no {key}=", first)
        if not _INTS.fullmatch(fields[key][0]):
            raise _Refused(f"{name}: {key} holds something other than integers: {_clip(fields[key][0])}",
                           fields[key][1])
    bounds = _ints(_tokens(fields["cat_boundaries"][0]), f"{name}: cat_boundaries", fields["cat_boundaries"][1])
    try:
        words = [int(v) for v in _tokens(fields["cat_threshold"][0])]
    except ValueError:
        raise _Refused(f"{name}: cat_threshold holds something other than integers", fields["cat_threshold"][1]) from None
    if bounds.size != num_cat + 1:
        raise _Refused(f"{name}: cat_boundaries has {bounds.size} values, num_cat={num_cat} needs {num_cat + 1}",
                       fields["cat_boundaries"][1])
    if bounds[0] != 0 or np.any(np.diff(bounds) < 0) or bounds[-1] != len(words):
        raise _Refused(f"{name}: cat_boundaries must rise from 0 to the {len(words)} values of cat_threshold",
                       fields["cat_boundaries"][1])
    if any(not 0 <= w < 2**32 for w in words):
        raise _Refused(f"{name}: cat_threshold holds a value beyond an unsigned 32-bit integer",
                       fields["cat_threshold"][1])


def _check_linear(name: str, fields: dict[str, tuple[str, int]], arrays: dict[str, list[str]], n_features: int) -> None:
    """A linear tree's leaves: as many features and coefficients as num_features says, features in range."""
    if "num_features" not in arrays:
        return  # LightGBM then reads no coefficients
    counts = _ints(arrays["num_features"], f"{name}: num_features", fields["num_features"][1])
    if np.any(counts < 0):
        raise _Refused(f"{name}: num_features holds a negative count", fields["num_features"][1])
    total = int(counts.sum())
    for key, pattern in (("leaf_features", _INTS), ("leaf_coeff", _FLOATS)):
        if key not in fields:
            continue
        value, at = fields[key]
        if not pattern.fullmatch(value):
            raise _Refused(f"{name}: {key} holds something other than numbers: {_clip(value)}", at)
        got = len(_tokens(value))
        if got != total:
            raise _Refused(f"{name}: {key} has {got} values, num_features sums to {total}", at)
    if "leaf_features" in fields:
        feats = _ints(_tokens(fields["leaf_features"][0]), f"{name}: leaf_features", fields["leaf_features"][1])
        if feats.size and (feats.min() < 0 or feats.max() >= n_features):
            raise _Refused(f"{name}: leaf_features holds a feature outside [0, {n_features - 1}]",
                           fields["leaf_features"][1])


def _check_tree_sizes(lines: _Lines, sizes: list[int], trees: list[int], end_line: int) -> None:
    """LightGBM cuts the text at the offsets ``tree_sizes`` gives: they must be the blocks' lengths."""
    if len(sizes) != len(trees):
        raise _Refused(f"tree_sizes lists {_trees_text(len(sizes))}, the text holds {len(trees)}", end_line)
    bounds = [lines.start[first] for first in trees] + [lines.start[end_line]]
    for t, size in enumerate(sizes):
        if bounds[t + 1] - bounds[t] != size:
            raise _Refused(f"tree_sizes gives Tree={t} {size} characters, its block has {bounds[t + 1] - bounds[t]}",
                           trees[t])


def _sections(lines: _Lines, i: int) -> Iterator[tuple[str, int]]:
    """``(name, line)`` of each section that begins after the trees, and of the text's last line."""
    n = len(lines.text)
    while i < n:
        line = lines.text[i]
        if line in ("parameters:", "parser:"):
            end = "end of parameters" if line == "parameters:" else "end of parser"
            start = i
            while i < n and lines.text[i] != end:
                i += 1
            if i == n:
                raise _Refused(f"the {line[:-1]} section has no '{end}' line: the text stops inside it", start)
            yield end, i
        elif line.startswith(_PANDAS):
            yield _PANDAS, i
        i += 1


def _check_tail(lines: _Lines, end_line: int) -> None:
    """What follows 'end of trees': closed sections and a complete last line."""
    last_kind, last_line = "end of trees", end_line
    for kind, at in _sections(lines, end_line + 1):
        last_kind, last_line = kind, at
    text = lines.text
    if last_kind == _PANDAS:
        return  # the Python package refuses a cut or damaged line itself (json.loads, wrapped by the caller)
    # LightGBM's own writer ends right after its last section, one newline; anything else after it
    # (a blank line, part of a word) is the start of the pandas_categorical: line the Python
    # package appends, cut off.
    complete = last_kind in _ENDINGS and last_line == len(text) - 2 and text[-1] == ""
    if not complete:
        after = {"end of trees": "after its trees", "end of parameters": "after its parameters",
                 "end of parser": "after its parser section"}[last_kind]
        raise _Refused(f"the text stops {after}, before its last line (pandas_categorical:, which the Python "
                       "package writes, or LightGBM's own 'end of parameters')", len(text) - 1)
    if any(s.startswith(_RECORD_LINE) for s in text[end_line:last_line]):
        raise _Refused("the text holds boostplug's objective record but stops before the pandas_categorical: line "
                       "that the Python package writes last", len(text) - 1)


def _trees_text(n: int) -> str:
    return "1 tree" if n == 1 else f"{n} trees"


def _tokens(value: str) -> list[str]:
    """The space-separated tokens of a field, as LightGBM's Split(' ') gives them (empty ones skipped)."""
    if not value:
        return []
    if "  " in value or value[0] == " " or value[-1] == " ":
        return [t for t in value.split(" ") if t]
    return value.split(" ")


def _clip(text: str, n: int = 60) -> str:
    return repr(text if len(text) <= n else text[:n] + "...")
