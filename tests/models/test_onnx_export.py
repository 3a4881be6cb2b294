"""ONNX export (boostplug.export.to_onnx): onnxruntime scores models trained with boostplug
objectives and with built-in ranking objectives as LightGBM and XGBoost do, to float32
precision, on rows with NaN, zeros and values on either side of every split threshold."""

from __future__ import annotations

import sys

import lightgbm as lgb
import numpy as np
import pytest
import xgboost as xgb

from boostplug import lightgbm as bpl
from boostplug import xgboost as bpx

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from boostplug.export import to_onnx  # noqa: E402  (after the skips: the module needs onnx)
from boostplug.frameworks.model_record import RECORD_KEY  # noqa: E402

N_Q, PER_Q, N_F = 40, 10, 6
LGB_PARAMS = {"verbose": -1, "num_leaves": 8, "min_data_in_leaf": 5, "num_threads": 1, "deterministic": True,
              "seed": 0}
XGB_PARAMS = {"max_depth": 3, "nthread": 1, "seed": 0}


def _data(seed: int = 0, nan: float = 0.0, zeros: float = 0.0):
    """Ranking data whose features are float32 values (both frameworks and onnxruntime read the
    same numbers), with a share of NaN and exact zeros."""
    rng = np.random.default_rng(seed)
    n = N_Q * PER_Q
    X = rng.normal(size=(n, N_F)).astype(np.float32).astype(np.float64)
    y = np.clip(np.round(X[:, 0] - 0.7 * X[:, 1] + 0.5 * rng.normal(size=n) + 1.5), 0, 3)
    X[rng.random(X.shape) < zeros] = 0.0
    X[rng.random(X.shape) < nan] = np.nan
    return X, y, np.repeat(np.arange(N_Q), PER_Q)


def _rows(seed: int = 1) -> np.ndarray:
    """Rows to score: fresh values, NaN, zeros of both signs and values in LightGBM's zero range."""
    X, _, _ = _data(seed)
    rng = np.random.default_rng(seed)
    special = np.array([np.nan, 0.0, -0.0, 1e-36, -1e-36, 2e-35, -2e-35], dtype=np.float32)
    mask = rng.random(X.shape) < 0.25
    X[mask] = rng.choice(special, size=int(mask.sum()))
    X[0] = np.nan
    X[1] = 0.0
    return X


def _at_thresholds(thresholds: list[tuple[int, float]], base: np.ndarray, before_after) -> np.ndarray:
    """Copies of ``base`` with one feature set just at / beside one split threshold each."""
    rows = []
    for feature, t in thresholds:
        for value in before_after(t):
            row = base.copy()
            row[feature] = value
            rows.append(row)
    return np.asarray(rows)


def _lgb_thresholds(booster: lgb.Booster) -> list[tuple[int, float]]:
    df = booster.trees_to_dataframe()
    splits = df[df["split_feature"].notna()]
    return [(int(f.removeprefix("Column_")), float(t)) for f, t in zip(splits["split_feature"], splits["threshold"])]


def _xgb_thresholds(booster: xgb.Booster) -> list[tuple[int, float]]:
    df = booster.trees_to_dataframe()
    splits = df[df["Feature"] != "Leaf"]
    return [(int(f.removeprefix("f")), float(t)) for f, t in zip(splits["Feature"], splits["Split"])]


def _float32_around(t: float) -> list[float]:
    """The float32 values on either side of a double threshold (and the one at it, if any)."""
    below = np.float32(t)
    if float(below) > t:
        below = np.nextafter(below, np.float32(-np.inf))
    return [float(np.nextafter(below, np.float32(-np.inf))), float(below),
            float(np.nextafter(below, np.float32(np.inf)))]


def _onnx_scores(model, X: np.ndarray, dtype=np.float32) -> np.ndarray:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (scores,) = session.run(None, {"X": np.ascontiguousarray(X, dtype=dtype)})
    assert scores.dtype == np.float32 and scores.shape == (X.shape[0],)
    return scores


