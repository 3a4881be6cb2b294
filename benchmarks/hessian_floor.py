"""How often the Hessian floor changes a training: per objective and Hessian mode, the share of rows
the floor raised in each LightGBM round (``Loss.floor_raised``), and ApproxNDCG's test NDCG@10 with
the floor on and off on both frameworks.

    python benchmarks/hessian_floor.py [--rounds 100] [--data example,mq2008,ohsumed] [--approx]

MQ2008 and OHSUMED are read from ../shared/data (Fold1 train; test for NDCG@10); a set that is absent
is skipped. No timing: the shares and metrics of a seeded run do not depend on the machine.
"""
from __future__ import annotations

import argparse
import os
import warnings

import lightgbm as lgb
import numpy as np
import xgboost as xgb

from boostplug import data, metrics, objectives
from boostplug import lightgbm as bpl
from boostplug import xgboost as bpx
from boostplug.objectives import Loss

SHARED = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data")
LETOR = {"mq2008": ("MQ2008", "letor4"), "ohsumed": ("OHSUMED", "letor3")}

shares: list[float] = []
_grad_hess = Loss.grad_hess


def _recording(self, scores, **kwargs):
    out = _grad_hess(self, scores, **kwargs)
    shares.append(self.floor_raised / max(1, len(out[1])))
    return out


def load(name):
    """(train, test) of the example data or of a LETOR set's Fold1; None when absent."""
    if name == "example":
        tr, te = data.load_example()[:2]
        return tr, te
    folder = os.path.join(SHARED, LETOR[name][0])
    if not os.path.isdir(folder):
        return None
    fold = data.load_letor_folds(folder, LETOR[name][1], folds=[0])[0]
    return fold[0], fold[-1]


def summary():
    return f"max share {max(shares):.3f} mean {np.mean(shares):.3f} last {shares[-1]:.3f}"


def every_objective(dname, train, rounds):
    for name in objectives.names():
        entry = objectives.get(name)
        if not entry.defaults.get("hessian_floor", False):
            continue
        for mode in entry.hessian_kinds:
            shares.clear()
            given = {"hessian": mode} if len(entry.hessian_kinds) > 1 else {}
            lgb.train({"objective": bpl.objective(name, **given), "verbose": -1, "num_threads": 2},
                      bpl.dataset(train.X, train.y, group_ptr=train.group_ptr), rounds)
            print(f"{dname:8s} {name:14s} {mode:9s} {summary()}", flush=True)


def approx(dname, train, test, rounds):
    for alpha in (1.0, 10.0):
        for mode in ("surrogate", "exact"):
            for floor in (True, False):
                given = dict(alpha=alpha, hessian=mode, hessian_floor=floor)
                shares.clear()
                b = lgb.train({"objective": bpl.objective("approx_ndcg", **given), "verbose": -1, "num_threads": 2},
                              bpl.dataset(train.X, train.y, group_ptr=train.group_ptr), rounds)
                lgb_share = summary()
                n_l = metrics.ndcg(b.predict(test.X), test.y, test.group_ptr, k=10)
                xb = xgb.train({**bpx.params(), "nthread": 2},
                               bpx.dmatrix(train.X, train.y, group_ptr=train.group_ptr), rounds,
                               obj=bpx.objective("approx_ndcg", **given))
                n_x = metrics.ndcg(xb.predict(xgb.DMatrix(test.X)), test.y, test.group_ptr, k=10)
                print(f"{dname:8s} approx_ndcg alpha={alpha:4} {mode:9s} floor={floor!s:5s} {lgb_share}  "
                      f"test NDCG@10 lgb {n_l:.4f} xgb {n_x:.4f}", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--data", default="example,mq2008,ohsumed")
    ap.add_argument("--approx", action="store_true", help="ApproxNDCG's floor on and off, with test NDCG@10")
    args = ap.parse_args()
    unknown = set(args.data.split(",")) - {"example", *LETOR}
    if unknown:
        ap.error(f"--data: unknown set(s) {sorted(unknown)}; choose among example, {', '.join(LETOR)}")
    warnings.simplefilter("ignore")
    Loss.grad_hess = _recording
    print(f"# hessian_floor.py --rounds {args.rounds} (LightGBM {lgb.__version__}, XGBoost {xgb.__version__}, "
          f"2 threads; share: rows the floor raised in a round)")
    for dname in args.data.split(","):
        sets = load(dname)
        if sets is None:
            print(f"# {dname}: not found under {SHARED}, skipped")
            continue
        if args.approx:
            approx(dname, *sets, args.rounds)
        else:
            every_objective(dname, sets[0], args.rounds)


if __name__ == "__main__":
    main()
