"""Tuning a ranker with scikit-learn's ``GridSearchCV``, scored by a ranking metric per query.

``boostplug.metrics.make_scorer("ndcg@10")`` is a scorer that receives the query ids through
scikit-learn's metadata routing, so each fold is scored query by query (a plain scorer
would see the fold as one long list). ``GroupKFold`` with ``groups=qid`` keeps every query in
one fold. Runs in well under a minute on the embedded example::

    python examples/grid_search.py
"""

from __future__ import annotations

import sklearn
from sklearn.model_selection import GridSearchCV, GroupKFold

from boostplug import metrics
from boostplug.boosters import AdaRank
from boostplug.data import load_example


def main() -> None:
    train, test = load_example()
    # qid reaches fit and the scorer only through metadata routing
    with sklearn.config_context(enable_metadata_routing=True):
        search = GridSearchCV(
            AdaRank(n_rounds=50, random_state=0),
            {"measure": ["ndcg@5", "ndcg@10", "map"], "tolerance": [0.002, None]},
            scoring=metrics.make_scorer("ndcg@10"),
            cv=GroupKFold(n_splits=3),
            error_score="raise",  # a scoring problem stops the search instead of becoming NaN
        )
        search.fit(train.X, train.y, groups=train.qid, qid=train.qid)
    print(f"best params {search.best_params_}, mean validation NDCG@10 {search.best_score_:.4f}")
    scores = search.best_estimator_.predict(test.X)
    print(f"AdaRank (grid-searched)  test NDCG@10 {metrics.ndcg(scores, test.y, test.group_ptr, k=10):.4f}")


if __name__ == "__main__":
    main()
