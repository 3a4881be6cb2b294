"""Click logs several click test files share: a random log, a small valid one with chosen
changes (``_with``), and the comparison of two sets of preferences."""

from __future__ import annotations

import numpy as np

from boostplug import clicks


def random_log(rng: np.random.Generator, n_sessions: int = 60, n_queries: int = 4, pool: int = 6,
               p_click: float = 0.4, shuffle: bool = True) -> dict[str, np.ndarray]:
    """Sessions of 1..2 impressions on a few queries whose documents come from a small pool
    (so pairs recur and contradict), click times with ties, rows shuffled."""
    cols: dict[str, list] = {c: [] for c in ("session", "query", "doc", "position", "clicked", "order")}
    for s in range(n_sessions):
        for q in rng.choice(n_queries, size=rng.integers(1, 3), replace=False):
            n = int(rng.integers(1, min(pool, 7) + 1))
            docs = rng.choice(pool, size=n, replace=False)
            clicked = rng.random(n) < p_click
            times = rng.integers(0, 3, size=n).astype(float)  # few values: ties in time
            for k in range(n):
                cols["session"].append(f"s{s}")
                cols["query"].append(int(q))
                cols["doc"].append(f"d{docs[k]}")
                cols["position"].append(k + 1)
                cols["clicked"].append(int(clicked[k]))
                cols["order"].append(times[k] if clicked[k] else np.nan)
    out = {k: np.asarray(v) for k, v in cols.items()}
    if shuffle:
        perm = rng.permutation(out["session"].shape[0])
        out = {k: v[perm] for k, v in out.items()}
    return out


def same(a: clicks.Preferences, b: clicks.Preferences) -> None:
    for (name, x), y in zip(a.columns().items(), b.columns().values()):
        np.testing.assert_array_equal(np.asarray(x).astype(str) if name in ("query", "preferred", "other") else x,
                                      np.asarray(y).astype(str) if name in ("query", "preferred", "other") else y,
                                      err_msg=name)


def _impressions() -> dict[str, list]:
    """Three good impressions: session 1 (query 'a'), session 2 (queries 'a' and 'b')."""
    return {"session": [1, 1, 1, 2, 2, 2, 2], "query": ["a", "a", "a", "a", "a", "b", "b"],
            "doc": [10, 11, 12, 10, 11, 20, 21], "position": [1, 2, 3, 1, 2, 1, 2],
            "clicked": [0, 1, 0, 1, 0, 0, 1], "order": [np.nan, 1.0, np.nan, 4.0, np.nan, np.nan, 2.0],
            "dwell": [np.nan, 30.0, np.nan, 5.0, np.nan, np.nan, 12.0]}


def _with(**changes: dict[int, object]) -> dict[str, np.ndarray]:
    log = _impressions()
    for column, rows in changes.items():
        for row, value in rows.items():
            log[column][row] = value
    return {k: np.asarray(v, dtype=object if k in ("session", "query", "doc") else None) for k, v in log.items()}
