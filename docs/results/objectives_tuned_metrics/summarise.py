"""The study page's ERR@10 and MRR tables from rescore.py's outputs: per set and method, the mean
over folds of the test metric, and the paired difference to lambdarank over the pooled test
queries with its t-test p-value (boostplug.compare.stats.paired_tests) and Holm's adjustment over
the methods compared with lambdarank on that set.

Usage: python summarise.py   (reads SET/per_query.csv.gz beside it)
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
SETS = ("example", "mq2008", "ohsumed", "mslr_shaped")
ORDER = ("lambdarank", "rank_xendcg", "xgb-rank:ndcg", "ranknet", "listnet", "ndcg_loss1", "ndcg_loss2",
         "ndcg_loss2pp", "yetirank", "yetiloss", "listmle", "approx_ndcg", "approx_mrr", "lambdamart_map",
         "lambdamart_err", "lambdamart_mrr", "lambdamart_rbp")




def load(name: str) -> dict[str, dict[int, dict[str, np.ndarray]]]:
    """``values[method][fold][metric]``: per-query test values in the file's query order."""
    rows: dict = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    with gzip.open(HERE / name / "per_query.csv.gz", "rt") as f:
        for r in csv.DictReader(f):
            for m in ("ndcg@10", "map", "err@10", "mrr"):
                rows[r["method"]][int(r["fold"])][m].append(float(r[m]))
    return {k: {fold: {m: np.array(v) for m, v in by.items()} for fold, by in folds.items()}
            for k, folds in rows.items()}


def table(metric: str, sets: list[str]) -> None:
    cells: dict = {}
    for s in sets:
        values = load(s)
        base = values["lambdarank"]
        others = [m for m in ORDER if m != "lambdarank"]
        tests = {}
        for m in others:
            folds = sorted(values[m])
            a = np.concatenate([values[m][k][metric] for k in folds])
            b = np.concatenate([base[k][metric] for k in folds])
            tests[m] = paired_tests(a, b)
        adjusted = dict(zip(others, holm([tests[m].t_pvalue for m in others])))
        for m in ORDER:
            mean = float(np.mean([np.nanmean(v[metric]) for v in values[m].values()]))
            if m == "lambdarank":
                cells[(s, m)] = f"**{mean:.4f}**"
            else:
                t = tests[m]
                mark = " *" if adjusted[m] < 0.05 else ""
                cells[(s, m)] = f"{mean:.4f} ({t.mean_diff:+.4f}, p {t.t_pvalue:.2g}{mark})"
    print(f"\n{metric.upper()}\n")
    print("| method | " + " | ".join(sets) + " |")
    print("|---|" + "---|" * len(sets))
    for m in ORDER:
        print(f"| `{m}` | " + " | ".join(cells[(s, m)] for s in sets) + " |")


def main() -> None:
    sets = [s for s in SETS if (HERE / s / "per_query.csv.gz").exists()]
    for metric in ("err@10", "mrr"):
        table(metric, sets)


if __name__ == "__main__":
    main()
