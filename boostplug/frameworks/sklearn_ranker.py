"""Framework-neutral logic of boostplug's scikit-learn rankers.

:class:`boostplug.lightgbm.LGBMRanker` and :class:`boostplug.xgboost.XGBRanker` subclass the
frameworks' own rankers and take a boostplug objective by *name* (one of
:func:`boostplug.objectives.names`), with its parameters as ordinary estimator parameters::

    LGBMRanker(objective=name, n_estimators=300, **objective_params)
    XGBRanker(objective=name, early_stopping_rounds=20, **objective_params)

Everything the two share lives here: telling the objective's parameters from the booster's
(so ``get_params``/``clone``/``GridSearchCV`` see them and the booster never does), query
groups from ``qid`` or ``group`` sizes, query weights, the evaluation metrics and early-stopping
settings, ``score``, scikit-learn metadata routing (with the refusal of cross-validation splits
that cut queries, :mod:`boostplug._sklearn_folds`), and the objective record of saved models.
The framework modules only translate these into ``lgb``/``xgb`` calls.

Conventions: with several eval sets, early stopping follows the framework's own rule
(``XGBRanker``: the last set, as XGBoost; ``LGBMRanker``: whichever set stalls first, as
LightGBM); with several metrics (``eval_metric=["map@10", "ndcg@10"]``), every one is recorded
for every set and the last one drives early stopping and :meth:`RankerMixin.score`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import objectives as _objectives
from .._sklearn_folds import check_scored_queries, record_fitted_queries
from .._validation import check_optional_rounds, check_rounds, plain
from ..groups import group_ptr_of, qid_from_group_ptr
from ..keyed_pairs import NO_KEYS, given_keyed_params, params_on_rows, row_keys
from ._metric_spec import MetricSpec
from ._query_info import metric_query_weights, query_weights_from_rows

__all__ = ["RankerMixin", "FitPlan", "ObjectiveChoice", "resolve_objective", "objective_param_names",
           "check_eval_metrics", "OWN_PARAMS"]

#: Parameters of the boostplug rankers themselves (never forwarded to a booster).
OWN_PARAMS = ("eval_metric", "early_stopping_rounds")


def objective_param_names() -> dict[str, list[str]]:
    """Parameter name -> the registered objectives that take it."""
    owners: dict[str, list[str]] = {}
    for name in _objectives.names():
        for key in _objectives.get(name).defaults:
            owners.setdefault(key, []).append(name)
    return owners


def is_boostplug_objective(objective: Any, builtin: frozenset[str] = frozenset()) -> bool:
    """Whether the ranker's ``objective`` is boostplug's: a registered objective's name, or a
    :class:`~boostplug.objectives.Loss` subclass or instance (registered or not); a name in
    ``builtin`` (the framework's own objectives: LightGBM's ``"lambdarank"``) stays the framework's."""
    if isinstance(objective, str):
        return objective.lower() not in builtin and objective.lower() in (*_objectives.names(), *_objectives.JAX_OBJECTIVES)
    return isinstance(objective, _objectives.Loss) or (isinstance(objective, type)
                                                        and issubclass(objective, _objectives.Loss))


@dataclass(frozen=True)
class ObjectiveChoice:
    """What an estimator's ``objective`` and extra parameters mean.

    ``name`` is the boostplug objective's name, or ``None`` for a framework objective
    (``"lambdarank"``, ``"rank:ndcg"``, a callable); ``entry`` its entry (registered or not:
    :func:`boostplug.objectives.resolve`); ``params`` its parameters; ``booster_params`` the extra
    parameters left for the framework's booster.
    """

    name: str | None
    params: dict[str, Any] = field(default_factory=dict)
    booster_params: dict[str, Any] = field(default_factory=dict)
    entry: Any = None


