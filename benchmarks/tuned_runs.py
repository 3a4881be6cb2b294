"""Two tuned ``boostplug compare`` runs side by side: what each chose, and what its search cost.

For each method (in the first run's order), means over the folds both runs completed of the chosen
trial's validation value (the selection metric at its best round), the test NDCG@10 and MAP of the
chosen model, then per run the trials pruned and the search's seconds per fold (every trial's
training time, summed). Prints a Markdown table, then the mean and largest drop of the chosen
validation value from the first run to the second.

Usage::

    python benchmarks/tuned_runs.py BEFORE/results.json.gz AFTER/results.json.gz [--names before,after]
"""

from __future__ import annotations

import argparse
import gzip
import json
from collections import defaultdict
from pathlib import Path
from typing import Any


def load(path: Path) -> dict[tuple[str, int], dict[str, Any]]:
    """``(method, fold) -> run record`` of a compare run's results.json (gzipped or not)."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        data = json.load(f)
    return {(r["method"], r["fold"]): r for r in data["results"]}


def tuning_of(run: dict[str, Any]) -> dict[str, Any]:
    tuning = (run.get("info") or {}).get("tuning")
    if not tuning:
        raise SystemExit(f"{run['method']} fold {run['fold']}: no tuning record (was the run made with --tune?)")
    return tuning


def chosen_value(run: dict[str, Any]) -> float:
    tuning = tuning_of(run)
    best = tuning["best_trial"]
    return next(float(t["value"]) for t in tuning["trials"] if t["number"] == best)


def search(run: dict[str, Any]) -> tuple[int, int, float]:
    """(trials pruned, trials, seconds of all trials) of one (method, fold)."""
    trials = tuning_of(run)["trials"]
    return (sum(t.get("state") == "pruned" for t in trials), len(trials), sum(float(t["seconds"]) for t in trials))


def mean(values: list[float]) -> float:
    return sum(values) / len(values)


def table(a: dict, b: dict, names: tuple[str, str]) -> tuple[str, list[float]]:
    methods = list(dict.fromkeys(m for m, _ in a))
    head = (f"| method | vali chosen, {names[0]} | {names[1]} | test NDCG@10, {names[0]} | {names[1]} | "
            f"test MAP, {names[0]} | {names[1]} | pruned, {names[0]} | {names[1]} | search s per fold, "
            f"{names[0]} | {names[1]} |")
    lines = [head, "|" + "---|" * head.count(" | ") + "---|"]
    drops: list[float] = []
    for m in methods:
        folds = sorted(f for mm, f in a if mm == m and (m, f) in b)
        if not folds:
            continue
        cols: dict[str, list[float]] = defaultdict(list)
        pruned = [[0, 0], [0, 0]]
        for f in folds:
            for i, runs in enumerate((a, b)):
                r = runs[(m, f)]
                cols[f"v{i}"].append(chosen_value(r))
                cols[f"n{i}"].append(float(r["test"]["ndcg@10"]))
                cols[f"m{i}"].append(float(r["test"]["map"]))
                p, n, s = search(r)
                pruned[i][0] += p
                pruned[i][1] += n
                cols[f"s{i}"].append(s)
        drops.append(mean(cols["v0"]) - mean(cols["v1"]))
        lines.append(f"| {m} | " + " | ".join(f"{mean(cols[k]):.4f}" for k in ("v0", "v1", "n0", "n1", "m0", "m1"))
                     + f" | {pruned[0][0]}/{pruned[0][1]} | {pruned[1][0]}/{pruned[1][1]} | "
                     + f"{mean(cols['s0']):.0f} | {mean(cols['s1']):.0f} |")
    return "\n".join(lines), drops


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("first", type=Path)
    ap.add_argument("second", type=Path)
    ap.add_argument("--names", default="first,second", help="the two runs' names in the table's header")
    args = ap.parse_args(argv)
    names = tuple(args.names.split(",", 1))
    text, drops = table(load(args.first), load(args.second), names)  # type: ignore[arg-type]
    print(text)
    print()
    print(f"chosen validation value, {names[1]} minus {names[0]}: mean {0.0 - mean(drops) + 0.0:+.4f} over {len(drops)} "
          f"methods, lower for {sum(d > 0 for d in drops)}, largest drop {max(drops):.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
