"""The objective contract: what an objective declares, and the machinery that serves it.

An objective is a subclass of :class:`Loss` that declares its parameters and Hessian modes
and implements two methods; everything else (parameter validation with messages that name
the objective, the parameter and the value; label, group and weight checks; the finite check
and the Hessian floor; the module-level ``prepare``/``loss``/``grad_hess``) is done here::

    class PairLogistic(Loss):
        name = "pair_logistic"
        summary = "pairwise logistic loss on the critical pairs"
        params = {"sigma": Param(1.0, "real", "logistic slope", low=0.0, low_open=True,
                                 search=Search(0.5, 4.0, log=True))}
        hessians = {"exact": Hessian("exact", "the diagonal of the loss's Hessian")}

        def setup(self):            # label-only work, once per data set
            ...
        def _loss(self, scores):    # validated float64 scores -> float
            ...
        def _grad_hess(self, scores):
            ...

    boostplug.objectives.register(PairLogistic)

Conventions every objective follows (stated here once; the objectives' pages refer to them):

* ``loss`` is a *sum* over queries (each query's loss times its weight), not a mean, like
  LightGBM's ``lambdarank``: gradient magnitudes do not shrink as the data set grows, so the
  frameworks' ``min_sum_hessian_in_leaf`` / ``min_child_weight`` keep their meaning.
* ``grad`` is what the Hessian mode declares (:class:`Hessian`'s ``gradient``): ``"exact"``,
  d loss / d score; or ``"scaled"``, d loss / d score times a positive factor per document
  that the mode's ``scaling`` states (a paper's averaged targets): the same signs and a descent
  direction, but not the derivative, so only a ``"fitting"`` Hessian goes with it.
* Whatever the declaration, an objective may multiply all of one call's gradients and Hessians
  by one positive constant when ``sum |grad|`` or ``sum hess`` exceeds ``GRAD_SUM_CAP`` (1e15,
  which exponential losses reach), so that the larger sum is 1e15: every Newton leaf ``-G/H``
  and split ranking is unchanged (an L2 leaf penalty then acts as a smaller one), but ``grad``
  is then a constant multiple of what the mode declares.
* ``weights`` are *per-query* weights, shape ``(n_queries,)`` (XGBoost's ranking convention;
  the LightGBM adapter converts per-row weights that are constant within each query).
* ``loss`` and ``grad_hess`` never return inf or NaN: a non-finite result is a
  :class:`NonFiniteError` (a ``ValueError``) naming the first offending row or query, and
  saying whether the data overflowed float64 (scores, labels or weights too large: it names
  them) or the objective itself computed inf or NaN from moderate inputs (a bug in it).
* Every Hessian is at least :data:`HESSIAN_FLOOR`, so Newton leaves never divide by zero. A
  document without any term at all (zero gradient and an exactly zero Hessian: the documents
  of one-document and single-label queries, a QBRank document with no active pair and no
  squared-error term) gets :data:`NO_INFO_HESSIAN` instead; see there.
* ``loss``/``grad_hess`` never mutate their inputs and do no I/O; everything that depends only
  on labels, groups, weights and parameters is computed once, in :meth:`Loss.setup`.
* Each Hessian mode is declared with its kind: ``"exact"`` (the diagonal of the loss's
  Hessian), ``"bound"`` (a diagonal that bounds it from above) or ``"fitting"`` (the paper's
  fitting weights), and with its gradient's kind (above; ``"exact"`` unless declared).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Callable, ClassVar, Mapping, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import (INT64_MAX, check_choice, check_flag, check_labels, check_real, check_scores, check_weights,
                           did_you_mean, show)
from ..groups import check_group_ptr
from ..keyed_pairs import KeyedPairs
from ..pairs import check_pairs, check_rows
from ._finish import floor_in_place

__all__ = ["HESSIAN_FLOOR", "NO_INFO_HESSIAN", "floor_hessian", "check_params", "PARAM_KINDS", "HESSIAN_KINDS",
           "GRADIENT_KINDS", "Search", "Param", "Hessian", "Loss", "check_contract",
           "ModuleFunctions", "module_functions", "scores_function", "NonFiniteError", "MODERATE_SCORE",
           "MODERATE_LABEL", "MODERATE_WEIGHT", "DOC_WORK"]

#: Smallest Hessian any objective returns (a positive floor for Newton leaves).
HESSIAN_FLOOR = 1e-6

#: Hessian of a document the loss does not involve (zero gradient, zero Hessian). Any
#: positive value leaves the gradient sums alone; XGBoost (hist) trains the same models faster
#: than with HESSIAN_FLOOR, and 1e-5 stays far below LightGBM's min_sum_hessian_in_leaf=1e-3
#: (measurements: docs/results/objectives_notes/README.md).
NO_INFO_HESSIAN = 1e-5

#: Dispatch work (:mod:`boostplug._core.dispatch`) of one document in QBRank's and MPBoost's
#: kernels: as much as 50 pair visits, so they go parallel from 100,000 documents
#: (docs/results/objectives_notes/README.md).
DOC_WORK = 50

#: Inputs within these bounds are moderate: a loss computed sensibly from them stays far inside
#: float64 (a pairwise exponential of a label gap times a score gap is at most exp(31 * 20) =
#: 1e269; gains 2^31), so a non-finite result there is the objective's own doing (0 * inf,
#: inf - inf, 0 / 0, x / 0), not an overflow of the data (:class:`NonFiniteError`).
MODERATE_SCORE = 10.0
MODERATE_LABEL = 31.0
MODERATE_WEIGHT = 1e30

#: What a declared parameter may be (see :class:`Param`).
PARAM_KINDS = ("real", "int", "choice", "bool", "rows", "row_index", "custom")
#: The kinds that hold row indices of one training set (:meth:`Loss.row_params`).
ROW_KINDS = ("rows", "row_index")

#: What a declared Hessian mode may be (see :class:`Hessian`).
HESSIAN_KINDS = ("exact", "bound", "fitting")

#: What a Hessian mode's gradient may be (see :class:`Hessian`).
GRADIENT_KINDS = ("exact", "scaled")

_FLOAT_MAX = float(np.finfo(np.float64).max)
_INT64_MIN = -INT64_MAX - 1

#: Stand-in value of a ``rows`` parameter when an objective is checked without its data.
_STAND_IN_ROWS = np.array([[0, 1]], dtype=np.int64)
_STAND_IN_INDEX = np.array([0], dtype=np.int64)


def floor_hessian(grad: NDArray[np.float64], hess: NDArray[np.float64]) -> NDArray[np.float64]:
    """The Hessian the frameworks get: :data:`NO_INFO_HESSIAN` where gradient and Hessian are
    both exactly 0 (a document the loss does not involve), else at least :data:`HESSIAN_FLOOR`."""
    no_info = (hess == 0.0) & (grad == 0.0)
    return np.where(no_info, NO_INFO_HESSIAN, np.maximum(hess, HESSIAN_FLOOR))


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
    """One declared parameter of an objective: its ``default``, ``kind``, a one-line ``doc`` and
    the range ``search`` that ``boostplug compare --tune`` explores (``None``: not tuned).

    Kinds (:data:`PARAM_KINDS`):

    * ``"real"``: a finite number in ``[low, high]`` (``(low, high]`` with ``low_open=True``;
      ``None`` ends: the float64 range); ``choices`` lists strings accepted besides numbers
      (QBRank's ``tau="grade"``);
    * ``"int"``: an integer (not a bool) in ``[low, high]``;
    * ``"choice"``: one of the strings ``choices`` (``ignore_case``: any case, stored as declared);
    * ``"bool"``: ``True`` or ``False``;
    * ``"rows"``: row indices of the training set, shape ``(n, 2)`` (QBRank's explicit ``pairs``);
      checked against the data's rows when the objective is bound to it. A
      :class:`~boostplug.keyed_pairs.KeyedPairs` table is accepted too (stored as given): the
      framework adapters and rankers map it onto the rows of each training set they are handed
      (its weights going to the parameter ``weights_in`` names); binding it without the rows'
      keys is a ``TypeError``;
    * ``"row_index"``: a set of rows of the training set, a 1-d array of distinct indices
      (QBRank's ``labeled_rows``), checked likewise;
    * ``"custom"``: ``convert(value)`` returns the value to store or raises ``ValueError``/``TypeError``.

    ``stand_in``: for a parameter tied to the data (one value per explicit pair, say), the value
    :meth:`Loss.check` binds in its place to the two-document stand-in query (``rows`` parameters
    are stood in by that query's one pair). A parameter whose default is ``None`` also accepts ``None``. Values are stored as checked
    (``float``/``int``/``str``/``bool``, a read-only int64 array for ``rows``).
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

    def _range(self) -> str:
        lo = "-inf" if self.low is None else f"{self.low:g}"
        hi = "inf" if self.high is None else f"{self.high:g}"
        return f"{'(' if self.low_open else '['}{lo}, {hi}]"


def _check_int(what: str, value: Any, low: float | None, high: float | None) -> int:
    """``value`` as an int in ``[low, high]`` (``None``: unbounded); bools and floats are a ``TypeError``."""
    lo = _INT64_MIN if low is None else low
    hi = INT64_MAX if high is None else high
    rng = (f" in [{low:g}, {high:g}]" if low is not None and high is not None
           else f" >= {low:g}" if low is not None else f" <= {high:g}" if high is not None else "")
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{what} must be an integer{rng}, got {show(value)}")
    if not lo <= value <= hi:
        raise ValueError(f"{what} must be an integer{rng}, got {show(value)}")
    return int(value)


@dataclass(frozen=True)
class Hessian:
    """One declared Hessian mode: its ``kind`` (:data:`HESSIAN_KINDS`: ``"exact"``, ``"bound"``
    an upper bound of the true Hessian, ``"fitting"`` the paper's fitting weights), a one-line
    ``text`` saying what it is, and what the mode's gradient is (:data:`GRADIENT_KINDS`):

    * ``gradient="exact"`` (the default): d loss / d score;
    * ``gradient="scaled"``: d loss / d score times a positive factor per document, which
      ``scaling`` states in one line (QBRank's ``"mean"``: divided by the document's entry
      count). Only a ``"fitting"`` Hessian may go with it (:func:`check_contract`): an exact or
      bounding Hessian is one of the loss, whose derivative a scaled gradient is not.
    """

    kind: str
    text: str
    gradient: str = "exact"
    scaling: str = ""

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
        if self.gradient == "exact" and self.scaling:
            raise TypeError(f"a Hessian mode with gradient='exact' is not rescaled; got scaling={self.scaling!r} "
                            "(declare gradient='scaled')")


# ---- the base class ---------------------------------------------------------------------------
class Loss:
    """An objective: subclass it, declare ``name``, ``summary``, ``params`` and ``hessians``,
    implement ``_loss`` and ``_grad_hess`` (and ``setup``), and :func:`register` it.

    An instance is the objective bound to one data set's labels, groups and per-query weights
    (``Loss(labels, group_ptr, weights=..., **params)``). Construction validates them and the
    parameters once, stores the parameters (``self.settings`` and one attribute per name, e.g.
    ``self.sigma``; with one Hessian mode ``self.hessian`` is that mode) and calls
    :meth:`setup`; the per-round ``loss(scores)`` / ``grad_hess(scores)`` validate only the scores.

    Class attributes:
        name: the objective's name in messages (and, by default, in the registry).
        summary: one line for listings.
        params: ``{name: Param}``; the ``hessian`` choice is added from ``hessians`` when there
            are several modes (do not declare it).
        hessians: ``{mode: Hessian}``, at least one.
        default_hessian: the default mode (``None``: the first declared).
        fresh_output: ``True`` when ``_grad_hess`` returns new arrays every call (saves a copy).
    """

    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    params: ClassVar[Mapping[str, Param]] = {}
    hessians: ClassVar[Mapping[str, Hessian]] = {}
    default_hessian: ClassVar[str | None] = None
    #: True when ``_grad_hess`` returns arrays it made in that call and keeps no reference to
    #: (then ``grad_hess`` floors the Hessian in place instead of in a copy).
    fresh_output: ClassVar[bool] = False

    def __init__(
        self,
        labels: ArrayLike,
        group_ptr: ArrayLike,
        *,
        weights: ArrayLike | None = None,
        **params: Any,
    ) -> None:
        self.labels: NDArray[np.float64] = check_labels(labels).copy()
        self.labels.setflags(write=False)
        self.group_ptr: NDArray[np.int64] = check_group_ptr(group_ptr, n_docs=self.labels.shape[0]).copy()
        self.group_ptr.setflags(write=False)
        n_queries = self.group_ptr.shape[0] - 1
        w = check_weights(weights, n_queries, name="weights (one per query)")
        self.query_weights: NDArray[np.float64] = (
            np.ones(n_queries, dtype=np.float64) if w is None else w.copy()
        )
        self.query_weights.setflags(write=False)
        #: the validated parameters (declared defaults, then the given ones)
        self.settings: dict[str, Any] = self.resolve_params(params, n_docs=self.n_docs)
        if len(self.hessians) == 1:
            self.hessian: str = next(iter(self.hessians))
        for key, value in self.settings.items():
            setattr(self, key, value)
        self.setup()

    # -- the declarations, as the registry and the adapters read them ----------------------------
    @classmethod
    def declared_params(cls) -> dict[str, Param]:
        """``params`` plus the ``hessian`` choice when several Hessian modes are declared."""
        out = dict(cls.params)
        if len(cls.hessians) > 1:
            modes = tuple(cls.hessians)
            kinds = {m: h.kind + (", scaled gradient" if h.gradient == "scaled" else "")
                     for m, h in cls.hessians.items()}
            out["hessian"] = Param(
                cls.default_hessian or modes[0], "choice",
                "Hessian mode: " + ", ".join(f"{m} ({k})" for m, k in kinds.items()), choices=modes)
        return out

    @classmethod
    def defaults(cls) -> dict[str, Any]:
        """Every parameter's default, in declaration order."""
        return {k: p.default for k, p in cls.declared_params().items()}

    @classmethod
    def row_params(cls) -> tuple[str, ...]:
        """Names of the parameters holding row indices of one training set (kinds ``rows`` and
        ``row_index``: QBRank's ``pairs`` and ``labeled_rows``)."""
        return tuple(k for k, p in cls.declared_params().items() if p.kind in ROW_KINDS)

    @classmethod
    def hessian_texts(cls) -> dict[str, str]:
        """Hessian mode -> what it is."""
        return {m: h.text for m, h in cls.hessians.items()}

    @classmethod
    def hessian_kinds(cls) -> dict[str, str]:
        """Hessian mode -> ``"exact"``, ``"bound"`` or ``"fitting"``."""
        return {m: h.kind for m, h in cls.hessians.items()}

    @classmethod
    def gradient_kinds(cls) -> dict[str, str]:
        """Hessian mode -> what its gradient is: ``"exact"`` (d loss / d score) or ``"scaled"``."""
        return {m: h.gradient for m, h in cls.hessians.items()}

    @classmethod
    def search_space(cls, params: Mapping[str, Any]) -> dict[str, Search]:
        """What ``--tune`` searches given the other settings ``params`` (every parameter, defaults
        filled in): by default each parameter's declared ``search``. Override when the range
        depends on another setting (MPBoost searches only the chosen DDF's own parameter)."""
        return {k: p.search for k, p in cls.declared_params().items() if p.search is not None}

    @classmethod
    def resolve_params(cls, params: Mapping[str, Any], *, n_docs: int | None = None) -> dict[str, Any]:
        """The declared defaults with ``params`` over them, each value checked (``ValueError`` /
        ``TypeError`` naming the objective, the parameter and the value; unknown names get a
        "did you mean"). ``n_docs``: the data's rows, for ``rows`` parameters."""
        declared = cls.declared_params()
        merged = check_params(cls.name, params, {k: p.default for k, p in declared.items()})
        return {k: declared[k].check(v, k, objective=cls.name, n_docs=n_docs) for k, v in merged.items()}

    @classmethod
    def check(cls, **params: Any) -> dict[str, Any]:
        """Validate ``params`` without data and return them resolved (defaults filled in).

        Each value is checked (``rows`` parameters for their form only: they are row indices of
        data not given here), then the objective is bound to a two-document stand-in query so
        that the checks of :meth:`setup` run too (a ``rows`` parameter is replaced by the
        stand-in's one pair)."""
        resolved = cls.resolve_params(params)
        rows = set(cls.row_params())
        declared = cls.declared_params()
        stand_in = {k: (v if v is None else _STAND_IN_ROWS if k in rows and declared[k].kind == "rows"
                        else _STAND_IN_INDEX if k in rows
                        else declared[k].stand_in if k in declared and declared[k].stand_in is not None else v)
                    for k, v in params.items()}
        cls(np.zeros(2), np.array([0, 2], dtype=np.int64), **stand_in)
        return resolved

    # -- to implement ---------------------------------------------------------------------------
    def setup(self) -> None:
        """Work that depends only on labels, groups, weights and parameters (pairs, label levels,
        ideal DCGs); may raise ``ValueError`` for a combination the data cannot serve."""

    def _loss(self, scores: NDArray[np.float64]) -> float:  # pragma: no cover - abstract
        raise NotImplementedError

    def _grad_hess(
        self, scores: NDArray[np.float64]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:  # pragma: no cover - abstract
        raise NotImplementedError

    # -- what the base provides ------------------------------------------------------------------
    @property
    def n_docs(self) -> int:
        return int(self.labels.shape[0])

    @property
    def n_queries(self) -> int:
        return int(self.group_ptr.shape[0] - 1)

    def _check(self, scores: ArrayLike) -> NDArray[np.float64]:
        s = check_scores(scores)
        if s.shape[0] != self.n_docs:
            raise ValueError(
                f"{self.name}: got {s.shape[0]} scores for a data set of {self.n_docs} documents"
            )
        return s

    def loss(self, scores: ArrayLike) -> float:
        """The objective's value at ``scores`` (sum over queries, weighted); :class:`NonFiniteError`
        when it is inf or NaN."""
        s = self._check(scores)
        value = float(self._loss(s))
        if not math.isfinite(value):
            self._refuse_non_finite_loss(s, value)
        return value

    def grad_hess(self, scores: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """The gradient (d loss / d score, or its rescaling the mode declares) and the Hessian
        (diagonal) of the chosen mode."""
        s = self._check(scores)
        g, h = self._grad_hess(s)
        n = s.shape[0]
        if np.shape(g) != (n,) or np.shape(h) != (n,):
            raise ValueError(f"{self.name}: _grad_hess returned shapes {np.shape(g)} and {np.shape(h)} for "
                             f"{n} scores; both must be ({n},)")
        g = np.ascontiguousarray(g, dtype=np.float64)
        # the floor is applied in place: on a copy unless _grad_hess made the array this call
        h = np.ascontiguousarray(h, dtype=np.float64) if self.fresh_output else np.array(h, dtype=np.float64)
        first, n_bad = floor_in_place(g, h, HESSIAN_FLOOR, NO_INFO_HESSIAN)
        if first >= 0:
            self._refuse_non_finite(s, g, h, first, n_bad)
        return g, h

    def _refuse_non_finite(self, scores: NDArray[np.float64], g: NDArray[np.float64], h: NDArray[np.float64],
                           i: int, n_bad: int) -> None:
        """A gradient or Hessian that is inf or NaN is a :class:`NonFiniteError` naming the row, its
        query and either the data's values that overflowed or the objective's own bug: the
        frameworks must never receive inf or NaN."""
        q = int(np.searchsorted(self.group_ptr, i, side="right") - 1)
        found = f"at row {i} (query {q}, {n_bad} such rows): grad {float(g[i])}, hess {float(h[i])}"
        message, cause = self._non_finite_message(scores, q, "_grad_hess",
                                                  overflow=f"the gradient or Hessian overflows float64 {found}",
                                                  returned=f"_grad_hess returned a non-finite value {found}")
        raise NonFiniteError(message, objective=self.name, method="grad_hess", cause=cause, query=q, row=i,
                             value=(float(g[i]), float(h[i])))

    def _refuse_non_finite_loss(self, scores: NDArray[np.float64], value: float) -> None:
        """A loss that is inf or NaN is a :class:`NonFiniteError` naming the first query that makes
        it so and either the data's values that overflowed or the objective's own bug."""
        q = self._first_non_finite_query(scores)
        where = (", and does at all-zero scores too (so no one query's scores cause it)" if q is None else
                 f" in query {q} (rows {int(self.group_ptr[q])}..{int(self.group_ptr[q + 1]) - 1})")
        message, cause = self._non_finite_message(scores, q, "_loss",
                                                  overflow=f"the loss overflows float64 ({value}){where}",
                                                  returned=f"_loss returned {value}{where}")
        first_row = None if q is None else int(self.group_ptr[q])
        raise NonFiniteError(message, objective=self.name, method="loss", cause=cause, query=q, row=first_row,
                             value=value)

    def _non_finite_message(self, scores: NDArray[np.float64], q: int | None, method: str, *, overflow: str,
                            returned: str) -> tuple[str, str]:
        """``(message, cause)`` of a :class:`NonFiniteError` from ``method``: ``"data"`` with the
        ``overflow`` text when query ``q``'s values are too large for float64, else ``"objective"``
        with the ``returned`` text and the moderate inputs that exposed the objective's bug."""
        too_large = self._too_large(scores, q)
        if too_large:
            return (f"{self.name}: {overflow}; {too_large}: too large for float64 in this objective (or a parameter "
                    "is too large)"), "data"
        return (f"{self.name}: {returned}, from moderate inputs ({self._moderate(scores, q)}): "
                f"{_BUG.format(name=self.name, method=method)}"), "objective"

    def _first_non_finite_query(self, scores: NDArray[np.float64]) -> int | None:
        """The first query whose scores, with every other query's set to 0, make the loss
        non-finite (the loss is a sum over queries: bisection, O(log n_queries) evaluations);
        ``None`` when the loss is non-finite at all-zero scores, or no single query does it."""
        ptr = self.group_ptr

        def non_finite(first: int, stop: int) -> bool:  # queries first..stop-1 keep their scores
            kept = np.zeros_like(scores)
            kept[ptr[first]:ptr[stop]] = scores[ptr[first]:ptr[stop]]
            return not math.isfinite(float(self._loss(kept)))

        if non_finite(0, 0):
            return None
        lo, hi = 0, self.n_queries
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if non_finite(lo, mid):
                hi = mid
            else:
                lo = mid
        return lo if non_finite(lo, lo + 1) else None

    def _query_inputs(self, scores: NDArray[np.float64],
                      q: int | None) -> tuple[str, NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """(what, scores, labels, weights) of query ``q``, or of the whole data set at all-zero
        scores (``q=None``)."""
        if q is None:
            return "the data set's", np.zeros(1), self.labels, self.query_weights
        a, b = int(self.group_ptr[q]), int(self.group_ptr[q + 1])
        return "the query's", scores[a:b], self.labels[a:b], self.query_weights[q:q + 1]

    def _too_large(self, scores: NDArray[np.float64], q: int | None) -> str:
        """The inputs of query ``q`` (``None``: the data set at zero scores) beyond the moderate
        bounds, in words ("" when all are moderate)."""
        what, s, y, w = self._query_inputs(scores, q)
        parts = []
        if s.size and np.abs(s).max() > MODERATE_SCORE:
            parts.append(f"{what} scores span {float(s.min())} .. {float(s.max())}")
        if y.size and y.max() > MODERATE_LABEL:
            parts.append(f"{what} largest label is {float(y.max())}")
        if w.size and w.max() > MODERATE_WEIGHT:
            parts.append(f"{what} largest weight is {float(w.max())}" if q is None else f"its weight is {float(w[0])}")
        return ", ".join(parts)

    def _moderate(self, scores: NDArray[np.float64], q: int | None) -> str:
        """The inputs of query ``q`` (``None``: the data set at zero scores) in words, for the
        message of an objective's own inf or NaN."""
        _, s, y, w = self._query_inputs(scores, q)
        labels = f"labels {float(y.min(initial=0.0))} .. {float(y.max(initial=0.0))}"
        given = (f"all scores 0, {labels}, weights up to {float(w.max(initial=0.0))}" if q is None else
                 f"the query's scores {float(s.min())} .. {float(s.max())}, {labels}, weight {float(w[0])}")
        return (f"{given}; moderate: |score| <= {MODERATE_SCORE:g}, label <= {MODERATE_LABEL:g}, "
                f"weight <= {MODERATE_WEIGHT:g}")


#: The end of the message of an objective's own inf or NaN.
_BUG = ("a bug in {name}'s {method}, not an overflow of the data (inf or NaN from such inputs comes from "
        "0 * inf, inf - inf, 0 / 0 or x / 0 inside it; or a parameter is too large)")


class NonFiniteError(ValueError):
    """An objective's ``loss`` or ``grad_hess`` came out inf or NaN; the message names the first
    offending row (or query) and the cause.

    Attributes:
        objective: the objective's name.
        method: ``"loss"`` or ``"grad_hess"``.
        cause: ``"data"`` when the offending query's scores, labels or weight are beyond the
            moderate bounds (:data:`MODERATE_SCORE`, :data:`MODERATE_LABEL`,
            :data:`MODERATE_WEIGHT`): float64 overflowed on them; ``"objective"`` when they are
            all moderate: the objective computed inf or NaN itself (a bug in it).
        query: the first offending query (``None``: the loss is non-finite at all-zero scores).
        row: the first offending row (for the loss, the query's first row; ``None`` with ``query``).
        value: the loss, or ``(grad, hess)`` at ``row``.
    """

    def __init__(self, message: str, *, objective: str, method: str, cause: str, query: int | None,
                 row: int | None, value: Any) -> None:
        super().__init__(message)
        self.objective = objective
        self.method = method
        self.cause = cause
        self.query = query
        self.row = row
        self.value = value


# Attributes an instance sets itself: a parameter of the same name would overwrite them.
_INSTANCE_ATTRS = ("labels", "group_ptr", "query_weights", "settings")


def check_contract(loss_class: Any) -> None:
    """``TypeError``/``ValueError`` naming what ``loss_class`` lacks to be an objective: a
    :class:`Loss` subclass with a ``name``, ``_loss`` and ``_grad_hess``, at least one
    :class:`Hessian` mode (a scaled gradient only with a ``"fitting"`` Hessian), :class:`Param`
    declarations whose names are free and whose defaults (and search ranges) pass their own checks."""
    if not (isinstance(loss_class, type) and issubclass(loss_class, Loss)):
        raise TypeError(f"an objective is a subclass of boostplug.objectives.Loss, got {loss_class!r}")
    who = loss_class.__name__
    if not isinstance(loss_class.name, str) or not loss_class.name:
        raise TypeError(f"{who} declares no name (class attribute name = '...')")
    for method in ("_loss", "_grad_hess"):
        if getattr(loss_class, method) is getattr(Loss, method):
            raise TypeError(f"{who} does not implement {method}(scores)")
    hessians = loss_class.hessians
    if not isinstance(hessians, Mapping) or not hessians:
        raise TypeError(f"{who} declares no Hessian mode (hessians = {{'exact': Hessian('exact', '...')}})")
    for mode, h in hessians.items():
        if not isinstance(mode, str) or not isinstance(h, Hessian):
            raise TypeError(f"{who}.hessians[{mode!r}] must be a Hessian under a string name, got {h!r}")
        if h.gradient == "scaled" and h.kind != "fitting":
            raise ValueError(f"{who}.hessians[{mode!r}] declares a scaled gradient with a {h.kind!r} Hessian: only "
                             "a 'fitting' Hessian may go with it (an exact or bounding Hessian is one of the loss, "
                             "whose derivative a scaled gradient is not)")
    if loss_class.default_hessian is not None and loss_class.default_hessian not in hessians:
        raise ValueError(f"{who}.default_hessian = {loss_class.default_hessian!r} is not among its Hessian "
                         f"modes {list(hessians)}")
    if not isinstance(loss_class.params, Mapping):
        raise TypeError(f"{who}.params must be a dict of name -> Param, got {type(loss_class.params).__name__}")
    if "hessian" in loss_class.params:
        raise TypeError(f"{who} declares a 'hessian' parameter: declare the modes in hessians instead "
                        "(the parameter is added from them)")
    reserved = set(dir(loss_class)) | set(_INSTANCE_ATTRS)
    for pname, p in loss_class.params.items():
        if not isinstance(p, Param):
            raise TypeError(f"{who}.params[{pname!r}] must be a Param, got {p!r}")
        if not isinstance(pname, str) or not pname.isidentifier() or pname in reserved:
            raise TypeError(f"{who}: parameter name {pname!r} is not an identifier or is taken by the "
                            "objective itself (labels, settings, loss, ...)")
    for pname, p in loss_class.declared_params().items():
        try:
            p.check(p.default, pname, objective=loss_class.name)
        except (TypeError, ValueError) as e:
            raise ValueError(f"{who}: the default of {pname!r} fails its own check: {e}") from None
        if p.search is not None:
            ends = p.search.choices or (p.search.low, p.search.high)
            if p.search.integer:
                ends = tuple(int(v) for v in ends)
            for v in ends:
                try:
                    p.check(v, pname, objective=loss_class.name)
                except (TypeError, ValueError) as e:
                    raise ValueError(f"{who}: the search range of {pname!r} leaves its own range: {e}") from None


# ---- module-level functions from a Loss class -------------------------------------------------------
class ModuleFunctions(NamedTuple):
    """An objective's module-level ``prepare``, ``loss`` and ``grad_hess``."""

    prepare: Callable[..., Loss]
    loss: Callable[..., float]
    grad_hess: Callable[..., tuple[NDArray[np.float64], NDArray[np.float64]]]


def _as_module_function(fn: Callable[..., Any], loss_class: type[Loss], name: str, doc: str) -> Callable[..., Any]:
    fn.__name__ = fn.__qualname__ = name
    fn.__module__ = loss_class.__module__
    fn.__doc__ = doc
    return fn


def scores_function(loss_class: type[Loss], method: str) -> Callable[..., Any]:
    """``f(scores, labels, group_ptr, *, weights=None, **params)`` =
    ``loss_class(labels, group_ptr, weights=weights, **params).<method>(scores)``, named
    ``method`` in ``loss_class``'s module (MPBoost's ``log_loss``, every objective's
    ``loss`` and ``grad_hess``)."""
    if not callable(getattr(loss_class, method, None)):
        raise TypeError(f"{loss_class.__name__} has no method {method!r}")

    def f(scores: ArrayLike, labels: ArrayLike, group_ptr: ArrayLike, *, weights: ArrayLike | None = None,
          **params: Any) -> Any:
        return getattr(loss_class(labels, group_ptr, weights=weights, **params), method)(scores)

    head = (getattr(loss_class, method).__doc__ or "").strip().splitlines()
    doc = (f"{head[0] if head else method}\n\n{loss_class.name}: "
           f"``prepare(labels, group_ptr, weights=weights, **params).{method}(scores)``.")
    return _as_module_function(f, loss_class, method, doc)


def module_functions(loss_class: type[Loss]) -> ModuleFunctions:
    """The module-level ``prepare``, ``loss`` and ``grad_hess`` of an objective module::

        prepare, loss, grad_hess = module_functions(QBRankObjective)
    """

    def prepare(labels: ArrayLike, group_ptr: ArrayLike, *, weights: ArrayLike | None = None,
                **params: Any) -> Loss:
        return loss_class(labels, group_ptr, weights=weights, **params)

    doc = (f"Bind {loss_class.name} to ``labels``/``group_ptr`` (per-query ``weights``) once: a "
           f":class:`{loss_class.__name__}`.\n\nRaises ``ValueError``/``TypeError`` naming any unknown "
           "or invalid parameter.")
    return ModuleFunctions(_as_module_function(prepare, loss_class, "prepare", doc),
                           scores_function(loss_class, "loss"), scores_function(loss_class, "grad_hess"))
