"""Seconds per boosting round of the reference boosters (issue 4, "Speed and scale").

Data sets:

* MQ2008 Fold1 train (S1 + S2 + S3 of ``../shared/data/MQ2008``, or ``--mq2008 DIR``,
  through :func:`boostplug.data.load_letor_folds`);
* a synthetic set with at least ``--pairs`` (default 10 million) critical pairs:
  :func:`boostplug.data.make_ranking` with queries of 100 documents, 46 Gaussian
  features, grades 0-4 driven by five of them (the fewest queries, from an estimate
  corrected by counting, that reach ``--pairs``).

Per algorithm it fits ``--rounds`` rounds and prints the set-up time (``fit`` up to the
first round: pairs, candidate stumps, binning), the median seconds per round (from
``history_[t]["seconds"]``) and the largest single round (RankBoost+'s efficient
variant prunes its candidate set once, inside one round). AdaRank runs with
``tolerance=None, update="multiplicative"`` (RankLib's rule) so that it does not stop after
the first round (its paper-exact default reaches the fixed point of its update in round 2 on
MQ2008).

``--kernels`` instead times the serial and parallel versions of the all-stump sum
kernels (:mod:`boostplug.boosters._stump_sums`) over input sizes: the crossover behind
their dispatch work (``DOC_VISITS_PER_WORK`` and :mod:`boostplug._core.dispatch`).

Usage::

    python benchmarks/boosters.py [--rounds 10] [--pairs 10000000] [--skip-synthetic]
    python benchmarks/boosters.py --kernels
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np
from _timing import call_seconds

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))   # time this checkout's boostplug, not an installed copy
DEFAULT_MQ2008 = ROOT.parent / "shared" / "data" / "MQ2008"


def load_mq2008_fold1(root: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    from boostplug.data import load_letor_folds

    if not (root / "S1.txt").exists() and not (root / "Fold1").exists():
        return None
    train = load_letor_folds(root, "letor4" if (root / "S1.txt").exists() else None)[0][0]  # MQ2008: LETOR 4.0 parts
    return train.X, train.y, train.qid


def synthetic(n_pairs: int, docs_per_query: int = 100, n_features: int = 46,
              seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Queries of ``docs_per_query`` documents, with at least ``n_pairs`` critical pairs."""
    from boostplug.data import make_ranking
    from boostplug.groups import group_ptr_from_qid
    from boostplug.pairs import count_critical_pairs

    # five grades, about equally frequent: a query has about 0.4 * d^2 critical pairs; the
    # grades are quantiles of the whole set, so count and add queries until there are enough
    n_queries = max(1, math.ceil(n_pairs / (0.4 * docs_per_query ** 2)))
    while True:
        d = make_ranking(n_queries=n_queries, docs_per_query=docs_per_query, n_features=n_features, seed=seed)
        found = int(count_critical_pairs(d.y, group_ptr_from_qid(d.qid)).sum())
        if found >= n_pairs:
            return d.X, d.y, d.qid
        n_queries = math.ceil(n_queries * n_pairs / max(found, 1)) + 1


def algorithms() -> list[tuple[str, Callable[[int], Any] | None]]:
    import importlib

    out: list[tuple[str, Callable[[int], Any] | None]] = []
    specs = [
        ("RankBoost rb-d", "RankBoost", {"variant": "rb-d"}),
        ("RankBoost rb-c", "RankBoost", {"variant": "rb-c"}),
        ("RankBoost rb-c ranklib", "RankBoost", {"variant": "rb-c", "thresholds": "ranklib"}),
        ("RankBoost+ (efficient)", "RankBoost", {"variant": "rankboost+"}),
        ("RankBoost+ (exact)", "RankBoost", {"variant": "rankboost+", "efficient": False}),
        ("AdaRank ndcg@5", "AdaRank", {"measure": "ndcg@5", "tolerance": None, "update": "multiplicative"}),
        ("AdaRank map", "AdaRank", {"measure": "map", "tolerance": None, "update": "multiplicative"}),
        ("MPBoost binary", "MPBoost", {"ddf": "binary"}),
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
             rounds: int) -> tuple[float, float, float, int, str]:
    t0 = time.perf_counter()
    model = make(rounds)
    model.fit(X, y, qid=qid)
    total = time.perf_counter() - t0
    secs = [h["seconds"] for h in model.history_]
    if not secs:
        return total, float("nan"), float("nan"), 0, model.stop_reason_
    per = np.diff(np.r_[0.0, secs])
    setup = total - secs[-1]
    per_round = float(np.median(per[1:])) if per.size > 1 else float(per[0])
    return setup, per_round, float(per.max()), len(secs), model.stop_reason_


