"""Does a set need trees? A ridge regression against boosted trees on the MSLR-shaped set's two targets.

On fold 1 of a query-level 5-fold split (``boostplug compare --kfold 5``'s split: a fifth of the
training queries for validation) of ``benchmarks/mslr_shaped.py``'s data at ``--scale`` (default
0.01, the study's), test NDCG@10 of: scikit-learn ``Ridge(alpha=1)`` on the raw features and with
(``trees`` target) the first six columns, its counts, log1p-transformed;
``compare``'s ``linear-ridge`` and ``linear-ranksvm`` at their defaults (standardised features);
CatBoost RMSE and YetiRank, depth 5; LightGBM ``regression``, boostplug ``yetirank`` on LightGBM
and LightGBM ``lambdarank``, 31 leaves. Trees: up to 300 rounds, learning rate 0.05, the round
chosen on validation NDCG@10 (``compare``'s protocol, :func:`boostplug.compare.protocol.run_method`),
one thread. Paired t-test p of each model against the best boosted model, over the test queries.

Usage::

    python benchmarks/needs_trees.py [--scale 0.01] [--targets linear,trees] [--rounds 300]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from mslr_shaped import N_COUNTS, TARGETS, generate  # noqa: E402

from boostplug.compare.data import file_folds  # noqa: E402
from boostplug.compare.methods import Method  # noqa: E402
from boostplug.compare.protocol import run_method  # noqa: E402
from boostplug.compare.stats import paired_tests  # noqa: E402
from boostplug.compare.conventions import Conventions  # noqa: E402

MODELS = {
    "CatBoost RMSE, depth 5": Method("cb-rmse", "catboost", "RMSE", {"depth": 5}),
    "CatBoost YetiRank, depth 5": "cb-yetirank[depth=5]",
    "LightGBM regression, 31 leaves": "regression",
    "boostplug yetirank on LightGBM, 31 leaves": "yetirank",
    "LightGBM lambdarank, 31 leaves": "lambdarank",
}
LINEAR = {"linear-ridge (standardised, alpha 1)": "linear-ridge",
          "linear-ranksvm (standardised, C 0.01, 100 pairs per query)": "linear-ranksvm"}


def table(target: str, scale: float, rounds: int) -> None:
    from sklearn.linear_model import Ridge

    data = generate(scale, target=target)
    train, vali, test = file_folds(data, 5, folds=[0])[0]
    print(f"\n## target {target}: {data.n_docs:,} documents in {data.n_queries} queries; fold 1: train "
          f"{train.n_queries} queries, validation {vali.n_queries}, test {test.n_queries} ({test.n_docs:,} documents)")
    per_query: dict[str, np.ndarray] = {}
    scores = Ridge(alpha=1.0).fit(train.X, train.y).predict(test.X)
    per_query["ridge on the raw features (Ridge(alpha=1))"] = Conventions().metric("ndcg@10")(
        scores, test.y, test.group_ptr, per_query=True)
    if target == "trees":  # its count columns log1p-transformed: is it only their heavy tails?
        logged = [np.hstack([np.log1p(d.X[:, :N_COUNTS]), d.X[:, N_COUNTS:]]) for d in (train, test)]
        scores = Ridge(alpha=1.0).fit(logged[0], train.y).predict(logged[1])
        per_query[f"ridge, the first {N_COUNTS} columns log1p (Ridge(alpha=1))"] = Conventions().metric("ndcg@10")(
            scores, test.y, test.group_ptr, per_query=True)
    boosted = []
    for label, spec in {**LINEAR, **MODELS}.items():
        name, method = (spec, None) if isinstance(spec, str) else (spec.name, spec)
        r = run_method(name, train, vali, test, rounds=rounds, threads=1, method=method)
        per_query[f"{label} (round {r.best_round})" if spec not in LINEAR.values() else label] = np.asarray(
            r.test_per_query["ndcg@10"])
        if label in MODELS:
            boosted.append(f"{label} (round {r.best_round})")
    best = max(boosted, key=lambda k: np.nanmean(per_query[k]))
    print(f"| model | NDCG@10 | against the best boosted ({best.split(' (round')[0]}) |\n|---|---:|---|")
    for label, v in per_query.items():
        t = paired_tests(v, per_query[best])
        print(f"| {label} | {np.nanmean(v):.4f} | " + ("" if label == best else f"{t.mean_diff:+.4f}, p {t.t_pvalue:.2g}")
              + " |", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", type=float, default=0.01)
    ap.add_argument("--targets", default="linear,trees", help=f"comma-separated: {', '.join(TARGETS)}")
    ap.add_argument("--rounds", type=int, default=300)
    args = ap.parse_args()
    for target in args.targets.split(","):
        table(target, args.scale, args.rounds)


if __name__ == "__main__":
    main()
