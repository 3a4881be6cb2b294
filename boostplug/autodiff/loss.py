"""The :class:`JaxLoss` base: a loss written as one JAX function of a padded query, its
derivatives by autodiff. User guide: docs/objectives/autodiff.md.

Per query ``k`` of two or more documents and non-zero weight ``W_k``, padded to its bucket's
length ``L`` (the next of 8, 12, 16, 24, 32, 40, 48, 56, 64, 80, ...: :func:`bucket_length`)::

    loss = sum_k W_k query_loss(s_k, y_k, mask_k, *params)
    grad = W_k jax.grad(query_loss)                      exact, in float64
    hess = W_k |mean_p z_p * (H z_p)|                    mode "stochastic" (default, kind "fitting"): Hutchinson's
                                                         estimate, PROBES Rademacher probes z_p drawn each round
                                                         (the exact |diagonal| on buckets of at most EXACT_UP_TO)
         = W_k diag(jax.hessian(query_loss))             mode "exact": L forward-over-reverse passes
         = W_k |diag(jax.hessian(query_loss))|           mode "exact_abs" (kind "fitting")
         = W_k                                           mode "constant" (kind "fitting"): no Hessian pass
         = W_k mean_i |d query_loss / d s_ki|            mode "mean_abs_gradient" (kind "fitting")

``mask_k`` is ``True`` on the query's documents; the padded entries hold the score of its last
document and the label 0 (rax's losses assume padding of label 0), and whatever the function does
with them is discarded, but it must keep them out of the real documents' loss. A bucket's queries run in
batches of a fixed size (:func:`batch_size`: powers of two): a few compilations per bucket, mode and settings.
"""

from __future__ import annotations

import contextlib
import inspect
from typing import Any, Iterator

import numpy as np
from numpy.typing import NDArray

from .._memory import check_fits
from ..objectives._contract import Hessian, Loss, Param
from ..objectives._non_finite import grad_hess_error, loss_error
from ..objectives._rounds import RandomRounds
from ._jax import compiled, float64

__all__ = ["JaxLoss", "MIN_BUCKET", "BATCH_ELEMENTS", "PROBES", "EXACT_UP_TO", "bucket_length", "batch_size"]

#: The shortest bucket: queries of 2..8 documents share one compiled function.
MIN_BUCKET = 8
#: ``L^2`` times a batch's largest number of queries: long buckets run in smaller batches (the
#: queries of a batch are computed one after another; the batch's count only sets the shapes compiled).
BATCH_ELEMENTS = 2**17
#: Rademacher probes per query and round of the ``"stochastic"`` Hessian (one Hessian-vector product each).
PROBES = 1
#: Buckets of at most this length get the exact |diagonal| in the ``"stochastic"`` mode: as cheap there.
EXACT_UP_TO = 8


def _mix(x: Any) -> Any:
    """SplitMix64's finaliser (Steele, Lea and Flood 2014) on ``uint64``: a well-spread hash."""
    x = x + np.uint64(0x9E3779B97F4A7C15)
    for shift, factor in ((30, 0xBF58476D1CE4E5B9), (27, 0x94D049BB133111EB)):
        x = (x ^ (x >> np.uint64(shift))) * np.uint64(factor)
    return x ^ (x >> np.uint64(31))


