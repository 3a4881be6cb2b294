"""``pyspark.ml`` stages: :class:`Ranker` (an Estimator training either framework with a boostplug
objective), :class:`RankerModel` (its Model: ``transform`` scores, saves and loads, inside Pipelines
too), :class:`QueryEvaluator` (a boostplug metric over whole queries, for ``CrossValidator`` and
``TrainValidationSplit``) and :func:`query_folds` (a fold column that keeps queries whole, for
``CrossValidator(foldCol=...)``). User documentation: :mod:`boostplug.spark`."""

from __future__ import annotations

import base64
import json
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import metrics as _metrics
from .._validation import check_int
from ..frameworks._metric_spec import MetricSpec
from ..frameworks.distributed.metric import from_sums, metric_sums
from ..frameworks.model_bytes import booster_bytes, booster_from_bytes
from ..groups import group_ptr_from_qid
from ..keyed_pairs import KeyedPairs
from ._barrier import check_boolean_columns
from ._spark import pyspark_module, require_columns, require_frame
from .scoring import predict
from .training import train

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame

pyspark_module()

from pyspark import keyword_only  # noqa: E402
from pyspark.ml import Estimator, Model  # noqa: E402
from pyspark.ml.evaluation import Evaluator  # noqa: E402
from pyspark.ml.param import Param, Params, TypeConverters  # noqa: E402
from pyspark.ml.param.shared import HasFeaturesCol, HasLabelCol, HasPredictionCol, HasWeightCol  # noqa: E402
from pyspark.ml.util import DefaultParamsReadable, DefaultParamsWritable  # noqa: E402

__all__ = ["Ranker", "RankerModel", "QueryEvaluator", "query_folds"]

#: The JSON tag of a KeyedPairs table inside objectiveParams.
_KEYED = "__boostplug_keyed_pairs__"


def _array_json(a: np.ndarray | None) -> Any:
    """An id or weight array as JSON, with its dtype (object ids stay objects, so they join the rows' keys)."""
    return None if a is None else {"dtype": "O" if a.dtype.kind == "O" else a.dtype.str, "values": a.tolist()}


def _array_from_json(v: Any) -> np.ndarray | None:
    return None if v is None else np.array(v["values"], dtype=np.dtype(v["dtype"]))


def _to_json(value: Any) -> Any:
    """``json.dumps``'s hook: a KeyedPairs table as a tagged object of its columns."""
    if isinstance(value, KeyedPairs):
        return {_KEYED: {k: _array_json(getattr(value, k)) for k in ("query", "better", "worse", "weight")}}
    raise TypeError(f"an objective parameter must be JSON data or a KeyedPairs table, got {type(value).__name__}")


def _from_json(obj: dict[str, Any]) -> Any:
    """``json.loads``'s hook: the KeyedPairs tables :func:`_to_json` tagged."""
    if set(obj) == {_KEYED}:
        return KeyedPairs(**{k: _array_from_json(v) for k, v in obj[_KEYED].items()})
    return obj


def _json_dict(value: Any) -> str:
    """A dict Param kept as JSON text (what Spark's param metadata can save); KeyedPairs tables
    inside it are kept as their columns."""
    if isinstance(value, str):
        value = json.loads(value, object_hook=_from_json)
    if not isinstance(value, dict):
        raise TypeError(f"expected a dict of parameters, got {type(value).__name__}")
    return json.dumps(value, sort_keys=True, default=_to_json)


