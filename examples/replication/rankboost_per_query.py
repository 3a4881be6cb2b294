"""RankBoost+ versus Rb-c versus Rb-d (Connamacher et al., MLJ 2020, Table 1 setting) on MQ2008.

Paper setting (Sec. 6): every ranking task (a MovieLens user, an MSLR-WEB10K query) is learned
on its own with 5-fold cross-validation (3 parts train, 1 vali, 1 test), decision stumps with at
most 255 sampled thresholds; for each metric the iteration is the one with the best value of
that metric on vali; test R1, R2 (lower is better) and NDCG@3/5/7 are averaged over the 5 folds
of a task; per task the three algorithms are ranked 1..3 and the ranks are averaged over tasks
(Table 1: the average rank).

On MQ2008 (all queries of S1..S5): the tasks are the queries with at least ``--min-pairs``
critical pairs (default 200: 84 of the 784 queries, 28 to 121 documents). Each query's
documents are split into 5 parts stratified by grade (shuffled, then dealt round-robin within
each grade, seed 0), so every part holds documents of every grade that has >= 5 of them; fold i
tests on part i, validates on part i+1 and trains on the other three. ``--rounds`` rounds
(default 100). RankBoost+ runs as the paper's efficient Algorithm 2 (``efficient=True``, the
library default), which keeps it tractable; Rb-d stops when its step is undefined (eps- = 0 or
eps+ <= eps-), and its last round is then used for every later round.

Ties in the rank summary share the average rank; NDCG ranks are by decreasing NDCG.

Usage::

    nice env NUMBA_NUM_THREADS=1 python examples/replication/rankboost_per_query.py \\
        [--data ../shared/data/MQ2008 | --data example] [--min-pairs 200] [--rounds 100] \\
        [--out DIR] [--tiny]
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from scipy.stats import rankdata

import _common as C
from boostplug import metrics
from boostplug.boosters import RankBoost
from boostplug.data import RankingData

VARIANTS = {"RankBoost+": "rankboost+", "Rb-c": "rb-c", "Rb-d": "rb-d"}
METRICS = ("r1", "r2", "ndcg@3", "ndcg@5", "ndcg@7")
LOWER_IS_BETTER = {"r1", "r2"}


def critical_pairs(y: np.ndarray) -> int:
    """Number of pairs of documents with different grades."""
    counts = np.unique(y, return_counts=True)[1]
    return int((counts.sum() ** 2 - (counts ** 2).sum()) // 2)


def tasks(all_queries: RankingData, min_pairs: int) -> list[RankingData]:
    g = all_queries.group_ptr
    keep = [q for q in range(all_queries.n_queries) if critical_pairs(all_queries.y[g[q]:g[q + 1]]) >= min_pairs]
    return [all_queries.subset([q]) for q in keep]


def doc_parts(y: np.ndarray, k: int = 5, seed: int = 0) -> list[np.ndarray]:
    """``k`` document index sets, stratified by grade (shuffled, dealt round-robin per grade)."""
    rng = np.random.default_rng(seed)
    parts: list[list[int]] = [[] for _ in range(k)]
    start = 0
    for grade in np.unique(y):
        idx = rng.permutation(np.flatnonzero(y == grade))
        for j, i in enumerate(idx):
            parts[(start + j) % k].append(int(i))
        start = (start + idx.size) % k
    return [np.sort(np.array(p, dtype=np.int64)) for p in parts]


def one_group(task: RankingData, rows: np.ndarray) -> RankingData:
    return RankingData(task.X[rows], task.y[rows], group_ptr=np.array([0, rows.size]))


def value(metric: str, s: np.ndarray, d: RankingData) -> float:
    if metric in LOWER_IS_BETTER:
        return float(metrics.rank_loss(s, d.y, d.group_ptr, kind=metric))
    return float(C.score(metric, s, d))


def run_fold(variant: str, train: RankingData, vali: RankingData, test: RankingData, rounds: int) -> dict[str, float]:
    """Test value of every metric at the round with that metric's best vali value."""
    model = RankBoost(variant=variant, n_rounds=rounds, random_state=0).fit(train.X, train.y, group=[train.y.size])
    vs, ts = list(model.staged_predict(vali.X)), list(model.staged_predict(test.X))
    out: dict[str, float] = {"rounds_fitted": float(len(vs))}
    for m in METRICS:
        if not vs:  # no round at all: every document scores 0
            out[m] = value(m, np.zeros(test.y.size), test)
            continue
        v = np.array([value(m, s, vali) for s in vs])
        v = np.where(np.isnan(v), np.inf if m in LOWER_IS_BETTER else -np.inf, v)
        best = int(np.argmin(v) if m in LOWER_IS_BETTER else np.argmax(v))
        out[m] = value(m, ts[best], test)
    return out


def run_task(task: RankingData, rounds: int) -> dict[str, dict[str, float]]:
    parts = doc_parts(task.y)
    per: dict[str, list[dict[str, float]]] = {lb: [] for lb in VARIANTS}
    for i in range(5):
        test_rows, vali_rows = parts[i], parts[(i + 1) % 5]
        train_rows = np.sort(np.concatenate([parts[(i + j) % 5] for j in (2, 3, 4)]))
        train, vali, test = (one_group(task, r) for r in (train_rows, vali_rows, test_rows))
        for lb, variant in VARIANTS.items():
            per[lb].append(run_fold(variant, train, vali, test, rounds))
    return {lb: {m: float(np.nanmean([r[m] for r in rows])) for m in (*METRICS, "rounds_fitted")}
            for lb, rows in per.items()}


