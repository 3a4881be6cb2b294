"""Speed of a loss written in JAX against the compiled one: ApproxNDCG as a ``JaxLoss`` (the class
of docs/objectives/autodiff.md) beside the registered ``approx_ndcg`` (numba, listwise base).

On MQ2008 Fold1 train (if ../shared/data is there), on ``benchmarks/objectives.py``'s synthetic
MSLR-WEB10K-sized set and on the tuned study's MSLR-shaped set (``benchmarks/mslr_shaped.py``,
``--scale``, default the study's 0.01: queries up to 1,246 documents), prints:

* the compile time of each length bucket (the first call on the bucket's queries less the second),
  for the Hessian modes ``stochastic`` (the default), ``exact_abs`` (the absolute exact diagonal), ``exact``,
  ``constant`` and ``mean_abs_gradient``;
* seconds per LightGBM round (``--rounds`` rounds after a warm-up training that compiles): the
  compiled ``approx_ndcg`` (its default surrogate Hessian) and the JAX one with each Hessian mode;
  the ratios to the compiled one. The exact_abs and
  exact modes cost ``L`` gradient passes per query of bucket length ``L`` (forward over reverse);
  the constant mode (a Hessian of 1: Friedman's least-squares boosting) and the mean_abs_gradient one
  (the query's mean absolute gradient) make no Hessian pass;
* ``--script``: the same ApproxNDCG defined in this script (``ScriptApproxNDCG``, a ``__main__`` class,
  which LightGBM's copy of its parameters pickles by value at every ``lgb.train``) against the compiled
  ``approx_ndcg``, default Hessian: each a fresh ``lgb.train`` of ``--rounds`` rounds (its first round
  included, where a loss traced again would pay for it), the two interleaved, best of ``--repeats``, the
  ratio of the bests.

Usage: python benchmarks/autodiff.py [--rounds 20] [--threads 1] [--only mq2008|ohsumed|synthetic|mslr_shaped]
           [--hessians constant,...] [--scale 0.01] [--no-compile-table] [--script [--repeats 5]]
       python benchmarks/autodiff.py --tiny        # a small synthetic set, 2 rounds: that it runs
"""

from __future__ import annotations

import argparse
import sys
import time
import types
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import lightgbm as lgb  # noqa: E402

from boostplug import data as bpdata  # noqa: E402
from boostplug import lightgbm as bpl  # noqa: E402
import jax  # noqa: E402, F401 - the globals of ScriptApproxNDCG.query_loss
import jax.numpy as jnp  # noqa: E402, F401

from boostplug.autodiff import JaxLoss  # noqa: E402
from boostplug.autodiff.loss import bucket_length  # noqa: E402
from boostplug.objectives import HessianFloorWarning  # noqa: E402
from tests.autodiff.losses import JaxApproxNDCG  # noqa: E402

MQ2008 = ROOT.parent / "shared" / "data" / "MQ2008"


MODES = ("stochastic", "exact_abs", "exact", "constant", "mean_abs_gradient")
#: the JAX loss timed (--loss): the docs' ApproxNDCG (beside its compiled twin) or the catalogue's NeuralNDCG
LOSS = [JaxApproxNDCG]


class ScriptApproxNDCG(JaxLoss):
    """The ApproxNDCG of docs/objectives/autodiff.md as a user's script defines it: its query_loss a function of
    this ``__main__`` module (the code of tests/autodiff/losses.py's, with this module's globals)."""

    name = "script_approx_ndcg"
    summary = "ApproxNDCG (Qin, Liu and Li 2010) in JAX, defined in a script"
    params = JaxApproxNDCG.params
    query_loss = staticmethod(types.FunctionType(JaxApproxNDCG.query_loss.__code__, globals(), "query_loss"))