class _RankerParams(HasFeaturesCol, HasLabelCol, HasPredictionCol, HasWeightCol):
    qidCol = Param(Params._dummy(), "qidCol", "query id column", TypeConverters.toString)
    framework = Param(Params._dummy(), "framework", "'xgboost' or 'lightgbm'", TypeConverters.toString)
    objective = Param(Params._dummy(), "objective", "a registered boostplug objective's name",
                      TypeConverters.toString)
    objectiveParams = Param(Params._dummy(), "objectiveParams", "the objective's parameters (a dict, kept as JSON; "
                            "KeyedPairs tables allowed)", _json_dict)
    docCol = Param(Params._dummy(), "docCol", "document key column, for KeyedPairs objective parameters ('' for none)",
                   TypeConverters.toString)
    objectiveCols = Param(Params._dummy(), "objectiveCols", "row-set objective parameters from boolean columns "
                          "(a dict parameter -> column, kept as JSON)", _json_dict)
    boosterParams = Param(Params._dummy(), "boosterParams", "the framework's parameters (a dict, kept as JSON)",
                          _json_dict)
    numBoostRound = Param(Params._dummy(), "numBoostRound", "boosting rounds", TypeConverters.toInt)
    numWorkers = Param(Params._dummy(), "numWorkers", "barrier tasks (0: Spark's default parallelism)",
                       TypeConverters.toInt)
    validationIndicatorCol = Param(Params._dummy(), "validationIndicatorCol",
                                   "boolean column marking validation rows ('' for none)", TypeConverters.toString)
    metric = Param(Params._dummy(), "metric", "boostplug metric on the validation rows", TypeConverters.toString)
    earlyStoppingRounds = Param(Params._dummy(), "earlyStoppingRounds", "0: no early stopping", TypeConverters.toInt)
    sparseMissing = Param(Params._dummy(), "sparseMissing", "XGBoost: an entry a sparse vector does not store is "
                          "missing (default false: a zero, as in the row stored dense)", TypeConverters.toBoolean)

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self._setDefault(qidCol="qid", framework="xgboost", objective="mpboost", objectiveParams="{}",
                         boosterParams="{}", numBoostRound=100, numWorkers=0, validationIndicatorCol="",
                         metric="ndcg@10", earlyStoppingRounds=0, weightCol="", docCol="", objectiveCols="{}",
                         sparseMissing=False)


class Ranker(Estimator, _RankerParams, DefaultParamsReadable, DefaultParamsWritable):
    """A ``pyspark.ml`` Estimator: :func:`boostplug.spark.train_xgboost` or
    :func:`~boostplug.spark.train_lightgbm` (``framework``) with the boostplug ``objective``.

    Example (``df`` with ``features``, ``label`` and ``qid``)::

        ranker = Ranker(objective="mpboost", objectiveParams={"ddf": "ldd"}, numBoostRound=200)
        model = ranker.fit(df)                # RankerModel
        scored = model.transform(test_df)     # + "prediction"

    Its params, click pairs (QBRank's P ∪ L: ``objectiveParams``, ``docCol``, ``objectiveCols``) and
    ``sparseMissing``: docs/spark.md, "pyspark.ml" and "Click logs".
    """

    @keyword_only
    def __init__(self, **kwargs: Any) -> None:
        super().__init__()
        self._set(**self._input_kwargs)

    @keyword_only
    def setParams(self, **kwargs: Any) -> "Ranker":
        return self._set(**self._input_kwargs)

    def _fit(self, dataset: "DataFrame") -> "RankerModel":
        framework = self.getOrDefault(self.framework)
        train_df, valid = dataset, None
        flag = self.getOrDefault(self.validationIndicatorCol)
        if flag:
            require_columns(dataset, [flag])
            check_boolean_columns(dataset, [flag])  # Spark's analyzer would refuse ~flag on another type, unnamed
            train_df, valid = dataset.filter(~dataset[flag]), dataset.filter(dataset[flag])
        rounds = self.getOrDefault(self.earlyStoppingRounds)
        booster = train(
            train_df, self.getOrDefault(self.objective), framework=framework,
            objective_params=json.loads(self.getOrDefault(self.objectiveParams), object_hook=_from_json),
            params=json.loads(self.getOrDefault(self.boosterParams)),
            num_boost_round=self.getOrDefault(self.numBoostRound), label_col=self.getLabelCol(),
            qid_col=self.getOrDefault(self.qidCol), features_col=self.getFeaturesCol(),
            weight_col=self.getOrDefault(self.weightCol) or None, doc_col=self.getOrDefault(self.docCol) or None,
            objective_cols=json.loads(self.getOrDefault(self.objectiveCols)), valid_df=valid,
            metric=self.getOrDefault(self.metric), early_stopping_rounds=rounds or None,
            num_workers=self.getOrDefault(self.numWorkers) or None,
            sparse_missing=self.getOrDefault(self.sparseMissing))
        model = RankerModel(framework=framework, featuresCol=self.getFeaturesCol(),
                            predictionCol=self.getPredictionCol(), modelPayload=_payload(booster))
        return self._copyValues(model)


def _payload(booster: Any) -> str:
    """The model as one line of text (base64), what Spark's param metadata saves."""
    return base64.b64encode(booster_bytes(booster)[1]).decode("ascii")


