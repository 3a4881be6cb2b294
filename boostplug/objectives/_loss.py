"""The :class:`Loss` base every objective subclasses: it validates labels, groups, weights and
parameters once, and wraps the subclass's ``_loss``/``_grad_hess`` with the score check, the
non-finite refusal and the Hessian floor. The conventions it enforces: docs/objectives/index.md
("The objective contract").

The Hessian floor. A Newton leaf of LightGBM or XGBoost is ``-sum g / (sum h + lambda)``: where
the Hessians of a leaf's documents are near 0 and the regularisation ``lambda`` is 0 (LightGBM's
default ``lambda_l2``), a small gradient makes a huge leaf value, and a negative Hessian sends the
step uphill. With the floor on, every Hessian is at least :data:`HESSIAN_FLOOR` and a document the
loss does not involve (gradient and Hessian exactly 0) gets :data:`NO_INFO_HESSIAN`; with it off,
the Hessians pass as the objective computes them, negative ones set to 0. The floor changes the
model: it moves split gains and leaf values, so a copy of a framework's built-in objective, which
has no floor, turns it off to grow the same trees. Each objective declares its default
(:attr:`Loss.hessian_floor`), and every objective takes the parameter ``hessian_floor``."""

from __future__ import annotations

import copy
import math
from typing import Any, ClassVar, Mapping

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_labels, check_scores, check_weights
from ..groups import check_group_ptr
from ._declarations import ROW_KINDS, Hessian, Param, Search, check_params
from ._finish import floor_in_place
from ._non_finite import refuse_non_finite_grad_hess, refuse_non_finite_loss

__all__ = ["HESSIAN_FLOOR", "NO_INFO_HESSIAN", "DOC_WORK", "floor_hessian", "floor_values", "Loss"]

#: Smallest Hessian an objective with the floor on returns (a positive floor for Newton leaves).
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

#: Stand-in value of a ``rows`` parameter when an objective is checked without its data.
_STAND_IN_ROWS = np.array([[0, 1]], dtype=np.int64)
_STAND_IN_INDEX = np.array([0], dtype=np.int64)


def floor_hessian(grad: NDArray[np.float64], hess: NDArray[np.float64], on: bool = True) -> NDArray[np.float64]:
    """The Hessian the frameworks get. With the floor ``on``: :data:`NO_INFO_HESSIAN` where gradient
    and Hessian are both exactly 0 (a document the loss does not involve), else at least
    :data:`HESSIAN_FLOOR`; off: the Hessian with negative values set to 0."""
    if not on:
        return np.maximum(hess, 0.0)
    no_info = (hess == 0.0) & (grad == 0.0)
    return np.where(no_info, NO_INFO_HESSIAN, np.maximum(hess, HESSIAN_FLOOR))


