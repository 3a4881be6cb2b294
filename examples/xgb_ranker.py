"""The paper objectives with scikit-learn's interface: ``boostplug.xgboost.XGBRanker``.

``xgboost.XGBRanker`` refuses custom objectives; ``boostplug.xgboost.XGBRanker`` takes a
boostplug objective by name, with its parameters as estimator parameters
(``XGBRanker(objective="mpboost", ddf="ldd")``), and XGBoost's own ``"rank:*"`` objectives
through the same class. It evaluates a boostplug metric (``eval_metric="ndcg@10"`` by default,
XGBoost's default metric off), ``early_stopping_rounds`` stops on it in its direction, and
query ids need only be contiguous, not sorted. Runs in seconds on the embedded example::

    python examples/xgb_ranker.py
"""

from __future__ import annotations

from boostplug import xgboost as bpx
from boostplug.data import load_example, train_test_split_by_query

TREES = dict(n_estimators=300, learning_rate=0.1, max_depth=6, min_child_weight=1e-3, tree_method="hist", n_jobs=1,
             random_state=0)


def main() -> None:
    train_all, test = load_example()
    train, vali = train_test_split_by_query(train_all, test_size=0.25, seed=0)

    runs = [("rank:ndcg", {}), ("qbrank", {}), ("mpboost", {"ddf": "ldd"}), ("ndcg_boost", {})]
    for name, params in runs:
        ranker = bpx.XGBRanker(objective=name, **params, early_stopping_rounds=20, **TREES)
        ranker.fit(train.X, train.y, qid=train.qid, eval_set=[(vali.X, vali.y)], eval_qid=[vali.qid])
        # predict (and score) use the best round; score is the mean NDCG@10 over the test queries.
        head = f"XGBRanker(objective={name!r})"
        print(f"{head:<37} best round {ranker.best_iteration + 1:3d}, "
              f"test NDCG@10 {ranker.score(test.X, test.y, qid=test.qid):.4f}")


if __name__ == "__main__":
    main()