class RankerModel(Model, _RankerParams, DefaultParamsReadable, DefaultParamsWritable):
    """The model :class:`Ranker` fits: ``transform`` adds ``predictionCol`` (raw scores);
    :meth:`booster` gives the framework's Booster (its objective recorded); saved with its params."""

    modelPayload = Param(Params._dummy(), "modelPayload", "the trained model (base64)", TypeConverters.toString)

    @keyword_only
    def __init__(self, **kwargs: Any) -> None:
        super().__init__()
        self._set(**self._input_kwargs)

    def booster(self) -> Any:
        """The trained ``xgb.Booster`` or ``lgb.Booster``. The payload is checked before the framework
        reads it (:func:`~boostplug.frameworks.model_bytes.booster_from_bytes`): a damaged one, say in a
        saved model's files, is a ``ValueError`` naming this stage and where the model breaks."""
        framework = self.getOrDefault(self.framework)
        try:
            raw = base64.b64decode(self.getOrDefault(self.modelPayload), validate=True)
            return booster_from_bytes(framework, raw)
        except ValueError as exc:  # binascii.Error (not base64) is a ValueError too
            raise ValueError(f"RankerModel {self.uid} ({framework}): its modelPayload cannot be loaded: {exc}") \
                from None

    def _transform(self, dataset: "DataFrame") -> "DataFrame":
        return predict(dataset, self.booster(), features_col=self.getFeaturesCol(),
                       output_col=self.getPredictionCol(), sparse_missing=self.getOrDefault(self.sparseMissing))


class QueryEvaluator(Evaluator, HasLabelCol, HasPredictionCol, HasWeightCol, DefaultParamsReadable,
                     DefaultParamsWritable):
    """A boostplug metric (``"ndcg@10"``, ``"map"``, ``"err@5"``...) of ``predictionCol`` over whole
    queries (``mapInPandas`` on the rows partitioned by ``qidCol``), weighted by ``weightCol`` (one
    weight per row, equal within a query) when set: how, and the order of tied scores, docs/spark.md,
    "pyspark.ml"; prefer a metric convention that averages ties when scores can tie."""

    metric = Param(Params._dummy(), "metric", "boostplug metric name", TypeConverters.toString)
    qidCol = Param(Params._dummy(), "qidCol", "query id column", TypeConverters.toString)

    @keyword_only
    def __init__(self, **kwargs: Any) -> None:
        super().__init__()
        self._setDefault(metric="ndcg@10", qidCol="qid", weightCol="")
        self._set(**self._input_kwargs)

    def isLargerBetter(self) -> bool:
        return _metrics.higher_is_better(self.getOrDefault(self.metric))

    def _evaluate(self, dataset: "DataFrame") -> float:
        spec = MetricSpec(self.getOrDefault(self.metric))
        qid, label, score = self.getOrDefault(self.qidCol), self.getLabelCol(), self.getPredictionCol()
        weight = self.getOrDefault(self.weightCol) or None
        cols = [qid, label, score] + ([weight] if weight else [])
        require_frame(dataset, "QueryEvaluator", cols)

        def partition_sums(batches: Any) -> Any:
            import pandas as pd

            pdf = pd.concat(list(batches), ignore_index=True)   # whole queries: partitioned by qid
            if pdf.empty:
                return
            # a query's rows together, in the order Spark handed them over
            group_ptr, order = group_ptr_from_qid(pdf[qid].to_numpy(), regroup=True)
            w = None if weight is None else pdf[weight].to_numpy(np.float64)[order][group_ptr[:-1]]
            sums = metric_sums(spec, pdf[score].to_numpy(np.float64)[order], pdf[label].to_numpy(np.float64)[order],
                               group_ptr, w)
            yield pd.DataFrame({"num": [sums[0]], "den": [sums[1]]})

        per_partition = dataset.select(*cols).repartition(qid).mapInPandas(partition_sums,
                                                                           schema="num double, den double")
        total = per_partition.groupBy().sum("num", "den").collect()[0]
        return from_sums(np.array([total[0] or 0.0, total[1] or 0.0]))


def query_folds(df: "DataFrame", k: int, qid_col: str = "qid", fold_col: str = "fold", seed: int = 0) -> "DataFrame":
    """``df`` with ``fold_col``: an integer in ``0..k-1`` per query (a hash of the query id and
    ``seed``), the same for all its rows, for ``CrossValidator(foldCol=fold_col, numFolds=k)``:
    Spark's own random folds would cut queries."""
    from pyspark.sql import functions as F

    require_frame(df, "query_folds", [qid_col])
    check_int("k", k, 2, None)
    return df.withColumn(fold_col, F.pmod(F.xxhash64(F.col(qid_col), F.lit(int(seed))), F.lit(int(k))).cast("int"))
