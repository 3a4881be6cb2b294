"""Reference boosters against LightGBM, per round, and a guard against slowing down again.

Per data set, in one process and on the same threads, it times LightGBM's ``lambdarank`` with
2-leaf trees (``--rounds`` rounds, the yardstick) and a whole ``fit`` of every reference booster,
on each of its paths (``pairwise="levels"`` and ``"pairs"`` for RankBoost and MPBoost; the
booster's one path for AdaRank and NDCG_Boost), ``--repeat`` times interleaved (every case once,
then again), after a warm-up fit that compiles the kernels. Each case's best run counts; its
spread is the slowest run over the fastest. Columns:

* ``ms@50``, ``ms@R``: the whole fit's milliseconds per round after 50 rounds and after all
  ``R = --rounds`` (set-up included: a 50-round fit is the first 50 rounds of this one);
* ``rnd@50``, ``rnd@R``: the time of one round near round 50 and near the last (median of the
  20 rounds up to it), so ``rnd@R / rnd@50`` says whether the cost per round grows;
* ``/lgb``: ``ms@R`` over LightGBM's milliseconds per round in the same run (the ratio the
  guard compares: it does not depend on the machine's speed);
* ``auto``: the path ``pairwise="auto"`` takes on this data (``*`` marks it), and, on that row,
  its time over the faster path's.

Data sets (``--data``): ``ohsumed`` (OHSUMED Fold1 train, LETOR 3.0: 9,219 documents, 63 queries),
``mq2008`` (MQ2008 Fold1 train, LETOR 4.0: 9,630 documents, 471 queries), ``query300`` (one query of
300 documents) and ``query100k`` (one query of 100,000 documents, ``--huge-rounds`` rounds; no
NDCG_Boost, whose every round is ``O(n^2)``, and the pair list refuses it). The single queries are
``benchmarks/one_query.py``'s: grades 0-4, 46 Gaussian features, two of them driven by the grade.

The guard, ``--base <commit or folder>``: every case timed in the base checkout (A) and in this
one (B: the boostplug this script imports), in child processes that alternate A, B, A, B, ...
(``--pairs`` times, ``benchmarks/_ab.py``), each timing the cases as above (best of ``--repeat``, 1 by default here,
against LightGBM in the same process). Prints, per case, the base's ratio to LightGBM and this
one's (the best of the pairs), B/A, the range of the per-pair B/A and both sides' milliseconds per
round, and names the cases whose B/A is above ``--tolerance`` (exit status 1 if any). A commit is
checked out with ``git worktree add --detach`` in a temporary folder, removed after. Run it before
a change that touches a booster's kernels is merged (docs/studies/performance.md says how).

``--record`` writes every case's ratio to LightGBM to ``benchmarks/reference/``, with the CPU it
was measured on (numba's CPU name and the processor's model name): a record of what was measured
where. ``--check`` compares this run's ratios with such a record; on another CPU (or a record
without one) it prints the comparison with a note and gives no verdict (exit status 0), since a
ratio to LightGBM moves with the CPU (up to 2.4x between two x86 machines): use ``--base`` there.

``OMP_WAIT_POLICY=PASSIVE`` is set unless given (idle OpenMP threads sleep instead of spinning, so
that other processes on a shared machine disturb the timings less); the threads are numba's
(``NUMBA_NUM_THREADS``, default all cores), and LightGBM gets as many.

Usage::

    python benchmarks/booster_speed.py [--data ohsumed,mq2008,query300,query100k] [--repeat 3]
        [--rounds 300] [--huge-rounds 10] [--boosters rb-c,rankboost+] [--json out.json]
    python benchmarks/booster_speed.py --base main [--pairs 3] [--tolerance 1.1] [--data ...] [--boosters ...]
    python benchmarks/booster_speed.py --record            # write benchmarks/reference/booster_speed.json
    python benchmarks/booster_speed.py --check [--tolerance 1.1]
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")   # before any OpenMP runtime loads

import argparse
import json
import platform
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

import _ab

ROOT = Path(__file__).resolve().parents[1]
THIS = _ab.this_checkout()
sys.path.insert(0, str(THIS))   # time this checkout's boostplug (or an A/B run's side), not an installed copy
SHARED = ROOT.parent / "shared" / "data"
REFERENCE = Path(__file__).resolve().parent / "reference" / "booster_speed.json"
DATA_SETS = ("ohsumed", "mq2008", "query300", "query100k")

#: label -> (class, parameters, has the two paths). ``rb-d-e2`` keeps the E2 record of the paper's
#: Section 4 (``record_e2=True``), which replicating its tables needs. AdaRank runs RankLib's update without its
#: tolerance so that it trains every round (its paper update stalls after a few rounds).
BOOSTERS: dict[str, tuple[str, dict[str, Any], bool]] = {
    "rb-d": ("RankBoost", {"variant": "rb-d"}, True),
    "rb-d-e2": ("RankBoost", {"variant": "rb-d", "record_e2": True}, True),
    "rb-c": ("RankBoost", {"variant": "rb-c"}, True),
    "rb-c-ranklib": ("RankBoost", {"variant": "rb-c", "thresholds": "ranklib", "n_thresholds": 10}, True),
    "rankboost+": ("RankBoost", {"variant": "rankboost+"}, True),
    "mpboost-binary": ("MPBoost", {"ddf": "binary"}, True),
    "mpboost-logdd": ("MPBoost", {"ddf": "logdd"}, True),
    "ndcg_boost": ("NDCGBoost", {}, False),
    "adarank": ("AdaRank", {"measure": "ndcg@5", "tolerance": None, "update": "multiplicative"}, False),
}
HUGE_SKIP = {"ndcg_boost"}
LGB_MAX_QUERY = 10_000          # LightGBM's largest query for lambdarank


@dataclass
class Data:
    name: str
    X: np.ndarray
    y: np.ndarray
    sizes: np.ndarray           # documents per query
    rounds: int

    def describe(self) -> str:
        return f"{self.X.shape[0]:,} documents, {self.sizes.shape[0]:,} queries, {self.X.shape[1]} features"


@dataclass
class Result:
    """The runs of one case: whole-fit seconds and the per-round times of each run."""

    runs: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None

    def best(self) -> dict[str, Any]:
        return min(self.runs, key=lambda r: r["total"])

    def spread(self) -> float:
        t = [r["total"] for r in self.runs]
        return max(t) / min(t)


def load(name: str, rounds: int, huge_rounds: int) -> Data:
    from boostplug.data import load_letor_folds

    if name in ("ohsumed", "mq2008"):
        folder, layout = ("OHSUMED", "letor3") if name == "ohsumed" else ("MQ2008", "letor4")
        train = load_letor_folds(SHARED / folder, layout, folds=[0])[0][0]
        return Data(name, train.X, train.y, np.diff(train.group_ptr), rounds)
    from one_query import data as one_query

    n = 300 if name == "query300" else 100_000
    X, y = one_query(n, 46)
    return Data(name, X, y, np.array([n]), rounds if name == "query300" else huge_rounds)


def make(label: str, path: str | None, rounds: int) -> Any:
    from boostplug import boosters

    cls, params, two = BOOSTERS[label]
    extra = {"pairwise": path} if two and path is not None else {}
    return getattr(boosters, cls)(n_rounds=rounds, random_state=0, **params, **extra)


def auto_path(label: str, d: Data) -> str | None:
    """The path ``pairwise="auto"`` takes on ``d`` (``None``: the booster has one path)."""
    if not BOOSTERS[label][2]:
        return None
    model = make(label, "auto", d.rounds)
    chooser = getattr(model, "_choose_pairwise", None)
    if chooser is None:          # before the cost rule: auto was "levels" whenever labels gave the pairs
        return "levels"
    from boostplug.boosters._fit_data import FitData

    fd = FitData.prepare(d.X, d.y, qid=None, group=d.sizes, pairs=None, sample_weight=None, random_state=0)
    return chooser(fd)


def time_booster(label: str, path: str | None, d: Data) -> dict[str, Any]:
    model = make(label, path, d.rounds)
    t0 = time.perf_counter()
    model.fit(d.X, d.y, group=d.sizes)
    total = time.perf_counter() - t0
    secs = np.array([h["seconds"] for h in model.history_])
    return {"total": total, "setup": total - (secs[-1] if secs.size else 0.0), "seconds": secs.tolist(),
            "rounds": int(secs.size), "stop": model.stop_reason_}


def lightgbm_groups(sizes: np.ndarray) -> np.ndarray:
    """Query sizes as LightGBM's lambdarank takes them: it refuses a query of more than
    ``LGB_MAX_QUERY`` documents, so the yardstick of the 100,000-document query trains on the same
    documents cut into queries of that many."""
    out: list[int] = []
    for s in sizes.tolist():
        out += [LGB_MAX_QUERY] * (s // LGB_MAX_QUERY) + ([s % LGB_MAX_QUERY] if s % LGB_MAX_QUERY else [])
    return np.array(out, dtype=np.int64)


def time_lightgbm(d: Data, threads: int) -> dict[str, Any]:
    import lightgbm as lgb

    params = {"objective": "lambdarank", "num_leaves": 2, "num_threads": threads, "verbose": -1,
              "deterministic": True, "force_row_wise": True}
    t0 = time.perf_counter()
    lgb.train(params, lgb.Dataset(d.X, d.y, group=lightgbm_groups(d.sizes)), num_boost_round=d.rounds)
    total = time.perf_counter() - t0
    return {"total": total, "setup": 0.0, "seconds": [], "rounds": d.rounds, "stop": ""}


def warm_up(labels: list[str], paths: list[str]) -> None:
    """Compile (or load from numba's cache) every kernel the timed fits use."""
    from one_query import data as one_query

    X, y = one_query(200, 8)
    for label in labels:
        for path in (paths if BOOSTERS[label][2] else [None]):
            try:
                make(label, path, 3).fit(X, y, group=[200])
            except Exception:   # noqa: BLE001 - the timed run reports it
                pass


def per_round(run: dict[str, Any], at: int) -> tuple[float, float]:
    """``(whole-fit ms per round after `at` rounds, median ms of the 20 rounds up to `at`)``."""
    secs = np.asarray(run["seconds"])
    if secs.size < at:
        return float("nan"), float("nan")
    whole = (run["setup"] + secs[at - 1]) / at * 1e3
    steps = np.diff(np.r_[0.0, secs[:at]])[max(0, at - 20):]
    return whole, float(np.median(steps)) * 1e3


def cases_of(d: Data, labels: list[str], paths: list[str]) -> list[tuple[str, str | None]]:
    out = []
    for label in labels:
        if d.name == "query100k" and label in HUGE_SKIP:
            continue
        for path in (paths if BOOSTERS[label][2] else [None]):
            out.append((label, path))
    return out


def run_data(d: Data, labels: list[str], paths: list[str], repeat: int, threads: int) -> dict[str, Any]:
    from boostplug.pairs import PairMemoryError

    cases = cases_of(d, labels, paths)
    results: dict[tuple[str, str | None], Result] = {c: Result() for c in cases}
    lgb_runs = []
    for _ in range(repeat):
        lgb_runs.append(time_lightgbm(d, threads))
        for c in cases:
            r = results[c]
            if r.error is not None:
                continue
            try:
                r.runs.append(time_booster(c[0], c[1], d))
            except PairMemoryError:
                r.error = "refused: the pair list is above PAIR_MEMORY_LIMIT"
            except Exception as exc:  # noqa: BLE001 - report and go on with the other cases
                r.error = f"failed: {type(exc).__name__}: {exc}"
    lgb_best = min(r["total"] for r in lgb_runs)
    lgb_ms = lgb_best / d.rounds * 1e3
    mid = min(50, d.rounds // 2) if d.rounds < 100 else 50
    rows = []
    autos = {label: auto_path(label, d) for label in {c[0] for c in cases}}
    for (label, path), r in results.items():
        row: dict[str, Any] = {"booster": label, "path": path or "-", "auto": autos[label] == path if path else None}
        if r.error is not None:
            row["error"] = r.error
        else:
            b = r.best()
            w_mid, s_mid = per_round(b, mid)
            w_end, s_end = per_round(b, b["rounds"]) if b["rounds"] else (float("nan"), float("nan"))
            row.update({"rounds": b["rounds"], "ms_mid": w_mid, "ms_end": w_end, "round_mid": s_mid,
                        "round_end": s_end, "ratio": (b["total"] / max(b["rounds"], 1) * 1e3) / lgb_ms,
                        "spread": r.spread(), "setup_s": b["setup"], "stop": b["stop"]})
        rows.append(row)
    # auto against the faster of the two paths
    for label in {c[0] for c in cases}:
        both = [row for row in rows if row["booster"] == label and row["path"] in ("levels", "pairs")
                and "ratio" in row]
        if len(both) >= 1 and autos[label] is not None:
            fastest = min(row["ratio"] for row in both)
            for row in both:
                if row["path"] == autos[label]:
                    row["auto_over_fastest"] = row["ratio"] / fastest
    return {"data": d.name, "describe": d.describe(), "rounds": d.rounds, "mid": mid, "lgb_ms": lgb_ms,
            "lgb_spread": max(r["total"] for r in lgb_runs) / lgb_best, "rows": rows}


def show(out: dict[str, Any]) -> None:
    R, mid = out["rounds"], out["mid"]
    print(f"\n== {out['data']}: {out['describe']}; {R} rounds; LightGBM lambdarank 2 leaves "
          f"{out['lgb_ms']:.2f} ms/round (spread {out['lgb_spread']:.2f})", flush=True)
    print(f"{'booster':15s} {'path':7s} {'ms@' + str(mid):>8s} {'ms@' + str(R):>8s} {'rnd@' + str(mid):>8s} "
          f"{'rnd@' + str(R):>8s} {'end/mid':>7s} {'/lgb':>7s} {'spread':>6s} {'set-up s':>8s} {'rounds':>6s}  auto")
    for row in out["rows"]:
        path = row["path"] + ("*" if row["auto"] else "")
        if "error" in row:
            print(f"{row['booster']:15s} {path:7s} {row['error']}")
            continue
        auto = f"{row['auto_over_fastest']:.2f}x fastest" if "auto_over_fastest" in row else ""
        print(f"{row['booster']:15s} {path:7s} {row['ms_mid']:8.2f} {row['ms_end']:8.2f} {row['round_mid']:8.2f} "
              f"{row['round_end']:8.2f} {row['round_end'] / row['round_mid']:7.2f} {row['ratio']:7.2f} "
              f"{row['spread']:6.2f} {row['setup_s']:8.3f} {row['rounds']:6d}  {auto}", flush=True)


def key(data: str, row: dict[str, Any]) -> str:
    return f"{data}/{row['booster']}/{row['path']}"


def ratios(outs: list[dict[str, Any]], column: str = "ratio") -> dict[str, float]:
    """Per case, its ``column`` (default its ratio to LightGBM)."""
    return {key(o["data"], row): row[column] for o in outs for row in o["rows"] if column in row}


def check(outs: list[dict[str, Any]], ref_path: Path, tolerance: float) -> int:
    """This run's ratios over a recorded reference's. A verdict (exit status 1 if a case is above
    ``tolerance``) only if the reference was measured on a CPU of the same name: otherwise the
    comparison is printed as information, exit status 0."""
    ref = json.loads(ref_path.read_text())
    recorded = ref["ratios"]
    now = ratios(outs)
    here = _ab.cpu()
    same_cpu = ref.get("cpu_name") == here["cpu_name"] and ref.get("cpu_model") == here["cpu_model"]
    print(f"\n== guard: ratio to LightGBM now over the recorded one ({ref_path.name}); tolerance {tolerance:.2f}")
    if not same_cpu:
        print(f"NOTE: the reference was measured on {ref.get('cpu_model', 'an unrecorded CPU')} "
              f"(numba: {ref.get('cpu_name', 'unrecorded')}), this run on {here['cpu_model']} "
              f"(numba: {here['cpu_name']}): the ratios compare across machines, no verdict; "
              "run the guard as an A/B on this machine: --base <commit>")
    print(f"{'case':40s} {'recorded':>9s} {'now':>9s} {'now/rec':>8s}")
    slower = []
    for k in sorted(now):
        if k not in recorded:
            print(f"{k:40s} {'-':>9s} {now[k]:9.2f}  (not recorded)")
            continue
        q = now[k] / recorded[k]
        flag = "  SLOWER" if q > tolerance else ""
        if flag:
            slower.append(k)
        print(f"{k:40s} {recorded[k]:9.2f} {now[k]:9.2f} {q:8.2f}{flag}")
    print(f"\n{len(slower)} case(s) slower than {tolerance:.2f}x their reference" + (": " + ", ".join(slower) if slower else ""))
    return 1 if slower and same_cpu else 0


def ab(args: argparse.Namespace) -> int:
    """The A/B guard: this script's cases in child processes of the base and of this checkout."""
    child = [str(Path(__file__).resolve()), "--data", args.data, "--boosters", args.boosters, "--paths", args.paths,
             "--rounds", str(args.rounds), "--huge-rounds", str(args.huge_rounds), "--repeat", str(args.repeat),
             "--json", "-"]
    with _ab.checkout(args.base) as base:
        runs_a, runs_b = _ab.interleaved(base, THIS, child, args.pairs)
    machine = _ab.cpu()
    print(f"\n== A/B guard: A = {args.base} ({base}), B = {THIS}\n{args.pairs} interleaved A/B pairs of processes, "
          f"best of {args.repeat} per process; CPU {machine['cpu_model']} (numba: {machine['cpu_name']}); "
          f"/lgb: milliseconds per round over LightGBM's 2-leaf rounds in the same process; "
          f"ms: milliseconds per round\n")
    ms = _ab.compare([ratios(r["results"], "ms_end") for r in runs_a], [ratios(r["results"], "ms_end") for r in runs_b])
    extra = {r.case: f"ms {r.a:.2f} -> {r.b:.2f}" for r in ms if r.a is not None and r.b is not None}
    for side, runs in (("A", runs_a), ("B", runs_b)):
        for o in runs[-1]["results"]:
            for row in o["rows"]:
                if "error" in row:
                    print(f"{side}: {key(o['data'], row)} {row['error']}")
    flat = _ab.compare([ratios(r["results"]) for r in runs_a], [ratios(r["results"]) for r in runs_b])
    return _ab.report(flat, args.tolerance, {"a": "base /lgb", "b": "this /lgb"}, extra=extra)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=",".join(DATA_SETS), help="comma-separated of " + ", ".join(DATA_SETS))
    ap.add_argument("--boosters", default=",".join(BOOSTERS), help="comma-separated of " + ", ".join(BOOSTERS))
    ap.add_argument("--paths", default="levels,pairs",
                    help="paths of RankBoost and MPBoost to time (auto is one of them; add 'auto' to time it too)")
    ap.add_argument("--rounds", type=int, default=300)
    ap.add_argument("--huge-rounds", type=int, default=10, help="rounds on the 100,000-document query")
    ap.add_argument("--repeat", type=int, default=None, help="runs of each case per process (3; 1 with --base)")
    ap.add_argument("--json", type=Path, default=None, help="write every measurement here ('-': one line on standard output, at the end)")
    ap.add_argument("--record", nargs="?", const=REFERENCE, type=Path, default=None,
                    help=f"write the ratios as the reference (default {REFERENCE.relative_to(ROOT)})")
    ap.add_argument("--check", nargs="?", const=REFERENCE, type=Path, default=None,
                    help="compare the ratios with a recorded reference")
    ap.add_argument("--base", default=None, help="the A/B guard: the base's commit or checkout folder")
    ap.add_argument("--pairs", type=int, default=3, help="A/B pairs of processes, interleaved (with --base)")
    ap.add_argument("--tolerance", type=float, default=1.1, help="flag a case slower than this over its base")
    args = ap.parse_args(argv)
    if args.repeat is None:      # an A/B run takes the best over its pairs of processes
        args.repeat = 1 if args.base is not None else 3
    import numba

    labels = [b for b in args.boosters.split(",") if b]
    names = [n for n in args.data.split(",") if n]
    paths = [p for p in args.paths.split(",") if p]
    bad = [b for b in labels if b not in BOOSTERS] + [n for n in names if n not in DATA_SETS]
    bad += [p for p in paths if p not in ("auto", "levels", "pairs")]
    if bad:
        ap.error(f"unknown --boosters, --data or --paths values: {bad}")
    if args.base is not None:
        if args.record is not None or args.check is not None or args.json is not None:
            ap.error("--base runs the A/B guard: without --record, --check or --json")
        return ab(args)
    threads = numba.get_num_threads()
    print(f"threads {threads} (numba and LightGBM); OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY')}; "
          f"best of {args.repeat}; load average at start {os.getloadavg()[0]:.2f}; python {platform.python_version()}",
          flush=True)
    warm_up(labels, paths)
    outs = []
    meta = {"threads": threads, "repeat": args.repeat, "rounds": args.rounds, "huge_rounds": args.huge_rounds,
            "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"), **_ab.cpu()}
    to_stdout = args.json is not None and str(args.json) == "-"   # an A/B run's child: one JSON line at the end
    for name in names:
        d = load(name, args.rounds, args.huge_rounds)
        out = run_data(d, labels, paths, args.repeat, threads)
        show(out)
        outs.append(out)
        if args.json is not None and not to_stdout:      # after every data set: a long run interrupted keeps what it measured
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(json.dumps({**meta, "results": outs}, indent=1, default=float))
    print(f"\nload average at the end {os.getloadavg()[0]:.2f}")
    if to_stdout:
        import boostplug

        print(json.dumps({**meta, "boostplug": boostplug.__file__, "results": outs}, default=float))
    if args.record is not None:
        args.record.parent.mkdir(parents=True, exist_ok=True)
        args.record.write_text(json.dumps({**meta, "ratios": ratios(outs)}, indent=1, sort_keys=True) + "\n")
        print(f"recorded {len(ratios(outs))} ratios in {args.record}")
    if args.check is not None:
        return check(outs, args.check, args.tolerance)
    return 0


if __name__ == "__main__":
    sys.exit(main())
