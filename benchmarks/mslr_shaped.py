"""Training cost at MSLR-WEB30K's size: every paper objective against the frameworks' built-ins.

Synthetic data with MSLR-WEB30K's shape (``--scale 1``: 3,771,125 documents in 31,531 queries,
log-normal query sizes from 1 to 1,251, mean 119.6; 136 Gaussian features with three decimals,
20 of them informative; grades 0-4 with MSLR's skew: about half the documents 0, 3% grades 3-4).
Stages, each in its own process so that its peak memory is its own:

* ``data``: generate, write a LETOR file (``boostplug.data.write_letor``), read it back
  (``load_letor``, dense) and check it equals what was written: seconds and peak resident memory
  (``read``: only read back the file an earlier ``data`` stage wrote).
* ``train``: per framework, one process builds the training set once and trains ``--rounds``
  rounds with each method, ``--repeat`` times interleaved (every method once, then again), after
  one warm-up round each. Methods: the framework's ``regression`` floor, its LambdaMART
  (LightGBM ``lambdarank``, XGBoost ``rank:ndcg``), squared error as a Python callable (the
  zero-cost custom objective: the floor every custom objective pays for the callback and the
  copies) and the paper objectives. Per run: training seconds, the share spent inside the
  objective callable, the run's peak resident memory (``VmHWM`` reset before each run), and the
  CPU seconds of the OpenMP worker threads while boostplug's callable ran and while the framework
  ran (a pool whose workers burn CPU while the other side works is spinning). Ratios are formed
  within each repetition; the table gives their median and spread (max/min).
* ``compare``: ``boostplug compare`` on the LETOR file, one fold of a query-level 5-fold split.

``--settings`` runs the train stage once per thread-pool setting (``default``; ``passive``:
``OMP_WAIT_POLICY=PASSIVE``; ``spin``: ``OMP_WAIT_POLICY=ACTIVE``; ``numba1``: boostplug's
kernels serial, ``NUMBA_NUM_THREADS=1``).

``--target``: the labels (:func:`generate`): ``trees`` (default) need trees; ``linear``, the first
studies' set, is linear in 20 features.

Usage::

    python benchmarks/mslr_shaped.py --work /tmp/mslr [--scale 1] [--target trees|linear] [--stages data,train,compare]
        [--rounds 50] [--repeat 3] [--frameworks lightgbm,xgboost] [--settings default]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np
from _process_memory import peak_gib, reset_peak, status_kib

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

N_QUERIES, N_DOCS, MAX_SIZE, N_FEATURES, N_INFORMATIVE = 31_531, 3_771_125, 1_251, 136, 20
GRADE_SHARES = (0.52, 0.32, 0.13, 0.02, 0.01)
TREE = {"learning_rate": 0.1, "num_leaves": 31, "min_data_in_leaf": 20, "max_bin": 255}
SETTINGS = {"default": {}, "passive": {"OMP_WAIT_POLICY": "PASSIVE"}, "spin": {"OMP_WAIT_POLICY": "ACTIVE"},
            "numba1": {"NUMBA_NUM_THREADS": "1"}, "spin10k": {"GOMP_SPINCOUNT": "10000"}}
PAPER = {"qbrank": ("qbrank", {}),
         **{f"mpboost-{d}": ("mpboost", {"ddf": d}) for d in ("binary", "ldd", "logdd", "logitdd")},
         "rankboost": ("rankboost", {}), "ndcg_boost": ("ndcg_boost", {})}
BUILTIN = {"lightgbm": ("regression", "lambdarank"), "xgboost": ("reg:squarederror", "rank:ndcg")}
COMPARE_METHODS = "lambdarank,regression,qbrank,mpboost-logitdd,ndcg_boost,rankboost-loss,xgb-rank:ndcg"


# ---- process measurements -----------------------------------------------------------------------
def trim() -> None:
    """Return freed heap to the system, so that one run's peak does not start on another's leftovers."""
    gc.collect()
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except OSError:
        pass


def thread_cpu() -> dict[int, float]:
    """CPU seconds (user + system) of every thread of this process."""
    tick = os.sysconf("SC_CLK_TCK")
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            out[int(tid)] = (int(fields[11]) + int(fields[12])) / tick
        except (OSError, IndexError):
            continue
    return out


def cpu_of(threads: set[int], before: dict[int, float], after: dict[int, float]) -> float:
    return sum(after.get(t, 0.0) - before.get(t, 0.0) for t in threads)


# ---- data ---------------------------------------------------------------------------------------
def query_sizes(rng: np.random.Generator, n_queries: int, n_docs: int) -> np.ndarray:
    """Log-normal sizes, clipped to [1, 1251], summing to ``n_docs``, the largest exactly 1,251."""
    s = rng.lognormal(4.45, 0.75, size=n_queries)
    s = np.clip(np.round(s * n_docs / s.sum()), 1, MAX_SIZE).astype(np.int64)
    s[np.argmax(s)] = MAX_SIZE
    while s.sum() != n_docs:
        d = int(n_docs - s.sum())
        idx = rng.choice(n_queries, size=abs(d), replace=True)
        np.add.at(s, idx, np.sign(d))
        s = np.clip(s, 1, MAX_SIZE)
    return s


#: The ``trees`` target's informative columns: heavy-tailed counts first, then Gaussian ones, then the
#: query-level column (a query's type, one value per query).
N_COUNTS, N_SMOOTH, N_TREES, TREE_DEPTH = 6, 5, 40, 3
TARGETS = ("trees", "linear")


def generate(scale: float, seed: int = 0, target: str = "trees"):
    """MSLR-WEB30K-shaped data: the query sizes and grade shares of :func:`query_sizes` and
    :data:`GRADE_SHARES`, 136 features, a latent relevance cut into grades 0-4 at its quantiles.

    ``target="linear"`` (the set of the first studies): the latent is linear in 20 Gaussian features,
    plus a per-query offset and noise; a ridge regression is the right model for it.

    ``target="trees"`` (the default): labels that need trees. The first :data:`N_COUNTS` columns are
    heavy-tailed counts (Pareto, rounded, as web features' term frequencies and link counts are), the
    next :data:`N_SMOOTH` Gaussian, the next one a query-level type (0, 1 or 2, one value per query);
    the rest stay Gaussian noise columns. The latent is a random ensemble of :data:`N_TREES`
    depth-:data:`TREE_DEPTH` trees over those 12 informative columns (each split on a random column
    at a random quantile between the 15th and 85th, each leaf a Gaussian value: thresholds and
    interactions, the query type's with the documents' included), plus monotone non-linear
    effects (a saturating ``log1p`` of the first count, a ``tanh`` step of the first Gaussian
    column), plus a per-query offset (queries differ in their share of relevant documents) and
    noise. Counts enter the latent only through thresholds and ``log1p``, so their heavy tails
    mislead a linear model and not a tree.
    """
    from boostplug.data import RankingData

    if target not in TARGETS:
        raise ValueError(f"target {target!r}: expected one of {TARGETS}")
    rng = np.random.default_rng(seed)
    n_queries = max(1, round(N_QUERIES * scale))
    sizes = query_sizes(rng, n_queries, max(round(N_DOCS * scale), n_queries))
    n = int(sizes.sum())
    X = np.empty((n, N_FEATURES))
    for r0 in range(0, n, 100_000):                 # in blocks: the temporaries stay small
        r1 = min(r0 + 100_000, n)
        X[r0:r1] = np.round(rng.standard_normal((r1 - r0, N_FEATURES)), 3)
    if target == "linear":
        w = rng.uniform(0.5, 1.5, N_INFORMATIVE) * rng.choice([-1.0, 1.0], N_INFORMATIVE)
        latent = X[:, :N_INFORMATIVE] @ (w / np.linalg.norm(w)) + np.repeat(rng.normal(0, 0.5, n_queries), sizes)
        latent += rng.normal(size=n)
    else:
        latent = tree_latent(rng, X, sizes)
    cuts = np.quantile(latent, np.cumsum(GRADE_SHARES)[:-1])
    y = np.searchsorted(cuts, latent).astype(np.float64)
    group_ptr = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    return RankingData(X, y, group_ptr=group_ptr)


def tree_latent(rng: np.random.Generator, X: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """The ``trees`` target's latent relevance (:func:`generate`); writes its count and query-type
    columns into ``X``."""
    n = X.shape[0]
    X[:, :N_COUNTS] = np.floor(rng.pareto(1.2, (n, N_COUNTS)) * rng.uniform(1, 20, N_COUNTS))
    X[:, N_COUNTS + N_SMOOTH] = np.repeat(rng.integers(0, 3, sizes.size), sizes)
    informative = N_COUNTS + N_SMOOTH + 1
    sample = X[rng.choice(n, size=min(n, 20_000), replace=False), :informative]
    latent = np.zeros(n)
    for _ in range(N_TREES):
        node = np.zeros(n, dtype=np.int64)
        for level in range(TREE_DEPTH):
            cols = rng.integers(0, informative, 2**level)
            qs = rng.uniform(0.15, 0.85, 2**level)
            thr = np.array([np.quantile(sample[:, c], q) for c, q in zip(cols, qs)])
            node = 2 * node + (X[np.arange(n), cols[node]] > thr[node])
        latent += rng.normal(size=2**TREE_DEPTH)[node]
    latent /= np.sqrt(N_TREES)
    latent += 0.6 * np.log1p(X[:, 0]) / np.log1p(sample[:, 0]).std() + 0.6 * np.tanh(2 * X[:, N_COUNTS])
    latent += np.repeat(rng.normal(0, 0.5, sizes.size), sizes)
    return latent + 0.7 * rng.normal(size=n)


def stage_write(work: Path, scale: float, target: str) -> dict[str, Any]:
    from boostplug.data import write_letor

    t0 = time.perf_counter()
    d = generate(scale, target=target)
    gen = time.perf_counter() - t0
    np.save(work / "X.npy", d.X)
    np.save(work / "y.npy", d.y)
    np.save(work / "group_ptr.npy", d.group_ptr)
    reset_peak()
    base = status_kib("VmRSS") / 2**20
    t0 = time.perf_counter()
    write_letor(work / "mslr_shaped.txt", d)
    return {"documents": d.n_docs, "queries": d.n_queries, "features": d.n_features,
            "largest_query": int(np.diff(d.group_ptr).max()), "generate_s": gen,
            "write_s": time.perf_counter() - t0, "write_peak_gib": peak_gib(), "write_base_gib": base,
            "file_gib": (work / "mslr_shaped.txt").stat().st_size / 2**30, "X_gib": d.X.nbytes / 2**30}


def stage_read(work: Path) -> dict[str, Any]:
    from boostplug.data import load_letor

    t0 = time.perf_counter()
    d = load_letor(work / "mslr_shaped.txt", n_features=N_FEATURES)
    seconds = time.perf_counter() - t0
    same = (np.array_equal(d.X, np.load(work / "X.npy", mmap_mode="r")) and np.array_equal(d.y, np.load(work / "y.npy"))
            and np.array_equal(d.group_ptr, np.load(work / "group_ptr.npy")))
    return {"read_s": seconds, "read_peak_gib": peak_gib(), "X_gib": d.X.nbytes / 2**30, "equal": bool(same)}


# ---- training -----------------------------------------------------------------------------------
def squared_error(preds: np.ndarray, data: Any) -> tuple[np.ndarray, np.ndarray]:
    """Squared error as a Python callable: the zero-cost custom objective."""
    p = np.asarray(preds, dtype=np.float64).reshape(-1)
    return p - data.get_label(), np.ones_like(p)


class Timed:
    """Wraps a framework objective: seconds inside it and each worker pool's CPU meanwhile."""

    def __init__(self, fn: Callable[..., Any], fw_pool: set[int], numba_pool: set[int]) -> None:
        self.fn, self.fw_pool, self.numba_pool = fn, fw_pool, numba_pool
        self.seconds = self.fw_cpu = self.numba_cpu = 0.0

    def __deepcopy__(self, memo: dict[int, Any]) -> "Timed":
        return self  # lgb.train deep-copies its params: keep counting in this object

    def __call__(self, *args: Any) -> Any:
        c0, t0 = thread_cpu(), time.perf_counter()
        out = self.fn(*args)
        self.seconds += time.perf_counter() - t0
        c1 = thread_cpu()
        self.fw_cpu += cpu_of(self.fw_pool, c0, c1)
        self.numba_cpu += cpu_of(self.numba_pool, c0, c1)
        return out


class Trainer:
    def __init__(self, framework: str, work: Path, threads: int) -> None:
        import lightgbm as lgb
        import xgboost as xgb

        from boostplug import lightgbm as bpl
        from boostplug import xgboost as bpx

        self.lgb, self.xgb, self.bpl, self.bpx = lgb, xgb, bpl, bpx
        self.framework, self.threads = framework, threads
        X, y, gp = (np.load(work / f"{k}.npy") for k in ("X", "y", "group_ptr"))
        self.n_docs = y.shape[0]
        t0 = time.perf_counter()
        if framework == "lightgbm":
            self.data = bpl.dataset(X, y, group_ptr=gp, params={"max_bin": TREE["max_bin"], "verbose": -1,
                                                                "num_threads": threads})
            self.data.construct()
        else:
            self.data = bpx.dmatrix(X, y, group_ptr=gp, nthread=threads)
        self.build_s = time.perf_counter() - t0
        del X
        trim()

    def objective(self, method: str) -> Callable[..., Any] | str:
        if method == "callable":
            return squared_error
        if method in PAPER:
            name, params = PAPER[method]
            adapters = self.bpl if self.framework == "lightgbm" else self.bpx
            return adapters.objective(name, **params)
        return method

    def train(self, objective: Callable[..., Any] | str, rounds: int) -> None:
        if self.framework == "lightgbm":
            params = {**TREE, "objective": objective, "verbose": -1, "num_threads": self.threads, "seed": 0}
            self.lgb.train(params, self.data, num_boost_round=rounds)
            return
        params: dict[str, Any] = {"eta": TREE["learning_rate"], "max_leaves": TREE["num_leaves"],
                                  "grow_policy": "lossguide", "max_depth": 0, "max_bin": TREE["max_bin"],
                                  "tree_method": "hist", "nthread": self.threads, "seed": 0}
        obj = None
        if callable(objective):
            obj, params = objective, self.bpx.params(**params)
        else:
            params["objective"] = objective
        self.xgb.train(params, self.data, num_boost_round=rounds, obj=obj)


def _threads() -> set[int]:
    return {int(t) for t in os.listdir("/proc/self/task")}


def wake_numba_pool() -> None:
    """One parallel numba kernel call (the objectives' kernels run parallel above a work threshold)."""
    from boostplug._core import dispatch
    from boostplug.objectives import get

    prep = get("mpboost").prepare(np.zeros(200_000), np.array([0, 200_000]))
    saved, dispatch.PARALLEL_MIN_WORK = dispatch.PARALLEL_MIN_WORK, 0
    try:
        prep.grad_hess(np.random.default_rng(0).normal(size=200_000))
    finally:
        dispatch.PARALLEL_MIN_WORK = saved


def stage_train(framework: str, work: Path, rounds: int, repeat: int, threads: int, methods: list[str]) -> None:
    """Prints one JSON line per run (the parent collects them)."""
    import numba

    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    start = _threads()
    tr = Trainer(framework, work, threads)
    tr.train(tr.objective("callable"), 1)
    fw_pool = _threads() - start              # the framework's OpenMP workers
    wake_numba_pool()
    numba_pool = _threads() - start - fw_pool  # empty: numba shares the framework's OpenMP runtime
    print(json.dumps({"framework": framework, "build_s": tr.build_s, "documents": tr.n_docs,
                      "numba_layer": numba.threading_layer(), "numba_threads": numba.get_num_threads(),
                      "numba_pool": len(numba_pool), "framework_pool": len(fw_pool)}), flush=True)
    for m in methods:
        tr.train(tr.objective(m), 1)                    # warm-up: compilation, first touch
    for rep in range(repeat):
        for m in methods:
            obj = tr.objective(m)
            timed = Timed(obj, fw_pool, numba_pool) if callable(obj) else None
            trim()
            reset_peak()
            c0, t0 = thread_cpu(), time.perf_counter()
            tr.train(timed or obj, rounds)
            seconds = time.perf_counter() - t0
            c1 = thread_cpu()
            inside = timed.seconds if timed else 0.0
            print(json.dumps({"rep": rep, "method": m, "seconds": seconds, "inside_s": inside,
                              "peak_gib": peak_gib(),
                              # a pool's CPU while the other side works: spinning, or (shared pool) our kernels
                              "fw_cpu_in_obj": timed.fw_cpu if timed else 0.0,
                              "numba_cpu_out_obj": cpu_of(numba_pool, c0, c1) - (timed.numba_cpu if timed else 0.0)}),
                  flush=True)


def stage_compare(work: Path, rounds: int, threads: int) -> dict[str, Any]:
    """``boostplug compare`` on the LETOR file, one fold; its seconds and peak memory (the only child)."""
    import resource

    cmd = ["compare", "--data", str(work / "mslr_shaped.txt"), "--kfold", "5", "--folds", "1",
           "--rounds", str(rounds), "--methods", COMPARE_METHODS, "--threads", str(threads),
           "--out", str(work / "compare"), "--overwrite", "--no-plots", "--no-progress"]
    t0 = time.perf_counter()
    r = subprocess.run([str(Path(sys.executable).parent / "boostplug"), *cmd], capture_output=True, text=True)
    return {"seconds": time.perf_counter() - t0, "exit": r.returncode, "command": cmd,
            "peak_gib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 2**20,
            "output": (r.stdout if r.returncode == 0 else r.stderr)[-4000:]}


# ---- parent -------------------------------------------------------------------------------------
def child(args: list[str], env: dict[str, str] | None = None) -> list[dict[str, Any]]:
    cmd = [sys.executable, __file__, *args]
    r = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **(env or {})})
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{r.stderr[-3000:]}")
    return [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]


