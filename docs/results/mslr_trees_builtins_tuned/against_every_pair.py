"""Each method of the lambda run against `lambdarank` on every pair (the every_pair run: its
truncation fixed at 2147483647, the rest tuned alike), paired over the 189 test queries: the
difference, the t-test's p and `*` where Holm's correction over the methods stays below 0.05.

Usage: python against_every_pair.py lambda every_pair > against_every_pair.md
"""
import csv
import gzip
import sys
from pathlib import Path

from scipy import stats

sys.path.insert(0, str(Path(__file__).parents[1] / "mslr_trees_tuned"))
from summarise import METRICS, holm  # noqa: E402

EVERY_PAIR = "lambdarank[lambdarank_truncation_level=2147483647]"


def per_query(folder: Path) -> dict:
    out = {}
    for r in csv.DictReader(gzip.open(folder / "per_query.csv.gz", "rt")):
        out.setdefault(r["method"], {})[(r["fold"], r["qid"])] = {m: float(r[m]) for m, _ in METRICS}
    return out


def main() -> None:
    runs, base = per_query(Path(sys.argv[1])), per_query(Path(sys.argv[2]))
    assert runs["lambdarank"] == base["lambdarank"], "the two runs' lambdarank differ"
    ref = base[EVERY_PAIR]
    keys = sorted(ref)
    others = [m for m in runs if m not in ("lambdarank", EVERY_PAIR)] + ["lambdarank"]
    print(f"{len(others)} methods against `{EVERY_PAIR}`, {len(keys)} test queries\n")
    for key, title in METRICS:
        x = [ref[k][key] for k in keys]
        tests = {m: stats.ttest_rel([runs[m][k][key] for k in keys], x) for m in others}
        adj = dict(zip(others, holm([float(tests[m].pvalue) for m in others])))
        print(f"| method | {title} difference | p (t) |\n|---|---:|---:|")
        for m in others:
            diff = sum(runs[m][k][key] for k in keys) / len(keys) - sum(x) / len(x)
            print(f"| `{m}` | {diff:+.4f} | {tests[m].pvalue:.2g}{' *' if adj[m] < 0.05 else ''} |")
        print()


if __name__ == "__main__":
    main()
