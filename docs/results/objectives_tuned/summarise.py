"""The cross-data-set table of the tuned lambda-family comparison: per data set, each method's
mean test NDCG@10 and MAP and its paired difference in NDCG@10 to lambdarank, with the paired
t-test's p-value and Holm's adjustment over the methods compared with lambdarank on that set."""
import csv, sys
from pathlib import Path


def holm(ps):
    order = sorted(range(len(ps)), key=lambda i: ps[i])
    out, run = [0.0] * len(ps), 0.0
    for rank, i in enumerate(order):
        run = max(run, min(1.0, (len(ps) - rank) * ps[i]))
        out[i] = run
    return out


def print_ndcg(table, sets, methods):
    """The NDCG@10 table of ``table[(set, method)] = (NDCG@10, MAP, difference, p, Holm's p)``:
    lambdarank's mean in bold, each other method's with its difference and p-value (* below 0.05
    after Holm)."""
    print("| method | " + " | ".join(sets) + " |")
    print("|---|" + "---|" * len(sets))
    for m in methods:
        cells = []
        for s in sets:
            n, mp, d, p, a = table[(s, m)]
            if m == "lambdarank":
                cells.append(f"**{n:.4f}**")
            else:
                mark = " *" if a < 0.05 else ""
                cells.append(f"{n:.4f} ({d:+.4f}, p {p:.2g}{mark})")
        print(f"| `{m}` | " + " | ".join(cells) + " |")


def main() -> None:
    root = Path(sys.argv[1])
    sets = [s for s in ("example", "mq2008", "ohsumed", "mslr_shaped") if (root / s / "summary.csv").exists()]
    rows = {s: list(csv.DictReader(open(root / s / "summary.csv"))) for s in sets}
    methods = [r["method"] for r in rows[sets[0]]]
    table = {}
    for s in sets:
        others = [r for r in rows[s] if r["method"] != "lambdarank"]
        adj = holm([float(r["p_ttest"]) for r in others])
        for r, a in zip(others, adj):
            table[(s, r["method"])] = (float(r["ndcg@10_mean"]), float(r["map_mean"]), float(r["dndcg@10"]), float(r["p_ttest"]), a)
        base = next(r for r in rows[s] if r["method"] == "lambdarank")
        table[(s, "lambdarank")] = (float(base["ndcg@10_mean"]), float(base["map_mean"]), 0.0, 1.0, 1.0)

    print_ndcg(table, sets, methods)
    print()
    print("MAP")
    print("| method | " + " | ".join(sets) + " |")
    print("|---|" + "---|" * len(sets))
    for m in methods:
        print(f"| `{m}` | " + " | ".join(f"{table[(s, m)][1]:.4f}" for s in sets) + " |")


if __name__ == "__main__":
    main()
