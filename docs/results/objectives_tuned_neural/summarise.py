"""The cross-data-set tables of the tuned comparison with the neural rankers' losses: the methods of
this run and of ../objectives_tuned (the lambda family), per data set, each method's mean test NDCG@10
and MAP and its paired difference in NDCG@10 to lambdarank, with the paired t-test's p-value and
Holm's adjustment over all the methods of both runs compared with lambdarank on that set.
The two runs' lambdarank rows must agree (seeded, same code for it): checked, not assumed."""
import csv, gzip, math, sys
from pathlib import Path

here = Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
old = here.parent / "objectives_tuned"
sets = [s for s in ("example", "mq2008", "ohsumed", "mslr_shaped") if (here / s / "summary.csv").exists()]


sys.path.insert(0, str(old))
from summarise import holm, print_ndcg  # noqa: E402  (../objectives_tuned/summarise.py: one of each for both)


def rows(path):
    return {r["method"]: r for r in csv.DictReader(open(path))}


table, methods = {}, []
for s in sets:
    new, before = rows(here / s / "summary.csv"), rows(old / s / "summary.csv")
    a, b = float(new["lambdarank"]["ndcg@10_mean"]), float(before["lambdarank"]["ndcg@10_mean"])
    assert math.isclose(a, b, rel_tol=1e-12), f"{s}: lambdarank {a} here, {b} in {old}"
    merged = {**before, **{m: r for m, r in new.items() if m != "lambdarank"}}
    methods = list(merged) if not methods else methods
    others = [m for m in merged if m != "lambdarank"]
    adj = holm([float(merged[m]["p_ttest"]) for m in others])
    for m, p in zip(others, adj):
        r = merged[m]
        table[(s, m)] = (float(r["ndcg@10_mean"]), float(r["map_mean"]), float(r["dndcg@10"]), float(r["p_ttest"]), p)
    r = merged["lambdarank"]
    table[(s, "lambdarank")] = (float(r["ndcg@10_mean"]), float(r["map_mean"]), 0.0, 1.0, 1.0)

print(f"NDCG@10 (Holm over {len(methods) - 1} methods per set)")
print_ndcg(table, sets, methods)


def per_query_map(path):
    """{method: {(fold, qid): MAP}} of a per_query.csv (or .csv.gz)."""
    out = {}
    with (gzip.open(path, "rt") if path.suffix == ".gz" else open(path)) as f:
        for r in csv.DictReader(f):
            out.setdefault(r["method"], {})[(r["fold"], r["qid"])] = float(r["map"])
    return out


from scipy.stats import ttest_rel  # noqa: E402

print()
print("MAP, in brackets the paired difference to lambdarank's and its t-test p-value (* below 0.05 after Holm's")
print("correction over the methods per set)")
print("| method | " + " | ".join(sets) + " |")
print("|---|" + "---|" * len(sets))
cells = {}
for s in sets:
    pq = {}
    for d in (old / s, here / s):
        f = d / "per_query.csv.gz"
        pq.update({m: v for m, v in per_query_map(f).items() if m not in pq})
    base = pq["lambdarank"]
    keys = sorted(base)
    others = [m for m in methods if m != "lambdarank"]
    tests = []
    for m in others:
        assert sorted(pq[m]) == keys, (s, m)
        a, b = [pq[m][k] for k in keys], [base[k] for k in keys]
        tests.append((sum(a) / len(a) - sum(b) / len(b), float(ttest_rel(a, b).pvalue) if a != b else 1.0))
    adj = holm([p for _, p in tests])
    for m, (d, p), h in zip(others, tests, adj):
        cells[(s, m)] = f"{table[(s, m)][1]:.4f} ({d:+.4f}, p {p:.2g}{' *' if h < 0.05 else ''})"
    cells[(s, "lambdarank")] = f"**{table[(s, 'lambdarank')][1]:.4f}**"
for m in methods:
    print(f"| `{m}` | " + " | ".join(cells[(s, m)] for s in sets) + " |")
