"""Save models trained with boostplug objectives, read back what trained them, serve them with treelite.

A LightGBM model (MPBoost, LDD) and an XGBoost model (NDCG_Boost) are trained on the LightGBM
lambdarank example embedded in boostplug, saved with their objective record, loaded back, and
converted to treelite, whose predictions must equal the framework's. Needs the ``serve`` extra
(``pip install "boostplug[serve]"``, which brings treelite)::

    python examples/treelite_export.py
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import lightgbm as lgb
import numpy as np
import treelite
import xgboost as xgb

from boostplug import lightgbm as bpl
from boostplug import metrics
from boostplug import xgboost as bpx
from boostplug.data import load_example, train_test_split_by_query


def check_same(label: str, treelite_scores: np.ndarray, framework_scores: np.ndarray) -> None:
    diff = float(np.max(np.abs(np.asarray(treelite_scores).reshape(-1) - framework_scores)))
    if diff > 1e-6:
        raise SystemExit(f"{label}: treelite and the framework disagree by {diff:.3g}")
    print(f"{label:<9} treelite predicts the same scores (largest difference {diff:.1e})")


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="boostplug-serve-") as folder:
        export_and_serve(Path(folder))


def export_and_serve(folder: Path) -> None:
    train_all, test = load_example()
    train, vali = train_test_split_by_query(train_all, test_size=0.25, seed=0)
    ndcg10 = metrics.by_name("ndcg@10")

    # LightGBM: the objective record goes into the model text (save_model's objective=).
    objective = bpl.objective("mpboost", ddf="ldd")
    dtrain = bpl.dataset(train.X, train.y, group_ptr=train.group_ptr)
    dvali = bpl.dataset(vali.X, vali.y, group_ptr=vali.group_ptr, reference=dtrain)
    params = {"objective": objective, "metric": "None", "num_leaves": 15, "min_data_in_leaf": 10,
              "verbose": -1, "num_threads": 1, "seed": 0}
    booster = lgb.train(params, dtrain, 200, valid_sets=[dvali], feval=bpl.metric("ndcg@10"),
                        callbacks=[lgb.early_stopping(20, verbose=False)])
    path = folder / "mpboost.txt"
    bpl.save_model(booster, path, objective=objective)  # the best iteration, as booster.save_model
    loaded = bpl.load_model(path)
    record = bpl.objective_of(loaded)
    print(f"LightGBM  {path.name}: trained with {record.name} {dict(record.params)}")
    scores = loaded.predict(test.X)
    check_same("LightGBM", treelite.gtil.predict(treelite.frontend.load_lightgbm_model(str(path)), test.X), scores)
    print(f"LightGBM  {record.name:<10} test NDCG@10 {ndcg10(scores, test.y, test.group_ptr):.4f}")

    # XGBoost: the record is a booster attribute, kept by XGBoost's own JSON/UBJSON files.
    xobjective = bpx.objective("ndcg_boost")
    xtrain = bpx.dmatrix(train.X, train.y, group_ptr=train.group_ptr)
    xvali = bpx.dmatrix(vali.X, vali.y, group_ptr=vali.group_ptr)
    xbooster = xgb.train(bpx.params(max_depth=4, nthread=1, seed=0), xtrain, 200, obj=xobjective,
                         evals=[(xvali, "vali")], custom_metric=bpx.metric("ndcg@10"),
                         callbacks=[bpx.early_stopping(20, "ndcg@10", save_best=True)], verbose_eval=False)
    xpath = folder / "ndcg_boost.json"
    bpx.save_model(xbooster, xpath, objective=xobjective)
    xloaded = bpx.load_model(xpath)
    xrecord = bpx.objective_of(xloaded)
    print(f"XGBoost   {xpath.name}: trained with {xrecord.name} {dict(xrecord.params)}")
    xscores = xloaded.predict(xgb.DMatrix(test.X), output_margin=True)
    check_same("XGBoost", treelite.gtil.predict(treelite.frontend.load_xgboost_model(str(xpath)), test.X), xscores)
    print(f"XGBoost   {xrecord.name:<10} test NDCG@10 {ndcg10(xscores, test.y, test.group_ptr):.4f}")


if __name__ == "__main__":
    main()