def script_ratio(d: bpdata.RankingData, rounds: int, threads: int, repeats: int) -> None:
    """Seconds per round of fresh ``lgb.train`` calls: the compiled approx_ndcg and ScriptApproxNDCG
    (default Hessian), interleaved, after one warm-up training each; the best of ``repeats``, and their ratio."""
    params = {"verbose": -1, "num_threads": threads, "metric": "None", "learning_rate": 0.1, "num_leaves": 31}
    runs = {"approx_ndcg (compiled)": lambda: bpl.objective("approx_ndcg"),
            "ScriptApproxNDCG (script)": lambda: bpl.objective(ScriptApproxNDCG)}
    best = dict.fromkeys(runs, float("inf"))
    for repeat in range(repeats + 1):
        for name, objective in runs.items():
            t0 = time.perf_counter()
            lgb.train({**params, "objective": objective()}, bpl.dataset(d.X, d.y, group_ptr=d.group_ptr), rounds)
            if repeat:  # the first: a warm-up (compiles)
                best[name] = min(best[name], (time.perf_counter() - t0) / rounds)
    print(f"  {'objective':<26} {'s / round (best of ' + str(repeats) + ')':>24}")
    for name, s in best.items():
        print(f"  {name:<26} {s:24.4f}")
    print(f"  ratio script / compiled: {best['ScriptApproxNDCG (script)'] / best['approx_ndcg (compiled)']:.2f}",
          flush=True)


def compile_seconds(d: bpdata.RankingData, modes: tuple[str, ...]) -> None:
    """Per bucket and mode: the first grad_hess on the bucket's queries less the second."""
    sizes = np.diff(d.group_ptr)
    lengths = np.array([bucket_length(n) for n in sizes])
    print(f"  {'bucket':>6} {'queries':>8} " + " ".join(f"{m + ': compile':>18} {'call':>7}" for m in modes))
    for length in np.unique(lengths[sizes >= 2]):
        q = np.flatnonzero((lengths == length) & (sizes >= 2))
        rows = np.concatenate([np.arange(d.group_ptr[k], d.group_ptr[k + 1]) for k in q])
        ptr = np.concatenate([[0], np.cumsum(sizes[q])]).astype(np.int64)
        scores = np.random.default_rng(0).normal(size=rows.size)
        cells = []
        for mode in modes:
            loss = LOSS[0](d.y[rows], ptr, hessian=mode)
            t0 = time.perf_counter()
            loss.grad_hess(scores)
            t1 = time.perf_counter()
            loss.grad_hess(scores)
            t2 = time.perf_counter()
            cells.append(f"{(t1 - t0) - (t2 - t1):18.2f} {t2 - t1:7.3f}")
        print(f"  {length:6d} {q.size:8d} " + " ".join(cells), flush=True)


def round_seconds(d: bpdata.RankingData, rounds: int, threads: int, modes: tuple[str, ...]) -> None:
    """Seconds per LightGBM round of each objective, after a one-round warm-up (compiles)."""
    train_set = bpl.dataset(d.X, d.y, group_ptr=d.group_ptr)
    params = {"verbose": -1, "num_threads": threads, "metric": "None", "learning_rate": 0.1, "num_leaves": 31}
    loss = LOSS[0].__name__
    runs = {"approx_ndcg (compiled)": bpl.objective("approx_ndcg"),
            **{f"{loss} {m}": bpl.objective(LOSS[0], hessian=m) for m in modes}}
    seconds = {}
    for name, objective in runs.items():
        lgb.train({**params, "objective": objective}, train_set, 1)  # warm-up: compiles
        t0 = time.perf_counter()
        lgb.train({**params, "objective": objective}, train_set, rounds)
        seconds[name] = (time.perf_counter() - t0) / rounds
    base = seconds["approx_ndcg (compiled)"]
    constant = seconds.get(f"{loss} constant")
    print(f"  {'objective':<24} {'s / round':>10} {'/ compiled':>11}" + (f" {'/ constant':>11}" if constant else ""))
    for label, s in seconds.items():
        print(f"  {label:<24} {s:10.4f} {s / base:11.2f}" + (f" {s / constant:11.2f}" if constant else ""),
              flush=True)


