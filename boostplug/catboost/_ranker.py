"""``boostplug.catboost.CatBoostRanker``: a scikit-learn ranker of CatBoost trees on a boostplug
objective (the logic it shares with the LightGBM and XGBoost rankers: :mod:`boostplug.frameworks.sklearn_ranker`)."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator

from .. import objectives as _objectives
from .._core.early_stopping import BestRound
from ..frameworks.sklearn_ranker import RankerMixin
from ._objective import objective as make_objective
from ._objective import pool
from ._train import train

__all__ = ["CatBoostRanker"]


class CatBoostRanker(RankerMixin, BaseEstimator):
    """A scikit-learn ranker: :func:`~boostplug.catboost.train` on a boostplug ``objective`` (a
    registered name or a :class:`~boostplug.objectives.Loss`; CatBoost's own losses:
    ``catboost.CatBoostRanker``), as :class:`boostplug.lightgbm.LGBMRanker`: ``eval_metric``
    (boostplug's; of a list, the last one drives early stopping and :meth:`score`) recorded on
    ``eval_set`` in ``evals_result_``, ``early_stopping_rounds`` on the last eval set (with an eval
    set the model keeps its best round on it: ``best_iteration_`` trees, in ``model_``). ``**kwargs``:
    the objective's parameters and any other CatBoost parameter (``l2_leaf_reg``...).

    Example:
        >>> ranker = CatBoostRanker(objective=name, n_estimators=20, early_stopping_rounds=5, thread_count=1)
        >>> ranker.fit(X, y, qid=qid, eval_set=[(Xv, yv)], eval_qid=[qid_v]).score(Xt, yt, qid=qid_t) <= 1
        True
    """

    _framework = "CatBoost"

    def __init__(self, objective: Any = "lambdarank", *, n_estimators: int = 100, learning_rate: float = 0.1,
                 depth: int = 6, random_seed: int = 0, thread_count: int = -1,
                 eval_metric: str | Sequence[str] = "ndcg@10", early_stopping_rounds: int | None = None,
                 **kwargs: Any) -> None:
        self.objective, self.n_estimators, self.learning_rate, self.depth = objective, n_estimators, learning_rate, depth
        self.random_seed, self.thread_count, self.eval_metric = random_seed, thread_count, eval_metric
        self.early_stopping_rounds, self.kwargs = early_stopping_rounds, kwargs

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        return {**super().get_params(deep), **self.kwargs}

    def set_params(self, **params: Any) -> "CatBoostRanker":
        for key, value in params.items():
            if key in self._get_param_names():
                setattr(self, key, value)
            else:
                self.kwargs[key] = value
        return self

    def _extra_params(self) -> dict[str, Any]:
        return dict(self.kwargs)

    def _knows_param(self, name: str) -> bool:  # CatBoost lists no parameters: it refuses an unknown one itself
        return False

    def fit(self, X: Any, y: ArrayLike, *, qid: ArrayLike | None = None, group_id: ArrayLike | None = None,
            group: ArrayLike | None = None, eval_set: Sequence[tuple[Any, Any]] | None = None,
            eval_qid: Sequence[ArrayLike] | None = None, eval_group: Sequence[ArrayLike] | None = None,
            sample_weight: ArrayLike | None = None, eval_sample_weight: Sequence[ArrayLike] | None = None,
            doc: ArrayLike | None = None) -> "CatBoostRanker":
        """Fit on queries given by ``qid`` (or CatBoost's name for it, ``group_id``; one id per row,
        each query's rows adjacent) or ``group`` (query sizes); ``eval_set``: ``[(X, y), ...]`` with
        ``eval_qid`` (or ``eval_group``) for each; ``sample_weight`` (and ``eval_sample_weight``): one
        weight per row, alike within a query (the pool's ``group_weight``); ``doc``: document keys."""
        if group_id is not None and qid is not None:
            raise ValueError("pass qid= or group_id= (the same thing, CatBoost's name), not both")
        if isinstance(self.objective, str) and self.objective != self.objective.lower():  # CatBoost's spelling
            raise ValueError(f"objective {self.objective!r} is CatBoost's spelling: CatBoost's own loss trains with "
                             f"catboost.CatBoostRanker(loss_function={self.objective!r}); boostplug's objectives are "
                             f"named in lower case ({self.objective.lower()!r}, where boostplug has one)")
        plan = self._plan_fit(X, y, qid=qid if group_id is None else group_id, group=group, sample_weight=sample_weight,
                              eval_set=eval_set, eval_qid=eval_qid, eval_group=eval_group,
                              eval_sample_weight=eval_sample_weight,
                              doc=doc)
        if plan.choice.name is None:
            raise ValueError(f"boostplug.catboost.CatBoostRanker takes a boostplug objective (one of "
                             f"{_objectives.names()}, or a Loss), got {self.objective!r}; CatBoost's own losses "
                             "train with catboost.CatBoostRanker")
        params = {"learning_rate": self.learning_rate, "depth": self.depth, "random_seed": self.random_seed,
                  "thread_count": self.thread_count, **plan.choice.booster_params}
        self.evals_result_: dict[str, Any] = {}
        self.model_ = train(params, pool(plan.X, y, group_ptr=plan.group_ptr, group_weight=plan.query_weights),
                            make_objective(plan.choice.entry, **plan.choice.params), self.n_estimators,
                            valid_sets=[pool(e.X, e.y, group_ptr=e.group_ptr, group_weight=e.query_weights)
                                        for e in plan.evals],
                            valid_names=[f"validation_{i}" for i in range(len(plan.evals))],
                            metric=[m.name for m in plan.metrics], early_stopping_rounds=plan.early_stopping_rounds,
                            evals_result=self.evals_result_)
        curves = [c[plan.watched.name] for c in self.evals_result_.values()]  # the last set's: the one served
        self.best_iteration_ = BestRound.of(curves[-1], plan.watched.higher_is_better).best or None if curves else None
        return self

    def predict(self, X: Any) -> np.ndarray:
        """The ranking scores of ``X`` (CatBoost's raw values; 0 when no tree was grown)."""
        if self.model_ is None:
            return np.zeros(np.shape(X)[0])
        return self.model_.predict(X, prediction_type="RawFormulaVal", thread_count=self.thread_count)