def _assert_same_scores(onnx_scores: np.ndarray, framework_scores: np.ndarray) -> None:
    """Equal to float32 precision, relative to the scale of the scores (a row that takes another
    branch anywhere differs by a whole leaf value, far more)."""
    scale = float(np.max(np.abs(framework_scores)))
    assert scale > 0
    np.testing.assert_allclose(onnx_scores, framework_scores, rtol=1e-5, atol=1e-5 * scale)


def _lgb_train(objective, X=None, y=None, qid=None, rounds: int = 20, **params) -> lgb.Booster:
    if X is None:
        X, y, qid = _data()
    return lgb.train(dict(LGB_PARAMS, objective=objective, **params), bpl.dataset(X, y, qid=qid), rounds)


def _xgb_train(objective, X=None, y=None, qid=None, rounds: int = 20, **params) -> xgb.Booster:
    if X is None:
        X, y, qid = _data()
    dtrain = bpx.dmatrix(X, y, qid=qid)
    if isinstance(objective, str):
        return xgb.train(dict(XGB_PARAMS, objective=objective, **params), dtrain, rounds)
    booster = xgb.train(bpx.params(**XGB_PARAMS, **params), dtrain, rounds, obj=objective)
    return bpx.record_objective(booster, objective)


LGB_OBJECTIVES = {
    "mpboost": lambda: bpl.objective("mpboost", ddf="ldd"),
    "ndcg_boost": lambda: bpl.objective("ndcg_boost"),
    "qbrank": lambda: bpl.objective("qbrank"),
    "lambdarank": lambda: "lambdarank",
    "rank_xendcg": lambda: "rank_xendcg",
}
XGB_OBJECTIVES = {
    "mpboost": lambda: bpx.objective("mpboost"),
    "ndcg_boost": lambda: bpx.objective("ndcg_boost"),
    "rankboost": lambda: bpx.objective("rankboost"),
    "rank:ndcg": lambda: "rank:ndcg",
    "rank:pairwise": lambda: "rank:pairwise",
}


# --- scores equal the framework's --------------------------------------------------------


def _float32_beside(t: float) -> list[float]:
    """XGBoost's thresholds are float32 and ``x < t`` goes left: the float32 below ``t``, and ``t``."""
    t32 = np.float32(t)
    return [float(np.nextafter(t32, np.float32(-np.inf))), float(t32)]


#: framework -> (its objectives, train, predict, the trees' thresholds, values around a threshold)
FRAMEWORKS = {
    "lightgbm": (LGB_OBJECTIVES, _lgb_train, lambda b, X: b.predict(X), _lgb_thresholds, _float32_around),
    "xgboost": (XGB_OBJECTIVES, _xgb_train, lambda b, X: b.predict(xgb.DMatrix(X)), _xgb_thresholds,
                _float32_beside),
}


@pytest.mark.parametrize(("framework", "name"), [(f, n) for f, spec in FRAMEWORKS.items() for n in spec[0]])
def test_scores_equal_the_boosters(framework: str, name: str) -> None:
    objectives, train, predict, thresholds, around = FRAMEWORKS[framework]
    objective = objectives[name]()
    booster = train(objective)
    model = to_onnx(booster)
    X = _rows()
    _assert_same_scores(_onnx_scores(model, X), predict(booster, X))
    near = _at_thresholds(thresholds(booster), X[5], around)
    _assert_same_scores(_onnx_scores(model, near), predict(booster, near))
    props = {p.key: p.value for p in model.metadata_props}
    assert props["framework"] == framework
    if framework == "lightgbm":
        assert props["objective"] == (name if isinstance(objective, str) else "custom")
    elif not isinstance(objective, str):
        assert props["objective"] == "reg:squarederror"  # XGBoost's name for a custom objective
        assert f'"objective":"{objective.name}"' in props[RECORD_KEY]