def spread(values: list[float]) -> float:
    return max(values) / min(values) if min(values) > 0 else float("inf")


def report_train(framework: str, setting: str, rows: list[dict[str, Any]], methods: list[str]) -> None:
    head, runs = rows[0], rows[1:]
    floor_name, builtin_name = BUILTIN[framework]
    by = {m: [r for r in runs if r["method"] == m] for m in methods}
    med = statistics.median
    print(f"\n## {framework}, setting {setting}: {head['documents']:,} documents; training set built in "
          f"{head['build_s']:.1f} s; numba layer {head['numba_layer']} with {head['numba_threads']} threads; "
          f"worker threads: numba's pool {head['numba_pool']}, the framework's own pool {head['framework_pool']}"
          + (" (numba runs on the framework's OpenMP runtime)" if head["numba_pool"] == 0 else ""))
    print(f"  {'method':<17} {'seconds':>8} {'/floor':>7} {'/callable':>9} {'/builtin':>8} {'spread':>7} "
          f"{'in obj':>7} {'peak GiB':>8} {'/builtin':>8} {'fw pool cpu in obj':>18} {'numba pool cpu out':>18}")
    for m in methods:
        rs = by[m]
        secs = [r["seconds"] for r in rs]
        ratio = {k: [a["seconds"] / b["seconds"] for a, b in zip(rs, by[k])] for k in (floor_name, "callable",
                                                                                         builtin_name) if k in by}
        mem = [a["peak_gib"] / b["peak_gib"] for a, b in zip(rs, by[builtin_name])] if builtin_name in by else [0]
        cb = ratio.get("callable", [float("nan")])
        print(f"  {m:<17} {med(secs):8.2f} {med(ratio.get(floor_name, [0])):7.2f} {med(cb):9.2f} "
              f"{med(ratio.get(builtin_name, [0])):8.2f} {spread(cb) if m != 'callable' else spread(secs):7.2f} "
              f"{med([r['inside_s'] / r['seconds'] for r in rs]):7.0%} {max(r['peak_gib'] for r in rs):8.2f} "
              f"{max(mem):8.2f} {med([r['fw_cpu_in_obj'] for r in rs]):18.2f} "
              f"{med([r['numba_cpu_out_obj'] for r in rs]):18.2f}")
    print("  seconds of every run: " + "; ".join(f"{m} " + " ".join(f"{r['seconds']:.1f}" for r in by[m])
                                               for m in methods))
    print("  seconds inside the objective callable per run: " + "; ".join(
        f"{m} " + " ".join(f"{r['inside_s']:.2f}" for r in by[m]) for m in methods if by[m][0]["inside_s"] > 0))


