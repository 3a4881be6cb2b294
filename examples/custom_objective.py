"""Writing your own objective: RankNet's pairwise logistic loss, registered once, then trained and
compared like the built-in ones (docs/objectives/custom.md walks through it).

The loss of query k (weight W_k) sums, over its critical pairs (i ranked above j: y_i > y_j),
``W_k log(1 + exp(-sigma (s_i - s_j)))`` (Burges et al., "Learning to Rank using Gradient
Descent", ICML 2005). Once ``objectives.register(RankNet)`` has run, ``"ranknet"`` is a name for
``boostplug.lightgbm.objective``, ``boostplug.xgboost.objective``, the rankers' ``objective=``,
``boostplug.dask`` and ``boostplug compare`` (methods ``ranknet`` and ``xgb-ranknet``, with
``--tune`` searching sigma over its declared range). Runs in seconds on the embedded example::

    python examples/custom_objective.py
"""

from __future__ import annotations

import numpy as np

from boostplug import objectives
from boostplug.compare import example_split, format_table, run
from boostplug.objectives import Hessian, Loss, Param, Search


class RankNet(Loss):
    name = "ranknet"
    summary = "RankNet: pairwise logistic loss on the critical pairs (Burges et al. 2005)"
    params = {"sigma": Param(1.0, "real", "slope of the logistic", low=0.0, low_open=True,
                             search=Search(0.5, 4.0, log=True))}
    hessians = {
        "exact": Hessian("exact", "sigma^2 sum of p (1 - p) over the document's critical pairs"),
        "bound": Hessian("bound", "sigma^2 / 2 per critical pair: twice the largest p (1 - p), which "
                         "majorises the whole Hessian"),
    }

    def setup(self) -> None:
        # label-only work, once: per query, W_k where document i is ranked above document j
        self._queries = []
        for k in range(self.n_queries):
            a, b = int(self.group_ptr[k]), int(self.group_ptr[k + 1])
            above = (self.labels[a:b, None] > self.labels[None, a:b]) * self.query_weights[k]
            if above.any():
                self._queries.append((a, b, above))

    def _pair_margins(self, scores: np.ndarray, a: int, b: int) -> np.ndarray:
        return self.sigma * (scores[a:b, None] - scores[None, a:b])  # sigma (s_i - s_j)

    def _loss(self, scores: np.ndarray) -> float:
        return float(sum(np.sum(above * np.logaddexp(0.0, -self._pair_margins(scores, a, b)))
                         for a, b, above in self._queries))

    def _grad_hess(self, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        grad, hess = np.zeros(self.n_docs), np.zeros(self.n_docs)
        for a, b, above in self._queries:
            miss = np.exp(-np.logaddexp(0.0, self._pair_margins(scores, a, b)))  # 1 - p_ij, no overflow
            push = above * self.sigma * miss  # the pair pushes s_i up and s_j down by this much
            grad[a:b] = push.sum(axis=0) - push.sum(axis=1)
            curv = above * self.sigma ** 2 * (miss * (1.0 - miss) if self.hessian == "exact" else 0.5)
            hess[a:b] = curv.sum(axis=1) + curv.sum(axis=0)
        return grad, hess


def check_gradient(seed: int = 0) -> float:
    """The largest gap between ``grad`` and central differences of ``loss`` on random data."""
    rng = np.random.default_rng(seed)
    labels, group_ptr = rng.integers(0, 4, size=12).astype(float), np.array([0, 5, 12])
    scores = rng.normal(size=12)
    obj = objectives.get("ranknet").prepare(labels, group_ptr, weights=[1.0, 2.0], sigma=1.5)
    grad, _ = obj.grad_hess(scores)
    step = np.eye(12) * 1e-6
    numeric = [(obj.loss(scores + e) - obj.loss(scores - e)) / 2e-6 for e in step]
    return float(np.max(np.abs(grad - numeric)))


def main() -> None:
    objectives.register(RankNet)
    try:
        print(f"ranknet: gradient vs finite differences, largest gap {check_gradient():.1e}")
        # the same as boostplug.cli.main(["compare", "--methods", ",".join(methods), "--rounds", "100"])
        methods = ["lambdarank", "ranknet", "xgb-ranknet", "mpboost-logitdd", "ndcg_boost"]
        results = run(methods, [(0, example_split())], rounds=100, threads=1)
        print(format_table(results, baseline="lambdarank"))
        for r in results:
            print(f"{r.method:<16} round {r.best_round:3d}, test NDCG@10 {r.test['ndcg@10']:.4f}")
    finally:
        objectives.unregister("ranknet")  # leave the registry as found (this script also runs in the tests)


if __name__ == "__main__":
    main()
