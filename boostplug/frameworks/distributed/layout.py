"""Whole queries per partition, whatever engine holds the partitions: each partition's runs of
equal query keys (found where the partition lives), and the first query whose rows start a run
twice (in two partitions, or twice in one), found on the driver from one key per run. The
engines read the query ids where the partitions are and word the refusal with their own fix
(:func:`boostplug.spark.partition.check_partitions`, :func:`boostplug.dask.check_partitions`)."""

from __future__ import annotations

from itertools import groupby
from typing import Any, Iterable, Sequence

__all__ = ["query_runs", "first_split"]


def query_runs(keys: Iterable[Any]) -> tuple[list[Any], list[int]]:
    """``([key of each run of equal consecutive keys], [rows of each run])`` of one partition."""
    runs = [(key, sum(1 for _ in rows)) for key, rows in groupby(keys)]
    return [key for key, _ in runs], [n for _, n in runs]


def first_split(runs_by_partition: Iterable[tuple[int, Sequence[Any]]]) -> tuple[Any, int, int] | None:
    """``(key, partition of its first run, partition of its next run)`` of the first key that
    starts two runs (the two partitions equal when both runs are in one), from ``(partition,
    [key of each run])`` pairs in partition order; ``None`` when every query is one run."""
    seen: dict[Any, int] = {}
    for part, keys in runs_by_partition:
        for key in keys:
            if key in seen:
                return key, seen[key], part
            seen[key] = part
    return None
