"""objectives.PairwiseLoss: an objective from three per-pair functions. Its loss, gradient and
Hessians against a double loop over the pairs and against finite differences, compiled (serial and
parallel) and numpy pair functions, training through LightGBM, XGBoost and ``boostplug compare``,
and the errors a bad pair function gets."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numba
import numpy as np
import pytest
from scipy.special import expit

from boostplug import objectives
from boostplug._core import dispatch as kernel_dispatch  # not `dispatch`: check_objective would see a module of kernels
from boostplug.data import make_ranking
from boostplug.objectives import NonFiniteError, PairwiseLoss, Param, Search
from boostplug.objectives.pairwise import BOUND, EXACT
from boostplug.testing import check_objective, fd_gradient, fd_jacobian


class Logistic(PairwiseLoss):
    """``log(1 + exp(-sigma d))``, numba-compiled, both Hessian modes, pairs weighted by gain difference."""

    name = "test_pair_logistic"
    summary = "pairwise logistic loss (test objective)"
    params = {"sigma": Param(1.0, "real", "slope", low=0.0, low_open=True, search=Search(0.5, 4.0, log=True))}
    hessians = {"exact": EXACT, "bound": BOUND}

    @staticmethod
    def pair_loss(d, sigma):
        z = sigma * d
        return math.log1p(math.exp(z)) - z if z < 0.0 else math.log1p(math.exp(-z))

    @staticmethod
    def pair_grad(d, sigma):
        e = math.exp(-abs(sigma * d))
        return -sigma / (1.0 + e) if d < 0.0 else -sigma * e / (1.0 + e)

    @staticmethod
    def pair_hess(d, sigma):
        e = math.exp(-abs(sigma * d))
        return sigma * sigma * e / (1.0 + e) ** 2

    def pair_weights(self, high, low):
        return 2.0 ** high - 2.0 ** low


class NumpyLogistic(Logistic):
    """The same loss through scipy's ``expit``, which numba cannot compile: numpy arrays of all pairs."""

    name = "test_pair_logistic_numpy"
    pair_loss = staticmethod(lambda d, sigma: np.logaddexp(0.0, -sigma * d))
    pair_grad = staticmethod(lambda d, sigma: -sigma * expit(-sigma * d))
    pair_hess = staticmethod(lambda d, sigma: sigma * sigma * expit(sigma * d) * expit(-sigma * d))


class Cubic(PairwiseLoss):
    """``(margin - d)^3 / 3`` while ``d < margin``: non-negative, with a second derivative that is not
    constant; ``pair_args`` overridden (a derived constant)."""

    name = "test_pair_cubic"
    summary = "cubic hinge (test objective)"
    params = {"margin": Param(1.0, "real", "margin", low=0.0, low_open=True)}
    hessians = {"exact": EXACT, "bound": BOUND}

    def pair_args(self):
        return (self.margin, 1.0 / 3.0)

    @staticmethod
    def pair_loss(d, margin, third):
        return third * max(0.0, margin - d) ** 3

    @staticmethod
    def pair_grad(d, margin, third):
        return -max(0.0, margin - d) ** 2

    @staticmethod
    def pair_hess(d, margin, third):
        return 2.0 * max(0.0, margin - d)


def brute(cls, labels, group_ptr, scores, weights, args, bound=False):
    """Loss, gradient and Hessian by a double loop over every query's pairs, from the pair functions."""
    f = {n: getattr(cls, n) for n in ("pair_loss", "pair_grad", "pair_hess")}
    call = (lambda fn, d: float(np.asarray(fn(np.array([d]), *args))[0])) if cls is NumpyLogistic else \
        (lambda fn, d: fn(d, *args))
    n = labels.shape[0]
    loss, grad, hess = 0.0, np.zeros(n), np.zeros(n)
    for q in range(group_ptr.shape[0] - 1):
        for i in range(group_ptr[q], group_ptr[q + 1]):
            for j in range(group_ptr[q], group_ptr[q + 1]):
                if labels[i] <= labels[j] or weights[q] == 0.0:
                    continue
                w = weights[q] * (2.0 ** labels[i] - 2.0 ** labels[j] if cls in (Logistic, NumpyLogistic) else 1.0)
                d = scores[i] - scores[j]
                loss += w * call(f["pair_loss"], d)
                g = w * call(f["pair_grad"], d)
                h = w * call(f["pair_hess"], d)
                h = 2.0 * abs(h) if bound else h
                grad[i] += g
                grad[j] -= g
                hess[i] += h
                hess[j] += h
    return loss, grad, hess