def resolve_objective(objective: Any, extra: Mapping[str, Any], *, framework: str, knows: Callable[[str], bool],
                      complete: bool, builtin: frozenset[str] = frozenset()) -> ObjectiveChoice:
    """Split ``extra`` (the estimator's parameters beyond its named ones) between the objective
    and the booster, and validate the objective's parameters without data.

    Args:
        objective: the estimator's ``objective``: a boostplug objective (a registered name, a
            ``Loss`` subclass or instance: its settings, under those in ``extra``), or anything
            the framework takes itself.
        extra: the estimator's extra keyword parameters.
        framework: ``"LightGBM"`` or ``"XGBoost"``, for messages.
        knows: whether a name is a parameter (or alias) the framework knows.
        complete: whether ``knows`` lists every framework parameter; if not (XGBoost offers no
            list), only other objectives' parameters are caught here and the framework warns
            about the rest itself.
        builtin: the framework's own objective names, which stay the framework's even when a
            boostplug objective has the same name (LightGBM's ``"lambdarank"``).

    Raises:
        ValueError: a parameter of another boostplug objective, a name the framework does not
            know, or a value the objective refuses, each naming the parameter and value.
    """
    owners = objective_param_names()
    entry = None
    if is_boostplug_objective(objective, builtin):
        obj = entry = _objectives.resolve(objective)
        own = set(obj.defaults)
        params = {**_objectives.settings_of(objective), **{k: v for k, v in extra.items() if k in own}}
        rest = {k: v for k, v in extra.items() if k not in own}
        label = f"objective {obj.name!r}"
        try:
            obj.check(params)
        except (ValueError, TypeError) as exc:
            raise type(exc)(f"{framework} ranker with objective={obj.name!r}: {exc}") from None
        name: str | None = obj.name
        takes = f" (its parameters: {', '.join(sorted(own))})"
    else:
        params, rest, name = {}, dict(extra), None
        label = f"{framework}'s objective {objective!r}"
        takes = ""
    for key, value in rest.items():
        if knows(key):
            continue
        if key in owners:
            raise ValueError(
                f"{key}={plain(value)!r} is a parameter of the boostplug objective(s) "
                f"{', '.join(owners[key])}, not of {label}{takes}; remove it or change objective="
            )
        if complete:
            raise ValueError(
                f"{key}={plain(value)!r} is neither a {framework} parameter nor a parameter of {label}{takes}"
            )
    return ObjectiveChoice(name, params, rest, entry)


@dataclass
class EvalSet:
    """A data set of ``fit``, in boostplug's boundary format (``group_ptr``, one weight per query)."""

    #: The features as the framework reads them (:meth:`RankerMixin._qid_from_X`).
    X: Any
    y: Any
    group_ptr: NDArray[np.int64]
    query_weights: NDArray[np.float64] | None

    def row_weights(self) -> NDArray[np.float64] | None:
        """Per-query weights repeated over each query's rows (LightGBM's convention)."""
        return None if self.query_weights is None else np.repeat(self.query_weights, np.diff(self.group_ptr))


@dataclass
class FitPlan(EvalSet):
    """One ``fit`` call, validated: the training set (as its eval sets are), the objective and the metrics."""

    choice: ObjectiveChoice
    evals: list[EvalSet]
    #: The eval metrics, in the order given; the last one drives early stopping.
    metrics: tuple[MetricSpec, ...]
    early_stopping_rounds: int | None

    @property
    def watched(self) -> MetricSpec:
        """The metric early stopping watches (on which sets: the framework's rule)."""
        return self.metrics[-1]


def check_eval_metrics(eval_metric: Any) -> tuple[MetricSpec, ...]:
    """The ranker's ``eval_metric``, a boostplug metric name or a list of them, as specs in order."""
    names = [eval_metric] if isinstance(eval_metric, str) else eval_metric
    if not isinstance(names, (list, tuple)) or not all(isinstance(n, str) for n in names):
        raise TypeError(
            "eval_metric must be a boostplug metric name such as 'ndcg@10' or a list of them "
            f"(['map@10', 'ndcg@10']), got {eval_metric!r}"
        )
    if not names:
        raise ValueError("eval_metric is an empty list; give at least one metric name such as 'ndcg@10'")
    keys = [name.strip().lower() for name in names]
    twice = next((name for i, name in enumerate(names) if keys[i] in keys[:i]), None)
    if twice is not None:
        raise ValueError(f"eval_metric lists {twice!r} twice: {list(names)!r}")
    return tuple(MetricSpec(name) for name in names)


