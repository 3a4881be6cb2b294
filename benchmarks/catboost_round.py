"""Milliseconds per round of CatBoost's own YetiRank against boostplug objectives on CatBoost trees
(boostplug.catboost.train: the objective's gradients over whole queries, then one CatBoost fit of one
tree), on the embedded example data and a synthetic set; best of ``--repeat`` whole fits, after one
warm-up fit each (numba's compile and CatBoost's first import are not timed).

    python benchmarks/catboost_round.py [--objectives yetirank,qbrank,lambdarank] [--rounds 100] [--depth 6]
                                        [--queries 2000] [--threads 1] [--repeat 3]

Run it alone: CatBoost and the kernels want the cores.
"""

from __future__ import annotations

import argparse

from _timing import call_seconds


def data_sets(queries: int) -> dict:
    from boostplug.data import load_example, make_ranking

    example, _ = load_example()
    synthetic = make_ranking(n_queries=queries, docs_per_query=(5, 60), n_features=50, seed=0)
    return {"example": example, f"synthetic ({queries} queries)": synthetic}


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--objectives", default="yetirank,qbrank,lambdarank",
                    help="boostplug objectives to train on CatBoost trees (comma-separated)")
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--depth", type=int, default=6)
    ap.add_argument("--queries", type=int, default=2000, help="queries of the synthetic set")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    import numpy as np
    from catboost import CatBoost, Pool

    from boostplug import catboost as bpc

    params = {"depth": args.depth, "learning_rate": 0.1, "thread_count": args.threads, "random_seed": 0,
              "verbose": False, "allow_writing_files": False}
    print(f"ms per round, best of {args.repeat} fits of {args.rounds} rounds, depth {args.depth}, "
          f"{args.threads} thread(s)")
    for label, d in data_sets(args.queries).items():
        group_id = np.repeat(np.arange(d.n_queries), np.diff(d.group_ptr))
        native = Pool(d.X, label=d.y, group_id=group_id)

        def yetirank(rounds: int) -> None:
            CatBoost({**params, "loss_function": "YetiRank", "iterations": rounds}).fit(native)

        cases = {"CatBoost YetiRank (native)": yetirank}
        for name in args.objectives.split(","):
            def plugin(rounds: int, name: str = name) -> None:
                pool = bpc.pool(d.X, d.y, group_ptr=d.group_ptr)
                bpc.train(params, pool, bpc.objective(name, threads=args.threads), rounds)

            cases[f"boostplug {name} on CatBoost trees"] = plugin
        print(f"{label}: {d.n_docs} documents, {d.n_queries} queries")
        for case, fit in cases.items():
            fit(min(2, args.rounds))  # warm-up: compiles, imports
            best = min(call_seconds(lambda: fit(args.rounds), args.repeat))
            print(f"  {case:<45} {1000 * best / max(args.rounds, 1):8.2f}")


if __name__ == "__main__":
    main()
