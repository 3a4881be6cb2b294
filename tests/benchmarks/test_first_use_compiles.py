"""First use held where it is, without a clock: the functions numba compiles on each entry point's
first use (``benchmarks/first_use_compiles.py --counts``, each in a fresh process with empty caches)
are at most today's count, so that no change quietly adds compile time. Timing on shared machines
cannot guard the aim of a first use within 2 s; a count does not depend on the machine's load."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCH))
from first_use import ENTRY_POINTS, MQ2008  # noqa: E402  (benchmarks/ is no package)
from first_use_compiles import _record  # noqa: E402

#: Today's compiles per entry point (docs/results/first_use/compiles_counts.txt and the three it leaves
#: out). A count that falls is progress: lower it here with the table.
COMPILES = {
    "lgb-builtin": 0, "lgb-qbrank": 14, "lgb-mpboost": 13, "lgb-ndcg_boost": 14, "lgb-lambdarank": 9,
    "lgb-ranknet": 6, "lgb-approx_ndcg": 11, "lgb-approx_ap-jax": 1, "lgb-approx_ap-mq2008": 58, "ndcg": 4,
    "metrics": 5, "qbrank": 14, "mpboost": 13, "ndcg_boost": 14, "lambdarank": 9, "xendcg": 10, "rank_ndcg": 20,
    "ranknet": 6, "listnet": 8, "ndcg_loss1": 9, "ndcg_loss2pp": 13, "yetirank": 14, "rankboost": 19,
    "rankboost+": 22, "adarank": 4, "mpboost-stumps": 13, "ndcg_boost-stumps": 17, "clicks": 6,
}


def test_every_entry_point_has_a_count() -> None:
    assert sorted(COMPILES) == sorted(ENTRY_POINTS)


_MQ2008 = [pytest.mark.realdata, pytest.mark.skipif(not MQ2008.is_dir(), reason="no MQ2008 in ../shared/data")]


@pytest.mark.slow  # a fresh interpreter and every kernel compiled: 3-10 s each, MQ2008's reader 80 s
@pytest.mark.parametrize("name", [pytest.param(n, marks=_MQ2008 if n.endswith("mq2008") else ()) for n in ENTRY_POINTS])
def test_first_use_compiles_no_more_than_today(name: str, tmp_path: Path) -> None:
    if name.endswith(("-jax", "-mq2008")):
        pytest.importorskip("jax")
    rows = _record(ENTRY_POINTS[name], str(tmp_path))["rows"]
    compiled = sorted(r["name"] for r in rows)
    assert len(rows) <= COMPILES[name], (f"{name} compiles {len(rows)} functions on its first use, "
                                         f"{COMPILES[name]} before: {compiled}")
