"""ERR@10 and MRR of the tuned lambda-family study's chosen models (the outputs in
../objectives_tuned and ../objectives_tuned_neural, made before `compare` reported those metrics).

Every run of those studies is seeded and records its chosen trial's parameters and round. This
retrains each chosen trial once (``compare.run_method`` with the trial's parameters, the study's
tree parameters, rounds, seed and fold), chooses the round on validation NDCG@10 again and checks
that the run is the study's: the same chosen round and the same per-query test NDCG@10 and MAP
(to 1e-9). Then it scores that round's test ranking by NDCG@10, MAP, ERR@10 and MRR (the library
protocol: ERR's largest grade 4, MRR's relevance label >= 1, a query without a relevant document
scoring 1).

Usage: python rescore.py SET [SET ...] --data-root ../../../../shared/data --mslr /tmp/mslr001/mslr_shaped.txt
       [--jobs 2]  (SET: example, mq2008, ohsumed, mslr_shaped; writes SET/per_query.csv.gz, SET/check.csv)
"""
from __future__ import annotations

import argparse
import csv
import gzip
import json
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
STUDIES = (HERE.parent / "objectives_tuned", HERE.parent / "objectives_tuned_neural")
METRICS = ("ndcg@10", "map", "err@10", "mrr")


def runs(name: str) -> list[tuple[dict, dict]]:
    """``(settings, result)`` of every run of set ``name`` in both studies (lambdarank once)."""
    out, seen = [], set()
    for study in STUDIES:
        d = json.load(gzip.open(study / name / "results.json.gz"))
        for r in d["results"]:
            if (r["method"], r["fold"]) not in seen:
                seen.add((r["method"], r["fold"]))
                out.append((d["settings"], r))
    return out


_FOLDS: dict = {}


def _fold(settings: dict, data: str, fold: int):
    from boostplug.compare import load_folds

    key = (data, fold)
    if key not in _FOLDS:
        [(_, f)] = load_folds(data, n_folds=settings["kfold"], select=str(fold + 1), seed=settings["seed"],
                              layout=settings.get("layout"))
        _FOLDS[key] = f
    return _FOLDS[key]


def rescore(job: tuple[str, dict, dict, str]) -> dict:
    from boostplug.compare import get_method
    from boostplug.compare.conventions import make_conventions
    from boostplug.compare.protocol import run_method

    name, settings, r, data = job
    tuning = r["info"]["tuning"]
    params = tuning["trials"][tuning["best_trial"]]["params"]
    method = get_method(r["method"])
    if params:
        method = method.configure(params, rename=False)
    train, vali, test = _fold(settings, data, r["fold"])
    conv = make_conventions("library", metrics=",".join(METRICS))
    res = run_method(r["method"], train, vali, test, rounds=settings["rounds"], metric=settings["early_stopping_metric"],
                     tree_params=settings["tree_params"], seed=settings["seed"], fold=r["fold"], threads=1,
                     conventions=conv, method=method)
    diff = {m: float(np.max(np.abs(np.asarray(res.test_per_query[m]) - np.asarray(r["test_per_query"][m]))))
            for m in ("ndcg@10", "map")}
    return {"set": name, "method": r["method"], "fold": r["fold"] + 1, "round_study": r["best_round"],
            "round_now": res.best_round, "max_dndcg@10": diff["ndcg@10"], "max_dmap": diff["map"],
            "same": res.best_round == r["best_round"] and max(diff.values()) <= 1e-9,
            "qids": res.test_qids, "per_query": res.test_per_query}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sets", nargs="+", choices=("example", "mq2008", "ohsumed", "mslr_shaped"))
    ap.add_argument("--data-root", required=True, help="the folder holding MQ2008 and OHSUMED")
    ap.add_argument("--mslr", help="benchmarks/mslr_shaped.py's mslr_shaped.txt (--scale 0.01)")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args(argv)
    where = {"example": "example", "mq2008": f"{args.data_root}/MQ2008", "ohsumed": f"{args.data_root}/OHSUMED",
             "mslr_shaped": args.mslr}
    jobs = [(s, settings, r, where[s]) for s in args.sets for settings, r in runs(s)]
    jobs.sort(key=lambda j: (j[0], j[2]["fold"], j[2]["method"]))  # one fold's runs together: its data loaded once
    with ProcessPoolExecutor(args.jobs) as pool:
        done = list(pool.map(rescore, jobs, chunksize=1))
    for s in args.sets:
        rows = [d for d in done if d["set"] == s]
        (HERE / s).mkdir(exist_ok=True)
        with open(HERE / s / "check.csv", "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["method", "fold", "round_study", "round_now", "max_dndcg@10", "max_dmap", "same"])
            for d in rows:
                w.writerow([d["method"], d["fold"], d["round_study"], d["round_now"], f"{d['max_dndcg@10']:.3g}",
                            f"{d['max_dmap']:.3g}", int(d["same"])])
        with gzip.open(HERE / s / "per_query.csv.gz", "wt", newline="") as f:
            w = csv.writer(f)
            w.writerow(["method", "fold", "qid", *METRICS])
            for d in rows:
                for i, q in enumerate(d["qids"]):
                    w.writerow([d["method"], d["fold"], q, *(repr(d["per_query"][m][i]) for m in METRICS)])
        print(f"{s}: {sum(d['same'] for d in rows)} of {len(rows)} runs reproduced", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
