"""LightGBM adapter: boostplug objectives and metrics in LightGBM's calling conventions.

Example:
    >>> import lightgbm as lgb
    >>> from boostplug import lightgbm as bpl
    >>> train = bpl.dataset(X, y, qid=qid)
    >>> vali = bpl.dataset(Xv, yv, qid=qid_v, reference=train)
    >>> params = {"objective": bpl.objective(name, **objective_params), "metric": "None",
    ...           "num_threads": 1, "verbose": -1}
    >>> booster = lgb.train(params, train, 200, valid_sets=[vali],
    ...                     feval=bpl.metric("ndcg@10"),
    ...                     callbacks=[lgb.early_stopping(20, verbose=False)])
    >>> booster.predict(Xt).shape == yt.shape
    True
    >>> ranker = lgb.LGBMRanker(objective=bpl.sklearn_objective(name))

``name`` is one of :func:`boostplug.objectives.names`, ``objective_params`` its parameters.

Notes:
* Query groups come from the Dataset (``group=`` sizes). Row weights must be
  constant within each query (ranking losses weight whole queries).
* ``init_score`` is honoured: LightGBM passes scores that include it.
* A model trained with a callable objective saves and loads as usual
  (``booster.save_model``); its raw scores are the ranking scores.
* ``lgb.cv``'s folds that cut queries (refused: use :func:`cv` or :func:`query_folds`) and the
  labels LightGBM changes before an objective sees them: docs/objectives/index.md,
  "Cross-validation and early stopping".
* Polars and pyarrow frames: LightGBM reads them through Arrow, where a categorical (or string,
  date...) column ends the process; :func:`dataset` and :class:`LGBMRanker` convert or refuse
  them, as :func:`dataset`'s docstring says.
* The math lives in :mod:`boostplug.objectives`; this module only adapts. The implementation
  is in :mod:`boostplug.frameworks.lightgbm`.
"""

from __future__ import annotations

from .frameworks._lazy import lazy_getattr
from .frameworks.lightgbm.adapters import dataset, metric, objective, sklearn_metric, sklearn_objective
from .frameworks.lightgbm.cv import cv, query_folds
from .frameworks.lightgbm.line_search import train_line_search
from .frameworks.lightgbm.model_file import (load_model, log_model, model_to_string, objective_of, record_objective,
                                             save_model)
from .frameworks.lightgbm.refit import refit

__all__ = ["objective", "sklearn_objective", "metric", "sklearn_metric", "dataset", "query_folds", "cv",
           "train_line_search", "record_objective", "objective_of", "model_to_string", "save_model", "load_model",
           "log_model", "refit", "LGBMRanker", "SKOPS_TRUSTED_TYPES", "tuner_cv", "tuner"]

__getattr__ = lazy_getattr(__name__, {"LGBMRanker": "boostplug.frameworks.lightgbm.ranker",
                                      "SKOPS_TRUSTED_TYPES": "boostplug.frameworks.lightgbm.ranker",
                                      "tuner_cv": "boostplug.frameworks.lightgbm.tuner",
                                      "tuner": "boostplug.frameworks.lightgbm.tuner"})
