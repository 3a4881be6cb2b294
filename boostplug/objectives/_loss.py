"""The :class:`Loss` base every objective subclasses: it validates the data and parameters once, and
wraps ``_loss``/``_grad_hess`` with the score check and the refusal of inf, NaN or beyond float32.

The Hessian floor. A Newton leaf is ``-sum g / (sum h + lambda)``: with ``h`` near 0 and ``lambda``
0 (LightGBM's default) a small gradient makes a huge leaf, and a negative ``h`` steps uphill. The
parameter ``hessian_floor`` (every objective's; default the class's :attr:`Loss.hessian_floor`)
raises every Hessian to at least :data:`HESSIAN_FLOOR`, :data:`NO_INFO_HESSIAN` for a document the
loss does not involve (gradient and Hessian 0); off, the Hessians pass exactly as computed. The
floor changes the model: when it raises more than :data:`FLOOR_WARN_SHARE` of the rows in one call,
the objective warns once (:class:`HessianFloorWarning`); :attr:`Loss.floor_raised` holds the count of
the last call.
"""

from __future__ import annotations

import copy
import math
import warnings
from typing import Any, ClassVar, Mapping

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import GroupedRows, check_group_ptr, check_labels, check_scores, check_weights
from ._declarations import ROW_KINDS, Hessian, Param, Search, check_params
from ._finish import finish_in_place
from ._non_finite import NonFiniteError, grad_hess_error, loss_error

__all__ = ["HESSIAN_FLOOR", "NO_INFO_HESSIAN", "FLOOR_WARN_SHARE", "HessianFloorWarning", "floor_hessian",
           "floor_message", "floor_values", "Loss", "RunLoss"]

#: Smallest Hessian an objective with the floor on returns (a positive floor for Newton leaves).
HESSIAN_FLOOR = 1e-6

#: Hessian of a document the loss does not involve, with the floor on: positive (XGBoost's hist is
#: faster with it than with HESSIAN_FLOOR), far below LightGBM's min_sum_hessian_in_leaf=1e-3.
NO_INFO_HESSIAN = 1e-5

#: The share of rows the floor may raise in one call without a warning.
FLOOR_WARN_SHARE = 0.25


class HessianFloorWarning(UserWarning):
    """The Hessian floor raised more than :data:`FLOOR_WARN_SHARE` of an objective's rows."""


def floor_hessian(grad: NDArray[np.float64], hess: NDArray[np.float64], on: bool = True) -> NDArray[np.float64]:
    """The Hessian the frameworks get: with the floor ``on``, :data:`NO_INFO_HESSIAN` where gradient
    and Hessian are both exactly 0, else at least :data:`HESSIAN_FLOOR`; off, ``hess`` as it is."""
    if not on:
        return np.asarray(hess, dtype=np.float64)
    no_info = (hess == 0.0) & (grad == 0.0)
    return np.where(no_info, NO_INFO_HESSIAN, np.maximum(hess, HESSIAN_FLOOR))


def floor_message(name: str, grad: NDArray[np.float64], hess: NDArray[np.float64], raised: int, advice: str) -> str:
    """The floor warning: how many rows it raised; whether their gradients are below the floor too (then
    the floor bounds their Newton steps to 1 in size: late in training, rows a convex loss has
    settled), else that the steps are the floor's; and ``advice``, the objective's own options."""
    small = int(np.count_nonzero((hess == HESSIAN_FLOOR) & (np.abs(grad) <= HESSIAN_FLOOR)))
    what = (f"each with a gradient below {HESSIAN_FLOOR:g} too, so the floor bounds their Newton steps to 1 in size"
            if small >= raised else "the Newton steps there are the floor's, not the loss's")
    return (f"{name}: the Hessian floor raised {raised} of {hess.shape[0]} Hessians to {HESSIAN_FLOOR:g} in one round "
            f"(more than {FLOOR_WARN_SHARE:.0%}): {what}. {advice}")


def floor_values(on: bool) -> tuple[float, float]:
    """``(smallest Hessian, Hessian of a document without any term)`` with the floor ``on``; off:
    ``(-inf, 0)`` (no smallest: the Hessians are the loss's)."""
    return (HESSIAN_FLOOR, NO_INFO_HESSIAN) if on else (-math.inf, 0.0)