def test_float32_thresholds_are_rounded_towards_the_frameworks_branch() -> None:
    # Rounding a LightGBM threshold to the nearest float32 sends the float32 value just above it left.
    X, y, qid = _data()
    booster = _lgb_train(bpl.objective("mpboost"), X, y, qid)
    thresholds = _lgb_thresholds(booster)
    rounded_up = [(f, t) for f, t in thresholds if float(np.float32(t)) > t]
    assert rounded_up, "no threshold whose nearest float32 lies above it: the test would show nothing"
    near = _at_thresholds(rounded_up, X[0], _float32_around)
    _assert_same_scores(_onnx_scores(to_onnx(booster), near), booster.predict(near))


def test_lightgbm_float64_graph_decides_every_double_as_lightgbm() -> None:
    booster = _lgb_train(bpl.objective("ndcg_boost"))
    X = _rows()

    def doubles(t: float) -> list[float]:  # not float32 values: the float32 graph cannot see these
        return [np.nextafter(t, -np.inf), t, np.nextafter(t, np.inf)]

    near = _at_thresholds(_lgb_thresholds(booster), X[3], doubles)
    model = to_onnx(booster, dtype="float64")
    assert model.graph.input[0].type.tensor_type.elem_type == onnx.TensorProto.DOUBLE
    for rows in (X, near):
        _assert_same_scores(_onnx_scores(model, rows, np.float64), booster.predict(rows))


def test_xgboost_float64_graph_rounds_features_to_float32_as_xgboost() -> None:
    booster = _xgb_train(bpx.objective("mpboost"))
    X = _rows()

    def doubles(t: float) -> list[float]:  # a double just below float32 t rounds to t: right, as XGBoost
        return [np.nextafter(float(np.float32(t)), -np.inf), float(np.float32(t))]

    near = _at_thresholds(_xgb_thresholds(booster), X[3], doubles)
    model = to_onnx(booster, dtype=np.float64)
    for rows in (X, near):
        _assert_same_scores(_onnx_scores(model, rows, np.float64), booster.predict(xgb.DMatrix(rows)))


# --- missing values ---------------------------------------------------------------------

#: LightGBM's three missing-value rules: trained without NaN (NaN is read as 0.0), with NaN
#: (NaN goes the learned way) and zero_as_missing (NaN and the zero range go the learned way).
MISSING = {
    "None": ({}, {"nan": 0.0, "zeros": 0.1}),
    "NaN": ({}, {"nan": 0.15, "zeros": 0.1}),
    "Zero": ({"zero_as_missing": True}, {"nan": 0.1, "zeros": 0.2}),
}


@pytest.mark.parametrize("missing_type", MISSING)
def test_lightgbm_missing_values_follow_each_missing_type(missing_type: str) -> None:
    params, share = MISSING[missing_type]
    X, y, qid = _data(seed=2, **share)
    booster = _lgb_train(bpl.objective("mpboost"), X, y, qid, rounds=30, **params)
    splits = booster.trees_to_dataframe().dropna(subset=["split_feature"])
    assert (splits["missing_type"] == missing_type).any(), splits["missing_type"].unique()
    if missing_type == "None":  # NaN read as 0.0 goes right of a negative threshold, left of a positive one
        assert (splits["threshold"] < 0).any() and (splits["threshold"] > 0).any()
    else:
        assert set(splits["missing_direction"]) == {"left", "right"}
    rows = _rows(seed=3)
    _assert_same_scores(_onnx_scores(to_onnx(booster), rows), booster.predict(rows))


def test_xgboost_missing_values_go_the_learned_way() -> None:
    X, y, qid = _data(seed=2, nan=0.15, zeros=0.1)
    booster = _xgb_train(bpx.objective("ndcg_boost"), X, y, qid, rounds=30)
    splits = booster.trees_to_dataframe()
    splits = splits[splits["Feature"] != "Leaf"]
    assert (splits["Missing"] == splits["Yes"]).any() and (splits["Missing"] == splits["No"]).any()
    rows = _rows(seed=3)
    _assert_same_scores(_onnx_scores(to_onnx(booster), rows), booster.predict(xgb.DMatrix(rows)))


