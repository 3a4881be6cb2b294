"""The paper objectives with scikit-learn's interface: ``LGBMRanker``.

``sklearn_objective`` gives the 4-argument callable ``LGBMRanker(objective=...)`` accepts and
``sklearn_metric`` the ``eval_metric`` for ``fit``. Runs in seconds on the embedded example::

    python examples/lgbm_ranker.py
"""

from __future__ import annotations

import inspect

import lightgbm as lgb
import numpy as np

from boostplug import lightgbm as bpl
from boostplug import metrics
from boostplug.data import load_example, train_test_split_by_query


def main() -> None:
    train_all, test = load_example()
    train, vali = train_test_split_by_query(train_all, test_size=0.25, seed=0)
    ndcg10 = metrics.by_name("ndcg@10")
    # LightGBM 4.7 takes validation data as eval_X/eval_y and deprecates eval_set.
    if "eval_X" in inspect.signature(lgb.LGBMRanker.fit).parameters:
        vali_kw = {"eval_X": (vali.X,), "eval_y": (vali.y,)}
    else:
        vali_kw = {"eval_set": [(vali.X, vali.y)]}
    for name, params in [("qbrank", {}), ("mpboost", {"ddf": "logdd", "lam": 3.0}), ("ndcg_boost", {})]:
        ranker = lgb.LGBMRanker(objective=bpl.sklearn_objective(name, **params), n_estimators=200,
                                learning_rate=0.1, num_leaves=15, min_child_samples=10, n_jobs=1,
                                random_state=0, verbose=-1)
        ranker.fit(train.X, train.y, group=np.diff(train.group_ptr),
                   **vali_kw, eval_group=[np.diff(vali.group_ptr)],
                   eval_metric=bpl.sklearn_metric("ndcg@10"), callbacks=[lgb.early_stopping(20, verbose=False)])
        scores = ranker.predict(test.X)  # uses the best iteration
        print(f"LGBMRanker + {name:<10} best round {ranker.best_iteration_:3d}, "
              f"test NDCG@10 {ndcg10(scores, test.y, test.group_ptr):.4f}")


if __name__ == "__main__":
    main()
