"""PNG figures of a comparison (matplotlib, Agg backend): NDCG@10 against rounds
for every method (test and validation, one figure) and a bar chart of the final
test metrics with bootstrap 95% confidence intervals as error bars."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import numpy as np

from .._atomic import atomic_write
from .comparison import BOOTSTRAP_RESAMPLES, bootstrap, folds_finished, summary
from .protocol import CURVE_METRIC, Result, reported_metrics

__all__ = ["PLOT_FILES", "require_matplotlib", "curve_styles", "folds_title", "plot_curves", "plot_bars", "write_plots"]

PLOT_FILES = ("curves.png", "metrics.png")


def require_matplotlib() -> Any:
    """``matplotlib.pyplot`` on the Agg backend; ``ImportError`` with the install hint when missing."""
    try:
        import matplotlib
    except ImportError:
        raise ImportError("the plots need matplotlib: pip install 'boostplug[plot]'") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _mean_curve(curves: Sequence[Sequence[float]]) -> np.ndarray:
    """Mean over folds round by round, each fold's curve held at its last value when shorter."""
    n = max(len(c) for c in curves)
    padded = np.array([list(c) + [c[-1]] * (n - len(c)) if len(c) else [np.nan] * n for c in curves])
    return padded.mean(axis=0)


def _curve_limits(curves: Sequence[np.ndarray]) -> tuple[float, float]:
    """y range of the curve figure: that of the curves, leaving out a curve that jumps far more
    from round to round than the others (stump MPBoost.LOGDD alternates between two states
    every round): drawn anyway, it is clipped rather than squashing every other curve."""
    finite = [c[np.isfinite(c)] for c in curves if np.isfinite(c).sum() > 0]
    if not finite:
        return 0.0, 1.0
    rough = np.array([np.median(np.abs(np.diff(c))) if c.size > 2 else 0.0 for c in finite])
    typical = float(np.median(rough))
    kept = [c for c, r in zip(finite, rough) if r <= 10.0 * typical + 1e-12] or finite
    low = min(float(c.min()) for c in kept)
    high = max(float(c.max()) for c in kept)
    pad = max(0.002, 0.04 * (high - low))
    return low - pad, high + pad


#: Line styles of the curves, the most legible first: matplotlib's four named ones, then dash
#: patterns (offset, (on, off, ...)) in points; :func:`curve_styles` makes more when needed.
_LINE_STYLES: tuple[Any, ...] = (
    "-", "--", "-.", ":", (0, (5, 1)), (0, (1, 1)), (0, (3, 1, 1, 1)), (0, (3, 1, 1, 1, 1, 1)), (0, (8, 2)),
    (0, (1, 3)), (0, (6, 2, 1, 2, 1, 2)), (0, (4, 4)), (0, (10, 2, 2, 2)), (0, (2, 2)), (0, (12, 3)),
)


def curve_styles(names: Sequence[str]) -> dict[str, tuple[str, Any]]:
    """Per method name (in order) a colour and a line style of its own: no two methods share either,
    however many there are. Colours: matplotlib's ``tab10`` first (ten distinct hues), then the
    light halves of ``tab20``, ``tab20b`` and ``tab20c``, then evenly spaced hues; styles:
    :data:`_LINE_STYLES`, then further dash patterns."""
    from matplotlib import colormaps
    from matplotlib.colors import hsv_to_rgb, to_hex

    names = list(dict.fromkeys(names))
    palette = [to_hex(colormaps["tab10"](k)) for k in range(10)]
    palette += [to_hex(colormaps["tab20"](k)) for k in range(1, 20, 2)]
    palette += [to_hex(colormaps[m](k)) for m in ("tab20b", "tab20c") for k in range(20)]
    palette = list(dict.fromkeys(palette))
    k = 0
    while len(palette) < len(names):  # more methods than the qualitative colours: hues around the circle
        colour = to_hex(hsv_to_rgb((k * 0.618033988749895 % 1.0, 0.55 + 0.45 * (k % 2), 0.85)))
        if colour not in palette:
            palette.append(colour)
        k += 1
    # then dashes of growing length, each with a dot
    styles = [*_LINE_STYLES, *((0, (on, 2, 1, 2)) for on in range(2, 2 + len(names) - len(_LINE_STYLES)))]
    return {name: (palette[i], styles[i]) for i, name in enumerate(names)}


def folds_title(results: Sequence[Result]) -> str:
    """What a figure's values are over: ``"fold 3"`` for one fold, ``"mean over 5 folds"``, or,
    when the methods did not finish the same folds, ``"mean over each method's folds"``."""
    per_method = [set(f) for f in folds_finished(results).values()]
    folds = set().union(*per_method)
    if any(f != folds for f in per_method):
        return "mean over each method's folds"
    return f"fold {next(iter(folds)) + 1}" if len(folds) == 1 else f"mean over {len(folds)} folds"