def random_data(seed):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 12, 7)
    group_ptr = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    n = int(group_ptr[-1])
    labels = rng.integers(0, 4, n).astype(float)
    weights = rng.choice([0.0, 0.5, 1.0, 3.0], sizes.size)
    return labels, group_ptr, rng.normal(size=n) * 2, weights


@pytest.fixture(params=["serial", "parallel"])
def kernels(request, monkeypatch):
    monkeypatch.setattr(kernel_dispatch, "PARALLEL_MIN_WORK", 10**18 if request.param == "serial" else 0)
    return request.param


@pytest.mark.parametrize("cls, args", [(Logistic, (1.5,)), (NumpyLogistic, (1.5,)), (Cubic, (0.7, 1 / 3))])
@pytest.mark.parametrize("mode", ["exact", "bound"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_sums_are_those_of_a_double_loop_over_the_pairs(cls, args, mode, seed, kernels) -> None:
    labels, group_ptr, scores, weights = random_data(seed)
    param = {"sigma": args[0]} if "sigma" in cls.params else {"margin": args[0]}
    obj = cls(labels, group_ptr, weights=weights, hessian=mode, **param)
    loss, grad, hess = brute(cls, labels, group_ptr, scores, weights, args, bound=mode == "bound")
    assert obj.loss(scores) == pytest.approx(loss, rel=1e-12)
    g, h = obj.grad_hess(scores)
    np.testing.assert_allclose(g, grad, rtol=1e-12, atol=1e-12)
    no_info = (grad == 0.0) & (hess == 0.0)
    np.testing.assert_allclose(h[~no_info], np.maximum(hess[~no_info], objectives.HESSIAN_FLOOR), rtol=1e-12)
    assert np.all(h[no_info] == objectives.NO_INFO_HESSIAN)


def test_serial_and_parallel_kernels_agree_exactly(monkeypatch) -> None:
    labels, group_ptr, scores, weights = random_data(4)
    obj = Logistic(labels, group_ptr, weights=weights, hessian="bound")
    kernel_for, chosen = kernel_dispatch.kernel_for, []

    def spy(kernel, work):
        run = kernel_for(kernel, work)
        chosen.append(bool(run.targetoptions.get("parallel")))
        return run

    monkeypatch.setattr(kernel_dispatch, "kernel_for", spy)
    monkeypatch.setattr(kernel_dispatch, "PARALLEL_MIN_WORK", 10**18)
    serial = obj.loss(scores), *obj.grad_hess(scores)
    monkeypatch.setattr(kernel_dispatch, "PARALLEL_MIN_WORK", 0)
    parallel = obj.loss(scores), *obj.grad_hess(scores)
    assert chosen == [False, False, True, True] or numba.get_num_threads() < 2
    assert serial[0] == parallel[0]
    for a, b in zip(serial[1:], parallel[1:]):
        assert np.array_equal(a, b)


@pytest.mark.parametrize("cls", [Logistic, NumpyLogistic, Cubic])
def test_finite_differences_of_the_loss(cls) -> None:
    labels, group_ptr, scores, weights = random_data(3)
    obj = cls(labels, group_ptr, weights=weights)
    g, h = obj.grad_hess(scores)
    np.testing.assert_allclose(g, fd_gradient(obj.loss, scores), rtol=1e-6, atol=1e-6)
    exact = np.diag(fd_jacobian(lambda s: obj.grad_hess(s)[0], scores))
    involved = ~((g == 0.0) & (h == objectives.NO_INFO_HESSIAN))
    np.testing.assert_allclose(h[involved], np.maximum(exact[involved], objectives.HESSIAN_FLOOR), rtol=1e-5,
                               atol=1e-6)


@pytest.mark.parametrize("cls", [Logistic, NumpyLogistic, Cubic])
def test_they_pass_the_contract_checks(cls) -> None:
    assert check_objective(cls)


def test_the_numpy_path_is_taken_only_where_numba_cannot_compile() -> None:
    labels, group_ptr, _, _ = random_data(0)
    assert Logistic(labels, group_ptr)._fns.compiled and Cubic(labels, group_ptr)._fns.compiled
    assert not NumpyLogistic(labels, group_ptr)._fns.compiled


# ---- training -----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def data():
    return make_ranking(n_queries=30, docs_per_query=(4, 9), n_features=5, n_informative=3, seed=2)


@pytest.fixture
def registered():
    entries = [objectives.register(Logistic), objectives.register(Cubic)]
    yield entries
    for e in entries:
        objectives.unregister(e.name)


def test_it_trains_through_lgb_train_and_xgb_train(registered, data) -> None:
    lgb = pytest.importorskip("lightgbm")
    xgb = pytest.importorskip("xgboost")
    from boostplug import lightgbm as bpl
    from boostplug import xgboost as bpx

    for entry in registered:
        bound = entry.prepare(data.y, data.group_ptr)
        start = bound.loss(np.zeros(data.y.shape[0]))
        params = {"objective": bpl.objective(entry.name), "verbose": -1, "num_threads": 1, "min_data_in_leaf": 3,
                  "learning_rate": 0.3, "deterministic": True}
        booster = lgb.train(params, bpl.dataset(data.X, data.y, group_ptr=data.group_ptr), 10)
        assert bound.loss(booster.predict(data.X, raw_score=True)) < 0.8 * start
        xbooster = xgb.train({**bpx.params(), "max_depth": 3, "eta": 0.3, "nthread": 1},
                             bpx.dmatrix(data.X, data.y, group_ptr=data.group_ptr), 10,
                             obj=bpx.objective(entry.name))
        assert bound.loss(xbooster.predict(xgb.DMatrix(data.X), output_margin=True)) < 0.8 * start


def test_a_registered_one_runs_in_compare(registered, letor_file: Path, tmp_path: Path, capsys) -> None:
    from boostplug.cli import main

    out = tmp_path / "out"
    assert main(["compare", "--data", str(letor_file), "--kfold", "3", "--folds", "1", "--methods",
                 "test_pair_logistic,xgb-test_pair_cubic,test_pair_logistic:sigma=2.5", "--rounds", "3",
                 "--no-progress", "--no-plots", "--out", str(out)]) == 0
    assert "test_pair_logistic[sigma=2.5]" in capsys.readouterr().out
    payload = json.loads((out / "results.json").read_text())
    assert [r["method"] for r in payload["results"]] == ["test_pair_logistic", "xgb-test_pair_cubic",
                                                         "test_pair_logistic[sigma=2.5]"]
    assert not payload["failures"]


# ---- mistakes --------------------------------------------------------------------------------------------
def _class(**body):
    return type("Bad", (PairwiseLoss,), {"name": "bad_pairs", "summary": "a bad pairwise loss",
                                          "params": {"sigma": Param(1.0, "real", "slope")},
                                          "pair_loss": staticmethod(lambda d, sigma: 0.0),
                                          "pair_grad": staticmethod(lambda d, sigma: 0.0),
                                          "pair_hess": staticmethod(lambda d, sigma: 0.0), **body})


def test_a_pair_function_of_the_wrong_arguments_is_refused_when_the_class_is_defined() -> None:
    with pytest.raises(TypeError, match=r"Bad\.pair_grad\(d\) must take \(d, sigma\)"):
        _class(pair_grad=staticmethod(lambda d: 0.0))
    with pytest.raises(TypeError, match=r"Bad\.pair_hess must be a @staticmethod"):
        _class(pair_hess=lambda self, d, sigma: 0.0)
    with pytest.raises(TypeError, match=r"does not define pair_loss"):
        type("Bad", (PairwiseLoss,), {"name": "bad_pairs", "pair_grad": staticmethod(lambda d: 0.0),
                                      "pair_hess": staticmethod(lambda d: 0.0)})
    with pytest.raises(TypeError, match=r"hessians\['fit'\].*'exact' Hessian"):
        _class(hessians={"fit": objectives.Hessian("fitting", "weights")})


def test_pair_args_of_the_wrong_length_are_refused_when_bound() -> None:
    bad = _class(pair_args=lambda self: (self.sigma, 2.0))
    with pytest.raises(TypeError, match=r"Bad\.pair_loss\(d, sigma\) must take \(d and 2 more"):
        bad(np.array([1.0, 0.0]), np.array([0, 2]))


def test_a_pair_function_that_returns_no_number_is_refused() -> None:
    bad = _class(pair_hess=staticmethod(lambda d, sigma: (d, sigma)))
    with pytest.raises(TypeError, match=r"Bad\.pair_hess must return one number per pair difference"):
        bad(np.array([1.0, 0.0]), np.array([0, 2]))


def test_a_pair_function_neither_numba_nor_numpy_can_run_is_refused() -> None:
    def branchy(d, sigma):  # an if on a numpy array, and a call numba cannot compile
        return float(expit(d)) if d > 0 else 0.0

    bad = _class(pair_grad=staticmethod(branchy))
    with pytest.raises(TypeError, match=r"numba cannot compile Bad\.pair_grad.*called on a numpy array.*fails"):
        bad(np.array([1.0, 0.0]), np.array([0, 2]))


def test_a_nan_from_a_pair_function_names_the_function_and_the_difference() -> None:
    bad = _class(pair_grad=staticmethod(lambda d, sigma: math.sqrt(d) if d >= 0.0 else math.nan))
    obj = bad(np.array([1.0, 0.0, 2.0]), np.array([0, 3]))
    with pytest.raises(NonFiniteError, match=r"a bug in bad_pairs's _grad_hess.*Bad\.pair_grad\(-0\.5, 1\.0\), "
                                             r"which returns nan") as info:
        obj.grad_hess(np.array([0.0, 0.5, 1.0]))
    assert info.value.cause == "objective" and info.value.row == 0
    nan_loss = _class(pair_loss=staticmethod(lambda d, sigma: math.nan))(np.array([1.0, 0.0]), np.array([0, 2]))
    with pytest.raises(NonFiniteError, match=r"Bad\.pair_loss\(0\.0, 1\.0\), which returns nan"):
        nan_loss.loss(np.zeros(2))


def test_bad_pair_weights_are_refused() -> None:
    bad = _class(pair_weights=lambda self, high, low: low - high)
    with pytest.raises(ValueError, match=r"bad_pairs: pair_weights \(one per critical pair\) must be finite and "
                                         r"non-negative; row 0 has -1\.0"):
        bad(np.array([1.0, 0.0]), np.array([0, 2]))


# ---- what numba cannot compile, and pair functions that raise --------------------------------------------
def _importing_loss(d, sigma):
    import numpy  # numba: UnsupportedBytecodeError (IMPORT_NAME), which is no NumbaError

    return numpy.logaddexp(0.0, -sigma * d)


def _storing_loss(d, sigma):
    a, *rest = (np.logaddexp(0.0, -sigma * d), 0.0)  # numba: UNPACK_EX, unsupported bytecode too
    return a


@pytest.mark.parametrize("loss", [_importing_loss, _storing_loss])
def test_every_function_numba_cannot_compile_takes_the_numpy_path(loss) -> None:
    cls = type("ImportingLogistic", (NumpyLogistic,), {"name": "test_pair_importing", "pair_loss": staticmethod(loss)})
    labels, group_ptr, scores, weights = random_data(3)
    obj = cls(labels, group_ptr, weights=weights, sigma=1.5)
    assert not obj._fns.compiled
    expected = NumpyLogistic(labels, group_ptr, weights=weights, sigma=1.5).loss(scores)
    assert obj.loss(scores) == pytest.approx(expected, rel=1e-12)


def test_an_error_of_numba_itself_while_compiling_is_not_taken_for_cannot_compile(monkeypatch) -> None:
    from boostplug.objectives import pairwise

    def broken(*args):
        raise KeyError("a bug inside numba")

    monkeypatch.setattr(pairwise, "_compile", broken)
    with pytest.raises(KeyError, match="a bug inside numba"):
        _class()(np.array([1.0, 0.0]), np.array([0, 2]))


def _where(message: str) -> str:
    return rf"bad_pairs: Bad\.{message}"


def test_a_compiled_pair_function_that_raises_names_itself_its_arguments_and_the_pair(kernels) -> None:
    from boostplug.objectives.pairwise import PairFunctionError

    bad = _class(pair_grad=staticmethod(lambda d, sigma: sigma / d))
    labels, group_ptr = np.array([1.0, 0.0, 2.0, 0.0, 1.0]), np.array([0, 3, 5])
    obj = bad(labels, group_ptr)
    assert obj._fns.compiled
    scores = np.array([0.0, 0.5, 1.0, 2.0, 2.0])  # query 1's rows 4 (label 1) and 3 (label 0) are tied: d = 0
    with pytest.raises(PairFunctionError, match=_where(r"pair_grad\(0\.0, 1\.0\) raises ZeroDivisionError: .*on the "
                                                       r"pair of rows 4 \(preferred\) and 3 of query 1")) as info:
        obj.grad_hess(scores)
    e = info.value
    assert (e.function, e.arguments, e.query, e.rows) == ("Bad.pair_grad", (0.0, 1.0), 1, (4, 3))
    assert isinstance(e.__cause__, ZeroDivisionError)
    assert obj.loss(scores) == 0.0  # pair_loss does not divide
    moved = scores + np.arange(5.0) / 10  # no tie left: the kernel's result
    d = moved[4] - moved[3]
    np.testing.assert_allclose(obj.grad_hess(moved)[0][3:], [-1 / d, 1 / d], rtol=1e-12)


def test_a_numpy_pair_function_that_raises_on_some_pairs_names_the_first_one() -> None:
    from boostplug.objectives.pairwise import PairFunctionError

    def refusing(d, sigma):
        if np.any(d == 0.5):
            raise ValueError("d = 0.5 is refused")
        return expit(d) * sigma

    obj = _class(pair_loss=staticmethod(refusing))(np.array([1.0, 0.0, 2.0, 0.0, 1.0]), np.array([0, 3, 5]))
    assert not obj._fns.compiled
    with pytest.raises(PairFunctionError, match=_where(r"pair_loss\(0\.5, 1\.0\) raises ValueError: d = 0\.5 is "
                                                       r"refused, on the pair of rows 2 \(preferred\) and 0 of "
                                                       r"query 0")):
        obj.loss(np.array([1.0, 7.0, 1.5, 2.0, 3.0]))


def test_a_pair_function_that_always_raises_shows_its_exception() -> None:
    from boostplug.objectives.pairwise import PairFunctionError

    def failing(d, sigma):
        raise RuntimeError("not written yet")

    with pytest.raises(PairFunctionError, match=_where(r"pair_hess\(1\.0, 1\.0\) raises RuntimeError: not written "
                                                       r"yet")) as info:
        _class(pair_hess=staticmethod(failing))(np.array([1.0, 0.0]), np.array([0, 2]))
    assert "returns none" not in str(info.value) and isinstance(info.value.__cause__, RuntimeError)


def test_running_out_of_memory_is_not_blamed_on_a_pair_function(monkeypatch) -> None:
    obj = _class(pair_loss=staticmethod(lambda d, sigma: sigma / d))(np.array([1.0, 0.0]), np.array([0, 2]))

    def out_of_memory(scores):
        raise MemoryError("the sums' arrays")

    monkeypatch.setattr(obj, "_loss_sums", out_of_memory)
    with pytest.raises(MemoryError, match="the sums' arrays"):  # not a PairFunctionError for d = 0
        obj.loss(np.zeros(2))
