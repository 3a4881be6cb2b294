"""The tuned study's tables on the MSLR-shaped set with the trees target: the runs in the folders
given (each a `boostplug compare --out` folder with the same lambdarank), joined; per metric, each
method's mean over the folds, its paired difference to lambdarank and the paired t-test's p-value,
`*` where Holm's correction over every method compared with lambdarank stays below 0.05; then the
same loss on both frameworks' trees, paired over the test queries.

Usage: python summarise.py lambda neural catboost
"""
import csv
import gzip
import sys
from pathlib import Path

from scipy import stats

METRICS = (("ndcg@10", "NDCG@10"), ("map", "MAP"), ("err@10", "ERR@10"), ("mrr", "MRR"))
PAIRS = (("yetirank", "cb-yetirank-plugin"), ("lambdamart_map", "cb-lambdamart_map"),
         ("cb-yetirank", "cb-yetirank-plugin"), ("cb-lambdamart-map", "cb-lambdamart_map"))


def _holm():
    """Holm's adjustment of the first study's summary script (``../objectives_tuned/summarise.py``)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("tuned_summarise", Path(__file__).parents[1] / "objectives_tuned"
                                                  / "summarise.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.holm


holm = _holm()


def main() -> None:
    rows, per_query, base = {}, {}, None
    for folder in map(Path, sys.argv[1:]):
        for r in csv.DictReader(open(folder / "summary.csv")):
            rows.setdefault(r["method"], r)
        queries = {}
        path = folder / "per_query.csv"
        for r in csv.DictReader(open(path) if path.exists() else gzip.open(f"{path}.gz", "rt")):
            queries.setdefault(r["method"], {})[(r["fold"], r["qid"])] = {m: float(r[m]) for m, _ in METRICS}
        if base is None:
            base = queries["lambdarank"]
        assert queries["lambdarank"] == base, f"{folder}: its lambdarank is not the first run's"
        per_query.update(queries)
    others = [m for m in rows if m != "lambdarank"]
    print(f"{len(others)} methods against lambdarank, {len(base)} test queries\n")
    for key, title in METRICS:
        p = "p_ttest" if key == "ndcg@10" else f"p_ttest_{key}"
        d = "dndcg@10" if key == "ndcg@10" else f"d{key}"
        adj = dict(zip(others, holm([float(rows[m][p]) for m in others])))
        print(f"| method | {title} | difference | p (t) |\n|---|---:|---:|---:|")
        for m in rows:
            mean = float(rows[m][f"{key}_mean"])
            if m == "lambdarank":
                print(f"| `{m}` | **{mean:.4f}** | | |")
            else:
                star = " *" if adj[m] < 0.05 else ""
                print(f"| `{m}` | {mean:.4f} | {float(rows[m][d]):+.4f} | {float(rows[m][p]):.2g}{star} |")
        print()
    print("the same loss on both frameworks' trees (second minus first), paired over the test queries:\n")
    print("| first | second | " + " | ".join(t for _, t in METRICS) + " |\n|---|---|" + "---|" * len(METRICS))
    for a, b in PAIRS:
        if a in per_query and b in per_query:
            keys = sorted(per_query[a])
            cells = []
            for key, _ in METRICS:
                x = [per_query[a][k][key] for k in keys]
                y = [per_query[b][k][key] for k in keys]
                diff = sum(y) / len(y) - sum(x) / len(x)
                cells.append(f"{diff:+.4f} (p {stats.ttest_rel(y, x).pvalue:.2g})")
            print(f"| `{a}` | `{b}` | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
