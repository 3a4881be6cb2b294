"""The pyspark.ml stages: Ranker/RankerModel in a Pipeline (fit, transform, save, load), the
query evaluator against the in-memory metric, CrossValidator on query folds."""

from __future__ import annotations

import numpy as np
import pytest
import xgboost as xgb

from boostplug import metrics
from boostplug import xgboost as bpx
from tests.spark.conftest import frame

pytest.importorskip("pyspark")

from pyspark.ml import Pipeline, PipelineModel  # noqa: E402
from pyspark.ml.feature import VectorAssembler  # noqa: E402
from pyspark.ml.tuning import CrossValidator, ParamGridBuilder  # noqa: E402

from boostplug.spark.ml import QueryEvaluator, Ranker, RankerModel, query_folds  # noqa: E402

PARAMS = {"max_depth": 3, "eta": 0.3, "nthread": 1}


def test_pipeline_fits_scores_saves_and_loads(spark, ranking, tmp_path):
    df = frame(spark, ranking, vector=False)
    features = [f"f{j}" for j in range(ranking.X.shape[1])]
    pipe = Pipeline(stages=[VectorAssembler(inputCols=features, outputCol="features"),
                            Ranker(objective="mpboost", objectiveParams={"ddf": "ldd"}, boosterParams=PARAMS,
                                   numBoostRound=8, numWorkers=2)])
    model = pipe.fit(df)
    ranker_model = model.stages[-1]
    assert isinstance(ranker_model, RankerModel)
    booster = ranker_model.booster()
    assert bpx.objective_of(booster).name == "mpboost"
    ref = xgb.train(bpx.params(**PARAMS), bpx.dmatrix(ranking.X, ranking.y, qid=ranking.qid), 8,
                    obj=bpx.objective("mpboost", ddf="ldd"))
    X = xgb.DMatrix(ranking.X)
    np.testing.assert_allclose(booster.predict(X), ref.predict(X), rtol=1e-5, atol=1e-6)
    scored = model.transform(df).select("prediction").toPandas()["prediction"].to_numpy()
    model.write().overwrite().save(str(tmp_path / "pipe"))
    again = PipelineModel.load(str(tmp_path / "pipe")).transform(df).select("prediction").toPandas()["prediction"]
    np.testing.assert_array_equal(np.sort(again.to_numpy()), np.sort(scored))
    np.testing.assert_allclose(np.sort(scored), np.sort(booster.predict(X, output_margin=True)), rtol=1e-6)


def test_query_evaluator_equals_the_in_memory_metric(spark, ranking):
    import pandas as pd

    scores = np.random.default_rng(0).normal(size=ranking.n_docs)
    qw = 1.0 + ranking.qid % 4
    df = spark.createDataFrame(pd.DataFrame({"qid": ranking.qid, "label": ranking.y, "prediction": scores,
                                             "w": qw}))
    for name in ("ndcg@10", "map", "err@5"):
        got = QueryEvaluator(metric=name).evaluate(df)
        assert got == pytest.approx(metrics.by_name(name)(scores, ranking.y, ranking.group_ptr), rel=1e-12)
    per_q = metrics.ndcg(scores, ranking.y, ranking.group_ptr, k=5, per_query=True)
    w = qw[ranking.group_ptr[:-1]]
    assert QueryEvaluator(metric="ndcg@5", weightCol="w").evaluate(df) == pytest.approx(np.dot(w, per_q) / w.sum())
    assert QueryEvaluator(metric="r2").isLargerBetter() is False


def test_query_evaluator_joins_queries_cut_across_partitions_and_batches(spark, ranking):
    # rows shuffled over 5 partitions, Arrow batches of 7 rows: every query arrives in pieces
    import pandas as pd

    scores = np.random.default_rng(1).normal(size=ranking.n_docs)
    qw = 1.0 + ranking.qid % 3
    pdf = pd.DataFrame({"qid": ranking.qid, "label": ranking.y, "prediction": scores, "w": qw})
    df = spark.createDataFrame(pdf.sample(frac=1.0, random_state=0)).repartition(5)
    key = "spark.sql.execution.arrow.maxRecordsPerBatch"
    before = spark.conf.get(key)
    spark.conf.set(key, "7")
    try:
        got = QueryEvaluator(metric="ndcg@10").evaluate(df)
        weighted = QueryEvaluator(metric="map", weightCol="w").evaluate(df)
    finally:
        spark.conf.set(key, before)
    assert got == pytest.approx(metrics.ndcg(scores, ranking.y, ranking.group_ptr, k=10), rel=1e-12)
    per_q = metrics.average_precision(scores, ranking.y, ranking.group_ptr, per_query=True)
    w = qw[ranking.group_ptr[:-1]]
    assert weighted == pytest.approx(np.dot(w, per_q) / w.sum(), rel=1e-12)


