"""``boostplug info PATH``: what is in a LETOR file, a fold folder, a parts folder or the embedded
``example``: for every data set, the statistics of :func:`summarize`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from ..data import RankingData, letor_layout, load_example, load_letor
from ..pairs import count_critical_pairs
from .errors import subcommand

__all__ = ["add_parser", "run", "summarize", "format_summary"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register the ``info`` subcommand on an argparse subparsers object."""
    p = subcommand(
        subparsers, "info", run, help="describe a LETOR/SVMlight file, a fold folder, or the embedded example",
        description="Queries, documents, features, label histogram, documents per query, single-label queries and "
                    "critical pairs of a LETOR/SVMlight ranking file, a folder Fold1..FoldK/{train,vali,test}.txt, "
                    "a folder of parts S1..Sk.txt, or 'example' (the data embedded in boostplug).")
    p.add_argument("path", metavar="PATH", help="a ranking file, a LETOR folder, or 'example'")
    return p


def summarize(data: RankingData) -> dict[str, Any]:
    """The statistics that ``boostplug info`` prints, as a dict: sizes, the label histogram, documents per
    query, the single-label queries (no preference pairs: pairwise and listwise objectives learn nothing
    from them) and the critical pairs."""
    sizes = data.sizes
    labels, counts = np.unique(data.y, return_counts=True)
    pairs = count_critical_pairs(data.y, data.group_ptr)
    return {
        "queries": data.n_queries,
        "documents": data.n_docs,
        "features": data.n_features,
        "labels": {float(v): int(c) for v, c in zip(labels, counts)},
        "docs_per_query": {
            "min": int(sizes.min()),
            "median": float(np.median(sizes)),
            "mean": float(sizes.mean()),
            "max": int(sizes.max()),
        },
        "single_label_queries": int(np.count_nonzero(pairs == 0)),  # one label: no critical pair
        "critical_pairs": int(pairs.sum()),
    }


def format_summary(title: str, s: dict[str, Any]) -> str:
    """Human-readable block for one data set."""
    n = s["documents"]
    hist = "  ".join(f"{int(v) if float(v).is_integer() else repr(v)}: {c:,} ({100.0 * c / n:.1f}%)"
                     for v, c in s["labels"].items())
    d = s["docs_per_query"]
    single = s["single_label_queries"]
    return "\n".join([
        title,
        f"  queries               {s['queries']:,}",
        f"  documents             {n:,}",
        f"  features              {s['features']:,}",
        f"  labels                {hist}",
        f"  docs per query        min {d['min']:,}, median {d['median']:g}, mean {d['mean']:.1f}, max {d['max']:,}",
        f"  single-label queries  {single:,} ({100.0 * single / s['queries']:.1f}%)",
        f"  critical pairs        {s['critical_pairs']:,}",
    ])


def _datasets(path_arg: str) -> list[tuple[str, RankingData]]:
    if path_arg == "example" and not Path(path_arg).exists():
        train, test = load_example()
        return [("example train (LightGBM rank.train, embedded)", train),
                ("example test (LightGBM rank.test, embedded)", test)]
    path = Path(path_arg)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file or folder")
    if not path.is_dir():  # load_letor refuses what is not a regular file (a FIFO) before opening it
        return [(str(path), load_letor(path))]
    layout = letor_layout(path)
    loaded = {f: load_letor(f) for files in layout.files for f in files}
    width = max(d.n_features for d in loaded.values())
    found = [(str(f), d.with_n_features(width)) for f, d in loaded.items()]
    if layout.kind == "parts":
        found.append((f"{path} (all {len(found)} parts)", RankingData.concat(*(d for _, d in found))))
    return found


def run(args: argparse.Namespace, stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    """Print the summary of ``args.path``; on a user error, one line on stderr and 2."""
    out = stdout if stdout is not None else sys.stdout
    err = stderr if stderr is not None else sys.stderr
    try:
        datasets = _datasets(args.path)
        blocks = [format_summary(title, summarize(d)) for title, d in datasets]
    except (FileNotFoundError, ValueError, TypeError, OSError) as e:
        message = " ".join(str(e).split())
        print(f"boostplug info: error: {message}", file=err)
        return 2
    print("\n\n".join(blocks), file=out)
    return 0
