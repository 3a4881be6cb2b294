"""Shared helpers of the replication scripts (data, metrics, per-fold tables, outputs).

Every script takes ``--data`` (a LETOR folder: ``S1..S5.txt`` or ``Fold1..Fold5``; default
``../shared/data/MQ2008`` relative to the repository root; ``ohsumed``: ``../shared/data/OHSUMED``,
LETOR 3.0's OHSUMED, whose folds rotate differently (layout ``letor3``: Fold1 tests on S1); or ``example``: the
embedded LightGBM example as ``boostplug compare`` uses it by default, one fold: its train/test as
shipped and 20% of the training queries split off by query as vali, seed 0, through
:func:`boostplug.compare.data.example_split`), ``--tiny`` (a small synthetic data set instead,
for the tests: five folds of :func:`boostplug.data.make_ranking` queries, rotated like LETOR's
parts), ``--folds`` and ``--out`` (a folder for the JSON/PNG outputs).

The scripts import the boostplug of this checkout (the repository root goes first on
``sys.path``), not an installed copy.

Metric conventions (those of ``benchmarks/booster_table.py`` and ``docs/boosters.md``): a query
without a relevant document scores 0 (``empty=0.0``, as the LETOR evaluation script), gain
``2^r - 1``, discount ``1/log2(rank + 1)``, MAP with labels >= 1 relevant, and tied scores
averaged over their orders (``ties="average"``: a value that does not depend on the file's order).
On LETOR 3.0 data (OHSUMED) :func:`load_folds` switches to LETOR 3.0's evaluation script in full:
its discount (``discount="letor"``: ranks 1 and 2 undiscounted, then ``1/log2(rank)``, as the
MPBoost paper computes NDCG too) and its tie order (``ties="order"``: the script lists a query's
documents by their line in the file, then sorts them by score with Perl's stable merge sort, so
tied documents keep the file's order). ``--ties`` overrides the tie convention.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np
from numpy.typing import NDArray

REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))  # this checkout's boostplug, not an installed copy

from boostplug import metrics
from boostplug.data import RankingData, folds_from_parts, load_letor_folds, make_ranking

DEFAULT_DATA = REPO_ROOT.parent / "shared" / "data" / "MQ2008"
#: ``--data ohsumed``: LETOR 3.0's OHSUMED beside the repository
OHSUMED = "ohsumed"
OHSUMED_DATA = REPO_ROOT.parent / "shared" / "data" / "OHSUMED"
#: the NDCG discount of :func:`score`; :func:`load_folds` sets "letor" for LETOR 3.0 data
DISCOUNT = "log2"
#: the tie convention of :func:`score`; :func:`load_folds` sets it from ``--ties`` or the data
TIES = "average"
#: ``--data example``: the embedded LightGBM example, split as ``boostplug compare`` splits it.
EXAMPLE = "example"
EXAMPLE_WHAT = ("the embedded LightGBM example (boostplug compare's default data: train/test as shipped, "
                "20% of the training queries split off as vali, seed 0)")
Fold = tuple[RankingData, RankingData, RankingData]


def parser(description: str | None) -> argparse.ArgumentParser:
    """An argument parser with the options every replication script shares."""
    ap = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=_data_arg, default=DEFAULT_DATA,
                    help="LETOR folder (S1..S5.txt or Fold1..Fold5); 'ohsumed': LETOR 3.0's OHSUMED beside the "
                         "repository, with LETOR 3.0's folds and NDCG discount; or 'example': the embedded LightGBM "
                         "example, one fold, split as boostplug compare splits it")
    ap.add_argument("--tiny", action="store_true", help="small synthetic data instead of --data (for tests)")
    ap.add_argument("--folds", type=int, nargs="+", default=None, help="1-based folds to run (default: all)")
    ap.add_argument("--out", type=Path, default=None, help="folder for the JSON (and PNG) outputs")
    ap.add_argument("--ties", choices=("average", "order"), default=None,
                    help="tied scores in every metric: average (over their orders) or order (the file's order, as "
                         "LETOR 3.0's evaluation script); default: order on OHSUMED, average elsewhere")
    return ap


def start(ap: argparse.ArgumentParser, argv: list[str] | None,
          show: Callable[[dict[str, Any]], Any]) -> tuple[argparse.Namespace, dict[str, Any] | None]:
    """``(args, saved)``: ``argv`` parsed with a last option ``--summarize PATH`` added. With it,
    ``saved`` is the JSON written there (:func:`write_json`), after ``show(saved)`` has printed
    its tables, and the script returns it; without it, ``saved`` is ``None`` and the run is
    pinned to one thread (:func:`single_thread`)."""
    ap.add_argument("--summarize", type=Path, default=None, help="print the tables of a saved JSON and exit")
    args = ap.parse_args(argv)
    if args.summarize is None:
        single_thread()
        return args, None
    saved = load_json(args.summarize)
    show(saved)
    return args, saved


def _data_arg(text: str) -> Path | str:
    if text == OHSUMED:
        return OHSUMED_DATA
    return EXAMPLE if text == EXAMPLE else Path(text)


def is_letor3(path: Path | str) -> bool:
    """Whether a data folder is LETOR 3.0's OHSUMED (by its name, as ``--data ohsumed`` names it): its
    folds (layout ``letor3``) and NDCG discount differ from MQ2008's."""
    return Path(path).name.upper() == "OHSUMED"