def bucket_length(n: int) -> int:
    """The padded length of ``n`` documents: the next multiple of a quarter (up to 32; at least MIN_BUCKET), then
    an eighth of the next power of two (a pairwise loss's padding costs at most 1.78, then 1.56 times the work)."""
    power = 1 << (int(n) - 1).bit_length()
    step = max(1, power // (8 if power > 32 else 4))
    return max(MIN_BUCKET, -(-int(n) // step) * step)


def batch_size(length: int, n_queries: int) -> int:
    """Queries per compiled call for ``n_queries`` queries in the bucket of ``length``: a power of two,
    at most ``BATCH_ELEMENTS / length^2`` (a few shapes per bucket: few compilations)."""
    return max(1, min(BATCH_ELEMENTS // (length * length), 1 << (int(n_queries) - 1).bit_length()))


class _Batch:
    """One compiled call's queries: rows ``index`` (``(B, L)``, padded), ``mask``, weights, padded
    labels, and the real documents' rows ``rows`` with their places ``at`` in the flattened batch."""

    def __init__(self, index: NDArray[np.int64], mask: NDArray[np.bool_], weights: NDArray[np.float64],
                 labels: NDArray[np.float64], queries: NDArray[np.int64]) -> None:
        self.index, self.mask, self.weights, self.queries = index, mask, weights, queries
        self.labels = np.where(mask, labels[index], 0.0)
        self.at = np.flatnonzero(mask.ravel())
        self.rows = index.ravel()[self.at]


def _batches(labels: NDArray[np.float64], group_ptr: NDArray[np.int64], weights: NDArray[np.float64],
             longer: bool = False) -> Iterator[_Batch]:
    """The batches of the queries of two or more documents and non-zero weight (the others add nothing);
    ``longer``: the first such query with two labels or more (else the first), alone, padded to its bucket's
    length and to the next one's (the checks of :meth:`JaxLoss._check_padding`: a query that can tell)."""
    sizes = np.diff(group_ptr)
    lengths = np.array([bucket_length(n) for n in sizes], dtype=np.int64)
    kept = (sizes >= 2) & (weights != 0.0)
    if longer:
        varied = kept & np.array([k and np.ptp(labels[a:b]) > 0 for k, a, b in zip(kept, group_ptr, group_ptr[1:])])
        kept = np.arange(sizes.size) == np.flatnonzero(varied if varied.any() else kept)[0]
    for length in [lengths[kept][0], bucket_length(lengths[kept][0] + 1)] if longer else np.unique(lengths[kept]):
        queries = np.flatnonzero(kept)[:1] if longer else np.flatnonzero(kept & (lengths == length))
        size = batch_size(int(length), queries.size)
        for start in range(0, queries.size, size):
            q = queries[start:start + size]
            pos, pad = np.arange(length), ((0, size - q.size), (0, 0))
            index = np.pad(group_ptr[q, None] + np.minimum(pos, sizes[q, None] - 1), pad)
            yield _Batch(index, np.pad(pos < sizes[q, None], pad), np.pad(weights[q], pad[0]), labels, q)


def _query_function(cls: type) -> bool:
    """Whether ``cls.query_loss`` takes ``key=``, checked: a static function taking ``(scores, labels, mask)``, the
    declared parameters and, if it draws at random, ``key`` (``TypeError`` naming what is wrong)."""
    raw = inspect.getattr_static(cls, "query_loss", None)
    fn = raw.__func__ if isinstance(raw, staticmethod) else None
    if not callable(fn):
        raise TypeError(f"{cls.__name__}.query_loss must be a @staticmethod query_loss(scores, labels, mask, "
                        f"*params) (a callable), got {raw!r}")
    n_args = 3 + len(cls.params)
    try:
        signature = inspect.signature(fn)
        keyed = "key" in signature.parameters
        signature.bind(*range(n_args), **({"key": 0} if keyed else {}))
        named = [p.name for p in list(signature.parameters.values())[3:n_args] if p.kind <= p.POSITIONAL_OR_KEYWORD]
        if named and named != list(cls.params):
            raise TypeError(f"takes {named} where params declares {list(cls.params)}")
    except TypeError as e:
        raise TypeError(f"{cls.__name__}.query_loss must take (scores, labels, mask) and the declared parameters "
                        f"{list(cls.params)} in order ({n_args} arguments), then key if it draws: {e}") from None
    except ValueError:  # a builtin or C function without a signature: taken as it is
        return False
    return keyed


class JaxLoss(RandomRounds, Loss):
    """A loss written in JAX (module docstring): declare ``name``, ``summary`` and ``params``, and
    define ``query_loss(scores, labels, mask, *params)`` as a ``@staticmethod`` in ``jax.numpy``
    (parameters in their declared order)."""

    hessians = {
        "stochastic": Hessian("fitting", f"|Hutchinson's estimate of the diagonal|: the mean of z * (H z) over {PROBES} "
                              f"Rademacher probes z drawn each round (one forward-over-reverse pass each); the exact "
                              f"|diagonal| on buckets of at most {EXACT_UP_TO} positions"),
        "exact_abs": Hessian("fitting", "|d^2 loss / d s_k^2|: the absolute value of the exact diagonal (autodiff); the "
                             "exact one where the loss is convex"),
        "exact": Hessian("exact", "the exact diagonal (autodiff: one forward-over-reverse pass per position of the "
                         "query's bucket); negative where the loss is not convex"),
        "constant": Hessian("fitting", "1 on each document of a query whose gradient is not all zero: leaves are mean "
                            "negative gradients (Friedman's least-squares boosting); no Hessian pass"),
        "mean_abs_gradient": Hessian("fitting", "the query's mean |gradient| on each of its documents: the constant "
                                     "Hessian scaled per query, so that the trees do not depend on the loss's scale (as "
                                     "Newton's); no Hessian pass"),
    }
    default_hessian = "stochastic"
    returns_new_arrays = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.name:
            cls._keyed = _query_function(cls)
            unknown = sorted(set(cls.hessians) - set(JaxLoss.hessians)) + ["first_round"] * ("first_round" in cls.params)
            if unknown:
                raise ValueError(f"{cls.__name__}: a JaxLoss computes the Hessian modes {list(JaxLoss.hessians)} and "
                                 f"has its own parameter first_round (the probes' round); got {unknown}")

    @classmethod
    def declared_params(cls) -> dict[str, Param]:
        return {**super().declared_params(), "first_round": Param(0, "int", "the round whose probes and keys the "
                "first grad_hess draws (a training continued from a model passes the rounds done)", low=0)}

    def setup(self) -> None:
        self._batches = list(_batches(self.labels, self.group_ptr, self.query_weights))
        values = [self.settings[key] for key in self.params]  # floats are traced; ints, bools, strings fix the code
        self._numbers = tuple(v for v in values if isinstance(v, float))
        self._statics = tuple((i, v) for i, v in enumerate(values) if not isinstance(v, float))
        self._memory_checked: set[str] = set()
        self._checked = not self._batches  # no query to check
        sizes = np.diff(self.group_ptr)
        position = (np.arange(self.n_docs) - np.repeat(self.group_ptr[:-1], sizes)).astype(np.uint64)
        with np.errstate(over="ignore"):  # what each round's probes and keys mix: each query's identity and each
            # row's (its query's and its position). A query's identity: a hash of its labels by position, and for the
            # second and later of queries with the same labels, how many came before it (so that those draw their own)
            labels = np.add.reduceat(np.append(_mix(self.labels.view(np.uint64) ^ _mix(position)), np.uint64(0)),
                                     self.group_ptr[:-1])
            order = np.argsort(labels, kind="stable")
            before = np.empty(order.size, dtype=np.uint64)
            before[order] = np.arange(order.size) - np.searchsorted(labels[order], labels[order])
            queries = np.where(before > 0, _mix(labels ^ _mix(before)), labels)
            self._hashes = queries, _mix(np.repeat(queries, sizes) + position)
        self._functions = self._compiled()  # what query_loss reads, keyed once per binding: a refusal comes now

    def _compiled(self) -> Any:
        return compiled(type(self).query_loss, self._statics, self._keyed, f"{type(self).__name__}.query_loss")

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_functions": None}  # compiled code stays in its process: keyed again on arrival

    def _run(self, scores: NDArray[np.float64], what: str, batches: list[_Batch] | None = None) -> list[tuple[_Batch, Any]]:
        probes = self._probes() if what == "stochastic" else None
        keys = self._keys()
        self._functions = functions = self._functions or self._compiled()  # (None in a copy unpickled)
        out: list[tuple[_Batch, Any]] = []
        with float64():
            for b in self._batches if batches is None else batches:
                exact = probes is not None and b.index.shape[1] <= EXACT_UP_TO
                fn = functions("exact_abs" if exact else what)
                z = np.zeros((b.index.shape[0], 0)) if probes is None or exact else \
                    np.where(b.mask[:, None, :], probes[b.index].transpose(0, 2, 1), 0.0)
                k = np.pad(keys[b.queries], ((0, b.index.shape[0] - b.queries.size), (0, 0)))
                args = (scores[b.index], b.labels, b.mask, b.weights, z, k, *self._numbers)
                if b is self._batches[-1] and what not in self._memory_checked:  # the largest bucket: memory first
                    self._memory_checked.add(what)
                    with self._blamed(b):  # (JAX keeps the lowering and compilation: a later training's is free)
                        stats = fn.lower(*args).compile().memory_analysis()
                    q = int(b.queries[np.argmax(np.diff(self.group_ptr)[b.queries])])
                    check_fits(0 if stats is None else stats.temp_size_in_bytes + stats.argument_size_in_bytes +
                               stats.output_size_in_bytes, f"{self.name}: query {q} ({np.diff(self.group_ptr)[q]} "
                               f"documents, padded to {b.index.shape[1]}, hessian={self.hessian!r})",
                               "split the query, or choose a Hessian mode or loss that needs less")
                with self._blamed(b):
                    out.append((b, fn(*args)))
        return out

    @contextlib.contextmanager
    def _blamed(self, b: _Batch) -> Iterator[None]:
        """JAX's errors tracing ``query_loss`` on batch ``b``, as the same kind of error naming it and a query."""
        import jax

        try:
            yield
        except (TypeError, ValueError) as e:
            hint = " (a Python if, int() or bool() on a traced value? use jnp.where, jax.lax)" \
                if isinstance(e, jax.errors.ConcretizationTypeError) else ""
            raise (TypeError if isinstance(e, TypeError) else ValueError)(
                f"{type(self).__name__}.query_loss: {str(e).splitlines()[0]}{hint} (on query {b.queries[0]}: "
                f"{b.mask[0].sum()} documents, padded to {b.index.shape[1]})") from e

    def _probes(self) -> NDArray[np.float64]:
        """The current round's Rademacher probes, ``(n_docs, PROBES)``: bits of a hash of the round and the row's."""
        with np.errstate(over="ignore"):
            draws = _mix(np.uint64(self.current_round) + np.arange(1, PROBES + 1, dtype=np.uint64))
            return (_mix(self._hashes[1][:, None] ^ draws[None, :]) >> np.uint64(63)) * 2.0 - 1.0

    def _keys(self) -> NDArray[np.uint32]:
        """The current round's key of each query, ``(n_queries, 2)`` (threefry's key data): a hash of the round (apart
        from the probes': the top bit set) and the query's; what a ``query_loss`` that takes ``key`` gets."""
        with np.errstate(over="ignore"):
            round_ = _mix(np.uint64(self.current_round) | np.uint64(1 << 63))
            return _mix(self._hashes[0] ^ round_).view(np.uint32).reshape(-1, 2)

    def _values(self, scores: NDArray[np.float64], out: list[tuple[_Batch, Any]]) -> float:
        """The weighted sum of the queries' losses ``out``; a :class:`NonFiniteError` naming the first non-finite."""
        queries = np.concatenate([b.queries for b, _ in out]) if out else np.zeros(0, dtype=np.int64)
        values = np.concatenate([np.asarray(v)[:b.queries.size] for b, (v, *_) in out]) if out else np.zeros(0)
        if not np.all(np.isfinite(values)):
            q = int(queries[~np.isfinite(values)].min())
            raise loss_error(self, scores, float(values[queries == q][0]), q, f"{type(self).__name__}.query_loss")
        return float(values.sum())

    def _loss(self, scores: NDArray[np.float64]) -> float:
        return self._values(scores, [(b, (v,)) for b, v in self._run(scores, "loss")])

    def _grad_hess(self, scores: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        grad, hess = np.zeros(self.n_docs), np.zeros(self.n_docs)
        out = self._run(scores, self.hessian)
        self._values(scores, out)
        for b, (_, g, h) in out:
            grad[b.rows] = np.asarray(g).ravel()[b.at]
            hess[b.rows] = np.asarray(h).ravel()[b.at]
        if not (np.isfinite(grad).all() and np.isfinite(hess).all()):  # where the loss is finite (_values checked)
            raise grad_hess_error(self, scores, grad, hess, f"the derivatives of {type(self).__name__}.query_loss",
                                  "most often jnp.where(mask, f(x), 0.0), f(x) not finite where not taken: use "
                                  "f(jnp.where(mask, x, 1.0)), the double jnp.where")
        if not self._checked:
            self._checked = True
            self._check_padding(not grad.any())
        return grad, hess

    def _check_padding(self, zero: bool) -> None:
        """At the first gradient: the first query's loss and gradient at random scores padded to its bucket's
        length and to the next one's must agree (``ValueError`` naming the loss); a gradient 0 on every query
        (``zero``) and there is refused too (a metric, constant almost everywhere, is no loss)."""
        scores = np.random.default_rng(0).standard_normal(self.n_docs)
        (short, (v, g, _)), (long, (v2, g2, _)) = self._run(scores, "constant", list(
            _batches(self.labels, self.group_ptr, np.ones(self.n_queries), longer=True)))
        g, g2 = np.asarray(g).ravel()[short.at], np.asarray(g2).ravel()[long.at]
        if zero and not g.any():  # a metric: its value moves with the order, its gradient is 0 (not a flat loss)
            other = self._run(np.random.default_rng(1).standard_normal(self.n_docs), "constant", [short])[0][1]
            if not np.asarray(other[1]).any() and float(other[0][0]) != float(v[0]):
                raise ValueError(f"{self.name}: the gradient of {type(self).__name__}.query_loss is 0 wherever its value "
                                 f"moves (a metric, flat between ties, is no loss: rax.approx_t12n(metric) is one)")
        if max(abs(float(v[0] - v2[0])), np.abs(g - g2).max()) > 1e-9 * max(abs(float(v[0])), np.abs(g).max()):
            raise ValueError(f"{self.name}: {type(self).__name__}.query_loss changes with the padding: query "
                             f"{int(short.queries[0])} padded to {short.index.shape[1]} and to {long.index.shape[1]} has "
                             f"the loss {float(v[0]):.10g} and {float(v2[0]):.10g}; it must depend on the mask, not the length")