def bench(label: str, d: bpdata.RankingData, rounds: int, threads: int, modes: tuple[str, ...] = MODES,
          compiles: bool = True, script: int = 0) -> None:
    print(f"\n## {label}: {d.n_docs:,} documents, {d.n_queries:,} queries (up to {np.diff(d.group_ptr).max():,} "
          f"documents), {rounds} rounds, {threads} thread(s)")
    if script:
        print("\nper round of a fresh lgb.train: a JaxLoss defined in this script against the compiled one")
        script_ratio(d, rounds, threads, script)
        return
    if compiles:
        print("\ncompile seconds per bucket (first call less the second; call: the second, seconds)")
        compile_seconds(d, modes)
    print("\nper LightGBM round")
    round_seconds(d, rounds, threads, modes)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--only", choices=("mq2008", "ohsumed", "synthetic", "mslr_shaped"), default=None)
    ap.add_argument("--scale", type=float, default=0.01, help="the MSLR-shaped set's scale (default 0.01)")
    ap.add_argument("--no-compile-table", dest="compiles", action="store_false",
                    help="only the seconds per round (the per-bucket compile table calls every mode twice)")
    ap.add_argument("--hessians", default=",".join(MODES),
                    help=f"the JAX Hessian modes to time, comma-separated (default: {','.join(MODES)})")
    ap.add_argument("--loss", choices=("jax_approx_ndcg", "neural_ndcg"), default="jax_approx_ndcg",
                    help="the JAX loss timed beside the compiled approx_ndcg (default: the docs' JaxApproxNDCG)")
    ap.add_argument("--script", action="store_true",
                    help="only the script-defined ApproxNDCG against the compiled one, interleaved (see above)")
    ap.add_argument("--repeats", type=int, default=5, help="--script: timed trainings of each (default 5)")
    ap.add_argument("--tiny", action="store_true", help="a small synthetic set and 2 rounds: that the script runs")
    args = ap.parse_args(argv)
    modes = tuple(m for m in args.hessians.split(",") if m)
    if not modes or set(modes) - set(MODES):
        ap.error(f"--hessians: a comma-separated list of {', '.join(MODES)}, got {args.hessians!r}")
    if args.loss == "neural_ndcg":
        from boostplug.autodiff.neural_ndcg import NeuralNDCG

        LOSS[0] = NeuralNDCG
    warnings.simplefilter("ignore", HessianFloorWarning)  # the exact mode's negative Hessians, floored
    script = args.repeats if args.script else 0
    if args.tiny:
        bench("tiny synthetic", bpdata.make_ranking(n_queries=20, docs_per_query=(2, 20), n_features=5, seed=0), 2,
              args.threads, modes, script=args.repeats if args.script else 0)
        return 0
    if args.only in (None, "mq2008"):
        if MQ2008.exists():
            train, _, _ = bpdata.load_letor_folds(MQ2008, "letor4")[0]
            bench("MQ2008 Fold1 train", train, args.rounds, args.threads, modes, args.compiles, script)
        else:
            print(f"MQ2008 not found at {MQ2008}: skipped")
    if args.only == "ohsumed":  # OHSUMED Fold1 train (LETOR 3.0): 63 queries of up to 320 documents
        train, _, _ = bpdata.load_letor_folds(MQ2008.parent / "OHSUMED", "letor3")[0]
        bench("OHSUMED Fold1 train", train, args.rounds, args.threads, modes, args.compiles, script)
    if args.only in (None, "synthetic"):
        sys.path.insert(0, str(ROOT / "benchmarks"))
        from objectives import mslr_sized

        bench("synthetic (MSLR-WEB10K-sized)", mslr_sized(), args.rounds, args.threads, modes, args.compiles, script)
    if args.only == "mslr_shaped":
        sys.path.insert(0, str(ROOT / "benchmarks"))
        from mslr_shaped import generate

        bench(f"MSLR-shaped, scale {args.scale}", generate(args.scale), args.rounds, args.threads, modes,
              args.compiles, script)
    return 0


if __name__ == "__main__":
    sys.exit(main())
