"""The reference boosters in one page: fit, predict, staged_predict, save/load, early stopping.

Runs on the LightGBM lambdarank example embedded in boostplug (no download), in a few seconds::

    python examples/boosters_quickstart.py
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np

from boostplug import metrics
from boostplug.boosters import AdaRank, MPBoost, NDCGBoost, RankBoost, load
from boostplug.data import load_example, train_test_split_by_query


def main() -> None:
    t0 = time.perf_counter()
    train_all, test = load_example()
    # a validation set of whole queries for early stopping and for choosing the round
    train, vali = train_test_split_by_query(train_all, test_size=0.25, seed=0)
    print(f"train {train.n_queries} queries / {train.X.shape[0]} docs, vali {vali.n_queries}, "
          f"test {test.n_queries}; {train.X.shape[1]} features")
    ndcg10 = metrics.by_name("ndcg@10")

    # 1. fit / predict: RankBoost+ (Connamacher et al. 2020) with decision stumps
    model = RankBoost(variant="rankboost+", n_rounds=60, random_state=0)
    model.fit(train.X, train.y, qid=train.qid)
    print(f"\nRankBoost+: {len(model.rankers_)} rounds ({model.stop_reason_}), "
          f"test NDCG@10 {ndcg10(model.predict(test.X), test.y, test.group_ptr):.4f}")
    last = model.history_[-1]
    print(f"  round {last['round']}: stump on feature {last['ranker']['feature']} > {last['ranker']['threshold']:.3g}, "
          f"alpha {last['alpha']:.3f}, training R2 {last['R2']:.4f} <= E2 {last['E2']:.4f} = prod Z_t")

    # 2. staged_predict: choose the round on validation data, as the papers do
    vals = [ndcg10(s, vali.y, vali.group_ptr) for s in model.staged_predict(vali.X)]
    best = int(np.argmax(vals)) + 1
    at_best = list(model.staged_predict(test.X))[best - 1]
    print(f"  best round on vali: {best} (vali NDCG@10 {vals[best - 1]:.4f}), "
          f"test NDCG@10 there {ndcg10(at_best, test.y, test.group_ptr):.4f}")
    assert np.array_equal(list(model.staged_predict(test.X))[-1], model.predict(test.X))

    # 3. save / load: a plain JSON file; predictions identical after the round trip
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "rankboost_plus.json"
        model.save(path)
        again = load(path)
        same = np.array_equal(again.predict(test.X), model.predict(test.X))
        print(f"  saved {path.stat().st_size} bytes of JSON; loaded {type(again).__name__} predicts the same: {same}; "
              f"span_size_ {again.span_size_} == {model.span_size_}")

    # 4. eval_set + early stopping on a chosen metric, for the other boosters
    for est in (MPBoost(ddf="logitdd", n_rounds=200), NDCGBoost(n_rounds=200),
                AdaRank(measure="ndcg@5", tolerance=None, update="multiplicative", n_rounds=200)):
        est.set_params(eval_metric="ndcg@10", early_stopping_rounds=15)
        est.fit(train.X, train.y, qid=train.qid, eval_set=[(vali.X, vali.y, vali.qid)])
        print(f"\n{type(est).__name__}: stopped after {len(est.history_)} rounds, kept {len(est.rankers_)} "
              f"(best_iteration_ {est.best_iteration_}): {est.stop_reason_}")
        print(f"  test NDCG@10 {ndcg10(est.predict(test.X), test.y, test.group_ptr):.4f}")
    print(f"\ndone in {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