def train_stage(args: argparse.Namespace, common: list[str]) -> None:
    for setting in args.settings.split(","):
        for fw in args.frameworks.split(","):
            floor_name, builtin_name = BUILTIN[fw]
            methods = [floor_name if m == "floor" else builtin_name if m == "builtin" else m
                       for m in args.methods.split(",")]
            rows = child([*common, "--_child", fw, *methods], SETTINGS[setting])
            report_train(fw, setting, rows, methods)
            sys.stdout.flush()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", required=True, help="folder for the data files (some 5 GB at --scale 1)")
    ap.add_argument("--scale", type=float, default=1.0, help="fraction of MSLR-WEB30K's queries (default 1)")
    ap.add_argument("--target", choices=TARGETS, default="trees",
                    help="trees: labels that need trees (default); linear: labels linear in 20 features (generate)")
    ap.add_argument("--stages", default="data,train,compare",
                    help="data (generate, write, read back), read (read back an earlier write), train, compare")
    ap.add_argument("--rounds", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--frameworks", default="lightgbm,xgboost")
    ap.add_argument("--methods", default="floor,builtin,callable," + ",".join(PAPER),
                    help="floor and builtin name the framework's regression and LambdaMART")
    ap.add_argument("--settings", default="default", help=f"comma-separated: {', '.join(SETTINGS)}")
    ap.add_argument("--load", type=int, default=0,
                    help="busy processes (one spinning core each) kept running during the train stage, as on "
                         "a shared machine (default 0)")
    ap.add_argument("--_child", nargs="*", help=argparse.SUPPRESS)
    args = ap.parse_args()
    work = Path(args.work)
    if args._child:
        what = args._child[0]
        if what == "write":
            print(json.dumps(stage_write(work, args.scale, args.target)))
        elif what == "read":
            print(json.dumps(stage_read(work)))
        elif what == "compare":
            print(json.dumps(stage_compare(work, args.rounds, args.threads)))
        else:
            stage_train(what, work, args.rounds, args.repeat, args.threads, args._child[1:])
        return
    work.mkdir(parents=True, exist_ok=True)
    stages = args.stages.split(",")
    import lightgbm, numba, xgboost

    print(f"lightgbm {lightgbm.__version__}, xgboost {xgboost.__version__}, numba {numba.__version__}, "
          f"{os.cpu_count()} cores, --threads {args.threads}, --scale {args.scale}, --rounds {args.rounds}, "
          f"--load {args.load}")
    common = ["--work", str(work), "--scale", str(args.scale), "--target", args.target, "--rounds", str(args.rounds),
              "--repeat", str(args.repeat), "--threads", str(args.threads)]
    if "data" in stages:
        w = child([*common, "--_child", "write"])[0]
        print(f"\n## data: {w['documents']:,} documents, {w['queries']:,} queries (largest {w['largest_query']:,}), "
              f"{w['features']} features; X {w['X_gib']:.2f} GiB as float64")
        print(f"  generate {w['generate_s']:.1f} s; write_letor {w['write_s']:.1f} s, file {w['file_gib']:.2f} GiB, "
              f"peak memory {w['write_peak_gib']:.2f} GiB (the data held: {w['write_base_gib']:.2f} GiB)", flush=True)
    if "data" in stages or "read" in stages:
        r = child([*common, "--_child", "read"])[0]
        print(f"\n## read back: load_letor {r['read_s']:.1f} s, peak memory {r['read_peak_gib']:.2f} GiB "
              f"({r['read_peak_gib'] / r['X_gib']:.2f}x the dense X it returns); equal to what was written: "
              f"{r['equal']}", flush=True)
    if "train" in stages:
        burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.load)]
        try:
            train_stage(args, common)
        finally:
            for b in burners:
                b.kill()

    if "compare" in stages:
        c = child([*common, "--_child", "compare"])[0]
        print(f"\n## boostplug compare, one fold: {c['seconds']:.0f} s, exit {c['exit']}, peak memory "
              f"{c['peak_gib']:.2f} GiB\n  boostplug {' '.join(c['command'])}\n{c['output']}")

if __name__ == "__main__":
    main()
