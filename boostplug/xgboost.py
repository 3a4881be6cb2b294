"""XGBoost adapter: boostplug objectives and metrics in XGBoost's calling conventions.

Example:
    >>> import xgboost as xgb
    >>> from boostplug import xgboost as bpx
    >>> dtrain, dvali = bpx.dmatrix(X, y, qid=qid), bpx.dmatrix(Xv, yv, qid=qid_v)
    >>> booster = xgb.train({"base_score": 0.0, "tree_method": "hist", "nthread": 1}, dtrain, 200,
    ...                     obj=bpx.objective(name, **objective_params),
    ...                     evals=[(dvali, "vali")], custom_metric=bpx.metric("ndcg@10"),
    ...                     early_stopping_rounds=20, verbose_eval=False)
    >>> booster.predict(bpx.dmatrix(Xt, yt, qid=qid_t)).shape == yt.shape
    True

``name`` is one of :func:`boostplug.objectives.names`, ``objective_params`` its parameters.

Notes:
* ``base_score`` (:func:`params` sets 0), ``XGBRanker`` refusing custom objectives (this module's
  ``XGBRanker(objective=name, **objective_params)`` takes one by name), unsorted query ids
  (:func:`dmatrix` renumbers them): docs/objectives/index.md, "Using an objective". Its
  ``XGBRanker`` also takes XGBoost's convention of the ids as a pandas column named ``qid`` (in
  ``fit``, each ``eval_set`` frame, ``predict`` and ``score``).
* Weights for ranking are one per query (XGBoost's convention).
* Keyed pairs (:class:`~boostplug.keyed_pairs.KeyedPairs`, e.g. QBRank's click pairs) need a DMatrix
  built with ``dmatrix(..., doc=doc)``, and :func:`cv` for folds (``xgb.cv``'s lose the keys):
  docs/clicks.md, "Cross-validation, GridSearchCV and early stopping on click pairs".
* The implementation is in :mod:`boostplug.frameworks.xgboost`.
"""

from __future__ import annotations

from .frameworks._lazy import lazy_getattr
from .frameworks.xgboost.adapters import dmatrix, early_stopping, metric, objective, params
from .frameworks.xgboost.cv import cv, query_fold_rows
from .frameworks.xgboost.model_file import load_model, objective_of, record_objective, save_model

__all__ = ["objective", "metric", "early_stopping", "dmatrix", "params", "cv", "query_fold_rows", "record_objective", "objective_of",
           "save_model", "load_model", "XGBRanker", "SKOPS_TRUSTED_TYPES"]

__getattr__ = lazy_getattr(__name__, {"XGBRanker": "boostplug.frameworks.xgboost.ranker",
                                      "SKOPS_TRUSTED_TYPES": "boostplug.frameworks.xgboost.ranker"})
