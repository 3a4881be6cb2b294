"""What a JaxLoss's Hessian mode costs in quality: test NDCG@10 of each mode on LightGBM's trees,
beside the exact |diagonal| (``exact_abs``), untuned (LightGBM's defaults: 31 leaves, learning rate 0.1),
the round chosen on the validation fold's NDCG@10 (or the last, on the example), one thread.

Modes: ``exact_abs``, ``stochastic`` with 1, 2 and 4 probes (``stochastic1`` ...), ``constant`` and
``mean_abs_gradient``. Per loss and mode: mean test NDCG@10 over the folds' test queries, and the paired t-test of
each mode against ``exact_abs`` over those queries (the same queries, fold for fold).

Usage: python benchmarks/autodiff_quality.py [--sets example,mq2008] [--folds 1,2,3,4,5]
           [--losses jax_approx_ndcg,approx_ap,neural_ndcg] [--modes exact_abs,stochastic1,...] [--rounds 100]
       python benchmarks/autodiff_quality.py --tiny     # two modes on the example, 5 rounds: that it runs
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import lightgbm as lgb  # noqa: E402
from scipy import stats  # noqa: E402

from boostplug import data as bpdata  # noqa: E402
from boostplug import lightgbm as bpl  # noqa: E402
from boostplug import metrics  # noqa: E402
from boostplug.autodiff import loss as jax_loss  # noqa: E402
from boostplug.objectives import HessianFloorWarning  # noqa: E402
from tests.autodiff.losses import JaxApproxNDCG  # noqa: E402

MQ2008 = ROOT.parent / "shared" / "data" / "MQ2008"
LOSSES = {"jax_approx_ndcg": JaxApproxNDCG, "approx_ap": "approx_ap", "neural_ndcg": "neural_ndcg"}
MODES = ("exact_abs", "stochastic1", "stochastic2", "stochastic4", "constant", "mean_abs_gradient")


def per_query_ndcg(booster: lgb.Booster, d: bpdata.RankingData, iteration: int) -> np.ndarray:
    return metrics.ndcg(booster.predict(d.X, num_iteration=iteration), d.y, d.group_ptr, k=10, per_query=True)


def train(loss: object, mode: str, tr: bpdata.RankingData, va: bpdata.RankingData | None, rounds: int) -> tuple:
    hessian, probes = (mode[:10], int(mode[10:])) if mode.startswith("stochastic") else (mode, None)
    if probes is not None:
        jax_loss.PROBES = probes
    params = {"objective": bpl.objective(loss, hessian=hessian), "verbose": -1, "num_threads": 1, "metric": "None"}
    booster = lgb.train(params, bpl.dataset(tr.X, tr.y, group_ptr=tr.group_ptr), num_boost_round=rounds)
    if va is None:
        return booster, rounds
    curve = [per_query_ndcg(booster, va, i).mean() for i in range(1, rounds + 1)]
    return booster, int(np.argmax(curve)) + 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sets", default="example,mq2008")
    ap.add_argument("--folds", default="1,2,3,4,5")
    ap.add_argument("--losses", default="jax_approx_ndcg,approx_ap")
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--tiny", action="store_true")
    args = ap.parse_args(argv)
    if args.tiny:
        args.sets, args.losses, args.modes, args.rounds = "example", "jax_approx_ndcg", "exact_abs,stochastic2", 5
    warnings.simplefilter("ignore", HessianFloorWarning)
    modes = args.modes.split(",")
    for name in args.sets.split(","):
        if name == "example":
            tr, te = bpdata.load_example()
            splits = [(tr, None, te)]
        elif not MQ2008.exists():
            print(f"{name}: {MQ2008} not found, skipped")
            continue
        else:
            folds = bpdata.load_letor_folds(MQ2008, "letor4")
            splits = [folds[int(f) - 1] for f in args.folds.split(",")]
        for loss_name in args.losses.split(","):
            scores: dict[str, np.ndarray] = {}
            for mode in modes:
                per_query, chosen = [], []
                for tr, va, te in splits:
                    booster, best = train(LOSSES[loss_name], mode, tr, va, args.rounds)
                    per_query.append(per_query_ndcg(booster, te, best))
                    chosen.append(best)
                scores[mode] = np.concatenate(per_query)
                line = f"{name:8} {loss_name:16} {mode:12} NDCG@10 {scores[mode].mean():.4f}  rounds {chosen}"
                if mode != "exact_abs" and "exact_abs" in scores:
                    diff = scores[mode] - scores["exact_abs"]
                    p = stats.ttest_rel(scores[mode], scores["exact_abs"]).pvalue if np.any(diff) else 1.0
                    line += f"  vs exact_abs {diff.mean():+.4f} (p {p:.3f})"
                print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
