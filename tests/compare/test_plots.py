"""curves.png: a colour and a line style of its own per method, read back from the figure, and a
title that says which folds the curves are over."""

from __future__ import annotations

import colorsys

import numpy as np
import pytest

from boostplug.compare import DEFAULT_METHODS, METHODS, REPORT_METRICS, Result

pytest.importorskip("matplotlib")
from boostplug.compare import plots  # noqa: E402  (needs matplotlib)


def _result(method: str, fold: int, framework: str = "lightgbm") -> Result:
    curve = list(np.linspace(0.5, 0.7, 6) + 0.01 * fold)
    per_query = {m: [0.5, 0.7] for m in REPORT_METRICS}
    return Result(method=method, framework=framework, fold=fold, best_round=4, rounds_trained=6, seconds=1.0,
                  select_metric="ndcg@10", test={m: 0.6 for m in REPORT_METRICS}, test_per_query=per_query,
                  vali_curve=curve, vali_ndcg10_curve=curve, test_curve=curve)


@pytest.mark.parametrize("n", [len(DEFAULT_METHODS), len(METHODS), 75])
def test_every_method_has_its_own_colour_and_line_style(n: int) -> None:
    names = list(METHODS)[:n] if n <= len(METHODS) else [f"m{k}" for k in range(n)]
    styles = plots.curve_styles(names)
    assert list(styles) == names
    colours = [c for c, _ in styles.values()]
    dashes = [repr(s) for _, s in styles.values()]
    assert len(set(colours)) == n and len(set(dashes)) == n


def test_lambdarank_and_regression_are_not_both_blue() -> None:
    """The default set's first two methods had two shades of one blue (tab20's pair)."""
    styles = plots.curve_styles(DEFAULT_METHODS)
    from matplotlib.colors import to_rgb

    hue = {n: colorsys.rgb_to_hsv(*to_rgb(styles[n][0]))[0] for n in ("lambdarank", "regression")}
    assert abs(hue["lambdarank"] - hue["regression"]) > 0.1


def _drawn(results: list[Result], monkeypatch, tmp_path):
    figures = []
    monkeypatch.setattr(plots, "_save", lambda plt, fig, path: figures.append(fig))
    plots.plot_curves(results, tmp_path / "curves.png")
    return figures[0]


def test_the_figure_draws_those_styles_and_titles_its_folds(monkeypatch, tmp_path) -> None:
    names = list(DEFAULT_METHODS)
    frameworks = {n: METHODS[n].framework for n in names}
    fig = _drawn([_result(n, f, frameworks[n]) for f in (0, 1) for n in names], monkeypatch, tmp_path)
    test_ax, vali_ax = fig.axes[:2]
    assert test_ax.get_title() == "test NDCG@10 (mean over 2 folds)"
    assert vali_ax.get_title() == "validation NDCG@10 (mean over 2 folds)"
    expected = plots.curve_styles(names)
    for ax in (test_ax, vali_ax):
        lines = {line.get_label(): line for line in ax.get_lines()}
        assert list(lines) == names
        from matplotlib.colors import to_hex

        assert [to_hex(lines[n].get_color()) for n in names] == [expected[n][0] for n in names]
        patterns = [repr(lines[n]._unscaled_dash_pattern) for n in names]  # what the line is drawn with
        assert len(set(patterns)) == len(names)
    one = _drawn([_result(n, 2) for n in names[:3]], monkeypatch, tmp_path)
    assert one.axes[0].get_title() == "test NDCG@10 (fold 3)"
    apart = _drawn([_result("a", 0), _result("b", 1)], monkeypatch, tmp_path)
    assert apart.axes[0].get_title() == "test NDCG@10 (mean over each method's folds)"
    plt = plots.require_matplotlib()
    for f in (fig, one, apart):
        plt.close(f)


def test_bar_chart_title_says_the_folds(monkeypatch, tmp_path) -> None:
    figures = []
    monkeypatch.setattr(plots, "_save", lambda plt, fig, path: figures.append(fig))
    plots.plot_bars([_result("a", 0), _result("b", 0)], tmp_path / "m.png")
    assert figures[0]._suptitle.get_text().startswith("test metrics (fold 1), 95% bootstrap CI error bars")
    plots.require_matplotlib().close(figures[0])


def test_the_bar_plot_has_a_panel_per_reported_metric(monkeypatch, tmp_path) -> None:
    """``--metrics ndcg@10,err@10,mrr,map``: metrics.png draws those four, in that order."""
    four = ["ndcg@10", "err@10", "mrr", "map"]
    results = [_result(n, 0) for n in ("lambdarank", "regression")]
    for r in results:
        r.test, r.test_per_query = {m: 0.6 for m in four}, {m: [0.5, 0.7] for m in four}
    figures = []
    monkeypatch.setattr(plots, "_save", lambda plt, fig, path: figures.append(fig))
    plots.plot_bars(results, tmp_path / "metrics.png")
    assert [ax.get_title() for ax in figures[0].axes] == [m.upper() for m in four]
