"""Writing your own objective: RankNet's pairwise logistic loss, registered once, checked against
the objective contract, then trained and compared like the built-in ones (docs/objectives/custom.md
walks through it).

The loss of query k (weight W_k) sums, over its critical pairs (i ranked above j: y_i > y_j),
``W_k log(1 + exp(-sigma (s_i - s_j)))`` (Burges et al., "Learning to Rank using Gradient
Descent", ICML 2005). ``boostplug.testing.check_objective`` runs the contract checks the built-in
objectives pass. Once ``objectives.register(RankNet)`` has run, ``"my_ranknet"`` is a name for
``boostplug.lightgbm.objective``, ``boostplug.xgboost.objective``, the rankers' ``objective=``,
``boostplug.dask`` and ``boostplug compare`` (methods ``my_ranknet`` and ``xgb-my_ranknet``, with
``--tune`` searching sigma over its declared range). Runs in seconds on the embedded example::

    python examples/custom_objective.py
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from boostplug import objectives
from boostplug.compare import example_split, format_table, run
from boostplug.objectives import Hessian, Loss, Param, Search
from boostplug.testing import check_objective


class RankNet(Loss):
    name = "my_ranknet"
    summary = "RankNet: pairwise logistic loss on the critical pairs (Burges et al. 2005)"
    params = {"sigma": Param(1.0, "real", "slope of the logistic", low=0.0, low_open=True,
                             search=Search(0.5, 4.0, log=True))}
    hessians = {
        "exact": Hessian("exact", "sigma^2 sum of p (1 - p) over the document's critical pairs"),
        "bound": Hessian("bound", "sigma^2 / 2 per critical pair: twice the largest p (1 - p), which "
                         "majorises the whole Hessian"),
    }

    def setup(self) -> None:
        # label-only work, once: every critical pair (document i above document j: y_i > y_j) of
        # each query of non-zero weight W_k, as rows above and below and that weight (a query of
        # weight 0 has no terms: 0 times a term that overflows would be NaN)
        above, below, weight = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)], [np.zeros(0)]
        for k in np.flatnonzero(self.query_weights):
            a, b = self.group_ptr[k], self.group_ptr[k + 1]
            i, j = np.nonzero(self.labels[a:b, None] > self.labels[None, a:b])
            above.append(a + i)
            below.append(a + j)
            weight.append(np.full(i.size, self.query_weights[k]))
        self._above, self._below, self._weight = (np.concatenate(v) for v in (above, below, weight))

    def _margins(self, scores: np.ndarray) -> np.ndarray:
        # sigma (s_i - s_j): +-inf when the scores are too far apart for float64, which the
        # logistic terms below take as their limits
        return self.sigma * (scores[self._above] - scores[self._below])

    def _loss(self, scores: np.ndarray) -> float:
        # log(1 + exp(-z)) without overflow (inf only where the loss itself exceeds float64)
        return float(np.sum(self._weight * np.logaddexp(0.0, -self._margins(scores))))

    def _grad_hess(self, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        miss = expit(-self._margins(scores))  # 1 - p_ij, in [0, 1] for any margin
        push = self._weight * self.sigma * miss  # the pair pushes s_i up and s_j down by this much
        n = self.n_docs
        grad = np.bincount(self._below, push, n) - np.bincount(self._above, push, n)
        curv = self._weight * self.sigma ** 2 * (miss * (1.0 - miss) if self.hessian == "exact" else 0.5)
        return grad, np.bincount(self._above, curv, n) + np.bincount(self._below, curv, n)


def main() -> None:
    objectives.register(RankNet)
    try:
        # the contract the built-in objectives are tested for: gradient against finite
        # differences, each Hessian mode's promise, weights, extreme scores, both adapters, ...
        ran = check_objective("my_ranknet")
        print(f"my_ranknet: {len(ran)} contract checks passed ({sum(r.skipped is not None for r in ran)} skipped)")
        # the same as boostplug.cli.main(["compare", "--methods", ",".join(methods), "--rounds", "100"])
        methods = ["lambdarank", "my_ranknet", "xgb-my_ranknet", "mpboost-logitdd", "ndcg_boost"]
        results = run(methods, [(0, example_split())], rounds=100, threads=1)
        print(format_table(results, baseline="lambdarank"))
        for r in results:
            print(f"{r.method:<16} round {r.best_round:3d}, test NDCG@10 {r.test['ndcg@10']:.4f}")
    finally:
        objectives.unregister("my_ranknet")  # leave the registry as found (this script also runs in the tests)


if __name__ == "__main__":
    main()