# --- intercepts, averages, one-leaf trees, iterations --------------------------------------


@pytest.mark.parametrize("objective", ["reg:absoluteerror", "reg:squarederror", "reg:pseudohubererror",
                                       "rank:map"])
def test_xgboost_intercept_is_added(objective: str) -> None:
    X, y, qid = _data()
    labels = (y > 1).astype(float) if objective == "rank:map" else y + 10.0  # MAP takes binary labels
    booster = _xgb_train(objective, X, labels, qid, rounds=5)
    rows = _rows()
    _assert_same_scores(_onnx_scores(to_onnx(booster), rows), booster.predict(xgb.DMatrix(rows)))


def test_xgboost_custom_objective_with_a_base_score() -> None:
    booster = _xgb_train(bpx.objective("mpboost"), rounds=5, base_score=3.25)
    model = to_onnx(booster)
    rows = _rows()
    _assert_same_scores(_onnx_scores(model, rows), booster.predict(xgb.DMatrix(rows)))
    assert abs(float(np.mean(_onnx_scores(model, rows))) - 3.25) < 1.0


@pytest.mark.parametrize("objective", ["regression", "regression_l1", "huber", "fair", "quantile", "mape"])
def test_lightgbm_regression_objectives_with_their_starting_score(objective: str) -> None:
    X, y, qid = _data()
    booster = lgb.train(dict(LGB_PARAMS, objective=objective), lgb.Dataset(X, y + 10.0), 5)
    rows = _rows()
    _assert_same_scores(_onnx_scores(to_onnx(booster), rows), booster.predict(rows))


def test_lightgbm_random_forest_averages_its_trees() -> None:
    # LightGBM's rf boosting takes built-in objectives only.
    booster = _lgb_train("lambdarank", boosting="rf", bagging_fraction=0.7, bagging_freq=1)
    assert booster.dump_model()["average_output"]
    model = to_onnx(booster)
    rows = _rows()
    _assert_same_scores(_onnx_scores(model, rows), booster.predict(rows))


def test_xgboost_forest_of_several_trees_per_round_sums_them() -> None:
    booster = _xgb_train(bpx.objective("mpboost"), rounds=4, num_parallel_tree=3, subsample=0.7)
    assert len(booster.get_dump()) == 12
    rows = _rows()
    _assert_same_scores(_onnx_scores(to_onnx(booster), rows), booster.predict(xgb.DMatrix(rows)))
    _assert_same_scores(_onnx_scores(to_onnx(booster, num_iteration=2), rows),
                        booster.predict(xgb.DMatrix(rows), iteration_range=(0, 2)))


def test_one_leaf_trees() -> None:
    X, y, qid = _data()
    lgb_booster = _lgb_train(bpl.objective("mpboost"), X, y, qid, rounds=3, min_gain_to_split=1e12)
    assert all(t["num_leaves"] == 1 for t in lgb_booster.dump_model()["tree_info"])
    xgb_booster = _xgb_train("reg:squarederror", X, y, qid, rounds=3, gamma=1e9)
    rows = _rows()
    _assert_same_scores(_onnx_scores(to_onnx(lgb_booster), rows) + 1.0, lgb_booster.predict(rows) + 1.0)
    _assert_same_scores(_onnx_scores(to_onnx(xgb_booster), rows), xgb_booster.predict(xgb.DMatrix(rows)))


def test_num_iteration_exports_the_first_rounds() -> None:
    rows = _rows()
    lgb_booster = _lgb_train(bpl.objective("mpboost"))
    _assert_same_scores(_onnx_scores(to_onnx(lgb_booster, num_iteration=7), rows),
                        lgb_booster.predict(rows, num_iteration=7))
    xgb_booster = _xgb_train(bpx.objective("mpboost"))
    _assert_same_scores(_onnx_scores(to_onnx(xgb_booster, num_iteration=7), rows),
                        xgb_booster.predict(xgb.DMatrix(rows), iteration_range=(0, 7)))


