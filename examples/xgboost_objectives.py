"""The paper objectives with ``xgb.train``: ``obj=``, ``custom_metric=`` and early stopping.

XGBRanker refuses custom objectives, so ranking with a boostplug objective goes through
``xgb.train``. ``boostplug.xgboost.params`` sets ``base_score=0`` (raw scores are then exactly
the sum of the trees the objective saw) and turns off the meaningless default metric;
``boostplug.xgboost.dmatrix`` renumbers contiguous, unsorted query ids (real LETOR files) into
the sorted ``qid`` XGBoost requires. XGBoost's early stopping goes by the metric's name and
would minimise ``err@10`` or ``mrr``: ``boostplug.xgboost.early_stopping`` (or ``maximize=True``)
stops in the metric's direction. The objectives get XGBoost's ``nthread`` as ``threads=``
(XGBoost hands an objective no thread count).
Runs in seconds on the embedded example::

    python examples/xgboost_objectives.py
"""

from __future__ import annotations

import xgboost as xgb

from boostplug import metrics
from boostplug import xgboost as bpx
from boostplug.data import load_example, train_test_split_by_query


def main() -> None:
    train_all, test = load_example()
    train, vali = train_test_split_by_query(train_all, test_size=0.25, seed=0)
    dtrain = bpx.dmatrix(train.X, train.y, qid=train.qid)
    dvali = bpx.dmatrix(vali.X, vali.y, qid=vali.qid)
    dtest = xgb.DMatrix(test.X)
    ndcg10 = metrics.by_name("ndcg@10")
    tree = {"eta": 0.1, "max_depth": 6, "min_child_weight": 1e-3, "nthread": 1, "seed": 0}

    runs = {
        "rank:ndcg (built-in)": ({**tree, "objective": "rank:ndcg", "disable_default_eval_metric": 1}, None),
        "qbrank": (bpx.params(**tree), bpx.objective("qbrank", threads=1)),
        "mpboost, ldd": (bpx.params(**tree), bpx.objective("mpboost", ddf="ldd", alpha=0.2, threads=1)),
        "ndcg_boost": (bpx.params(**tree), bpx.objective("ndcg_boost", threads=1)),
    }
    for label, (params, obj) in runs.items():
        booster = xgb.train(params, dtrain, num_boost_round=200, obj=obj, evals=[(dvali, "vali")],
                            custom_metric=bpx.metric("ndcg@10"), early_stopping_rounds=20, verbose_eval=False)
        scores = booster.predict(dtest, iteration_range=(0, booster.best_iteration + 1), output_margin=True)
        print(f"{label:<21} best round {booster.best_iteration + 1:3d}, vali NDCG@10 {booster.best_score:.4f}, "
              f"test NDCG@10 {ndcg10(scores, test.y, test.group_ptr):.4f}")

    # Early stopping on ERR@10, which XGBoost would minimise by its name: boostplug's callback maximises it.
    hist: dict = {}
    booster = xgb.train(bpx.params(**tree), dtrain, num_boost_round=200, obj=bpx.objective("ndcg_boost", threads=1),
                        evals=[(dvali, "vali")], custom_metric=bpx.metric("err@10"),
                        callbacks=[bpx.early_stopping(20, "err@10")], evals_result=hist, verbose_eval=False)
    print(f"ndcg_boost, stopped on ERR@10: best round {booster.best_iteration + 1:3d}, "
          f"vali ERR@10 {booster.best_score:.4f} (the highest of {len(hist['vali']['err@10'])} rounds: "
          f"{max(hist['vali']['err@10']):.4f})")


if __name__ == "__main__":
    main()
