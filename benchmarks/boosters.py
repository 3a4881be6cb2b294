"""Seconds per boosting round of the reference boosters (issue 4, "Speed and scale").

Data sets:

* MQ2008 Fold1 train (S1 + S2 + S3 of ``../shared/data/MQ2008``, or ``--mq2008 DIR``);
* a synthetic set with about ``--pairs`` (default 10 million) critical pairs:
  queries of 100 documents, 46 Gaussian features, grades 0-4 that depend on the
  first five features (``boostplug.data.make_ranking`` when it exists).

Per algorithm it fits ``--rounds`` rounds and prints the set-up time (``fit`` up to the
first round: pairs, candidate stumps, binning) and the median seconds per round
(from ``history_[t]["seconds"]``). Boosters that are not importable yet print
"not available".

Usage::

    python benchmarks/boosters.py [--rounds 10] [--pairs 10000000] [--skip-synthetic]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

DEFAULT_MQ2008 = Path(__file__).resolve().parents[2] / "shared" / "data" / "MQ2008"


def load_mq2008_fold1(root: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    from sklearn.datasets import load_svmlight_file

    parts = [root / f"S{i}.txt" for i in (1, 2, 3)]
    if not all(p.exists() for p in parts):
        return None
    Xs, ys, qs = [], [], []
    offset = 0
    for p in parts:
        X, y, q = load_svmlight_file(str(p), query_id=True, n_features=46)
        Xs.append(X.toarray())
        ys.append(y)
        qs.append(q + offset)              # keep queries of different files apart
        offset = int(qs[-1].max()) + 1
    return np.vstack(Xs), np.concatenate(ys), np.concatenate(qs)


def synthetic(n_pairs: int, docs_per_query: int = 100, n_features: int = 46,
              seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Queries of ``docs_per_query`` documents until about ``n_pairs`` critical pairs."""
    try:
        from boostplug.data import make_ranking  # type: ignore[attr-defined]
    except ImportError:
        make_ranking = None
    rng = np.random.default_rng(seed)
    # grades 0-4 nearly uniform: a query has about 0.4 * d^2 critical pairs
    n_queries = max(1, int(round(n_pairs / (0.4 * docs_per_query ** 2))))
    if make_ranking is not None:
        try:
            return make_ranking(n_queries=n_queries, docs_per_query=docs_per_query,  # type: ignore[misc]
                                n_features=n_features, random_state=seed)
        except TypeError:
            pass
    n = n_queries * docs_per_query
    X = rng.normal(size=(n, n_features))
    signal = X[:, :5] @ np.array([1.0, 0.8, 0.6, 0.4, 0.2]) + rng.normal(scale=1.0, size=n)
    y = np.digitize(signal, np.quantile(signal, [0.2, 0.4, 0.6, 0.8])).astype(np.float64)
    qid = np.repeat(np.arange(n_queries), docs_per_query)
    return np.round(X, 3), y, qid


def algorithms() -> list[tuple[str, Callable[[int], Any] | None]]:
    import importlib

    out: list[tuple[str, Callable[[int], Any] | None]] = []
    specs = [
        ("RankBoost rb-d", "RankBoost", {"variant": "rb-d"}),
        ("RankBoost rb-c", "RankBoost", {"variant": "rb-c"}),
        ("RankBoost rb-c ranklib", "RankBoost", {"variant": "rb-c", "thresholds": "ranklib"}),
        ("RankBoost+ (efficient)", "RankBoost", {"variant": "rankboost+"}),
        ("RankBoost+ (exact)", "RankBoost", {"variant": "rankboost+", "efficient": False}),
        ("AdaRank ndcg@5", "AdaRank", {}),
        ("MPBoost logdd", "MPBoost", {}),
        ("NDCGBoost", "NDCGBoost", {}),
    ]
    boosters = importlib.import_module("boostplug.boosters")
    for label, cls_name, params in specs:
        try:
            cls = getattr(boosters, cls_name)
        except (ImportError, AttributeError):
            out.append((label, None))
            continue
        out.append((label, lambda r, cls=cls, params=params: cls(n_rounds=r, random_state=0, **params)))
    return out


def time_fit(make: Callable[[int], Any], X: np.ndarray, y: np.ndarray, qid: np.ndarray,
             rounds: int) -> tuple[float, float, int, str]:
    t0 = time.perf_counter()
    model = make(rounds)
    model.fit(X, y, qid=qid)
    total = time.perf_counter() - t0
    secs = [h["seconds"] for h in model.history_]
    if not secs:
        return total, float("nan"), 0, model.stop_reason_
    per = np.diff(np.r_[0.0, secs])
    setup = total - secs[-1]
    per_round = float(np.median(per[1:])) if per.size > 1 else float(per[0])
    return setup, per_round, len(secs), model.stop_reason_


def run(name: str, data: tuple[np.ndarray, np.ndarray, np.ndarray], rounds: int, skip: set[str]) -> None:
    from boostplug.groups import group_ptr_from_qid
    from boostplug.pairs import count_critical_pairs

    X, y, qid = data
    gp = group_ptr_from_qid(qid)
    P = int(count_critical_pairs(y, gp).sum())
    print(f"\n== {name}: {X.shape[0]} documents, {gp.shape[0] - 1} queries, {X.shape[1]} features, {P} critical pairs")
    print(f"{'algorithm':28s} {'set-up s':>9s} {'s/round':>9s} {'rounds':>6s}  stop")
    for label, make in algorithms():
        if make is None:
            print(f"{label:28s} not available")
            continue
        if label in skip:
            print(f"{label:28s} skipped")
            continue
        try:
            setup, per, n, why = time_fit(make, X, y, qid, rounds)
        except Exception as exc:  # a booster written in parallel may still be broken: report, go on
            print(f"{label:28s} failed: {type(exc).__name__}: {exc}")
            continue
        print(f"{label:28s} {setup:9.3f} {per:9.4f} {n:6d}  {why}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--synthetic-rounds", type=int, default=4)
    ap.add_argument("--pairs", type=int, default=10_000_000)
    ap.add_argument("--mq2008", type=Path, default=DEFAULT_MQ2008)
    ap.add_argument("--skip-synthetic", action="store_true")
    ap.add_argument("--skip", action="append", default=[], help="algorithm label to skip (repeatable)")
    args = ap.parse_args()
    skip = set(args.skip)
    mq = load_mq2008_fold1(args.mq2008)
    if mq is None:
        print(f"MQ2008 not found under {args.mq2008}: skipped")
    else:
        run("MQ2008 Fold1 train (S1+S2+S3)", mq, args.rounds, skip)
    if not args.skip_synthetic:
        run(f"synthetic, ~{args.pairs} critical pairs", synthetic(args.pairs), args.synthetic_rounds, skip)


if __name__ == "__main__":
    main()
