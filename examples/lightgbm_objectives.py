"""The paper objectives with ``lgb.train``: QBRank, MPBoost with a DDF, NDCG_Boost.

Each is a callable for ``params["objective"]``; boostplug's NDCG@10 is the ``feval`` that early
stopping watches. Cross-validation goes through ``boostplug.lightgbm.cv`` (``lgb.cv`` on folds that
keep queries whole: plain ``lgb.cv`` splits rows at random for a callable objective, which the
objective refuses). Runs in seconds on the LightGBM lambdarank example embedded in boostplug::

    python examples/lightgbm_objectives.py
"""

from __future__ import annotations

import lightgbm as lgb

from boostplug import lightgbm as bpl
from boostplug import metrics
from boostplug.data import load_example, train_test_split_by_query


def main() -> None:
    train_all, test = load_example()
    train, vali = train_test_split_by_query(train_all, test_size=0.25, seed=0)  # whole queries
    dtrain = bpl.dataset(train.X, train.y, group_ptr=train.group_ptr)  # or qid=... (contiguous, any order)
    dvali = bpl.dataset(vali.X, vali.y, group_ptr=vali.group_ptr, reference=dtrain)
    ndcg10 = metrics.by_name("ndcg@10")

    objectives = {
        "lambdarank (built-in)": "lambdarank",
        "qbrank": bpl.objective("qbrank"),  # tau = grade difference, w = 0.5, single-label queries regressed
        "mpboost, logitdd": bpl.objective("mpboost", ddf="logitdd", beta=0.5),
        "ndcg_boost": bpl.objective("ndcg_boost"),  # sigma = 2, gains 2^r - 1, bound Hessian
    }
    for label, objective in objectives.items():
        params = {"objective": objective, "metric": "None", "learning_rate": 0.1, "num_leaves": 15,
                  "min_data_in_leaf": 10, "verbose": -1, "num_threads": 1, "seed": 0}
        booster = lgb.train(params, dtrain, num_boost_round=200, valid_sets=[dvali],
                            feval=bpl.metric("ndcg@10"), callbacks=[lgb.early_stopping(20, verbose=False)])
        # raw scores are the ranking scores; a saved model (booster.save_model) predicts the same
        scores = booster.predict(test.X, num_iteration=booster.best_iteration)
        print(f"{label:<22} best round {booster.best_iteration:3d}, "
              f"vali NDCG@10 {booster.best_score['valid_0']['ndcg@10']:.4f}, "
              f"test NDCG@10 {ndcg10(scores, test.y, test.group_ptr):.4f}")

    # 5-fold cross-validation on the whole training set; the same folds for lgb.cv would be
    # lgb.cv(params, dall, folds=bpl.query_folds(dall, nfold=5, seed=0), ...).
    dall = bpl.dataset(train_all.X, train_all.y, group_ptr=train_all.group_ptr)
    params = {"objective": bpl.objective("ndcg_boost"), "metric": "None", "learning_rate": 0.1,
              "num_leaves": 15, "min_data_in_leaf": 10, "verbose": -1, "num_threads": 1, "seed": 0}
    res = bpl.cv(params, dall, num_boost_round=100, nfold=5, seed=0, feval=bpl.metric("ndcg@10"),
                 callbacks=[lgb.early_stopping(20, verbose=False)])
    curve = res["valid ndcg@10-mean"]
    print(f"ndcg_boost, 5-fold cv (whole queries): best round {len(curve):3d}, "
          f"mean vali NDCG@10 {curve[-1]:.4f} +- {res['valid ndcg@10-stdv'][-1]:.4f}")


if __name__ == "__main__":
    main()
