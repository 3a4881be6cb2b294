"""What an objective declares: its parameters (:class:`Param`, with the :class:`~._search.Search`
range ``--tune`` explores) and its Hessian modes (:class:`Hessian`). The contract they belong to:
docs/objectives/index.md ("The objective contract")."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping

import numpy as np

from .._validation import check_choice, check_flag, check_int, check_real, did_you_mean, show
from ._search import Search

__all__ = ["ROW_KINDS", "check_params", "Search", "Param", "Hessian"]

#: What a declared parameter may be (see :class:`Param`).
PARAM_KINDS = ("real", "int", "choice", "bool", "rows", "row_index", "custom")
#: The kinds that hold row indices of one training set (:meth:`Loss.row_params`).
ROW_KINDS = ("rows", "row_index")

#: What a declared Hessian mode may be (see :class:`Hessian`).
HESSIAN_KINDS = ("exact", "bound", "fitting")

#: What a Hessian mode's gradient may be (see :class:`Hessian`).
GRADIENT_KINDS = ("exact", "scaled", "lambda", "newton")

_FLOAT_MAX = float(np.finfo(np.float64).max)


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
    return {**defaults, **params}


@dataclass(frozen=True)
class Param:
    """One declared parameter of an objective: its ``default``, ``kind``, a one-line ``doc`` and the
    range ``search`` that ``boostplug compare --tune`` explores (``None``: not tuned). Kinds:

    * ``"real"``: a finite number in ``[low, high]`` (``(low, high]`` with ``low_open``; ``None``
      ends: float64's range); ``choices``: strings accepted besides numbers (QBRank's ``tau="grade"``);
    * ``"int"``: an integer (not a bool) in ``[low, high]``; ``"bool"``: ``True`` or ``False``;
    * ``"choice"``: one of the strings ``choices`` (``ignore_case``: any case, stored as declared);
    * ``"rows"``: row-index pairs of the training set, shape ``(n, 2)``, or a
      :class:`~boostplug.keyed_pairs.KeyedPairs` table that the adapters map onto each training
      set's rows (its weights to the parameter ``weights_in``); ``"row_index"``: distinct rows. Both
      hold rows of one training set (:meth:`Loss.row_params`) and are checked by ``convert(value,
      what, n_docs)`` (``n_docs``: the data's rows, ``None`` before any data):
      :func:`boostplug.keyed_pairs.pair_rows` and :func:`~boostplug.keyed_pairs.row_index`;
    * ``"custom"``: ``convert(value)`` returns the value to store or raises ``ValueError``/``TypeError``.

    A parameter whose default is ``None`` also accepts ``None``. ``stand_in``: what :meth:`Loss.check`
    binds in place of a value tied to the data (one per explicit pair, say). ``needs``: the parameter
    without which this one has no effect (a flag that must be on, or ``"position"``: the data's positions).
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
    needs: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in PARAM_KINDS:
            raise ValueError(f"Param kind must be one of {list(PARAM_KINDS)}, got {show(self.kind)}")
        object.__setattr__(self, "choices", tuple(self.choices))
        if any(not isinstance(c, str) for c in self.choices):
            raise TypeError(f"Param choices must be strings, got {self.choices!r}")
        if self.kind == "choice" and not self.choices:
            raise TypeError("a 'choice' Param needs choices=(...)")
        if self.kind in ("custom", *ROW_KINDS) and not callable(self.convert):
            raise TypeError(f"a {self.kind!r} Param needs convert=<callable>")
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
            return check_int(what, value, self.low, self.high)
        if kind == "choice":
            if self.ignore_case and isinstance(value, str):
                value = {c.lower(): c for c in self.choices}.get(value.lower(), value)
            return check_choice(what, value, self.choices)
        if kind == "bool":
            return check_flag(value, what)
        assert self.convert is not None  # custom and rows (checked in __post_init__)
        if kind in ROW_KINDS:
            return self.convert(value, what, n_docs)
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
