"""Export ranking models to ONNX and serve them with onnxruntime: boostplug objectives and the
frameworks' built-in ones, so both sides of a comparison run in the same runtime.

LightGBM (MPBoost, and lambdarank) and XGBoost (NDCG_Boost, and rank:ndcg) are trained on the
LightGBM lambdarank example embedded in boostplug, exported with ``boostplug.export.to_onnx``,
loaded by onnxruntime, whose scores must equal the framework's to float32 precision, and
evaluated on the test queries from the ONNX scores. Needs the ``serve`` extra and onnxruntime
(``pip install "boostplug[serve]" onnxruntime``)::

    python examples/onnx_export.py
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any, Callable

import lightgbm as lgb
import numpy as np
import onnxruntime as ort
import xgboost as xgb

from boostplug import lightgbm as bpl
from boostplug import metrics
from boostplug import xgboost as bpx
from boostplug.data import RankingData, load_example, train_test_split_by_query
from boostplug.export import to_onnx
from boostplug.frameworks.model_record import RECORD_KEY, ObjectiveRecord


def train_lightgbm(objective: Any, train: RankingData, vali: RankingData) -> lgb.Booster:
    dtrain = bpl.dataset(train.X, train.y, group_ptr=train.group_ptr)
    dvali = bpl.dataset(vali.X, vali.y, group_ptr=vali.group_ptr, reference=dtrain)
    params = {"objective": objective, "metric": "None", "num_leaves": 15, "min_data_in_leaf": 10,
              "verbose": -1, "num_threads": 1, "seed": 0}
    booster = lgb.train(params, dtrain, 150, valid_sets=[dvali], feval=bpl.metric("ndcg@10"),
                        callbacks=[lgb.early_stopping(20, verbose=False)])
    if not isinstance(objective, str):
        bpl.record_objective(booster, objective)  # the export's metadata then name it
    return booster


def train_xgboost(objective: Any, train: RankingData, vali: RankingData) -> xgb.Booster:
    xtrain = bpx.dmatrix(train.X, train.y, group_ptr=train.group_ptr)
    xvali = bpx.dmatrix(vali.X, vali.y, group_ptr=vali.group_ptr)
    custom = not isinstance(objective, str)
    params = bpx.params(max_depth=4, nthread=1, seed=0) if custom else {
        "objective": objective, "max_depth": 4, "nthread": 1, "seed": 0, "disable_default_eval_metric": 1}
    # save_best keeps the trees up to the best round: what the plain Booster's predict then uses.
    booster = xgb.train(params, xtrain, 150, obj=objective if custom else None, evals=[(xvali, "vali")],
                        custom_metric=bpx.metric("ndcg@10"),
                        callbacks=[bpx.early_stopping(20, "ndcg@10", save_best=True)], verbose_eval=False)
    if custom:
        bpx.record_objective(booster, objective)
    return booster


def serve(label: str, model: Any, framework_scores: Callable[[np.ndarray], np.ndarray], test: RankingData,
          folder: Path) -> None:
    """Export ``model``, score the test set with onnxruntime, compare and evaluate."""
    path = folder / f"{label.replace(' ', '_').replace(':', '_')}.onnx"
    to_onnx(model, path=path)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    meta = session.get_modelmeta().custom_metadata_map
    if RECORD_KEY in meta:  # the boostplug objective record travels into the ONNX metadata
        record = ObjectiveRecord.from_json(meta[RECORD_KEY])
        trained_with = f"{record.name} {dict(record.params)}"
    else:
        trained_with = meta["objective"]
    features = test.X.astype(np.float32)  # the float32 values ONNX reads; the framework reads the same ones
    (scores,) = session.run(None, {"X": features})
    expected = framework_scores(features)
    diff = float(np.max(np.abs(scores - expected)))
    if diff > 1e-5 * float(np.max(np.abs(expected))):
        raise SystemExit(f"{label}: onnxruntime and the framework disagree by {diff:.3g}")
    ndcg = metrics.by_name("ndcg@10")(scores.astype(np.float64), test.y, test.group_ptr)
    print(f"{label:<20} {path.name}: trained with {trained_with}; onnxruntime = framework "
          f"(largest difference {diff:.1e}); test NDCG@10 {ndcg:.4f}")


def main() -> None:
    train_all, test = load_example()
    train, vali = train_test_split_by_query(train_all, test_size=0.25, seed=0)
    with tempfile.TemporaryDirectory(prefix="boostplug-onnx-") as tmp:
        folder = Path(tmp)
        for label, objective in (("LightGBM MPBoost", bpl.objective("mpboost", ddf="ldd")),
                                 ("LightGBM lambdarank", "lambdarank")):
            booster = train_lightgbm(objective, train, vali)
            serve(label, booster, booster.predict, test, folder)
        for label, objective in (("XGBoost NDCG_Boost", bpx.objective("ndcg_boost")),
                                 ("XGBoost rank:ndcg", "rank:ndcg")):
            xbooster = train_xgboost(objective, train, vali)
            serve(label, xbooster, lambda X, b=xbooster: b.predict(xgb.DMatrix(X)), test, folder)


if __name__ == "__main__":
    main()