def run(name: str, data: tuple[np.ndarray, np.ndarray, np.ndarray], rounds: int, skip: set[str]) -> None:
    from boostplug.groups import group_ptr_from_qid
    from boostplug.pairs import count_critical_pairs

    X, y, qid = data
    gp = group_ptr_from_qid(qid)
    P = int(count_critical_pairs(y, gp).sum())
    print(f"\n== {name}: {X.shape[0]} documents, {gp.shape[0] - 1} queries, {X.shape[1]} features, {P} critical pairs")
    print(f"{'algorithm':28s} {'set-up s':>9s} {'s/round':>9s} {'max s':>8s} {'rounds':>6s}  stop")
    for label, make in algorithms():
        if make is None:
            print(f"{label:28s} not available")
            continue
        if label in skip:
            print(f"{label:28s} skipped")
            continue
        try:
            setup, per, worst, n, why = time_fit(make, X, y, qid, rounds)
        except Exception as exc:  # a booster written in parallel may still be broken: report, go on
            print(f"{label:28s} failed: {type(exc).__name__}: {exc}")
            continue
        print(f"{label:28s} {setup:9.3f} {per:9.4f} {worst:8.3f} {n:6d}  {why}")


def kernels() -> None:
    """Serial vs parallel all-stump sums: median seconds per call, three passes per size."""
    import numba as nb

    from boostplug._core.dispatch import serial_twin
    from boostplug.boosters import _stump_sums as ss

    rng = np.random.default_rng(0)
    n_feat, width = 46, 256

    def med(f: Callable[[], Any], reps: int) -> float:
        f()
        return float(np.median(call_seconds(f, reps)))

    print(f"numba threads {nb.get_num_threads()}; column-major codes, {n_feat} features, {width - 1} thresholds")
    print(f"{'kernel':16s} {'work':>9s} {'serial s (3 passes)':>30s} {'parallel s (3 passes)':>30s}")

    def show(name: str, work: int, serial: Callable[[], Any], parallel: Callable[[], Any]) -> None:
        reps = max(5, int(4e6 / work))
        s = " ".join(f"{med(serial, reps):9.6f}" for _ in range(3))
        p = " ".join(f"{med(parallel, reps):9.6f}" for _ in range(3))
        print(f"{name:16s} {work:9d} {s:>30s} {p:>30s}", flush=True)

    for n in (200, 1000, 5000, 20000, 50000, 200000):
        codes = np.asfortranarray(rng.integers(0, width, size=(n, n_feat)).astype(np.int32))
        pot = rng.normal(size=n)
        show("doc_sums_above", n * n_feat, lambda: serial_twin(ss._doc_sums_above)(codes, pot, width),
             lambda: ss._doc_sums_above(codes, pot, width))
    codes = np.asfortranarray(rng.integers(0, width, size=(10000, n_feat)).astype(np.int32))
    for P in (200, 1000, 5000, 20000, 50000, 200000):
        pairs = rng.integers(0, 10000, size=(P, 2)).astype(np.int64)
        v = rng.random(P)
        show("pair_split_sums", P * n_feat, lambda: serial_twin(ss._pair_sums)(codes, pairs, v, v, width, True),
             lambda: ss._pair_sums(codes, pairs, v, v, width, True))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--synthetic-rounds", type=int, default=4)
    ap.add_argument("--pairs", type=int, default=10_000_000)
    ap.add_argument("--mq2008", type=Path, default=DEFAULT_MQ2008)
    ap.add_argument("--skip-synthetic", action="store_true")
    ap.add_argument("--skip", action="append", default=[], help="algorithm label to skip (repeatable)")
    ap.add_argument("--kernels", action="store_true", help="time the serial vs parallel stump-sum kernels only")
    args = ap.parse_args()
    if args.kernels:
        kernels()
        return
    skip = set(args.skip)
    mq = load_mq2008_fold1(args.mq2008)
    if mq is None:
        print(f"MQ2008 not found under {args.mq2008}: skipped")
    else:
        run("MQ2008 Fold1 train (S1+S2+S3)", mq, args.rounds, skip)
    if not args.skip_synthetic:
        run(f"synthetic, >= {args.pairs} critical pairs", synthetic(args.pairs), args.synthetic_rounds, skip)


if __name__ == "__main__":
    main()
