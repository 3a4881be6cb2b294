"""What an objective declares: its parameters (:class:`Param`, with the :class:`Search` range
``--tune`` explores) and its Hessian modes (:class:`Hessian`). The contract they belong to:
docs/objectives/index.md ("The objective contract")."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping

import numpy as np

from .._validation import INT64_MAX, check_choice, check_flag, check_real, did_you_mean, show
from ..keyed_pairs import KeyedPairs
from ..pairs import check_pairs, check_rows

__all__ = ["PARAM_KINDS", "ROW_KINDS", "HESSIAN_KINDS", "GRADIENT_KINDS", "check_params", "Search", "Param",
           "Hessian"]

#: What a declared parameter may be (see :class:`Param`).
PARAM_KINDS = ("real", "int", "choice", "bool", "rows", "row_index", "custom")
#: The kinds that hold row indices of one training set (:meth:`Loss.row_params`).
ROW_KINDS = ("rows", "row_index")

#: What a declared Hessian mode may be (see :class:`Hessian`).
HESSIAN_KINDS = ("exact", "bound", "fitting")

#: What a Hessian mode's gradient may be (see :class:`Hessian`).
GRADIENT_KINDS = ("exact", "scaled", "lambda", "newton")

_FLOAT_MAX = float(np.finfo(np.float64).max)
_INT64_MIN = -INT64_MAX - 1


def check_params(name: str, params: Mapping[str, Any], defaults: Mapping[str, Any]) -> dict[str, Any]:
    """Merge ``params`` over ``defaults``; unknown names are a ``ValueError`` naming the objective,
    the closest known names ("did you mean") and every known one."""
    unknown = [k for k in params if k not in defaults]
    if unknown:
        hint = did_you_mean(unknown, defaults, quote=True)
        raise ValueError(
            f"unknown parameter(s) {sorted(map(str, unknown))} for objective {name!r}; {hint}{' ' if hint else ''}"
            f"its parameters are {sorted(defaults)}"
        )
    merged = dict(defaults)
    merged.update(params)
    return merged


# ---- declarations ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Search:
    """The range ``boostplug compare --tune`` searches for one parameter: ``low``..``high``
    (``log``-uniform or uniform; ``integer`` is set for an ``int`` parameter) or ``choices``."""

    low: float | None = None
    high: float | None = None
    log: bool = False
    choices: tuple[Any, ...] = ()
    integer: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "choices", tuple(self.choices))
        if self.choices:
            if self.low is not None or self.high is not None or self.log:
                raise TypeError(f"Search takes either choices or low/high, got both: {self!r}")
            return
        if self.low is None or self.high is None:
            raise TypeError("Search needs low and high (a range) or choices=(...)")
        for end in (self.low, self.high):
            if isinstance(end, (bool, np.bool_)) or not isinstance(end, (int, float, np.integer, np.floating)) \
                    or not math.isfinite(end):
                raise TypeError(f"Search's low and high must be finite numbers, got {show(end)}")
        if not self.low < self.high or (self.log and self.low <= 0):
            raise ValueError(f"Search needs low < high{' and low > 0 (log)' if self.log else ''}, "
                             f"got low={show(self.low)}, high={show(self.high)}")


@dataclass(frozen=True)
class Param:
    """One declared parameter of an objective: its ``default``, ``kind``, a one-line ``doc`` and the
    range ``search`` that ``boostplug compare --tune`` explores (``None``: not tuned). Kinds:

    * ``"real"``: a finite number in ``[low, high]`` (``(low, high]`` with ``low_open``; ``None``
      ends: float64's range); ``choices``: strings accepted besides numbers (QBRank's ``tau="grade"``);
    * ``"int"``: an integer (not a bool) in ``[low, high]``; ``"bool"``: ``True`` or ``False``;
    * ``"choice"``: one of the strings ``choices`` (``ignore_case``: any case, stored as declared);
    * ``"rows"``: row-index pairs of the training set, shape ``(n, 2)``, checked against its rows when
      bound, or a :class:`~boostplug.keyed_pairs.KeyedPairs` table that the adapters map onto each
      training set's rows (its weights to the parameter ``weights_in``); ``"row_index"``: distinct rows;
    * ``"custom"``: ``convert(value)`` returns the value to store or raises ``ValueError``/``TypeError``.

    A parameter whose default is ``None`` also accepts ``None``. ``stand_in``: what :meth:`Loss.check`
    binds in place of a value tied to the data (one per explicit pair, say).
    """

    default: Any
    kind: str = "real"
    doc: str = ""
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    choices: tuple[str, ...] = ()
    ignore_case: bool = False
    convert: Callable[[Any], Any] | None = None
    search: Search | None = None
    stand_in: Any = None
    #: ``rows`` kind: the parameter that takes the per-pair weights of a keyed table.
    weights_in: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in PARAM_KINDS:
            raise ValueError(f"Param kind must be one of {list(PARAM_KINDS)}, got {show(self.kind)}")
        object.__setattr__(self, "choices", tuple(self.choices))
        if any(not isinstance(c, str) for c in self.choices):
            raise TypeError(f"Param choices must be strings, got {self.choices!r}")
        if self.kind == "choice" and not self.choices:
            raise TypeError("a 'choice' Param needs choices=(...)")
        if self.kind == "custom" and not callable(self.convert):
            raise TypeError("a 'custom' Param needs convert=<callable>")
        if self.search is not None and not isinstance(self.search, Search):
            raise TypeError(f"Param search must be a Search, got {type(self.search).__name__}")
        if self.kind == "int" and self.search is not None and not self.search.choices:
            object.__setattr__(self, "search", replace(self.search, integer=True))

    def check(self, value: Any, name: str = "value", *, objective: str = "", n_docs: int | None = None) -> Any:
        """``value`` as stored, else a ``ValueError``/``TypeError`` naming ``objective``, ``name``
        and the value. ``n_docs``: the data's rows (``rows`` kind; ``None``: any row index)."""
        what = f"{objective}: {name}" if objective else name
        if value is None and self.default is None:
            return None
        kind = self.kind
        if kind == "real":
            if self.choices and isinstance(value, str):
                if value in self.choices:
                    return value
                raise ValueError(f"{what} must be one of {list(self.choices)} or a number in "
                                 f"{self._range()}, got {show(value)}")
            lo = -_FLOAT_MAX if self.low is None else self.low
            hi = _FLOAT_MAX if self.high is None else self.high
            return check_real(what, value, lo, hi, lo_open=self.low_open and self.low is not None)
        if kind == "int":
            return _check_int(what, value, self.low, self.high)
        if kind == "choice":
            if self.ignore_case and isinstance(value, str):
                value = {c.lower(): c for c in self.choices}.get(value.lower(), value)
            return check_choice(what, value, self.choices)
        if kind == "bool":
            return check_flag(value, what)
        if kind == "rows" and isinstance(value, KeyedPairs):
            if n_docs is None:
                return value
            raise TypeError(f"{what} is a KeyedPairs table, which names documents, not rows: bind the objective "
                            "through a boostplug adapter or ranker given each row's qid and doc keys, or pass "
                            "keyed.rows(qid, doc)'s row-index pairs")
        if kind in ROW_KINDS:
            check = check_pairs if kind == "rows" else check_rows
            rows = np.array(check(value, INT64_MAX if n_docs is None else n_docs, name=what))
            rows.setflags(write=False)
            return rows
        assert self.convert is not None  # custom (checked in __post_init__)
        try:
            return self.convert(value)
        except (TypeError, ValueError) as e:
            msg = str(e) if name in str(e) else f"{name}: {e}"
            raise type(e)(f"{objective}: {msg}" if objective else msg) from None

    def stand_in_for(self, value: Any) -> Any:
        """What :meth:`Loss.check` binds in place of ``value`` to its two-document stand-in query:
        ``None`` as it is, the stand-in's one pair (``rows``) or first row (``row_index``), the
        declared ``stand_in`` of a parameter tied to the data, else ``value``."""
        if value is None:
            return None
        if self.kind in ROW_KINDS:
            return np.array([[0, 1]] if self.kind == "rows" else [0], dtype=np.int64)
        return value if self.stand_in is None else self.stand_in

    def _range(self) -> str:
        lo = "-inf" if self.low is None else f"{self.low:g}"
        hi = "inf" if self.high is None else f"{self.high:g}"
        return f"{'(' if self.low_open else '['}{lo}, {hi}]"


