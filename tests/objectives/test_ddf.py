"""Tests of MPBoost's directed distance functions (Zhu et al., CIKM 2009, Eq. 2-8)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from boostplug.objectives.ddf import DDF_DEFAULTS, DDF_NAMES, check_ddf, ddf_values

MAGNITUDE = ("ldd", "logdd", "logitdd")
DELTAS = np.array([-4.0, -2.5, -1.0, -0.1, 0.0, 0.1, 1.0, 2.5, 4.0])


def _param(ddf: str) -> float:
    return check_ddf(ddf)[1]


def test_figure2_defaults_and_names():
    assert DDF_DEFAULTS == {"alpha": 0.2, "lam": 3.0, "beta": 0.5}
    assert DDF_NAMES == ("binary", "ldd", "logdd", "logitdd")
    assert check_ddf("binary") == ("binary", 0.0)
    assert check_ddf("ldd") == ("ldd", 0.2)
    assert check_ddf("logdd") == ("logdd", 3.0)
    assert check_ddf("logitdd") == ("logitdd", 0.5)
    assert check_ddf("LogDD", lam=2) == ("logdd", 2.0)


@pytest.mark.parametrize("delta", DELTAS)
def test_values_are_the_papers_equations(delta):
    sg = float(np.sign(delta))
    assert ddf_values(delta, "binary") == sg  # Eq. 2
    assert ddf_values(delta, "ldd", 0.2) == pytest.approx(0.2 * delta, abs=0)  # Eq. 6
    assert ddf_values(delta, "logdd", 3.0) == pytest.approx(sg * math.log(1 + 3.0 * abs(delta)), rel=1e-15)  # Eq. 7
    assert ddf_values(delta, "logitdd", 0.5) == pytest.approx(sg / (1 + math.exp(-0.5 * abs(delta))), rel=1e-15)  # Eq. 8


def test_known_points():
    assert ddf_values(1.0, "logdd", 3.0) == pytest.approx(math.log(4.0))
    assert ddf_values(4.0, "ldd", 0.2) == pytest.approx(0.8)
    assert ddf_values(2.0, "logitdd", 0.5) == pytest.approx(1 / (1 + math.exp(-1.0)))


@pytest.mark.parametrize("ddf", DDF_NAMES)
def test_sign_oddness_and_zero(ddf):
    p = _param(ddf)
    v = ddf_values(DELTAS, ddf, p)
    np.testing.assert_array_equal(np.sign(v), np.sign(DELTAS))  # Eq. 3
    np.testing.assert_allclose(ddf_values(-DELTAS, ddf, p), -v, rtol=0, atol=0)
    assert ddf_values(0.0, ddf, p) == 0.0


@pytest.mark.parametrize("ddf", MAGNITUDE)
def test_magnitude_preserving(ddf):
    """Eq. 4: |delta| > |delta'| implies |dist| > |dist'| (strictly)."""
    a = np.linspace(0.0, 10.0, 101)
    v = np.abs(ddf_values(a, ddf, _param(ddf)))
    assert (np.diff(v) > 0).all()


def test_binary_ignores_magnitude_and_logitdd_range():
    assert set(np.abs(ddf_values(DELTAS[DELTAS != 0], "binary"))) == {1.0}
    v = np.abs(ddf_values(np.linspace(0.01, 50, 200), "logitdd", 0.5))
    assert (v > 0.5).all() and (v < 1.0).all()  # (-1, -0.5] U [0.5, 1) (Section 3.2.3)


@pytest.mark.parametrize("ddf", DDF_NAMES)
def test_table(ddf):
    levels = np.array([0.0, 1.0, 2.0, 4.0])
    p = _param(ddf)
    t = ddf_values(levels[:, None] - levels[None, :], ddf, p)
    assert t.shape == (4, 4)
    np.testing.assert_array_equal(t, -t.T)
    for a in range(4):
        for b in range(4):
            assert t[a, b] == ddf_values(levels[a] - levels[b], ddf, p)
    assert (t[np.tril_indices(4, -1)] > 0).all()  # higher level over lower: positive


def test_extreme_deltas_finite():
    d = np.array([-1e300, -1e6, 1e6, 1e300])
    for ddf in DDF_NAMES:
        if ddf == "ldd":  # alpha * 1e300 is beyond DIST_MAX: refused, not returned
            with pytest.raises(ValueError, match=r"alpha=0.2 gives \|dist\| = 2e\+299 for the grade difference 1e\+300"):
                ddf_values(d, ddf, _param(ddf))
            d_ldd = np.array([-1e6, 1e6])
            assert np.isfinite(ddf_values(d_ldd, ddf, _param(ddf))).all()
            continue
        v = ddf_values(d, ddf, _param(ddf))
        assert np.isfinite(v).all()


@pytest.mark.parametrize(
    "kwargs,exc,match",
    [
        ({"ddf": "cosh"}, ValueError, "cosh"),
        ({"ddf": None}, ValueError, "None"),
        ({"ddf": "ldd", "alpha": 0.0}, ValueError, "alpha"),
        ({"ddf": "ldd", "alpha": -0.2}, ValueError, "alpha"),
        ({"ddf": "logdd", "lam": float("nan")}, ValueError, "lam"),
        ({"ddf": "logitdd", "beta": float("inf")}, ValueError, "beta"),
        ({"ddf": "logdd", "lam": "3"}, TypeError, "lam"),
        ({"ddf": "logitdd", "beta": True}, TypeError, "beta"),
    ],
)
def test_check_ddf_errors(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        check_ddf(**kwargs)


def test_ddf_values_unknown_name():
    with pytest.raises(ValueError, match="cosh"):
        ddf_values(1.0, "cosh")
