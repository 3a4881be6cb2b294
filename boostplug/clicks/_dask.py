"""Click logs as Dask DataFrames: each partition is validated and its pairs counted where it
lives (:func:`boostplug.clicks._counts.partition_counts`); only the partial counts (one row per
distinct directed pair of the partition) and the partition's session ids travel back, where they
are summed. A session must lie within one partition (``ddf.shuffle(on=<session column>)``
arranges that): the session ids are compared across partitions and a split session is a
``ValueError`` naming it.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from ._counts import merge_partials, partition_counts, roles_of
from .extraction import Extraction
from .log import Dropped

__all__ = ["reduce_partitions"]


def reduce_partitions(ddf: Any, ex: Extraction, columns: Mapping[str, str | None] | None, on_bad: str,
                      check_roles: Callable[[dict[str, str]], None]) -> tuple[dict[str, str], Dropped]:
    """Count the pairs of every partition of ``ddf`` into ``ex``; returns the
    columns by role and the merged report of dropped impressions."""
    import dask

    roles = roles_of(columns, ddf.columns, check_roles)
    tasks = [dask.delayed(partition_counts)(part, i, roles, ex.mask, ex.min_dwell, ex.inverse_propensity, on_bad)
             for i, part in enumerate(ddf.to_delayed())]
    return roles, merge_partials(list(dask.compute(*tasks)), ex)
