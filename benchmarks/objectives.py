"""Speed of the boostplug objectives, as ratios measured within one run.

For each objective and framework, on (a) MQ2008 Fold1 train (if ../shared/data is there) and
(b) a synthetic MSLR-WEB10K-sized set (6,000 queries of 20-400 documents, sizes
20 + Exponential(100) clipped at 400 like MSLR's skewed query sizes: ~705,000 documents;
136 features, 20 informative; labels 0-4), prints:

* seconds per gradient call: the prepared kernel (``prepare`` once, then ``grad_hess``) and the
  whole adapter call the framework makes (reading labels/groups off the Dataset/DMatrix, checking
  the binding, the kernel); best of a few calls;
* training seconds for ``--rounds`` rounds, and that time as a ratio to the same training with
  the framework's plain built-in regression objective (the floor no custom objective can beat),
  with squared error passed as a Python callable (the floor of any custom objective: the callback,
  float32 copies, no constant-Hessian shortcut), with the built-in LambdaMART (LightGBM
  ``lambdarank``, XGBoost ``rank:ndcg``) and with the *free callable*: a Python callable that
  returns the objective's own gradients, recorded in a first training, round by round. The free
  callable grows the same trees as the objective at no cost for the gradients, so ``/ free`` is
  what computing them adds; ``/ callable`` also carries the difference between the trees grown
  from squared-error gradients and from ranking ones. Last, the share of the training time spent
  inside our objective callable.

The machine may be shared and noisy: every configuration is trained ``--repeat`` times,
interleaved (floor, built-in, each objective, then again), the ratios are formed within each
repetition and the medians are printed. Training data are built once and reused by every run.

Usage: python benchmarks/objectives.py [--rounds 30] [--repeat 3] [--threads 1]
                                       [--only synthetic|mq2008] [--frameworks lightgbm,xgboost]
                                       [--objectives name,name,...]   (default: every registered one)
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np
from _timing import call_seconds

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import lightgbm as lgb  # noqa: E402
import numba  # noqa: E402
import xgboost as xgb  # noqa: E402

from boostplug import data as bpdata  # noqa: E402
from boostplug import lightgbm as bpl  # noqa: E402
from boostplug import objectives  # noqa: E402
from boostplug import xgboost as bpx  # noqa: E402

MQ2008 = ROOT.parent / "shared" / "data" / "MQ2008"
TREE = {"learning_rate": 0.1, "num_leaves": 31, "min_data_in_leaf": 20, "max_bin": 255}
FRAMEWORK_NAMES = {"lightgbm": ("regression", "lambdarank"), "xgboost": ("reg:squarederror", "rank:ndcg")}


#: ``--objectives`` label -> (registered name, settings)
SPECS: dict[str, tuple[str, dict[str, Any]]] = {}


def best_of(fn: Callable[[], Any], repeat: int = 5) -> float:
    return min(call_seconds(fn, repeat))


class Timed:
    """Wraps a framework objective callable and adds up the seconds spent inside it."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        self.seconds = 0.0

    def __deepcopy__(self, memo: dict[int, Any]) -> "Timed":
        return self  # lgb.train deep-copies its params: keep counting in this object

    def __call__(self, *args: Any) -> Any:
        t0 = time.perf_counter()
        out = self.fn(*args)
        self.seconds += time.perf_counter() - t0
        return out


class Framework:
    """One framework's training set (built once) and a timed training run."""

    def __init__(self, name: str, d: bpdata.RankingData, threads: int) -> None:
        self.name, self.threads = name, threads
        self.floor_name, self.builtin_name = FRAMEWORK_NAMES[name]
        if name == "lightgbm":
            self.data = bpl.dataset(d.X, d.y, group_ptr=d.group_ptr,
                                    params={"max_bin": TREE["max_bin"], "verbose": -1}, free_raw_data=False)
            self.data.construct()
        else:
            self.data = bpx.dmatrix(d.X, d.y, group_ptr=d.group_ptr, nthread=threads)

    def objective(self, label: str) -> Callable[..., Any]:
        name, params = SPECS[label]
        return (bpl.objective if self.name == "lightgbm" else bpx.objective)(name, **params)

    def train(self, objective: str | Callable[..., Any], rounds: int) -> float:
        t0 = time.perf_counter()
        if self.name == "lightgbm":
            params = {**TREE, "objective": objective, "verbose": -1, "num_threads": self.threads, "seed": 0}
            lgb.train(params, self.data, num_boost_round=rounds)
        else:
            params: dict[str, Any] = {"eta": TREE["learning_rate"], "max_leaves": TREE["num_leaves"],
                                      "grow_policy": "lossguide", "max_depth": 0, "max_bin": TREE["max_bin"],
                                      "tree_method": "hist", "nthread": self.threads, "seed": 0}
            obj = None
            if callable(objective):
                obj, params = objective, bpx.params(**params)
            else:
                params["objective"] = objective
            xgb.train(params, self.data, num_boost_round=rounds, obj=obj)
        return time.perf_counter() - t0