def floor_values(on: bool) -> tuple[float, float]:
    """``(smallest Hessian, Hessian of a document without any term)`` with the floor ``on`` or off."""
    return (HESSIAN_FLOOR, NO_INFO_HESSIAN) if on else (0.0, 0.0)


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
        hessian_floor: the default of the parameter ``hessian_floor`` every objective takes:
            whether the Hessians the frameworks get are floored (module docstring: what the floor
            protects against, and what it costs). ``True`` unless the objective reproduces a
            framework's built-in, which has no floor.
        fresh_output: ``True`` when ``_grad_hess`` returns new arrays every call (saves a copy).

    Held weights. An objective whose pair weights depend on the scores (a Hessian mode with
    gradient kind ``"lambda"``: LambdaRank's ``|Delta NDCG|``, YetiRank's perturbed orders) reads
    the scores its weights come from as ``self.weights_from(scores)``: the scores themselves, or
    those of :meth:`held`. ``loss(scores, weights_at=t)`` and ``grad_hess(scores, weights_at=t)``
    are ``held(t).loss(scores)`` and ``held(t).grad_hess(scores)``: the loss with the weights held
    at ``t``, whose derivatives the ``"lambda"`` gradient and Hessian are (what the contract checks
    differentiate). An objective without a ``"lambda"`` mode refuses ``weights_at=``.

    Settings that change the declaration. An objective whose settings change what it declares
    (its Hessian modes' gradient kind) overrides :meth:`class_for`: ``cls(labels, group_ptr,
    **params)`` is then an instance of the subclass that declares it (RankNet with a
    ``truncation_level`` is a lambda-weighted loss of weight 1). The registry knows the subclass's
    instances as the overriding class's (:func:`~boostplug.objectives.resolve`).

    Rounds. Every ``grad_hess(scores)`` without held weights starts a new round: :attr:`rounds`
    counts them (a call that raises starts none), and :attr:`current_round` is the index of the
    latest, ``round_offset() + rounds - 1`` (before any round: ``round_offset()``, the first
    round's index; 0 unless a parameter says where a continued training resumes, as YetiRank's
    ``first_round``). An objective that draws at random (``random_draws = True``) draws round
    ``current_round``'s numbers: ``grad_hess`` those of the round it starts, and ``loss``, the
    calls of a :meth:`held` copy (``weights_at=``) and the private ``_loss`` / ``_grad_hess``
    those of the current round, starting none. The count belongs to one bound instance: the
    adapters bind one per training set, so each ``lgb.cv`` fold (a training set of its own)
    counts its own rounds from the first, as a framework's per-fold objective does.
    """

    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    params: ClassVar[Mapping[str, Param]] = {}
    hessians: ClassVar[Mapping[str, Hessian]] = {}
    default_hessian: ClassVar[str | None] = None
    hessian_floor: ClassVar[bool] = True
    #: True when ``_grad_hess`` returns arrays it made in that call and keeps no reference to
    #: (then ``grad_hess`` floors the Hessian in place instead of in a copy).
    fresh_output: ClassVar[bool] = False
    #: True when the objective draws at random, round by round (class docstring, "Rounds":
    #: YetiRank's perturbed orders, XE-NDCG's gammas): the contract checks compare two rounds only
    #: between fresh bindings, and a query with the others weighted 0 instead of alone (a data set
    #: of its own draws other numbers).
    random_draws: ClassVar[bool] = False
    #: the scores the pair weights are held at (:meth:`held`); ``None``: each call's own scores
    _at: NDArray[np.float64] | None = None

    def __new__(cls, *args: Any, **params: Any) -> "Loss":
        # the class an instance with these settings is (class docstring, "Settings that change the declaration")
        bound = cls.class_for({k: v for k, v in params.items() if k != "weights"})
        if not (isinstance(bound, type) and issubclass(bound, cls)):
            raise TypeError(f"{cls.__name__}.class_for must return {cls.__name__} or a subclass of it, got {bound!r}")
        return super().__new__(bound)

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
        #: rounds started: ``grad_hess`` calls without held weights that did not raise (class docstring)
        self.rounds: int = 0
        self.setup()

    # -- the declarations, as the registry and the adapters read them ----------------------------
    @classmethod
    def declared_params(cls) -> dict[str, Param]:
        """``params``, the ``hessian`` choice when several Hessian modes are declared, and
        ``hessian_floor`` (default: the class's :attr:`hessian_floor`)."""
        out = dict(cls.params)
        if len(cls.hessians) > 1:
            modes = tuple(cls.hessians)
            kinds = {m: h.kind + (", scaled gradient" if h.gradient == "scaled" else "")
                     for m, h in cls.hessians.items()}
            out["hessian"] = Param(
                cls.default_hessian or modes[0], "choice",
                "Hessian mode: " + ", ".join(f"{m} ({k})" for m, k in kinds.items()), choices=modes)
        out["hessian_floor"] = Param(
            bool(cls.hessian_floor), "bool",
            f"floor the Hessians at {HESSIAN_FLOOR:g} ({NO_INFO_HESSIAN:g} for a document without any term), so "
            "that no Newton leaf -G / H blows up where H is near 0; off: as computed, negative ones set to 0")
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
    def class_for(cls, params: Mapping[str, Any]) -> type["Loss"]:
        """The class of an instance bound with the parameters ``params`` (as given, not yet
        checked): this class. Override it to return a subclass when a setting changes what the
        objective declares (class docstring, "Settings that change the declaration"); a value it
        cannot place is left for the checks of ``__init__`` to refuse."""
        return cls

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

    def round_offset(self) -> int:
        """The index of the first round (class docstring, "Rounds"): 0; an objective whose
        parameters say where a continued training resumes returns that."""
        return 0

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

    @property
    def current_round(self) -> int:
        """The index of the latest round, whose random draws ``loss`` and held calls use (before
        any round: the first, ``round_offset()``)."""
        return self.round_offset() + max(self.rounds - 1, 0)

    def weights_from(self, scores: NDArray[np.float64]) -> NDArray[np.float64]:
        """The scores the pair weights come from: those :meth:`held` holds them at, else ``scores``."""
        return scores if self._at is None else self._at

    @property
    def weights_held(self) -> bool:
        """Whether the pair weights are held at other scores (an instance :meth:`held` made)."""
        return self._at is not None

    def held(self, weights_at: ArrayLike) -> "Loss":
        """A copy of this objective with its pair weights (orders, ranks, normalisation) taken from
        the scores ``weights_at`` and held there: its ``loss`` and ``grad_hess`` are then those of a
        fixed-weight loss, whose derivatives the ``"lambda"`` gradient and Hessian are. Only for an
        objective with a ``"lambda"`` gradient (``TypeError`` otherwise)."""
        if not any(kind == "lambda" for kind in self.gradient_kinds().values()):
            raise TypeError(f"{self.name}: weights_at= holds pair weights that depend on the scores (a 'lambda' "
                            f"gradient); {self.name}'s do not, so it takes no weights_at")
        at = self._check(weights_at)
        out = copy.copy(self)
        out._at = at
        return out

    def loss(self, scores: ArrayLike, *, weights_at: ArrayLike | None = None) -> float:
        """The objective's value at ``scores`` (sum over queries, weighted), with the pair weights
        of ``weights_at`` (default: of ``scores``); :class:`NonFiniteError` when it is inf or NaN."""
        if weights_at is not None:
            return self.held(weights_at).loss(scores)
        s = self._check(scores)
        value = float(self._loss(s))
        if not math.isfinite(value):
            self._refuse_non_finite_loss(s, value)
        return value

    def grad_hess(self, scores: ArrayLike, *,
                  weights_at: ArrayLike | None = None) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """The gradient (d loss / d score, or its rescaling the mode declares) and the Hessian
        (diagonal) of the chosen mode, floored as ``hessian_floor`` says; with ``weights_at``, those
        of the loss with the pair weights of ``weights_at``."""
        if weights_at is not None:
            return self.held(weights_at).grad_hess(scores)
        s = self._check(scores)
        new_round = int(not self.weights_held)  # a held copy's calls start no round
        self.rounds += new_round
        try:
            g, h = self._grad_hess(s)
            n = s.shape[0]
            if np.shape(g) != (n,) or np.shape(h) != (n,):
                raise ValueError(f"{self.name}: _grad_hess returned shapes {np.shape(g)} and {np.shape(h)} for "
                                 f"{n} scores; both must be ({n},)")
            g = np.ascontiguousarray(g, dtype=np.float64)
            # the floor is applied in place: on a copy unless _grad_hess made the array this call
            h = np.ascontiguousarray(h, dtype=np.float64) if self.fresh_output else np.array(h, dtype=np.float64)
            first, n_bad = floor_in_place(g, h, *floor_values(self.hessian_floor))
            if first >= 0:
                refuse_non_finite_grad_hess(self, s, g, h, first, n_bad)
        except BaseException:
            self.rounds -= new_round
            raise
        return g, h

    def _refuse_non_finite_loss(self, scores: NDArray[np.float64], value: float) -> None:
        """A non-finite ``value`` of the loss at ``scores``: a :class:`NonFiniteError` that says why
        (for a subclass that computes its loss by another route too, as NDCG-Boost does)."""
        refuse_non_finite_loss(self, scores, value)
