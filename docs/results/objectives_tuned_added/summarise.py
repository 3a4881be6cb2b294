"""The study page's tables of the methods added to the tuned lambda-family study (ApproxAP, CatBoost's
losses): per set, each added method's test NDCG@10, MAP, ERR@10 and MRR (mean over folds) and its
paired difference to lambdarank over the pooled test queries (paired t-test,
boostplug.compare.stats.paired_tests), with Holm's correction over every method compared with
lambdarank on that set: the sixteen of the first two runs and the added ones. Checks first that each
added run's lambdarank is the study's, query for query.

Usage: python summarise.py   (reads ../objectives_tuned*, and RUN/SET/per_query.csv.gz beside it)
"""
from __future__ import annotations

import csv
import gzip
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

from boostplug.compare.stats import paired_tests

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "objectives_tuned"))
from summarise import holm  # noqa: E402  (../objectives_tuned/summarise.py: the first study's Holm adjustment)
RESULTS = HERE.parent
SETS = ("example", "mq2008", "ohsumed", "mslr_shaped")
METRICS = ("ndcg@10", "map", "err@10", "mrr")
RUNS = ("approx_ap", "approx_ap_constant", "approx_ap_scaled", "catboost")




def read(path: Path, values: dict, metrics: tuple[str, ...]) -> list[str]:
    """Adds ``values[method][(fold, qid)][metric]`` from one per_query.csv.gz; returns its methods."""
    methods = []
    with gzip.open(path, "rt") as f:
        for r in csv.DictReader(f):
            if r["method"] not in methods:
                methods.append(r["method"])
            cell = values[r["method"]][(int(r["fold"]), r["qid"])]
            for m in metrics:
                cell[m] = float(r[m])
    return methods


def study(name: str) -> tuple[dict, list[str]]:
    """Every method's per-query values on set ``name``; the added methods."""
    values: dict = defaultdict(lambda: defaultdict(dict))
    for old in ("objectives_tuned", "objectives_tuned_neural"):
        read(RESULTS / old / name / "per_query.csv.gz", values, ("ndcg@10", "map"))
    read(RESULTS / "objectives_tuned_metrics" / name / "per_query.csv.gz", values, ("err@10", "mrr"))
    study_base = {k: dict(v) for k, v in values["lambdarank"].items()}
    added = []
    for run in RUNS:
        path = HERE / run / name / "per_query.csv.gz"
        if not path.exists():
            continue
        fresh: dict = defaultdict(lambda: defaultdict(dict))
        methods = read(path, fresh, METRICS)
        assert {k: dict(v) for k, v in fresh["lambdarank"].items()} == study_base, f"{run}/{name}: lambdarank differs"
        for m in methods:
            if m != "lambdarank":
                values[m] = fresh[m]
                added.append(m)
    return values, added


def main() -> None:
    for name in SETS:
        values, added = study(name)
        if not added:
            continue
        keys = sorted(values["lambdarank"])
        others = [m for m in values if m != "lambdarank"]
        print(f"\n{name}: {len(others)} methods compared with lambdarank, {len(keys)} test queries\n")
        rows: dict = {m: [] for m in added}
        notes = []  # printed before the table: a comment between its rows would end it
        folds = sorted({f for f, _ in keys})
        for metric in METRICS:
            base = np.array([values["lambdarank"][k][metric] for k in keys])
            tests = {m: paired_tests(np.array([values[m][k][metric] for k in keys]), base) for m in others}
            adjusted = dict(zip(others, holm([tests[m].t_pvalue for m in others])))
            for m in added:
                mean = np.mean([np.nanmean([values[m][k][metric] for k in keys if k[0] == f]) for f in folds])
                t = tests[m]
                rows[m].append(f"{mean:.4f} ({t.mean_diff:+.4f}, p {t.t_pvalue:.2g}{' *' if adjusted[m] < 0.05 else ''})")
            starred = sorted(m for m in others if m not in added and adjusted[m] < 0.05)
            notes.append(f"<!-- {metric}: the first runs' methods below 0.05 after Holm here: {starred} -->")
        print("\n".join(notes))
        print("| method | " + " | ".join(METRICS) + " |")
        print("|---|" + "---|" * len(METRICS))
        for m in added:
            print(f"| `{m}` | " + " | ".join(rows[m]) + " |")


if __name__ == "__main__":
    main()