def test_cross_validator_on_query_folds(spark, ranking):
    df = query_folds(frame(spark, ranking), k=2, seed=1)
    folds = df.select("qid", "fold").distinct().toPandas()
    assert folds["qid"].is_unique and set(folds["fold"]) == {0, 1}  # each query in one fold, both folds used
    ranker = Ranker(objective="qbrank", boosterParams=PARAMS, numWorkers=2)
    grid = ParamGridBuilder().addGrid(ranker.numBoostRound, [1, 6]).build()
    cv = CrossValidator(estimator=ranker, estimatorParamMaps=grid, evaluator=QueryEvaluator(metric="ndcg@10"),
                        numFolds=2, foldCol="fold")
    fitted = cv.fit(df)
    assert len(fitted.avgMetrics) == 2 and all(0 < m <= 1 for m in fitted.avgMetrics)
    assert fitted.bestModel.transform(df).count() == ranking.n_docs


def test_bad_stage_arguments(spark, ranking):
    with pytest.raises(ValueError, match="framework must be one of"):
        Ranker(framework="catboost").fit(frame(spark, ranking))
    with pytest.raises(ValueError, match="k must be an integer >= 2, got 1"):
        query_folds(frame(spark, ranking), k=1)


def test_ranker_with_doc_col_and_keyed_pairs_equals_train(spark, click_pl, tmp_path):
    """The P ∪ L of tests/spark/test_clicks.py through a saved and reloaded Pipeline: its KeyedPairs
    table, docCol and objectiveCols survive the save, and the fit equals boostplug.spark.train's
    (without docCol the table cannot be mapped onto the rows and the fit fails; without
    objectiveCols the judged rows leave the squared-error term)."""
    from boostplug.keyed_pairs import KeyedPairs
    from boostplug.spark import train

    df, kw, _ = click_pl
    features = [f"f{j}" for j in range(5)]
    ranker = Ranker(objective="qbrank", objectiveParams=kw, docCol="doc", objectiveCols={"labeled_rows": "judged"},
                    boosterParams=PARAMS, numBoostRound=6, numWorkers=2)
    Pipeline(stages=[VectorAssembler(inputCols=features, outputCol="features"), ranker]).write().save(
        str(tmp_path / "pipe"))
    loaded = Pipeline.load(str(tmp_path / "pipe"))
    again = loaded.getStages()[-1]
    assert again.getOrDefault(again.docCol) == "doc"
    pairs = json_params(again)["pairs"]
    assert isinstance(pairs, KeyedPairs)
    for k in ("query", "better", "worse", "weight"):
        np.testing.assert_array_equal(getattr(pairs, k), getattr(kw["pairs"], k))
        assert getattr(pairs, k).dtype == getattr(kw["pairs"], k).dtype
    booster = loaded.fit(df).stages[-1].booster()
    want = train(df, "qbrank", objective_params=kw, params=PARAMS, num_boost_round=6, doc_col="doc",
                 objective_cols={"labeled_rows": "judged"}, feature_cols=features, num_workers=2)
    X = xgb.DMatrix(df.select(*features).toPandas().to_numpy())
    np.testing.assert_allclose(booster.predict(X), want.predict(X), rtol=1e-6, atol=1e-7)


def test_a_saved_model_with_a_cut_payload_is_refused_not_crashed(spark, ranking, tmp_path):
    """A RankerModel whose XGBoost payload is cut (here: half of it, inside a saved PipelineModel) is a
    ValueError naming the stage when it scores, not XGBoost's reader crashing or hanging the driver
    (the check itself: every cut point, tests/frameworks/test_model_bytes.py)."""
    import base64

    from boostplug.frameworks.model_bytes import booster_bytes

    good = xgb.train(bpx.params(**PARAMS), bpx.dmatrix(ranking.X, ranking.y, qid=ranking.qid), 3,
                     obj=bpx.objective("mpboost"))
    raw = booster_bytes(good)[1]
    cut = RankerModel(framework="xgboost", modelPayload=base64.b64encode(raw[:len(raw) // 2]).decode("ascii"))
    PipelineModel(stages=[cut]).write().save(str(tmp_path / "pipe"))
    loaded = PipelineModel.load(str(tmp_path / "pipe"))
    with pytest.raises(ValueError, match=rf"^RankerModel {cut.uid} \(xgboost\): its modelPayload cannot be loaded: "
                                         rf"the model bytes: not a complete UBJSON model .* of {len(raw) // 2}$"):
        loaded.transform(frame(spark, ranking))


def json_params(ranker):
    import json

    from boostplug.spark.ml import _from_json

    return json.loads(ranker.getOrDefault(ranker.objectiveParams), object_hook=_from_json)