def _check_int(what: str, value: Any, low: float | None, high: float | None) -> int:
    """``value`` as an int in ``[low, high]`` (``None``: unbounded, within int64, which the kernels
    hold it in); bools and floats are a ``TypeError``. The message gives the bounds exactly, and
    names the int64 bound too when the value breaks it (``2**70`` is not refused as "must be >= 1")."""
    lo = _INT64_MIN if low is None else low
    hi = INT64_MAX if high is None else high

    def exact(v: float) -> str:
        return str(int(v)) if float(v).is_integer() else f"{v:g}"

    rng = (f" in [{exact(low)}, {exact(high)}]" if low is not None and high is not None
           else f" >= {exact(low)}" if low is not None else f" <= {exact(high)}" if high is not None else "")
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{what} must be an integer{rng}, got {show(value)}")
    if not lo <= value <= hi:
        if (low is None or value >= low) and (high is None or value <= high):  # beyond int64 only
            rng = (f" in [{exact(lo)}, {exact(hi)}] (the kernels hold it in a 64-bit integer: "
                   f"{'at most 2^63 - 1' if value > hi else 'at least -2^63'})")
        raise ValueError(f"{what} must be an integer{rng}, got {show(value)}")
    return int(value)


@dataclass(frozen=True)
class Hessian:
    """One declared Hessian mode: its ``kind`` (``"exact"``: the loss's Hessian diagonal; ``"bound"``:
    a diagonal that majorises the Hessian; ``"fitting"``: a paper's fitting weights), a one-line
    ``text``, and what the mode's gradient is (``gradient``):

    * ``"exact"`` (default): d loss / d score;
    * ``"scaled"``: that times a positive factor per document, stated in ``scaling`` (QBRank's
      ``"mean"``); only with a ``"fitting"`` Hessian;
    * ``"lambda"``: d loss / d score with the loss's weights, which depend on the scores, held at
      the current ones (LambdaRank's lambdas); the objective then takes ``weights_at=``;
    * ``"newton"``: the Hessian's diagonal times an approximate Newton step (LightGBM's
      ``rank_xendcg``); only with a ``"fitting"`` Hessian; ``-grad / hess`` must descend the loss.

    ``tolerance``: how closely the gradient (and an exact Hessian) follow the checks' derivatives,
    relative to the largest: 0 for rounding; a copy of a built-in states its approximations' size.
    """

    kind: str
    text: str
    gradient: str = "exact"
    scaling: str = ""
    tolerance: float = 0.0

    def __post_init__(self) -> None:
        if self.kind not in HESSIAN_KINDS:
            raise ValueError(f"Hessian kind must be one of {list(HESSIAN_KINDS)}, got {show(self.kind)}")
        if not isinstance(self.text, str) or not self.text:
            raise TypeError("a Hessian mode needs a one-line text saying what it is")
        if self.gradient not in GRADIENT_KINDS:
            raise ValueError(f"Hessian gradient must be one of {list(GRADIENT_KINDS)}, got {show(self.gradient)}")
        if not isinstance(self.scaling, str):
            raise TypeError(f"Hessian scaling must be a one-line text, got {show(self.scaling)}")
        if self.gradient == "scaled" and not self.scaling.strip():
            raise TypeError("a Hessian mode with gradient='scaled' needs scaling='...': one line saying by what "
                            "positive factor per document d loss / d score is multiplied")
        if isinstance(self.tolerance, bool) or not isinstance(self.tolerance, (int, float)) \
                or not 0.0 <= self.tolerance < 1.0:
            raise ValueError(f"Hessian tolerance must be a number in [0, 1), got {show(self.tolerance)}")
        if self.gradient != "scaled" and self.scaling:
            raise TypeError(f"a Hessian mode with gradient={self.gradient!r} is not rescaled; got "
                            f"scaling={self.scaling!r} (declare gradient='scaled')")
