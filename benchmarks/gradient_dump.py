"""Dump every registered objective's LightGBM-adapter gradients and Hessians on a fixed synthetic set.

usage: PYTHONPATH=<checkout> python benchmarks/gradient_dump.py OUT.npz

For each objective of boostplug.objectives.names() with default parameters: the gradient and Hessian the
LightGBM adapter (bpl.objective(name)(preds, dataset)) returns on make_ranking(300 queries, seed 7) at two fixed
random score vectors (keys '<name>/grad0', '<name>/hess0', '<name>/grad1', '<name>/hess1'). Objectives that need
inputs get them: QBRank also runs with explicit preference pairs ('qbrank+pairs/...': within-query pairs drawn
with a fixed seed, label_pairs kept). An objective that fails is reported and recorded under 'failed'.
Compare two dumps with:  python benchmarks/gradient_dump.py --compare A.npz B.npz
"""
import sys

import numpy as np


def variants(names):
    for name in names:
        yield name, name, {}
    yield "qbrank+pairs", "qbrank", "pairs"


def main(out):
    import lightgbm as lgb

    import boostplug
    from boostplug import lightgbm as bpl
    from boostplug import objectives
    from boostplug.data import make_ranking

    print("boostplug from", boostplug.__file__, file=sys.stderr)
    data = make_ranking(n_queries=300, docs_per_query=(2, 40), seed=7)
    X, y, qid = data.X, data.y, data.qid
    group_ptr = np.r_[0, np.flatnonzero(np.diff(qid)) + 1, len(qid)]
    sizes = np.diff(group_ptr)
    rng = np.random.default_rng(11)
    scores = [rng.normal(size=len(y)), 3.0 * rng.standard_t(3, size=len(y))]
    # explicit preference pairs: per query, up to 5 random (preferred, other) row pairs
    pairs = []
    for q in range(len(sizes)):
        a, n = group_ptr[q], sizes[q]
        for _ in range(min(5, n * (n - 1) // 2)):
            i, j = rng.choice(n, size=2, replace=False)
            pairs.append((a + i, a + j))
    pairs = np.array(pairs, dtype=np.int64)
    out_arrays, failed = {}, []
    for key, name, extra in variants(objectives.names()):
        params = {"pairs": pairs} if extra == "pairs" else {}
        try:
            ds = lgb.Dataset(X, y, group=sizes, params={"verbose": -1, "num_threads": 1}, free_raw_data=False)
            ds.construct()
            f = bpl.objective(name, threads=1, **params)
            for k, s in enumerate(scores):
                g, h = f(s.copy(), ds)
                out_arrays[f"{key}/grad{k}"] = np.asarray(g, dtype=np.float64)
                out_arrays[f"{key}/hess{k}"] = np.asarray(h, dtype=np.float64)
        except Exception as e:  # noqa: BLE001 - reported, the dump goes on
            failed.append(key)
            print(f"SKIPPED {key}: {type(e).__name__}: {e}", file=sys.stderr)
    out_arrays["failed"] = np.array(failed, dtype=str)
    np.savez(out, **out_arrays)
    print(f"{len(out_arrays) - 1} arrays of {len(set(k.split('/')[0] for k in out_arrays if '/' in k))} objectives "
          f"-> {out}; skipped: {failed or 'none'}")


def compare(a_path, b_path):
    a, b = np.load(a_path), np.load(b_path)
    keys = sorted((set(a.files) | set(b.files)) - {"failed"})
    same = True
    for k in keys:
        if k == "failed":
            continue
        if k not in a.files or k not in b.files:
            print(f"MISSING {k} in {'A' if k not in a.files else 'B'}")
            same = False
            continue
        x, z = a[k], b[k]
        if x.shape != z.shape:
            print(f"SHAPE {k}: {x.shape} vs {z.shape}")
            same = False
        elif not np.array_equal(x, z):
            rel = np.max(np.abs(x - z) / np.maximum(np.abs(x), np.abs(z)).clip(1e-300))
            print(f"DIFF {k}: {int(np.sum(x != z))} of {x.size} differ, max relative {rel:.3g}")
            same = False
    print("failed A:", list(a["failed"]), "B:", list(b["failed"]))
    print("ALL EQUAL (==)" if same else "DIFFERENCES above", f"({len(keys)} arrays)")
    return same


if __name__ == "__main__":
    if sys.argv[1] == "--compare":
        sys.exit(0 if compare(sys.argv[2], sys.argv[3]) else 1)
    main(sys.argv[1])