def test_rankers_export_the_iterations_their_predict_uses() -> None:
    X, y, qid = _data()
    Xv, yv, qv = _data(seed=5)
    rows = _rows()
    lgb_ranker = bpl.LGBMRanker(objective="mpboost", n_estimators=60, early_stopping_rounds=3, n_jobs=1,
                                verbose=-1, num_leaves=8, min_child_samples=5)
    lgb_ranker.fit(X, y, qid=qid, eval_set=[(Xv, yv)], eval_qid=[qv])
    assert 0 < lgb_ranker.best_iteration_ < 60  # LightGBM keeps the trees up to the best iteration
    lgb_model = to_onnx(lgb_ranker)
    _assert_same_scores(_onnx_scores(lgb_model, rows), lgb_ranker.predict(rows))
    assert '"objective":"mpboost"' in {p.key: p.value for p in lgb_model.metadata_props}[RECORD_KEY]

    xgb_ranker = bpx.XGBRanker(objective="ndcg_boost", n_estimators=60, early_stopping_rounds=3, n_jobs=1,
                               max_depth=3)
    xgb_ranker.fit(X, y, qid=qid, eval_set=[(Xv, yv)], eval_qid=[qv])
    assert xgb_ranker.best_iteration + 1 < xgb_ranker.get_booster().num_boosted_rounds()
    _assert_same_scores(_onnx_scores(to_onnx(xgb_ranker), rows), xgb_ranker.predict(rows))
    # An early-stopped xgb.Booster exports its best iteration, as the ranker's predict uses it,
    # and says so (its own predict uses every tree); num_iteration exports every tree.
    booster = xgb_ranker.get_booster()
    best = xgb_ranker.best_iteration + 1
    with pytest.warns(UserWarning, match=rf"exports its best iteration \({best} of "
                                         rf"{booster.num_boosted_rounds()} rounds\).*num_iteration="
                                         rf"{booster.num_boosted_rounds()}"):
        best_model = to_onnx(booster)
    _assert_same_scores(_onnx_scores(best_model, rows), xgb_ranker.predict(rows))
    _assert_same_scores(_onnx_scores(best_model, rows),
                        booster.predict(xgb.DMatrix(rows), iteration_range=(0, best)))
    every = to_onnx(booster, num_iteration=booster.num_boosted_rounds())
    _assert_same_scores(_onnx_scores(every, rows), booster.predict(xgb.DMatrix(rows)))


def test_an_early_stopped_xgboost_booster_from_xgb_train_exports_its_best_iteration() -> None:
    X, y, qid = _data()
    Xv, yv, qv = _data(seed=5)
    train, vali = bpx.dmatrix(X, y, qid=qid), bpx.dmatrix(Xv, yv, qid=qv)
    booster = xgb.train({**XGB_PARAMS, "eval_metric": "ndcg@10"}, train, 60, obj=bpx.objective("ndcg_boost"),
                        evals=[(vali, "vali")], early_stopping_rounds=3, verbose_eval=False)
    assert booster.best_iteration + 1 < booster.num_boosted_rounds()
    rows = _rows()
    with pytest.warns(UserWarning, match="best iteration"):
        model = to_onnx(booster)
    _assert_same_scores(_onnx_scores(model, rows),
                        booster.predict(xgb.DMatrix(rows), iteration_range=(0, booster.best_iteration + 1)))


def test_path_writes_the_model_and_the_record_travels(tmp_path) -> None:
    objective = bpl.objective("qbrank", tau=0.5)
    booster = _lgb_train(objective)
    path = tmp_path / "ranker.onnx"
    bpl.save_model(booster, tmp_path / "model.txt", objective=objective)
    loaded = bpl.load_model(tmp_path / "model.txt")
    model = to_onnx(loaded, path=path)
    assert onnx.load(str(path)) == model
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    rows = _rows()
    _assert_same_scores(session.run(None, {"X": rows.astype(np.float32)})[0], booster.predict(rows))
    props = {p.key: p.value for p in model.metadata_props}
    assert props[RECORD_KEY] == bpl.objective_of(loaded).to_json()