def average_ranks(results: list[dict[str, dict[str, float]]]) -> dict[str, dict[str, float]]:
    """Per metric, the mean over tasks of each variant's rank (1 = best; ties averaged)."""
    out: dict[str, dict[str, float]] = {lb: {} for lb in VARIANTS}
    for m in METRICS:
        ranks = []
        for res in results:
            vals = np.array([res[lb][m] for lb in VARIANTS])
            ranks.append(rankdata(vals if m in LOWER_IS_BETTER else -vals, method="average"))
        mean = np.mean(ranks, axis=0)
        for lb, r in zip(VARIANTS, mean):
            out[lb][m] = float(r)
    return out


def summarize(results: list[dict[str, dict[str, float]]], ranks: dict[str, dict[str, float]]) -> dict[str, Any]:
    """Print the average ranks, mean values, outright wins and paired Wilcoxon tests; return the wins."""
    from scipy.stats import wilcoxon

    print(f"\n== Average rank over {len(results)} tasks (1 = best of 3; the paper's Table 1 summary)")
    print(f"{'':12s} " + " ".join(f"{m:>8s}" for m in METRICS))
    for lb in VARIANTS:
        print(f"{lb:12s} " + " ".join(f"{ranks[lb][m]:8.3f}" for m in METRICS))
    print("\n== Mean over tasks of the 5-fold test value (R1, R2: lower is better)")
    print(f"{'':12s} " + " ".join(f"{m:>8s}" for m in METRICS) + "  mean rounds fitted")
    for lb in VARIANTS:
        print(f"{lb:12s} " + " ".join(f"{np.mean([r[lb][m] for r in results]):8.4f}" for m in METRICS)
              + f"  {np.mean([r[lb]['rounds_fitted'] for r in results]):.1f}")
    wins = {m: {lb: int(sum(1 for r in results if all(
        (r[lb][m] < r[o][m]) if m in LOWER_IS_BETTER else (r[lb][m] > r[o][m]) for o in VARIANTS if o != lb)))
        for lb in VARIANTS} for m in METRICS}
    print("\n== Tasks each variant wins outright")
    for m in METRICS:
        print(f"{m:8s} " + ", ".join(f"{lb} {wins[m][lb]}" for lb in VARIANTS))
    print("\n== Paired over tasks: Wilcoxon signed-rank p-value (two-sided), tasks where the first is better")
    for a, b in (("RankBoost+", "Rb-c"), ("RankBoost+", "Rb-d"), ("Rb-c", "Rb-d")):
        cells = []
        for m in METRICS:
            x = np.array([r[a][m] for r in results])
            y = np.array([r[b][m] for r in results])
            better = int(np.sum(x < y) if m in LOWER_IS_BETTER else np.sum(x > y))
            p = wilcoxon(x, y).pvalue if np.any(x != y) else 1.0
            cells.append(f"{m} p={p:.2g} ({better})")
        print(f"{a} vs {b}: " + ", ".join(cells))
    return wins


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = C.parser(__doc__)
    ap.add_argument("--min-pairs", type=int, default=200, help="tasks: queries with at least this many critical pairs")
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--max-tasks", type=int, default=None, help="use only the first N tasks")
    args, saved = C.start(ap, argv, lambda s: summarize(s["tasks"], s["ranks"]))
    if saved is not None:
        return saved
    _, folds, what = C.load_folds(args)
    all_queries = RankingData.concat(*folds[0])  # train + vali + test of one fold = every query
    chosen = tasks(all_queries, args.min_pairs)[: args.max_tasks]
    if not chosen:
        raise SystemExit(f"no query has >= {args.min_pairs} critical pairs; lower --min-pairs")
    sizes = [t.y.size for t in chosen]
    print(f"RankBoost variants per query on {what}: {len(chosen)} of {all_queries.n_queries} queries have >= "
          f"{args.min_pairs} critical pairs ({min(sizes)}..{max(sizes)} documents, median {int(np.median(sizes))}); "
          f"5-fold CV over documents; {args.rounds} rounds; {C.threads_note()}", flush=True)
    t0 = time.perf_counter()
    results = []
    for n, task in enumerate(chosen, 1):
        results.append(run_task(task, args.rounds))
        if n % 10 == 0:
            print(f"  {n} tasks done ({time.perf_counter() - t0:.0f}s)", flush=True)
    ranks = average_ranks(results)
    wins = summarize(results, ranks)
    print(f"\ntotal {time.perf_counter() - t0:.0f}s")
    payload = {"data": what, "min_pairs": args.min_pairs, "rounds": args.rounds, "n_tasks": len(chosen),
               "ranks": ranks, "tasks": results, "wins": wins}
    C.write_json(args.out, "rankboost_per_query.json", payload)
    return payload


if __name__ == "__main__":
    main()
