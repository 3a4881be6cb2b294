"""Per fold and loss: the first round at which the Hessian floor raises a row (a row with gradient and Hessian
both 0 is not counted: the floor gives it the no-information Hessian), training as compare's defaults do, against
the round compare chose on validation (results.csv beside this script)."""
import csv
import warnings
from pathlib import Path

import lightgbm as lgb
import numpy as np

warnings.simplefilter("ignore")
from boostplug import data as bpdata, objectives
from boostplug.objectives import floor_hessian, HESSIAN_FLOOR
HERE = Path(__file__).resolve().parent
folds = bpdata.load_letor_folds(HERE.parents[2].parent / "shared" / "data" / "MQ2008", "letor4")
chosen = {(r["method"], int(r["fold"])): int(r["best_round"]) for r in csv.DictReader(open(HERE / "results.csv"))}
for name in ("lambdamart_map", "lambdamart_mrr"):
    for f, (tr, va, te) in enumerate(folds, 1):
        prep = objectives.get(name).prepare(tr.y, tr.group_ptr, hessian_floor=False)
        raised = []
        def obj(preds, ds):
            g, h = prep.grad_hess(np.asarray(preds, dtype=np.float64))
            raised.append(int(np.sum((h < HESSIAN_FLOOR) & ~((h == 0) & (g == 0)))))
            return g, floor_hessian(g, h)
        ds = lgb.Dataset(tr.X, tr.y, group=np.diff(tr.group_ptr))
        lgb.train({"objective": obj, "verbose": -1, "num_threads": 1, "seed": 0, "learning_rate": 0.05, "num_leaves": 31, "min_data_in_leaf": 20, "min_sum_hessian_in_leaf": 0.001, "lambda_l2": 0.0, "feature_fraction": 1.0, "max_bin": 255}, ds, 500)
        r = np.array(raised)
        first = int(np.argmax(r > 0)) + 1 if (r > 0).any() else None
        c = chosen[(name, f)]
        print(f"{name} fold {f}: chosen round {c}; first round with a raised row {first}; rows raised at the chosen round {r[c-1]}, max {r.max()} of {tr.n_docs}", flush=True)