class Recorded(Timed):
    """A :class:`Timed` objective that also keeps what it returns, round by round."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        super().__init__(fn)
        self.rounds: list[tuple[Any, Any]] = []

    def __call__(self, *args: Any) -> Any:
        grad, hess = super().__call__(*args)
        self.rounds.append((np.array(grad, copy=True), np.array(hess, copy=True)))
        return grad, hess


class Replayed:
    """The free callable: returns the recorded gradients of round ``i`` at its ``i``-th call."""

    def __init__(self, rounds: list[tuple[Any, Any]]) -> None:
        self.rounds = rounds
        self.i = 0

    def __deepcopy__(self, memo: dict[int, Any]) -> "Replayed":
        return self

    def __call__(self, *args: Any) -> Any:
        out = self.rounds[self.i]
        self.i += 1
        return out


def squared_error(preds: np.ndarray, data: Any) -> tuple[np.ndarray, np.ndarray]:
    """Plain squared error as a Python callable (LightGBM and XGBoost call it alike): the floor
    of *any* custom objective, which pays the callback, the float32 copies and the loss of the
    frameworks' constant-Hessian shortcuts but no ranking math."""
    p = np.asarray(preds, dtype=np.float64).reshape(-1)
    return p - data.get_label(), np.ones_like(p)


def grad_seconds(name: str, d: bpdata.RankingData, fws: list[Framework]) -> list[float]:
    """Seconds per call: the prepared kernel, then each framework's full adapter call."""
    prep = objectives.get(SPECS[name][0]).prepare(d.y, d.group_ptr, **SPECS[name][1])
    scores = np.random.default_rng(0).normal(size=d.n_docs)
    prep.grad_hess(scores)  # compile / warm up
    out = [best_of(lambda: prep.grad_hess(scores))]
    preds = scores.astype(np.float32)
    for fw in fws:
        obj = fw.objective(name)
        obj(preds, fw.data)  # binds once, as in the first boosting round
        out.append(best_of(lambda: obj(preds, fw.data)))
    return out


def mode_seconds(d: bpdata.RankingData, names: list[str]) -> None:
    """Kernel seconds per call for every Hessian mode of every objective, and QBRank's exact
    line search (``qbrank.line_search``, Algorithm 2 step 2) along the negative gradient."""
    from boostplug.objectives import qbrank

    scores = np.random.default_rng(0).normal(size=d.n_docs)
    print("\nkernel seconds per grad_hess call by Hessian mode (best of 5)")
    for name in names:
        obj = objectives.get(SPECS[name][0])
        for mode in obj.hessians:
            # a single-mode objective declares no 'hessian' parameter (lambdarank, the lambda family)
            prep = obj.prepare(d.y, d.group_ptr, **SPECS[name][1],
                               **({"hessian": mode} if len(obj.hessians) > 1 else {}))
            prep.grad_hess(scores)
            print(f"  {name:<12} {mode:<8} {best_of(lambda: prep.grad_hess(scores)):8.4f}", flush=True)
    if "qbrank" not in names:
        return
    prep = objectives.get("qbrank").prepare(d.y, d.group_ptr)
    step = -prep.grad_hess(scores)[0]
    qbrank.line_search(prep, scores, step)
    print(f"  qbrank line search along -grad: {best_of(lambda: qbrank.line_search(prep, scores, step)):.4f} s")


def mslr_sized(seed: int = 0) -> bpdata.RankingData:
    """6,000 queries, sizes 20 + Exponential(100) in [20, 400] (~705,000 documents), 136 features, labels 0-4."""
    rng = np.random.default_rng(seed)
    sizes = np.clip(20 + rng.exponential(100, size=6000).astype(np.int64), 20, 400)
    n = int(sizes.sum())
    # make_ranking draws the features and grades (global quantiles); the query cut is ours.
    one = bpdata.make_ranking(n_queries=1, docs_per_query=n, n_features=136, n_informative=20, n_labels=5,
                              noise=1.0, seed=seed)
    group_ptr = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    return bpdata.RankingData(one.X, one.y, np.repeat(np.arange(sizes.shape[0]), sizes), group_ptr)