# --- why the path is needed -----------------------------------------------------------------


def test_onnxmltools_refuses_a_custom_objective_lightgbm_model() -> None:
    onnxmltools = pytest.importorskip("onnxmltools")
    from onnxmltools.convert.common.data_types import FloatTensorType

    booster = _lgb_train(bpl.objective("mpboost"), rounds=3)
    with pytest.raises(NotImplementedError, match="objective"):
        onnxmltools.convert_lightgbm(booster, initial_types=[("X", FloatTensorType([None, N_F]))])
    to_onnx(booster)  # where boostplug's export goes through


# --- refusals and bad input ------------------------------------------------------------------


def _multiclass_objective(preds: np.ndarray, data: lgb.Dataset):
    onehot = np.eye(preds.shape[1])[data.get_label().astype(int)]
    return preds - onehot, np.ones_like(preds)


@pytest.mark.parametrize("params, message", [
    ({"objective": "binary"}, "'binary sigmoid:1'"),
    ({"objective": "regression", "reg_sqrt": True}, "sqrt"),
    ({"objective": "poisson"}, "'poisson'"),
    ({"objective": "multiclass", "num_class": 4}, "'multiclass num_class:4'"),
    ({"objective": _multiclass_objective, "num_class": 4}, "4 trees per iteration"),
    ({"objective": "regression", "linear_tree": True}, "linear tree"),
])
def test_lightgbm_models_whose_prediction_is_not_the_raw_score_are_refused(params, message) -> None:
    X, y, _ = _data()
    labels = (y > 1).astype(float) if params["objective"] == "binary" else y
    booster = lgb.train(dict(LGB_PARAMS, **params), lgb.Dataset(X, labels), 3)
    with pytest.raises(ValueError, match=message):
        to_onnx(booster)


def test_lightgbm_categorical_splits_are_refused() -> None:
    X, y, qid = _data()
    X[:, 0] = np.abs(np.round(X[:, 0] * 3))
    booster = lgb.train(dict(LGB_PARAMS, objective=bpl.objective("mpboost"), min_data_per_group=5, cat_smooth=1),
                        bpl.dataset(X, y, qid=qid, categorical_feature=[0]), 5)
    assert (booster.trees_to_dataframe()["decision_type"] == "==").any()
    with pytest.raises(ValueError, match="splits feature 0 on categories"):
        to_onnx(booster)


@pytest.mark.parametrize("params, message", [
    ({"objective": "binary:logistic"}, "'binary:logistic'"),
    ({"objective": "count:poisson"}, "'count:poisson'"),
    ({"objective": "reg:squarederror", "booster": "dart"}, "'dart'"),
    ({"objective": "reg:squarederror", "booster": "gblinear"}, "'gblinear'"),
    ({"objective": "multi:softmax", "num_class": 4}, "'multi:softmax'"),
    ({"objective": "reg:squarederror", "multi_strategy": "multi_output_tree"}, "2 outputs"),
])
def test_xgboost_models_whose_prediction_is_not_the_raw_margin_are_refused(params, message) -> None:
    X, y, _ = _data()
    labels = (y > 1).astype(float) if params["objective"] == "binary:logistic" else y
    if params.get("multi_strategy"):
        labels = np.column_stack([y, -y])
    base = {} if params.get("booster") == "gblinear" else XGB_PARAMS  # gblinear has no max_depth
    booster = xgb.train(dict(base, nthread=1, **params), xgb.DMatrix(X, labels), 3)
    with pytest.raises(ValueError, match=message):
        to_onnx(booster)


