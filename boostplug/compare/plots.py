"""PNG figures of a comparison (matplotlib, Agg backend): NDCG@10 against rounds
for every method (test and validation, one figure) and a bar chart of the final
test metrics with std-over-folds error bars."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import numpy as np

from .runner import CURVE_METRIC, REPORT_METRICS, Result, summary

__all__ = ["PLOT_FILES", "require_matplotlib", "plot_curves", "plot_bars", "write_plots"]

PLOT_FILES = ("curves.png", "metrics.png")


def require_matplotlib() -> Any:
    """``matplotlib.pyplot`` on the Agg backend; ``ImportError`` with the install hint when missing."""
    try:
        import matplotlib
    except ImportError:
        raise ImportError("the plots need matplotlib: pip install 'boostplug[plot]' (or run without --out plots: "
                          "--no-plots)") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _mean_curve(curves: Sequence[Sequence[float]]) -> np.ndarray:
    """Mean over folds round by round, each fold's curve held at its last value when shorter."""
    n = max(len(c) for c in curves)
    padded = np.array([list(c) + [c[-1]] * (n - len(c)) if len(c) else [np.nan] * n for c in curves])
    return padded.mean(axis=0)


def plot_curves(results: Sequence[Result], path: Path) -> None:
    """Test (left) and validation (right) NDCG@10 against rounds, mean over folds, one line per method."""
    plt = require_matplotlib()
    fig, axes = plt.subplots(1, 2, figsize=(13, 5), sharey=True)
    names = list(dict.fromkeys(r.method for r in results))
    cmap = plt.get_cmap("tab20")
    for k, name in enumerate(names):
        rs = [r for r in results if r.method == name and r.test_curve]
        if not rs:
            continue
        style = "-" if rs[0].framework == "lightgbm" else ("--" if rs[0].framework == "xgboost" else ":")
        for ax, attr in zip(axes, ("test_curve", "vali_ndcg10_curve")):
            y = _mean_curve([getattr(r, attr) for r in rs])
            ax.plot(np.arange(1, y.size + 1), y, style, color=cmap(k % 20), label=name, lw=1.3)
    for ax, part in zip(axes, ("test", "validation")):
        ax.set_title(f"{part} {CURVE_METRIC.upper()} (mean over folds)")
        ax.set_xlabel("round")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel(CURVE_METRIC.upper())
    axes[1].legend(fontsize=7, loc="lower right", ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_bars(results: Sequence[Result], path: Path) -> None:
    """Grouped bars: the test metrics of every method, std over folds as error bars."""
    plt = require_matplotlib()
    stats = summary(results)
    names = list(stats)
    fig, ax = plt.subplots(figsize=(max(8, 1.2 * len(REPORT_METRICS) * max(1, len(names)) / 3), 5))
    width = 0.8 / max(1, len(names))
    x = np.arange(len(REPORT_METRICS))
    cmap = plt.get_cmap("tab20")
    for k, name in enumerate(names):
        means = [stats[name][m]["mean"] for m in REPORT_METRICS]
        stds = [stats[name][m]["std"] for m in REPORT_METRICS]
        ax.bar(x + (k - (len(names) - 1) / 2) * width, means, width, yerr=stds, capsize=2,
               color=cmap(k % 20), label=name)
    ax.set_xticks(x, [m.upper() for m in REPORT_METRICS])
    ax.set_ylabel("test value (mean over folds, std error bars)")
    ax.legend(fontsize=7, ncol=3)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_plots(results: Sequence[Result], out: Path) -> list[Path]:
    """Both figures into ``out``; returns their paths."""
    paths = [out / f for f in PLOT_FILES]
    plot_curves(results, paths[0])
    plot_bars(results, paths[1])
    return paths