def bench(label: str, d: bpdata.RankingData, rounds: int, repeat: int, fw_names: list[str], threads: int,
          names: list[str]) -> None:
    print(f"\n## {label}: {d.n_docs:,} documents, {d.n_queries:,} queries, {d.n_features} features, "
          f"{rounds} rounds, {threads} thread(s), median of {repeat} interleaved repetitions", flush=True)
    fws = [Framework(n, d, threads) for n in fw_names]
    print("\nseconds per gradient call (best of 5): kernel = prepared grad_hess; "
          + ", ".join(f"{fw.name} = the adapter call {fw.name} makes" for fw in fws))
    print(f"  {'objective':<12} {'kernel':>8} " + " ".join(f"{fw.name:>9}" for fw in fws))
    for n in names:
        secs = grad_seconds(n, d, fws)
        print(f"  {n:<12} " + " ".join(f"{s:8.4f}" + " " * (i > 0) for i, s in enumerate(secs)), flush=True)
    mode_seconds(d, names)
    for fw in fws:
        recorded = {}
        for n in names:  # also the warm-up (first touch, thread pools)
            rec = Recorded(fw.objective(n))
            fw.train(rec, rounds)
            recorded[n] = rec.rounds
        # the frameworks' own objectives under keys of their own: a registered objective may share a
        # built-in's name (the plugin "lambdarank"), and its runs must not mix with the built-in's
        floor_key, builtin_key = f"built-in {fw.floor_name}", f"built-in {fw.builtin_name}"
        runs: dict[str, list[float]] = {k: [] for k in [floor_key, builtin_key, "custom", *names]}
        free: dict[str, list[float]] = {n: [] for n in names}
        inside: dict[str, list[float]] = {n: [] for n in names}
        for _ in range(repeat):
            for key, builtin in ((floor_key, fw.floor_name), (builtin_key, fw.builtin_name)):
                runs[key].append(fw.train(builtin, rounds))
            runs["custom"].append(fw.train(squared_error, rounds))
            for n in names:
                timed = Timed(fw.objective(n))
                runs[n].append(fw.train(timed, rounds))
                inside[n].append(timed.seconds)
                free[n].append(fw.train(Replayed(recorded[n]), rounds))
        del recorded
        floor, builtin, custom = runs[floor_key], runs[builtin_key], runs["custom"]
        med = statistics.median
        print(f"\n{fw.name}: {fw.floor_name} {med(floor):.2f} s, {fw.builtin_name} {med(builtin):.2f} s "
              f"({med([b / f for b, f in zip(builtin, floor)]):.2f}x the floor), squared error as a Python "
              f"callable {med(custom):.2f} s ({med([c / f for c, f in zip(custom, floor)]):.2f}x the floor)   "
              f"[all runs: {fw.floor_name} {' '.join(f'{s:.2f}' for s in floor)}; "
              f"{fw.builtin_name} {' '.join(f'{s:.2f}' for s in builtin)}; "
              f"callable {' '.join(f'{s:.2f}' for s in custom)}]")
        print(f"  {'objective':<12} {'seconds':>8} {'/ ' + fw.floor_name:>20} {'/ callable':>11} "
              f"{'/ ' + fw.builtin_name:>14} {'/ free':>7} {'in objective':>13}   all ratios to the floor; "
              f"to the free callable")
        for n in names:
            s = runs[n]
            to_floor = [a / f for a, f in zip(s, floor)]
            to_custom = [a / c for a, c in zip(s, custom)]
            to_builtin = [a / b for a, b in zip(s, builtin)]
            to_free = [a / f for a, f in zip(s, free[n])]
            share = [i / a for i, a in zip(inside[n], s)]
            print(f"  {n:<12} {med(s):8.2f} {med(to_floor):20.2f} {med(to_custom):11.2f} {med(to_builtin):14.2f} "
                  f"{med(to_free):7.2f} {med(share):12.0%}   {' '.join(f'{r:.2f}' for r in to_floor)}; "
                  f"{' '.join(f'{r:.2f}' for r in to_free)}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1, help="framework threads and numba threads")
    ap.add_argument("--only", choices=["synthetic", "mq2008"], default=None)
    ap.add_argument("--frameworks", default="lightgbm,xgboost")
    ap.add_argument("--objectives", default=None,
                    help="comma-separated registered names, each with settings if wanted: "
                         "NAME:KEY=VALUE:KEY=VALUE, e.g. ndcg_loss2pp:truncation_level=30 (default: all)")
    args = ap.parse_args()
    names = objectives.names() if args.objectives is None else [n.strip() for n in args.objectives.split(",")]
    for label in names:
        name, *settings = label.split(":")
        try:
            SPECS[label] = (name, {k: json.loads(v) for k, v in (kv.split("=", 1) for kv in settings)})
        except ValueError:
            ap.error(f"objective {label!r}: settings are KEY=VALUE with a JSON value, e.g. mu=10")
    unknown_objectives = sorted({SPECS[n][0] for n in names} - set(objectives.names()))
    if unknown_objectives or not names:
        ap.error(f"unknown objective(s) {unknown_objectives}; choose from {objectives.names()}")
    fws = [f.strip() for f in args.frameworks.split(",") if f.strip()]
    unknown = sorted(set(fws) - set(FRAMEWORK_NAMES))
    if unknown:
        ap.error(f"unknown framework(s) {unknown}; choose from {sorted(FRAMEWORK_NAMES)}")
    numba.set_num_threads(min(args.threads, numba.config.NUMBA_NUM_THREADS))
    print(f"lightgbm {lgb.__version__}, xgboost {xgb.__version__}, numba {numba.__version__}, "
          f"numba threads {numba.get_num_threads()}")
    if args.only in (None, "mq2008"):
        if MQ2008.exists():
            train, _, _ = bpdata.load_letor_folds(MQ2008, "letor4")[0]
            bench("MQ2008 Fold1 train", train, max(args.rounds, 100), args.repeat, fws, args.threads, names)
        else:
            print(f"MQ2008 not found at {MQ2008}: skipped")
    if args.only in (None, "synthetic"):
        d = mslr_sized()
        bench("synthetic MSLR-WEB10K-sized", d, args.rounds, args.repeat, fws, args.threads, names)


if __name__ == "__main__":
    main()