def test_xgboost_categorical_splits_are_refused() -> None:
    X, y, _ = _data()
    X[:, 0] = np.abs(np.round(X[:, 0] * 3))
    dtrain = xgb.DMatrix(X, y, feature_types=["c"] + ["q"] * (N_F - 1), enable_categorical=True)
    booster = xgb.train(dict(XGB_PARAMS, max_cat_to_onehot=1), dtrain, 5)
    with pytest.raises(ValueError, match="on categories"):
        to_onnx(booster)


def test_bad_arguments_are_named() -> None:
    booster = _lgb_train(bpl.objective("mpboost"), rounds=3)
    with pytest.raises(ValueError, match="dtype must be 'float32' or 'float64', got 'int32'"):
        to_onnx(booster, dtype="int32")
    for dtype in ("banana", None, np.float16):
        with pytest.raises(ValueError, match=f"got {dtype!r}"):
            to_onnx(booster, dtype=dtype)
    with pytest.raises(ValueError, match="num_iteration must be a positive int or None, got 0"):
        to_onnx(booster, num_iteration=0)
    with pytest.raises(TypeError, match="got 2.5"):
        to_onnx(booster, num_iteration=2.5)
    with pytest.raises(TypeError, match="got True"):
        to_onnx(booster, num_iteration=True)
    with pytest.raises(ValueError, match="num_iteration=4, but the LightGBM model has 3 rounds"):
        to_onnx(booster, num_iteration=4)
    xgb_booster = _xgb_train(bpx.objective("mpboost"), rounds=3)
    with pytest.raises(ValueError, match="num_iteration=9, but the XGBoost model has 3 rounds"):
        to_onnx(xgb_booster, num_iteration=9)
    X, y, qid = _data()
    empty = xgb.train(dict(XGB_PARAMS, objective="rank:ndcg"), bpx.dmatrix(X, y, qid=qid), 0)
    with pytest.raises(ValueError, match="the xgboost model has no trees"):
        to_onnx(empty)
    with pytest.raises(TypeError, match="expected a LightGBM or XGBoost .* got builtins.str"):
        to_onnx("model.txt")
    with pytest.raises(ValueError, match="the LGBMRanker is not fitted"):
        to_onnx(bpl.LGBMRanker(objective="mpboost"))
    with pytest.raises(ValueError, match="the XGBRanker is not fitted"):
        to_onnx(bpx.XGBRanker(objective="mpboost"))


def test_without_onnx_the_error_names_the_serve_extra(monkeypatch) -> None:
    booster = _lgb_train(bpl.objective("mpboost"), rounds=2)
    monkeypatch.setitem(sys.modules, "onnx", None)  # import onnx now raises ImportError
    with pytest.raises(ImportError, match=r"boostplug\[serve\]"):
        to_onnx(booster)


def test_the_docs_example_compares_like_with_like(tmp_path, monkeypatch, capsys) -> None:
    """docs/objectives/index.md's to_onnx block prints the largest difference beside "float32 rounding
    only": it printed 0.351, comparing the float32 graph on float32 inputs with LightGBM on the float64
    rows (a feature within a float32 step of a threshold takes the other branch). Run on the page's own
    booster and test rows, what it prints must be float32 rounding."""
    from pathlib import Path

    from boostplug import data

    page = (Path(__file__).resolve().parents[2] / "docs" / "objectives" / "index.md").read_text()
    block = next(b for b in page.split("```python\n")[1:] if "to_onnx(booster, path=" in b).split("```")[0]
    assert "float32 rounding only" in block
    train, test = data.load_example()
    fit, _ = data.train_test_split_by_query(train, test_size=0.2, seed=0)
    booster = lgb.train({"objective": bpl.objective("mpboost", ddf="ldd"), "verbose": -1, "num_threads": 1},
                        bpl.dataset(fit.X, fit.y, qid=fit.qid), 30)  # as the page trains it
    monkeypatch.chdir(tmp_path)
    exec(block, {"booster": booster, "X_test": test.X})
    printed = float(capsys.readouterr().out.split()[-1])
    scale = np.abs(booster.predict(test.X)).max()
    assert printed <= 1e-6 * scale, printed