def is_example(args: argparse.Namespace) -> bool:
    """Whether ``--data example`` was given (and not ``--tiny``)."""
    return not args.tiny and str(args.data) == EXAMPLE


def example_folds() -> list[Fold]:
    """The embedded example as one fold, exactly as ``boostplug compare`` splits it (its code)."""
    from boostplug.compare.data import example_split

    return [example_split(seed=0)]


def tiny_folds(n_queries: int = 30, seed: int = 0) -> list[Fold]:
    """Five LETOR-style folds (3 parts train, 1 vali, 1 test) of synthetic 3-grade data; every
    4th query is single-label (all grades 0)."""
    data = make_ranking(n_queries=n_queries, docs_per_query=(6, 14), n_features=6, n_informative=3,
                        n_labels=3, noise=1.0, seed=seed)
    g = data.group_ptr
    for q in range(0, data.n_queries, 4):  # every 4th query single-label (all 0), as in LETOR data
        data.y[g[q]:g[q + 1]] = 0.0
    idx = np.arange(data.n_queries)
    parts = [data.subset(p) for p in np.array_split(idx, 5)]
    return folds_from_parts(parts)


def _load_letor_folds(root: Path, layout: str) -> list[Fold]:
    """A LETOR folder's folds: parts ``S1..Sk`` partitioned as ``layout`` says
    (:data:`boostplug.data.LAYOUTS`), ``Fold1..FoldK`` folders read as they are."""
    from boostplug.data import letor_layout

    return load_letor_folds(root, layout if letor_layout(root).kind == "parts" else None)


def load_folds(args: argparse.Namespace) -> tuple[list[int], list[Fold], str]:
    """``(fold numbers, folds, description)`` selected by ``--tiny``/``--data``/``--folds``."""
    global DISCOUNT, TIES
    DISCOUNT = "log2"
    letor3 = False
    if args.tiny:
        folds, what = tiny_folds(), "tiny synthetic data (make_ranking, 30 queries, 3 grades)"
    elif is_example(args):
        folds, what = example_folds(), EXAMPLE_WHAT
    else:
        if not Path(args.data).exists():
            raise SystemExit(f"data folder not found: {args.data} (pass --data PATH, --data example or --tiny)")
        if is_letor3(args.data):
            folds = _load_letor_folds(args.data, "letor3")
            what = (f"{Path(args.data).name} (LETOR 3.0 folds: Fold1 trains on S2-S4, validates on S5, tests on S1; "
                    "NDCG discount 'letor')")
            DISCOUNT, letor3 = "letor", True
        else:
            folds, what = _load_letor_folds(args.data, "rotate"), str(args.data)
    TIES = getattr(args, "ties", None) or ("order" if letor3 else "average")
    numbers = args.folds or list(range(1, len(folds) + 1))
    bad = [f for f in numbers if not 1 <= f <= len(folds)]
    if bad:
        raise SystemExit(f"--folds {bad}: the data has folds 1..{len(folds)}")
    return numbers, [folds[f - 1] for f in numbers], what


