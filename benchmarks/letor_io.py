"""Time writing and reading an MSLR-shaped LETOR file: the numba parser against scikit-learn's.

Run: ``python benchmarks/letor_io.py [--rows 377112] [--features 136] [--skip-sklearn]``.
Writes a file of ``rows`` documents (about 120 per query, labels 0-4) with ``features``
values of at most three decimals (some 10% zeros, which are not written), as MSLR-WEB30K's
files are, to a temporary folder, then times, each in its own process:

* ``write``: :func:`write_letor` of the data;
* ``fast csr`` / ``fast dense``: :func:`load_letor` with ``dense=False`` / the default dense
  ``X`` (after a warm-up load of a tiny file, which compiles or loads the numba cache);
* ``sklearn csr``: scikit-learn's ``load_svmlight_file`` of the file, the reference reader.

For each it prints the seconds, MB/s of the file and the peak resident memory the step added
to its process (``/proc/self/status`` VmHWM, reset before the step through ``clear_refs``).
The CSR results of the two readers are checked to be identical (a digest of their arrays).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _process_memory import reset_peak, status_kib


def synthetic(rows: int, features: int, seed: int = 0):
    """MSLR-shaped data: three-decimal values, ~10% zeros, labels 0-4, ~120 documents a query."""
    from boostplug.data import RankingData

    rng = np.random.default_rng(seed)
    X = rng.integers(0, 100_000, size=(rows, features)) / 1000.0
    X[rng.random((rows, features)) < 0.1] = 0.0
    y = rng.integers(0, 5, size=rows).astype(np.float64)
    n_queries = max(1, rows // 120)
    cuts = np.sort(rng.choice(np.arange(1, rows), size=n_queries - 1, replace=False)) if rows > n_queries else []
    ptr = np.concatenate(([0], cuts, [rows])).astype(np.int64)
    return RankingData(X, y, None, ptr)


def _digest(X, y, qid) -> str:
    h = hashlib.sha1()
    for a in (X.data, X.indices, X.indptr, y, qid):
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def run_stage(stage: str, path: Path, rows: int, features: int) -> dict:
    """One step in this process: seconds, peak KiB added, and a digest of what was read."""
    from boostplug.data import load_letor, write_letor

    out: dict = {}
    if stage == "write":
        data = synthetic(rows, features)
        base = reset_peak()
        t0 = time.perf_counter()
        write_letor(path, data)
        seconds = time.perf_counter() - t0
    else:
        if stage == "sklearn csr":
            from sklearn.datasets import load_svmlight_file

            base = reset_peak()
            t0 = time.perf_counter()
            X, y, qid = load_svmlight_file(str(path), dtype=np.float64, query_id=True, zero_based=False)
            seconds = time.perf_counter() - t0
            out["digest"] = _digest(X, y, qid)
        else:
            tiny = path.with_name("tiny.txt")
            tiny.write_text("1 qid:1 1:0.5\n")
            load_letor(tiny)  # compile or load the numba cache outside the timing
            base = reset_peak()
            t0 = time.perf_counter()
            d = load_letor(path, dense=stage == "fast dense")
            seconds = time.perf_counter() - t0
            if stage != "fast dense":
                out["digest"] = _digest(d.X, d.y, d.qid)
    out.update(seconds=seconds, peak_kib=status_kib("VmHWM") - base, bytes=path.stat().st_size)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=377_112)
    ap.add_argument("--features", type=int, default=136)
    ap.add_argument("--skip-sklearn", action="store_true", help="do not time scikit-learn's reader (slow)")
    ap.add_argument("--stage", help=argparse.SUPPRESS)
    ap.add_argument("--path", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.stage:
        print(json.dumps(run_stage(args.stage, Path(args.path), args.rows, args.features)))
        return
    stages = ["write", "fast csr", "fast dense"] + ([] if args.skip_sklearn else ["sklearn csr"])
    with tempfile.TemporaryDirectory(prefix="letor_io_") as tmp:
        path = Path(tmp) / "mslr_shaped.txt"
        print(f"{args.rows:,} rows x {args.features} features, file in {tmp}")
        results = {}
        for stage in stages:
            cmd = [sys.executable, __file__, "--stage", stage, "--path", str(path),
                   "--rows", str(args.rows), "--features", str(args.features)]
            r = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
            results[stage] = r
            print(f"{stage:12s} {r['seconds']:8.2f} s  {r['bytes'] / r['seconds'] / 1e6:8.1f} MB/s  "
                  f"peak +{r['peak_kib'] / 2**20:.2f} GiB  (file {r['bytes'] / 2**30:.2f} GiB)", flush=True)
    digests = {s: r["digest"] for s, r in results.items() if "digest" in r}
    if len(set(digests.values())) > 1:
        raise SystemExit(f"the readers disagree: {digests}")
    if len(digests) > 1:
        print("fast and scikit-learn readers: identical CSR arrays, y and qid")


if __name__ == "__main__":
    main()