def plot_curves(results: Sequence[Result], path: Path) -> None:
    """Test (left) and validation (right) NDCG@10 against rounds, mean over folds, one line per
    method, each in a colour and a line style of its own (:func:`curve_styles`)."""
    plt = require_matplotlib()
    names = list(dict.fromkeys(r.method for r in results))
    fig, axes = plt.subplots(1, 2, figsize=(13, 5.5 + 0.12 * max(0, len(names) - 12)), sharey=True)
    styles = curve_styles(names)
    drawn: list[np.ndarray] = []
    for name in names:
        rs = [r for r in results if r.method == name and r.test_curve]
        if not rs:
            continue
        colour, style = styles[name]
        for ax, attr in zip(axes, ("test_curve", "vali_ndcg10_curve")):
            y = _mean_curve([getattr(r, attr) for r in rs])
            drawn.append(y)
            ax.plot(np.arange(1, y.size + 1), y, color=colour, linestyle=style, label=name, lw=1.3)
    low, high = _curve_limits(drawn)
    over = folds_title(results)
    for ax, part in zip(axes, ("test", "validation")):
        ax.set_title(f"{part} {CURVE_METRIC.upper()} ({over})")
        ax.set_xlabel("round")
        ax.set_ylim(low, high)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel(CURVE_METRIC.upper())
    fig.legend(*axes[0].get_legend_handles_labels(), fontsize=7, loc="lower center",
               ncol=min(6, max(1, len(names))), frameon=False, handlelength=4)
    rows = -(-len(names) // 6)
    fig.tight_layout(rect=(0, 0.03 * rows + 0.01, 1, 1))
    _save(plt, fig, path)


def plot_bars(results: Sequence[Result], path: Path) -> None:
    """One panel per test metric, a horizontal bar per method (mean over folds, its bootstrap 95%
    confidence interval as error bars: :func:`.comparison.bootstrap`, which has a width with one fold
    too); each panel's axis is zoomed to the values (it does not start at 0), and the best mean
    is drawn darker."""
    plt = require_matplotlib()
    stats = summary(results)
    cis = bootstrap(results)
    names = list(stats)
    metrics = reported_metrics(results)
    n_m = len(metrics)
    fig, axes = plt.subplots(1, n_m, figsize=(2.6 * n_m + 1.6, 1.2 + 0.26 * max(4, len(names))), sharey=True)
    axes = np.atleast_1d(axes)
    ypos = np.arange(len(names))[::-1]
    for ax, metric in zip(axes, metrics):
        means = np.array([stats[n][metric]["mean"] for n in names], dtype=float)
        low = np.array([cis[n]["mean"][metric].low for n in names], dtype=float)
        high = np.array([cis[n]["mean"][metric].high for n in names], dtype=float)
        low, high = np.where(np.isnan(low), means, low), np.where(np.isnan(high), means, high)
        best = int(np.nanargmax(means)) if np.isfinite(means).any() else -1
        colors = ["#1f4e79" if k == best else "#7fa7cf" for k in range(len(names))]
        xerr = np.nan_to_num(np.vstack([means - low, high - means])).clip(min=0.0)
        ax.barh(ypos, means, xerr=xerr, color=colors, height=0.7, capsize=2, error_kw={"lw": 0.8})
        finite = np.isfinite(means)
        if finite.any():
            lo = float(np.min(low[finite]))
            hi = float(np.max(high[finite]))
            pad = max(0.005, 0.08 * (hi - lo))
            ax.set_xlim(max(0.0, lo - pad), min(1.0, hi + pad) if hi <= 1.0 else hi + pad)
        ax.set_title(metric.upper(), fontsize=10)
        ax.grid(axis="x", alpha=0.3)
        ax.tick_params(axis="x", labelsize=7)
    axes[0].set_yticks(ypos, names, fontsize=8)
    fig.suptitle(f"test metrics ({folds_title(results)}), 95% bootstrap CI error bars ({BOOTSTRAP_RESAMPLES} "
                 "resamples of the test queries within folds; axes zoomed, not from 0; best darker)", fontsize=9)
    fig.tight_layout()
    _save(plt, fig, path)


def _save(plt: Any, fig: Any, path: Path) -> None:
    """The figure as a PNG, written atomically (a failed write leaves the old file)."""
    try:
        with atomic_write(path, "wb") as f:
            fig.savefig(f, format="png", dpi=110)
    finally:
        plt.close(fig)


def write_plots(results: Sequence[Result], out: Path) -> list[Path]:
    """Both figures into ``out``; returns their paths."""
    paths = [out / f for f in PLOT_FILES]
    plot_curves(results, paths[0])
    plot_bars(results, paths[1])
    return paths
