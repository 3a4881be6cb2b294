"""The framework integrations behind :mod:`boostplug.lightgbm`, :mod:`boostplug.xgboost` and
:mod:`boostplug.dask` (those public modules re-export what users call).

Layout:

* what every framework shares: ``_bound_objective.py`` (binding an objective to each training
  set, one round's call), ``_query_info.py`` (groups and per-query weights), ``_builders.py``
  (the dataset/dmatrix checks) and ``_metric_spec.py`` (the metric evaluation).
* ``model_record.py``: the record of which objective trained a saved model.
* ``sklearn_ranker.py``: the scikit-learn rankers' shared logic.
* ``lightgbm/``: ``adapters`` (objective, metric, dataset), ``cv`` (query folds), ``refit``,
  ``ranker`` (``LGBMRanker``), ``model_file`` (save/load with the record), ``line_search``.
* ``xgboost/``: ``adapters`` (objective, metric, early stopping, dmatrix, params),
  ``ranker`` (``XGBRanker``), ``model_file``.
* ``dask/``: ``partition`` (query-whole partitions: build, check), ``train``, ``evaluate``.
"""