def single_thread() -> None:
    """Run numba kernels on one thread (the machine is shared)."""
    import numba

    numba.set_num_threads(1)


def score(name: str, scores: NDArray[np.float64], d: RankingData, *, per_query: bool = False) -> Any:
    """``ndcg@k``, ``map`` or ``dcg@k`` with the conventions of the module docstring."""
    base, k = metrics.parse_name(name)
    if base == "ndcg":
        return metrics.ndcg(scores, d.y, d.group_ptr, k, discount=DISCOUNT, empty=0.0, ties=TIES,
                            per_query=per_query)
    if base == "dcg":
        return metrics.dcg(scores, d.y, d.group_ptr, k, discount=DISCOUNT, ties=TIES, per_query=per_query)
    if base == "map":
        return metrics.average_precision(scores, d.y, d.group_ptr, k, empty=0.0, ties=TIES,
                                         per_query=per_query)
    raise ValueError(f"score: unsupported metric {name!r} (ndcg@k, dcg@k or map)")


def best_round(curve: Sequence[float]) -> int:
    """1-based first round of the maximum (0 when the curve is empty)."""
    return int(np.argmax(curve)) + 1 if len(curve) else 0


def mean_std(values: Iterable[float]) -> str:
    v = np.asarray(list(values), dtype=np.float64)
    sd = v.std(ddof=1) if v.size > 1 else 0.0
    return f"{v.mean():.4f}±{sd:.4f}"


def fold_table(rows: dict[str, list[float]], numbers: list[int], label_width: int = 30) -> str:
    """One line per label: the per-fold values and their mean and standard deviation."""
    head = f"{'':{label_width}s} " + " ".join(f"{'Fold' + str(f):>8s}" for f in numbers) + f" {'mean±std':>15s}"
    lines = [head]
    for label, vals in rows.items():
        lines.append(f"{label:{label_width}s} " + " ".join(f"{x:8.4f}" for x in vals) + f" {mean_std(vals):>15s}")
    return "\n".join(lines)


def write_json(out: Path | None, name: str, payload: dict[str, Any]) -> None:
    if out is None:
        return
    out.mkdir(parents=True, exist_ok=True)
    (out / name).write_text(json.dumps(payload, indent=1, default=_jsonable))


def _jsonable(x: Any) -> Any:
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, (np.floating, np.integer)):
        return x.item()
    if isinstance(x, Path):
        return str(x)
    raise TypeError(f"not JSON serialisable: {type(x).__name__}")


def threads_note() -> str:
    keys = ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS")
    return ", ".join(f"{k}={os.environ.get(k)}" for k in keys)


def lgb_staged(booster: Any, X: Any, n: int) -> list[NDArray[np.float64]]:
    """Raw LightGBM scores after rounds 1..n (cumulative sums of one tree at a time)."""
    total = np.zeros(X.shape[0])
    out = []
    for t in range(n):
        total = total + booster.predict(X, start_iteration=t, num_iteration=1, raw_score=True)
        out.append(total.copy())
    return out


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the file-only Agg backend (imported here: only figures need it)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig: Any, png: Path) -> None:
    """Lay out ``fig``, write it to ``png`` (its folder made if missing) and close it."""
    import matplotlib.pyplot as plt

    fig.tight_layout()
    png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(png, dpi=110)
    plt.close(fig)


def paired(a: Sequence[float], b: Sequence[float], *, higher_is_better: bool = True) -> str:
    """``"better in k of n, mean diff d"``: how often and by how much ``a`` beats ``b`` (paired)."""
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if x.shape != y.shape:
        raise ValueError(f"paired: {x.size} values against {y.size}")
    wins = int(np.sum(x > y) if higher_is_better else np.sum(x < y))
    return f"better in {wins} of {x.size}, mean diff {float(np.mean(x - y)):+.4f}"


def load_json(path: Path) -> dict[str, Any]:
    """A JSON written by :func:`write_json` (for ``--summarize``)."""
    if not Path(path).exists():
        raise SystemExit(f"no such file: {path}")
    return json.loads(Path(path).read_text())