class Loss(GroupedRows):
    """An objective: subclass it, declare ``name``, ``summary``, ``params`` and ``hessians``,
    implement ``_loss`` and ``_grad_hess`` (and ``setup``); :func:`register` it or hand the class
    to an adapter as it is. An instance is the objective bound to one data set: construction
    validates the data and the parameters once, stores the parameters (``self.settings``, one
    attribute each) and calls :meth:`setup`; each round validates only the scores. Class attributes
    beside the declarations: ``default_hessian`` (``None``: the first mode), ``hessian_floor`` (the
    parameter's default), ``returns_new_arrays`` (``_grad_hess`` returns arrays made in the call:
    the floor works in place, not on a copy), ``random_draws`` (:class:`~._rounds.RandomRounds`),
    ``shift_invariant`` (``False``: a constant added to a query's scores may change the loss; the
    contract checks then leave that property out). An objective whose weights depend on
    the scores (a ``"lambda"`` gradient) reads them from ``weights_from(scores)``: see :meth:`held`.
    """

    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    params: ClassVar[Mapping[str, Param]] = {}
    hessians: ClassVar[Mapping[str, Hessian]] = {}
    default_hessian: ClassVar[str | None] = None
    hessian_floor: ClassVar[bool] = True
    returns_new_arrays: ClassVar[bool] = False
    random_draws: ClassVar[bool] = False
    shift_invariant: ClassVar[bool] = True
    #: the scores the weights are held at (:meth:`held`); ``None``: each call's own scores
    _at: NDArray[np.float64] | None = None
    _floor_warned: bool = False
    #: how many Hessians the floor raised in the last :meth:`grad_hess` call
    floor_raised: int = 0

    def __init__(self, labels: ArrayLike, group_ptr: ArrayLike, *, weights: ArrayLike | None = None,
                 **params: Any) -> None:
        self.labels: NDArray[np.float64] = check_labels(labels).copy()
        self.labels.setflags(write=False)
        self.group_ptr: NDArray[np.int64] = check_group_ptr(group_ptr, n_docs=self.labels.shape[0]).copy()
        self.group_ptr.setflags(write=False)
        w = check_weights(weights, self.n_queries, name="weights (one per query)")
        self.query_weights: NDArray[np.float64] = np.ones(self.n_queries) if w is None else w.copy()
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
            "that no Newton leaf -G / H blows up where H is near 0; off: exactly as computed")
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
        """Hessian mode -> what it is (its ``text``)."""
        return {m: h.text for m, h in cls.hessians.items()}

    @classmethod
    def hessian_kinds(cls) -> dict[str, str]:
        """Hessian mode -> its ``kind``."""
        return {m: h.kind for m, h in cls.hessians.items()}

    @classmethod
    def gradient_kinds(cls) -> dict[str, str]:
        """Hessian mode -> what its gradient is (its ``gradient``)."""
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
        """``params`` checked without data and resolved: each value, then a binding to a two-document
        stand-in query (:meth:`~._declarations.Param.stand_in_for`) so that :meth:`setup`'s checks run."""
        resolved = cls.resolve_params(params)
        declared = cls.declared_params()
        cls(np.zeros(2), np.array([0, 2], dtype=np.int64),
            **{k: declared[k].stand_in_for(v) if k in declared else v for k, v in params.items()})
        return resolved

    # -- to implement ---------------------------------------------------------------------------
    def setup(self) -> None:
        """Work that depends only on labels, groups, weights and parameters; may raise ``ValueError``."""

    def _loss(self, scores: NDArray[np.float64]) -> float:  # pragma: no cover - abstract
        raise NotImplementedError

    def _grad_hess(self, scores: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:  # pragma: no cover
        raise NotImplementedError

    # -- what the base provides (and GroupedRows: n_docs, n_queries) ------------------------------
    def _check(self, scores: ArrayLike) -> NDArray[np.float64]:
        s = check_scores(scores)
        if s.shape[0] != self.n_docs:
            raise ValueError(f"{self.name}: got {s.shape[0]} scores for a data set of {self.n_docs} documents")
        return s

    def weights_from(self, scores: NDArray[np.float64]) -> NDArray[np.float64]:
        """The scores the weights come from: those :meth:`held` holds them at, else ``scores``."""
        return scores if self._at is None else self._at

    @property
    def weights_held(self) -> bool:
        """Whether the weights are held at other scores (an instance :meth:`held` made)."""
        return self._at is not None

    def held(self, weights_at: ArrayLike) -> "Loss":
        """A copy whose weights (orders, ranks, normalisation) come from ``weights_at``: only for an
        objective with a ``"lambda"`` gradient (``TypeError`` otherwise). ``loss(s, weights_at=t)``
        and ``grad_hess(s, weights_at=t)`` are ``held(t)``'s: the loss with the weights of ``t``,
        whose derivatives the ``"lambda"`` gradient and Hessian are."""
        if not any(kind == "lambda" for kind in self.gradient_kinds().values()):
            raise TypeError(f"{self.name}: weights_at= holds weights that depend on the scores (a 'lambda' "
                            f"gradient); {self.name}'s do not, so it takes no weights_at")
        at = self._check(weights_at)
        out = copy.copy(self)
        out._at = at
        return out

    def loss(self, scores: ArrayLike, *, weights_at: ArrayLike | None = None) -> float:
        """The value at ``scores`` (sum over queries, weighted), the weights those of ``weights_at``
        (default ``scores``); :class:`NonFiniteError` when it is inf or NaN."""
        if weights_at is not None:
            return self.held(weights_at).loss(scores)
        s = self._check(scores)
        value = float(self._loss(s))
        if not math.isfinite(value):
            raise self._explain(loss_error(self, s, value), s)
        return value

    def grad_hess(self, scores: ArrayLike, *,
                  weights_at: ArrayLike | None = None) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """The gradient (what the mode declares) and Hessian diagonal at ``scores``, floored only with
        ``hessian_floor`` on; a value that is inf, NaN or beyond float32 (the frameworks' type) is a
        :class:`NonFiniteError` naming its row."""
        if weights_at is not None:
            return self.held(weights_at).grad_hess(scores)
        s = self._check(scores)
        g, h = self._grad_hess(s)
        n = s.shape[0]
        if np.shape(g) != (n,) or np.shape(h) != (n,):
            raise ValueError(f"{self.name}: _grad_hess returned shapes {np.shape(g)} and {np.shape(h)} for {n} "
                             f"scores; both must be ({n},)")
        g = np.ascontiguousarray(g, dtype=np.float64)
        # the floor works in place: on a copy unless _grad_hess made the array in this call
        h = np.ascontiguousarray(h, dtype=np.float64) if self.returns_new_arrays else np.array(h, dtype=np.float64)
        bad, raised = finish_in_place(g, h, bool(self.hessian_floor), HESSIAN_FLOOR, NO_INFO_HESSIAN)
        if bad:
            raise self._explain(grad_hess_error(self, s, g, h), s)
        self.floor_raised = raised
        if raised > FLOOR_WARN_SHARE * n and not self._floor_warned:
            self._floor_warned = True
            warnings.warn(floor_message(self.name, g, h, raised, self._floor_advice()), HessianFloorWarning,
                          stacklevel=2)
        return g, h

    def _floor_advice(self) -> str:
        """What the floor warning suggests: only this objective's options (another Hessian mode that stays
        positive, when it declares one; ``hessian_floor=False``), as settings to measure, not fixes."""
        other = [m for m, h in self.hessians.items() if h.kind != "exact" and m != getattr(self, "hessian", None)]
        now = [f"hessian={self.hessian}"] * bool(other)  # this mode, beside the others
        runs = [now, *([f"hessian={m}"] for m in other), [*now, "hessian_floor=false"]]
        return (f"The floor is a setting, not a fault: {' or '.join(r[-1] for r in runs[1:])} trains another model, "
                "which may rank better or worse (off, the loss's own near-zero or negative Hessians size the steps); "
                "measure them side by side: boostplug compare --methods \""
                + ",".join(self.name + (f"[{','.join(r)}]" if r else "") for r in runs) + '"')

    def _explain(self, error: NonFiniteError, scores: NDArray[np.float64]) -> NonFiniteError:
        """``error`` (an inf, a NaN or a value beyond float32 at ``scores``), as raised: a base may
        name the function behind it (the pair base does)."""
        return error


class RunLoss(Loss):
    """A :class:`Loss` whose ``_run(scores, want_loss)`` returns ``(grad, hess, losses)``, the sums or
    (``want_loss``) each query's loss, new arrays of one kernel call: ``_loss`` and ``_grad_hess`` read it."""
    returns_new_arrays = True

    def _run(self, scores: NDArray[np.float64], want_loss: bool) -> tuple[NDArray[np.float64], ...]:  # pragma: no cover
        raise NotImplementedError

    def _loss(self, scores: NDArray[np.float64]) -> float:
        return float(self._run(scores, True)[2].sum())

    def _grad_hess(self, scores: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        grad, hess, _ = self._run(scores, False)
        return grad, hess
