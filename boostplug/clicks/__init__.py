"""Learning from clicks: click logs in, preference pairs out, QBRank's P ∪ L, click simulation.

* :func:`read_log` / :class:`ClickLog` (:mod:`boostplug.clicks.log`): impressions from pandas,
  polars or pyarrow tables, Parquet or CSV files, validated (bad impressions refused or
  dropped with a report); :mod:`boostplug.clicks.formats`: Baidu-ULTR's raw parts
  (:class:`BaiduULTR`, :func:`read_baidu_ultr`) and the Yandex relevance-prediction log
  (:class:`YandexRelPred`, :func:`read_yandex`), read whole or streamed;
* :func:`preferences` (:mod:`boostplug.clicks.extract`): Joachims et al.'s strategies
  (:mod:`boostplug.clicks.strategies`) aggregated over sessions into a :class:`Preferences`
  table (:mod:`boostplug.clicks.aggregate`: counts, net counts, minimum support, weights); files
  are streamed and Dask DataFrames reduced per partition;
* :func:`to_rows`, :func:`training_set` (:mod:`boostplug.clicks.pairs`): the table as row-index
  pairs of a feature matrix, and the training set of QBRank's P ∪ L (click preferences with
  a labeled subset), with the objective's parameters; :func:`log_rows`: the feature row of
  every impression row, for learners that train on clicks as labels and positions;
* :func:`estimate_propensity` (:mod:`boostplug.clicks.propensity`): the examination propensity of
  each position, with its uncertainty, from randomised traffic, the position-based model's EM or
  intervention harvesting; :func:`ips_weights` per log row, and ``preferences(log,
  propensity=...)`` weights pairs by the inverse propensity of the clicked position;
* :func:`simulate` (:mod:`boostplug.clicks.simulation`): clicks of a position-based, cascade or
  dependent click model on the top results of a production ranker, for any LETOR data, shown
  in the ranker's order or shuffled (randomised traffic).

This package is data only: it trains nothing and imports nothing above the data layer. Training
on clicks under one protocol (every baseline on the same clicks of a fold, ``boostplug compare
--clicks``) is :mod:`boostplug.compare.click_protocol`'s.

Example:
    >>> import numpy as np
    >>> from boostplug import clicks
    >>> from boostplug.data import make_ranking
    >>> data = make_ranking(n_queries=20, docs_per_query=10, seed=0)
    >>> log = clicks.simulate(data, scores=np.zeros(data.n_docs), n_sessions=200, seed=0)
    >>> prefs = clicks.preferences(log)
    >>> rows = clicks.to_rows(prefs, data.qid)          # row indices of data.X, preferred first
    >>> rows.pairs.shape[1]
    2

pandas, polars, pyarrow and dask are imported only when a source of theirs is given, and
numba when the first log is processed.
"""

from __future__ import annotations

from . import strategies
from .aggregate import WEIGHTS, Preferences
from .extract import preferences
from .formats import BaiduULTR, YandexRelPred, read_baidu_ultr, read_yandex
from .log import ClickLog, Dropped, read_log
from .pairs import PairRows, TrainingSet, log_rows, to_rows, training_set
from .propensity import Propensity, estimate_propensity, ips_weights
from .simulation import CLICK_MODELS, CLICK_PRESETS, PRESENTATIONS, simulate

__all__ = ["CLICK_MODELS", "CLICK_PRESETS", "PRESENTATIONS", "ClickLog", "Dropped", "PairRows", "Preferences",
           "Propensity", "TrainingSet", "WEIGHTS", "estimate_propensity", "ips_weights", "log_rows",
           "preferences", "read_log", "simulate", "strategies", "to_rows", "training_set"]
__all__ += ["BaiduULTR", "YandexRelPred", "read_baidu_ultr", "read_yandex"]  # the raw formats (clicks.formats)
