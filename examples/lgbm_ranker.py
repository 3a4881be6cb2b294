"""The paper objectives with scikit-learn's interface: ``boostplug.lightgbm.LGBMRanker``.

``LGBMRanker(objective="mpboost", ddf="logdd", ...)`` takes the objective by name and its
parameters as estimator parameters (so ``clone``, ``GridSearchCV`` and ``cross_validate`` see
them). It evaluates a boostplug metric (``eval_metric="ndcg@10"`` by default) on the
validation set, with LightGBM's own metrics off, and ``early_stopping_rounds`` stops on it.

With plain ``lightgbm.LGBMRanker`` and ``boostplug.lightgbm.sklearn_objective`` you must pass
``metric="None"`` yourself: otherwise LightGBM adds its default ``ndcg@1..5`` and its early
stopping stops at whichever metric stalls first, usually far too early (the last lines show it).
Runs in seconds on the embedded example::

    python examples/lgbm_ranker.py
"""

from __future__ import annotations

import inspect

import lightgbm as lgb

from boostplug import lightgbm as bpl
from boostplug import metrics
from boostplug.data import load_example, train_test_split_by_query

TREES = dict(n_estimators=300, learning_rate=0.1, num_leaves=15, min_child_samples=10, n_jobs=1, random_state=0,
             verbose=-1)


def main() -> None:
    train_all, test = load_example()
    train, vali = train_test_split_by_query(train_all, test_size=0.25, seed=0)

    for name, params in [("qbrank", {}), ("mpboost", {"ddf": "logdd", "lam": 3.0}), ("ndcg_boost", {})]:
        ranker = bpl.LGBMRanker(objective=name, **params, early_stopping_rounds=20, **TREES)
        ranker.fit(train.X, train.y, qid=train.qid, eval_set=[(vali.X, vali.y)], eval_qid=[vali.qid])
        # predict (and score) use the best round; score is the mean NDCG@10 over the test queries.
        head = f"LGBMRanker(objective={name!r})"
        print(f"{head:<40} best round {ranker.best_iteration_:3d}, "
              f"test NDCG@10 {ranker.score(test.X, test.y, qid=test.qid):.4f}")

    # The same by hand with lightgbm.LGBMRanker: metric="None" is what keeps LightGBM's ndcg@1..5 out.
    ndcg10 = metrics.by_name("ndcg@10")
    # Newer LightGBM takes validation data as eval_X/eval_y and deprecates eval_set.
    if "eval_X" in inspect.signature(lgb.LGBMRanker.fit).parameters:
        vali_kw = {"eval_X": (vali.X,), "eval_y": (vali.y,)}
    else:
        vali_kw = {"eval_set": [(vali.X, vali.y)]}
    for label, extra in [("metric='None'", {"metric": "None"}), ("default metric", {})]:
        plain = lgb.LGBMRanker(objective=bpl.sklearn_objective("qbrank", threads=TREES["n_jobs"]), **extra, **TREES)
        plain.fit(train.X, train.y, group=train.sizes, **vali_kw, eval_group=[vali.sizes],
                  eval_metric=bpl.sklearn_metric("ndcg@10"), callbacks=[lgb.early_stopping(20, verbose=False)])
        watched = ", ".join(plain.evals_result_["valid_0"])
        head = f"lgb.LGBMRanker + qbrank, {label}"
        print(f"{head:<40} best round {plain.best_iteration_:3d}, "
              f"test NDCG@10 {ndcg10(plain.predict(test.X), test.y, test.group_ptr):.4f} (watching {watched})")


if __name__ == "__main__":
    main()