def per_set(values: Sequence[Any] | None, n: int, name: str) -> list[Any]:
    """``values`` given one per eval set (``None``: none for each of the ``n`` sets)."""
    if values is None:
        return [None] * n
    values = list(values)  # any iterable, as before
    if len(values) != n:
        raise ValueError(f"{name} has {len(values)} entries but eval_set has {n}")
    return values


class RankerMixin:
    """What the LightGBM and XGBoost rankers share: parameter split, fit planning, ``score``
    and metadata routing (``qid`` is requested by ``fit`` and ``score`` by default, and so is
    ``fit``'s ``doc``: the document keys that keyed pairs are mapped onto)."""

    # Mangled to _RankerMixin__metadata_request__fit, which scikit-learn looks for.
    __metadata_request__fit = {"qid": True, "doc": True}
    __metadata_request__score = {"qid": True}

    _framework = ""
    #: The framework's own objective names that a boostplug objective may share: the framework's.
    _builtin_objectives: frozenset[str] = frozenset()

    def _is_boostplug(self, objective: Any) -> bool:
        """Whether ``objective`` (the ranker's, or one in the booster's parameters) is boostplug's."""
        return is_boostplug_objective(objective, self._builtin_objectives)

    #: Whether ``_knows_param`` (each framework's: whether it knows a parameter name, beside
    #: ``_extra_params``, the estimator's parameters beyond its named ones) covers every one.
    _knows_every_param = False

    def _not_booster_params(self) -> tuple[str, ...]:
        """The ranker's own parameters and those of its boostplug objective: never the booster's."""
        if not self._is_boostplug(self.objective):
            return OWN_PARAMS
        return (*OWN_PARAMS, *_objectives.resolve(self.objective).defaults)

    def _qid_from_X(self, X: Any, qid: Any, group: Any = None, eval_index: int | None = None) -> tuple[Any, Any]:
        """``(X, qid)`` as the framework reads them: ``X`` converted (:class:`boostplug.lightgbm.LGBMRanker`:
        :func:`~.lightgbm.frames.lightgbm_frame`), the query ids its convention reads from ``X`` itself
        (:class:`boostplug.xgboost.XGBRanker`: a DataFrame column named ``qid``); by default as given.
        ``eval_index``: ``X`` is that of ``eval_set[eval_index]`` (``None``: the training ``X``)."""
        return X, qid

    def _plan_fit(self, X: Any, y: ArrayLike, *, qid: ArrayLike | None, group: ArrayLike | None,
                  sample_weight: ArrayLike | None, eval_set: Sequence[tuple[Any, Any]] | None,
                  eval_qid: Sequence[ArrayLike] | None, eval_group: Sequence[ArrayLike] | None,
                  eval_sample_weight: Sequence[ArrayLike] | None, doc: ArrayLike | None = None) -> FitPlan:
        X, qid = self._qid_from_X(X, qid, group)
        record_fitted_queries(self, qid, y)
        if getattr(self, "n_estimators", None) is not None:  # XGBoost's None: its default, 100
            check_rounds(self.n_estimators, "n_estimators")  # LightGBM fails beyond, XGBoost runs for ever
        choice = resolve_objective(self.objective, self._extra_params(), framework=self._framework,
                                   knows=self._knows_param, complete=self._knows_every_param,
                                   builtin=self._builtin_objectives)
        metrics = check_eval_metrics(self.eval_metric)
        rounds = check_optional_rounds(self.early_stopping_rounds, "early_stopping_rounds")
        gp = group_ptr_of(np.shape(y)[0], qid, group, caller=f"{type(self).__name__}.fit")
        choice = self._on_rows(choice, qid, gp, doc)
        qw = query_weights_from_rows(_as_weights(sample_weight), gp, self._framework)
        if isinstance(eval_set, tuple):
            eval_set = [eval_set]
        evals: list[EvalSet] = []
        if eval_set:
            n = len(eval_set)
            qids = per_set(eval_qid, n, "eval_qid")
            groups = per_set(eval_group, n, "eval_group")
            weights = per_set(eval_sample_weight, n, "eval sample weights")
            for i, pair in enumerate(eval_set):
                if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                    raise ValueError(f"eval_set[{i}] must be an (X, y) pair")
                ex, eq = self._qid_from_X(pair[0], qids[i], groups[i], i)
                egp = group_ptr_of(np.shape(pair[1])[0], eq, groups[i],
                                   f"eval_set[{i}] (eval_qid[{i}] or eval_group[{i}])", caller=f"{type(self).__name__}.fit")
                evals.append(EvalSet(ex, pair[1], egp, query_weights_from_rows(_as_weights(weights[i]), egp,
                                                                                self._framework)))
        elif eval_qid is not None or eval_group is not None or eval_sample_weight is not None:
            raise ValueError("eval_qid, eval_group or eval sample weights given without eval_set")
        if rounds is not None and not evals:
            raise ValueError(
                f"early_stopping_rounds={rounds} needs validation data: fit(..., eval_set=[(X_vali, y_vali)], "
                "eval_qid=[qid_vali])"
            )
        return FitPlan(X, y, gp, qw, choice, evals, metrics, rounds)

    def _on_rows(self, choice: ObjectiveChoice, qid: ArrayLike | None, group_ptr: NDArray[np.int64],
                 doc: ArrayLike | None) -> ObjectiveChoice:
        """``choice`` with its keyed tables mapped onto this fit's rows, keyed by ``qid`` (or the
        query index, with ``group``) and ``doc``."""
        if choice.name is None:
            if doc is not None:
                raise ValueError(f"doc= (document keys for keyed pairs) given, but objective={self.objective!r} "
                                 "is not a boostplug objective")
            return choice
        entry = choice.entry
        keyed = given_keyed_params(entry, choice.params)
        if not keyed:
            return choice
        if doc is None:
            raise ValueError(NO_KEYS.format(who=f"{type(self).__name__}.fit", param=next(iter(keyed)),
                                            how="pass fit(..., doc=doc) (one document key per row; with "
                                                "GridSearchCV/cross_validate, params={'qid': qid, 'doc': doc, "
                                                "'groups': qid})"))
        keys = row_keys(qid_from_group_ptr(group_ptr) if qid is None else qid, doc, int(group_ptr[-1]))
        return replace(choice, params=params_on_rows(entry, choice.params, *keys))

    def score(self, X: Any, y: ArrayLike, qid: ArrayLike | None = None,
              sample_weight: ArrayLike | None = None) -> float:
        """Mean of the ranker's ``eval_metric`` (default NDCG@10, by :mod:`boostplug.metrics`;
        of a list, the last one) over the queries of ``qid``, weighted by ``sample_weight`` (per
        query, or per row constant within a query); negated for the losses ``r1``/``r2`` so
        that greater is better.

        With ``sklearn.set_config(enable_metadata_routing=True)``, ``GridSearchCV`` and
        ``cross_validate`` pass each split's ``qid`` here (it is requested by default), and rows
        whose query ids the ranker was fitted on are then refused (a split that cuts queries, or
        a test set numbered like the training set: :mod:`boostplug._sklearn_folds`), unless they
        are the fitted rows themselves.
        """
        X, qid = self._qid_from_X(X, qid)
        if qid is None:
            raise ValueError(
                "score needs qid= (one query id per row); in GridSearchCV/cross_validate, enable "
                "sklearn.set_config(enable_metadata_routing=True) and pass qid to fit"
            )
        check_scored_queries(self, qid, y, f"{type(self).__name__}.score")
        spec = check_eval_metrics(self.eval_metric)[-1]
        gp = group_ptr_of(np.shape(y)[0], qid, None, caller=f"{type(self).__name__}.score")
        preds = np.asarray(self.predict(X), dtype=np.float64).reshape(-1)
        value = spec(preds, np.asarray(y, dtype=np.float64), gp, metric_query_weights(_as_weights(sample_weight), gp))
        return value if spec.higher_is_better else -value


def _as_weights(w: ArrayLike | None) -> NDArray[np.float64] | None:
    return None if w is None else np.asarray(w, dtype=np.float64).reshape(-1)
