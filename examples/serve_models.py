"""Save ranking models with the objective that trained them, load them back, and serve them with
treelite and with onnxruntime (ONNX): boostplug objectives and the frameworks' built-in ones, so
both sides of a comparison run in the same runtime.

LightGBM (MPBoost with LDD, and lambdarank) and XGBoost (NDCG_Boost, and rank:ndcg) are trained
on the LightGBM lambdarank example embedded in boostplug. Each model is saved with its objective
record (LightGBM: in the model text; XGBoost: a booster attribute its JSON file keeps), loaded
back, then

* converted by treelite from the saved file, whose predictions must equal the framework's;
* exported with ``boostplug.export.to_onnx`` and run by onnxruntime, whose scores must equal the
  framework's to float32 precision; the objective record travels into the ONNX metadata.

Each model's test NDCG@10 is computed from the served scores. Needs the ``serve`` extra
(``pip install "boostplug[serve]"``: treelite, onnx and onnxruntime)::

    python examples/serve_models.py
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import lightgbm as lgb
import numpy as np
import onnxruntime as ort
import treelite
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
    return lgb.train(params, dtrain, 150, valid_sets=[dvali], feval=bpl.metric("ndcg@10"),
                     callbacks=[lgb.early_stopping(20, verbose=False)])


def train_xgboost(objective: Any, train: RankingData, vali: RankingData) -> xgb.Booster:
    xtrain = bpx.dmatrix(train.X, train.y, group_ptr=train.group_ptr)
    xvali = bpx.dmatrix(vali.X, vali.y, group_ptr=vali.group_ptr)
    custom = not isinstance(objective, str)
    params = bpx.params(max_depth=4, nthread=1, seed=0) if custom else {
        "objective": objective, "max_depth": 4, "nthread": 1, "seed": 0, "disable_default_eval_metric": 1}
    # save_best keeps the trees up to the best round: what the plain Booster's predict then uses.
    return xgb.train(params, xtrain, 150, obj=objective if custom else None, evals=[(xvali, "vali")],
                     custom_metric=bpx.metric("ndcg@10"),
                     callbacks=[bpx.early_stopping(20, "ndcg@10", save_best=True)], verbose_eval=False)


def check_same(runtime: str, label: str, served: np.ndarray, expected: np.ndarray, tolerance: float) -> float:
    diff = float(np.max(np.abs(np.asarray(served, dtype=np.float64).reshape(-1) - expected)))
    if diff > tolerance:
        raise SystemExit(f"{label}: {runtime} and the framework disagree by {diff:.3g}")
    return diff


def serve_onnx(model: Any, path: Path, features: np.ndarray) -> tuple[np.ndarray, str]:
    """Export ``model`` to ONNX, score ``features`` with onnxruntime; the scores and what the ONNX
    metadata says trained the model."""
    to_onnx(model, path=path)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    meta = session.get_modelmeta().custom_metadata_map
    if RECORD_KEY in meta:  # the boostplug objective record travels into the ONNX metadata
        record = ObjectiveRecord.from_json(meta[RECORD_KEY])
        trained_with = f"{record.name} {dict(record.params)}"
    else:
        trained_with = meta["objective"]
    (scores,) = session.run(None, {"X": features})
    return scores, trained_with


#: framework -> (train, its boostplug module, model file suffix, treelite's reader, raw scores)
FRAMEWORKS = {
    "LightGBM": (train_lightgbm, bpl, ".txt", treelite.frontend.load_lightgbm_model,
                 lambda model, X: model.predict(X)),
    "XGBoost": (train_xgboost, bpx, ".json", treelite.frontend.load_xgboost_model,
                lambda model, X: model.predict(xgb.DMatrix(X), output_margin=True)),
}


def main() -> None:
    train_all, test = load_example()
    train, vali = train_test_split_by_query(train_all, test_size=0.25, seed=0)
    ndcg10 = metrics.by_name("ndcg@10")
    # The float32 values ONNX reads; the frameworks then read the same ones.
    features = test.X.astype(np.float32)
    with tempfile.TemporaryDirectory(prefix="boostplug-serve-") as tmp:
        folder = Path(tmp)
        for framework, name, objective in (("LightGBM", "MPBoost", bpl.objective("mpboost", ddf="ldd")),
                                           ("LightGBM", "lambdarank", "lambdarank"),
                                           ("XGBoost", "NDCG_Boost", bpx.objective("ndcg_boost", threads=1)),
                                           ("XGBoost", "rank:ndcg", "rank:ndcg")):
            train_model, bp, suffix, treelite_reader, raw_scores = FRAMEWORKS[framework]
            label = f"{framework} {name}"
            stem = folder / label.replace(" ", "_").replace(":", "_")
            path = stem.with_suffix(suffix)
            custom = not isinstance(objective, str)
            # LightGBM writes the best iteration, as booster.save_model does; XGBoost's save_best kept it.
            bp.save_model(train_model(objective, train, vali), path, objective=objective if custom else None)
            model = bp.load_model(path)
            record = bp.objective_of(model)
            saved_with = f"{record.name} {dict(record.params)}" if record is not None else "a built-in objective"
            expected = raw_scores(model, features)
            tl_diff = check_same("treelite", label, treelite.gtil.predict(treelite_reader(str(path)), features),
                                 expected, 1e-6)
            scores, trained_with = serve_onnx(model, stem.with_suffix(".onnx"), features)
            onnx_diff = check_same("onnxruntime", label, scores, expected, 1e-5 * float(np.max(np.abs(expected))))
            ndcg = ndcg10(scores.astype(np.float64), test.y, test.group_ptr)
            print(f"{label:<20} {path.name}: saved with {saved_with}; ONNX metadata: {trained_with}; "
                  f"treelite = framework (largest difference {tl_diff:.1e}), onnxruntime = framework "
                  f"({onnx_diff:.1e}); test NDCG@10 {ndcg:.4f}")


if __name__ == "__main__":
    main()
