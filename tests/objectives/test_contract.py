"""The objective contract itself (boostplug/objectives/_contract.py): declarations, the Loss base
class, the module-level functions it derives, and the registry's register/get/unregister, with
small objectives defined here."""

from __future__ import annotations

import numpy as np
import pytest

from boostplug.keyed_pairs import pair_rows
from boostplug.objectives import HESSIAN_FLOOR, NO_INFO_HESSIAN, Hessian, Loss, Param, Search
from boostplug.objectives._contract import check_contract


class HalfSquares(Loss):
    """0.5 * sum_q W_q sum_i scale * (s_i - y_i)^2: the smallest objective there is."""

    name = "half_squares"
    summary = "squared error on the grades (test objective)"
    params = {"scale": Param(1.0, "real", "multiplies the loss", low=0.0, high=1e6, low_open=True,
                             search=Search(0.5, 2.0, log=True))}
    hessians = {"exact": Hessian("exact", "scale * W_q")}

    def setup(self) -> None:
        self.row_weight = np.repeat(self.query_weights, np.diff(self.group_ptr)) * self.scale

    def _loss(self, scores):
        r = scores - self.labels
        return 0.5 * float(self.row_weight @ (r * r))

    def _grad_hess(self, scores):
        with np.errstate(over="ignore"):  # the base class refuses the overflow, naming the row
            return self.row_weight * (scores - self.labels), self.row_weight.copy()



class PairLogistic(Loss):
    """sum over critical pairs of log(1 + exp(-sigma (s_i - s_j))), with optional explicit pairs and
    two Hessian modes: every kind of parameter is declared here once."""

    name = "pair_logistic"
    summary = "pairwise logistic loss (test objective)"
    params = {
        "sigma": Param(1.0, "real", "logistic slope", low=0.0, high=100.0, low_open=True,
                       search=Search(0.5, 4.0, log=True)),
        "margin": Param("none", "real", "subtracted from each pair's score difference", low=0.0, high=10.0,
                        choices=("none",), search=Search(choices=("none", 0.5, 1.0))),
        "top": Param(None, "int", "an integer setting (the loss does not read it)", low=1,
                     search=Search(2, 10)),
        "mode": Param("grades", "choice", "which pairs", choices=("grades", "explicit", "both"), ignore_case=True),
        "strict": Param(True, "bool", "refuse a query without pairs"),
        "pairs": Param(None, "rows", "explicit pairs (row indices, preferred first)", convert=pair_rows),
        "tag": Param(None, "custom", "a label for the run: a non-empty string", convert=lambda v: _tag(v)),
    }
    hessians = {"exact": Hessian("exact", "the diagonal of the Hessian"),
                "bound": Hessian("bound", "twice the exact diagonal")}

    def setup(self) -> None:
        if self.mode == "explicit" and self.pairs is None:
            raise ValueError("pair_logistic: mode='explicit' needs pairs")
        listed: list[tuple[int, int]] = []
        if self.mode != "explicit":
            for q in range(self.n_queries):
                lo, hi = self.group_ptr[q], self.group_ptr[q + 1]
                listed += [(i, j) for i in range(lo, hi) for j in range(lo, hi) if self.labels[i] > self.labels[j]]
        if self.pairs is not None:
            listed += [tuple(p) for p in self.pairs.tolist()]
        self.pair_list = np.array(listed, dtype=np.int64).reshape(-1, 2)

    def _margins(self, scores):
        m = 0.0 if self.margin == "none" else self.margin
        i, j = self.pair_list[:, 0], self.pair_list[:, 1]
        return i, j, self.sigma * (scores[i] - scores[j]) - m

    def _loss(self, scores):
        _, _, z = self._margins(scores)
        return float(np.logaddexp(0.0, -z).sum())

    def _grad_hess(self, scores):
        i, j, z = self._margins(scores)
        p = 1.0 / (1.0 + np.exp(z))  # sigmoid(-z)
        g = np.zeros(self.n_docs)
        h = np.zeros(self.n_docs)
        np.add.at(g, i, -self.sigma * p)
        np.add.at(g, j, self.sigma * p)
        c = self.sigma ** 2 * p * (1.0 - p)
        np.add.at(h, i, c)
        np.add.at(h, j, c)
        return g, (2.0 * h if self.hessian == "bound" else h)


def _tag(value):
    if not isinstance(value, str) or not value:
        raise ValueError(f"tag must be a non-empty string, got {value!r}")
    return value


Y = np.array([2.0, 0.0, 1.0, 1.0, 0.0])
GP = np.array([0, 3, 5])
S = np.array([0.3, -0.2, 0.1, 0.0, 0.4])


# ---- declarations ----------------------------------------------------------------------------
@pytest.mark.parametrize("param,value,exc,match", [
    (Param(0.5, "real", low=0.0, high=1.0), 1.5, ValueError, r"obj: p must be a finite number in \[0, 1\], got 1.5"),
    (Param(0.5, "real", low=0.0, high=1.0), np.float64("nan"), ValueError, r"obj: p must be .* got nan$"),
    (Param(0.5, "real", low=0.0, high=1.0, low_open=True), 0.0, ValueError,
     r"obj: p must be a positive finite number in \(0, 1\], got 0.0"),
    (Param(0.5, "real"), "half", TypeError, "obj: p must be a number"),
    (Param(0.5, "real"), True, TypeError, "obj: p must be a number"),
    (Param("grade", "real", low=0.0, high=2.0, low_open=True, choices=("grade",)), "rank", ValueError,
     r"obj: p must be one of \['grade'\] or a number in \(0, 2\], got 'rank'"),
    (Param("grade", "real", low=0.0, high=2.0, low_open=True, choices=("grade",)), [1.0], TypeError,
     "obj: p must be a number"),
    (Param(3, "int", low=1, high=10), 11, ValueError, r"obj: p must be an integer in \[1, 10\], got 11"),
    (Param(3, "int", low=1), 0, ValueError, r"obj: p must be an integer >= 1, got 0"),
    (Param(3, "int", low=1), 2.0, TypeError, r"obj: p must be an integer >= 1, got 2.0"),
    (Param(3, "int"), True, TypeError, "obj: p must be an integer, got True"),
    (Param("a", "choice", choices=("a", "b")), "c", ValueError, r"obj: p must be one of \['a', 'b'\], got 'c'"),
    (Param("a", "choice", choices=("a", "b")), None, ValueError, r"obj: p must be one of \['a', 'b'\], got None"),
    (Param("a", "choice", choices=("a", "b")), "A", ValueError, "got 'A'"),
    (Param(True, "bool"), "yes", TypeError, "obj: p must be True or False; got 'yes'"),
    (Param(True, "bool"), 1, TypeError, "obj: p must be True or False; got 1"),
    (Param(None, "rows", convert=pair_rows), [[0, 1, 2]], ValueError, r"obj: p must have shape \(n_pairs, 2\)"),
    (Param(None, "rows", convert=pair_rows), [[0.0, 1.0]], TypeError, "obj: p must hold integer row indices"),
    (Param(None, "rows", convert=pair_rows), [[2, 2]], ValueError, r"obj: p\[0\] = \[2, 2\] pairs a row with itself"),
    (Param(None, "rows", convert=pair_rows), [[-1, 2]], ValueError, r"obj: p\[0\] = \[-1, 2\] is outside rows"),
    (Param(None, "custom", convert=_tag), "", ValueError, "obj: tag must be a non-empty string, got ''"),
    (Param(None, "custom", convert=lambda v: int("x")), 1, ValueError, "obj: p: invalid literal"),
])
def test_each_kind_refuses_a_bad_value_naming_objective_parameter_and_value(param, value, exc, match):
    with pytest.raises(exc, match=match):
        param.check(value, "p", objective="obj")


def test_each_kind_stores_the_checked_value():
    assert Param(0.5, "real").check(np.float64(2)) == 2.0 and type(Param(0.5, "real").check(2)) is float
    assert Param("grade", "real", choices=("grade",)).check("grade") == "grade"
    assert Param(3, "int").check(np.int32(4)) == 4 and type(Param(3, "int").check(np.int32(4))) is int
    assert Param("logdd", "choice", choices=("ldd", "logdd"), ignore_case=True).check("LogDD") == "logdd"
    assert Param(True, "bool").check(np.bool_(False)) is False
    assert Param(None, "rows", convert=pair_rows).check(None) is None and Param(None, "custom", convert=_tag).check(None) is None
    given = np.array([[0, 1], [2, 1]], dtype=np.int64)
    rows = Param(None, "rows", convert=pair_rows).check(given, "pairs", n_docs=3)
    np.testing.assert_array_equal(rows, given)
    assert rows.dtype == np.int64 and not rows.flags.writeable and given.flags.writeable  # a copy, read-only
    with pytest.raises(ValueError, match=r"obj: pairs\[1\] = \[2, 1\] is outside rows \[0, 2\)"):
        Param(None, "rows", convert=pair_rows).check(given, "pairs", objective="obj", n_docs=2)
    with pytest.raises(TypeError, match="must be a number"):  # None only where None is the default
        Param(0.5, "real").check(None)


@pytest.mark.parametrize("make,exc,match", [
    (lambda: Param(1.0, "float"), ValueError, "Param kind must be one of"),
    (lambda: Param("a", "choice"), TypeError, "needs choices"),
    (lambda: Param("a", "choice", choices=("a", 1)), TypeError, "choices must be strings"),
    (lambda: Param(None, "custom"), TypeError, "needs convert"),
    (lambda: Param(1.0, search=(0.0, 1.0)), TypeError, "search must be a Search"),
    (lambda: Search(0.1), TypeError, "needs low and high"),
    (lambda: Search(1.0, 0.5), ValueError, "low < high"),
    (lambda: Search(0.0, 1.0, log=True), ValueError, r"low > 0 \(log\)"),
    (lambda: Search(0.0, float("inf")), TypeError, "finite numbers"),
    (lambda: Search(0.0, 1.0, choices=("a",)), TypeError, "either choices or low/high"),
    (lambda: Hessian("approx", "text"), ValueError, "Hessian kind must be one of"),
    (lambda: Hessian("exact", ""), TypeError, "one-line text"),
    (lambda: Hessian("fitting", "t", gradient="approx"), ValueError, "Hessian gradient must be one of"),
    (lambda: Hessian("fitting", "t", gradient="scaled"), TypeError, "needs scaling="),
    (lambda: Hessian("fitting", "t", gradient="scaled", scaling=2.0), TypeError, "scaling must be a one-line text"),
    (lambda: Hessian("exact", "t", scaling="halved"), TypeError, "gradient='exact' is not rescaled"),
])
def test_malformed_declarations_are_refused(make, exc, match):
    with pytest.raises(exc, match=match):
        make()


def test_an_int_parameter_searches_integers():
    assert Param(3, "int", low=1, search=Search(2, 10)).search == Search(2, 10, integer=True)
    assert Param(1.0, search=Search(0.5, 2.0)).search.integer is False


# ---- the Loss base class ------------------------------------------------------------------------
def test_declared_parameters_defaults_and_the_automatic_hessian_choice():
    # one Hessian mode: no hessian parameter; every objective takes hessian_floor
    assert HalfSquares.defaults() == {"scale": 1.0, "hessian_floor": True}
    assert list(PairLogistic.defaults()) == ["sigma", "margin", "top", "mode", "strict", "pairs", "tag", "hessian",
                                             "hessian_floor"]
    hp = PairLogistic.declared_params()["hessian"]
    assert hp.kind == "choice" and hp.choices == ("exact", "bound") and hp.default == "exact"
    assert "exact (exact)" in hp.doc and "bound (bound)" in hp.doc
    assert PairLogistic.row_params() == ("pairs",) and HalfSquares.row_params() == ()
    assert PairLogistic.hessian_kinds() == {"exact": "exact", "bound": "bound"}
    assert PairLogistic.hessian_texts()["bound"] == "twice the exact diagonal"
    assert PairLogistic.gradient_kinds() == {"exact": "exact", "bound": "exact"}

    class Averaged(PairLogistic):
        hessians = {**PairLogistic.hessians,
                    "mean": Hessian("fitting", "mean pair weight", gradient="scaled", scaling="divided by the pairs")}

    check_contract(Averaged)
    assert Averaged.gradient_kinds() == {"exact": "exact", "bound": "exact", "mean": "scaled"}
    assert "mean (fitting, scaled gradient)" in Averaged.declared_params()["hessian"].doc

    class BoundFirst(PairLogistic):
        default_hessian = "bound"

    assert BoundFirst.defaults()["hessian"] == "bound"
    assert BoundFirst(Y, GP).hessian == "bound"
    assert HalfSquares(Y, GP).hessian == "exact"  # the one mode


def test_parameters_are_checked_stored_and_setup_runs():
    obj = PairLogistic(Y, GP, sigma=2, mode="BOTH", pairs=[[1, 3]], top=4, tag="run")
    assert obj.settings == {"sigma": 2.0, "margin": "none", "top": 4, "mode": "both", "strict": True,
                            "pairs": obj.pairs, "tag": "run", "hessian": "exact", "hessian_floor": True}
    assert obj.sigma == 2.0 and type(obj.sigma) is float and obj.mode == "both"
    np.testing.assert_array_equal(obj.pairs, [[1, 3]])
    assert obj.pair_list.shape == (5, 2)  # setup ran: 4 critical pairs + the explicit one
    with pytest.raises(ValueError, match=r"pair_logistic: pairs\[0\] = \[1, 9\] is outside rows \[0, 5\)"):
        PairLogistic(Y, GP, pairs=[[1, 9]])  # bound to data: the rows are checked against it


def test_unknown_parameter_says_did_you_mean():
    with pytest.raises(ValueError, match=r"unknown parameter\(s\) \['sigam'\] for objective 'pair_logistic'; "
                                         r"did you mean 'sigma'\? its parameters are \["):
        PairLogistic(Y, GP, sigam=2.0)
    with pytest.raises(ValueError, match=r"\['sigam', 'zzz'\] .*did you mean 'sigma' for 'sigam'\? its"):
        PairLogistic.check(sigam=2.0, zzz=1)
    with pytest.raises(ValueError, match=r"unknown parameter\(s\) \['zzz'\] for objective 'half_squares'; its"):
        HalfSquares.check(zzz=1)  # nothing close: no guess
    with pytest.raises(ValueError, match="unknown parameter.*'hessian'"):
        HalfSquares(Y, GP, hessian="exact")  # one mode: no hessian parameter


def test_check_validates_without_data():
    assert PairLogistic.check(sigma=3, hessian="bound") == {**PairLogistic.defaults(), "sigma": 3.0, "hessian": "bound"}
    resolved = PairLogistic.check(pairs=[[10, 400]], mode="explicit")  # any row index: no data here
    np.testing.assert_array_equal(resolved["pairs"], [[10, 400]])
    with pytest.raises(ValueError, match=r"pair_logistic: pairs\[0\] = \[3, 3\] pairs a row with itself"):
        PairLogistic.check(pairs=[[3, 3]])  # its form is checked all the same
    with pytest.raises(ValueError, match="pair_logistic: mode='explicit' needs pairs"):
        PairLogistic.check(mode="explicit")  # setup's checks run on the stand-in
    with pytest.raises(ValueError, match=r"pair_logistic: hessian must be one of \['exact', 'bound'\], got 'newton'"):
        PairLogistic.check(hessian="newton")
    with pytest.raises(TypeError, match="pair_logistic: strict must be True or False"):
        PairLogistic.check(strict="no")


def test_loss_and_grad_hess_checks_scores_floors_and_refuses_overflow():
    obj = PairLogistic(Y, GP, hessian="bound")
    g, h = obj.grad_hess(S)
    assert g.shape == (5,) and np.all(h >= HESSIAN_FLOOR)
    eps = 1e-6
    for i in range(5):  # grad = d loss / d score
        e = np.zeros(5)
        e[i] = eps
        assert g[i] == pytest.approx((obj.loss(S + e) - obj.loss(S - e)) / (2 * eps), rel=1e-6, abs=1e-9)
    assert obj.loss(S) == pytest.approx(PairLogistic(Y, GP).loss(S))
    np.testing.assert_allclose(h, 2.0 * PairLogistic(Y, GP).grad_hess(S)[1], rtol=1e-15)
    with pytest.raises(ValueError, match="pair_logistic: got 4 scores for a data set of 5 documents"):
        obj.loss(S[:4])
    with pytest.raises(ValueError, match="scores must be finite; row 1"):
        obj.grad_hess([0.0, np.nan, 0.0, 0.0, 0.0])
    # a document of no pair (query 2 has one document): no information
    _, h1 = PairLogistic([1.0, 0.0, 3.0], [0, 2, 3]).grad_hess([0.0, 0.0, 5.0])
    assert h1[2] == NO_INFO_HESSIAN
    with pytest.raises(ValueError, match=r"half_squares: the gradient or Hessian overflows float64 at row 0 \(query 0"):
        HalfSquares([1.0, 0.0], [0, 2], scale=1e6).grad_hess([1.7e308, 0.0])


def test_labels_groups_and_weights_are_validated_and_kept_read_only():
    obj = HalfSquares(Y, GP, weights=[1.0, 3.0])
    np.testing.assert_array_equal(obj.query_weights, [1.0, 3.0])
    assert not obj.labels.flags.writeable and not obj.group_ptr.flags.writeable
    assert obj.loss(np.zeros(5)) == pytest.approx(0.5 * (4 + 1) + 0.5 * 3 * 1)
    with pytest.raises(ValueError, match="labels must be non-negative"):
        HalfSquares([1.0, -1.0], [0, 2])
    with pytest.raises(ValueError, match=r"weights \(one per query\) has length 3"):
        HalfSquares(Y, GP, weights=[1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="group_ptr"):
        HalfSquares(Y, [0, 3])


# ---- the contract, checked when an objective is registered ------------------------------------------
def _subclass(**attrs):
    base = attrs.pop("base", HalfSquares)
    return type("Broken", (base,), attrs)


@pytest.mark.parametrize("make,exc,match", [
    (lambda: int, TypeError, "subclass of boostplug.objectives.Loss"),
    (lambda: _subclass(name=""), TypeError, "Broken declares no name"),
    (lambda: _subclass(base=Loss, name="x", hessians={"exact": Hessian("exact", "t")}), TypeError,
     r"Broken does not implement _loss\(scores\)"),
    (lambda: _subclass(_grad_hess=Loss._grad_hess), TypeError, r"Broken does not implement _grad_hess\(scores\)"),
    (lambda: _subclass(hessians={}), TypeError, "Broken declares no Hessian mode"),
    (lambda: _subclass(hessians={"exact": "the diagonal"}), TypeError, r"hessians\['exact'\] must be a Hessian"),
    (lambda: _subclass(hessians={"exact": Hessian("exact", "t", gradient="scaled", scaling="halved")}), ValueError,
     r"hessians\['exact'\] declares a scaled gradient with a 'exact' Hessian: only a 'fitting'"),
    (lambda: _subclass(hessians={"b": Hessian("bound", "t", gradient="scaled", scaling="halved")}), ValueError,
     r"hessians\['b'\] declares a scaled gradient with a 'bound' Hessian"),
    (lambda: _subclass(default_hessian="newton"), ValueError, r"default_hessian = 'newton' is not among .*\['exact'\]"),
    (lambda: _subclass(params={"hessian": Param("a", "choice", choices=("a",))}), TypeError,
     "declares a 'hessian' parameter"),
    (lambda: _subclass(params={"scale": 1.0}), TypeError, r"params\['scale'\] must be a Param"),
    (lambda: _subclass(params={"labels": Param(1.0)}), TypeError, "parameter name 'labels'"),
    (lambda: _subclass(params={"setup": Param(1.0)}), TypeError, "parameter name 'setup'"),
    (lambda: _subclass(params={"scale": Param(0.0, low=0.0, low_open=True)}), ValueError,
     r"the default of 'scale' fails its own check: half_squares: scale must be a positive finite number"),
    (lambda: _subclass(params={"scale": Param(1.0, low=0.0, high=2.0, search=Search(0.5, 4.0))}), ValueError,
     r"the search range of 'scale' leaves its own range: .*got 4.0"),
    (lambda: _subclass(params={"m": Param("a", "choice", choices=("a", "b"), search=Search(choices=("a", "c")))}),
     ValueError, r"the search range of 'm' leaves its own range: .*got 'c'"),
])
def test_a_class_that_breaks_the_contract_is_named(make, exc, match):
    with pytest.raises(exc, match=match):
        check_contract(make())


def test_the_test_objectives_follow_the_contract():
    check_contract(HalfSquares)
    check_contract(PairLogistic)


# ---- the spellings that moved ---------------------------------------------------------------------
def test_the_modules_former_functions_are_gone():
    """One way to ask for a gradient, the registry entry's (it binds the objective and asks the bound
    one): the objective modules' former prepare/loss/grad_hess (and MPBoost's log_loss) and
    module_functions are not kept under their old names (CHANGELOG.md lists the renames)."""
    from boostplug import objectives
    from boostplug.objectives import approx_ndcg, listmle, mpboost, ndcg_boost, qbrank, softmax_ce, xendcg

    assert not hasattr(objectives, "module_functions")
    for module in (qbrank, mpboost, ndcg_boost, xendcg, listmle, approx_ndcg, softmax_ce):
        for fn in ("loss", "grad_hess", "prepare", "log_loss"):
            with pytest.raises(AttributeError, match=f"module '{module.__name__}' has no attribute '{fn}'"):
                getattr(module, fn)


# ---- the registry -------------------------------------------------------------------------------------
@pytest.fixture
def registered():
    """Registry names added by a test, removed afterwards."""
    from boostplug import objectives

    before = objectives.names()
    yield objectives
    for name in objectives.names():
        if name not in before:
            objectives.unregister(name)
    assert objectives.names() == before


def test_a_registered_objective_is_served_by_name(registered):
    entry = registered.register(PairLogistic)
    assert registered.names()[-1] == "pair_logistic" and registered.get("Pair_Logistic") is entry
    obj = registered.get("pair_logistic")
    g, h = obj.grad_hess(S, Y, GP, weights=[1.0, 2.0], sigma=2.0)
    g2, h2 = PairLogistic(Y, GP, weights=[1.0, 2.0], sigma=2.0).grad_hess(S)
    np.testing.assert_array_equal(g, g2)
    np.testing.assert_array_equal(h, h2)
    assert obj.loss(S, Y, GP) == PairLogistic(Y, GP).loss(S)
    assert isinstance(obj.prepare(Y, GP), PairLogistic)
    assert (obj.name, obj.loss_class, obj.summary) == ("pair_logistic", PairLogistic, PairLogistic.summary)
    assert obj.defaults == PairLogistic.defaults() and dict(obj.fixed) == {}
    assert obj.hessians == {"exact": "the diagonal of the Hessian", "bound": "twice the exact diagonal"}
    assert obj.hessian_kinds == {"exact": "exact", "bound": "bound"}
    assert obj.gradient_kinds == {"exact": "exact", "bound": "exact"}
    assert obj.row_params == ("pairs",)
    assert {k: dict(v) for k, v in obj.methods.items()} == {"pair_logistic": {}}
    assert obj.search_space({}) == {"sigma": Search(0.5, 4.0, log=True), "margin": Search(choices=("none", 0.5, 1.0)),
                                    "top": Search(2, 10, integer=True)}
    assert obj.module.__name__ == __name__
    obj.check({"pairs": [[0, 7]], "mode": "explicit"})
    with pytest.raises(ValueError, match=r"pair_logistic: sigma must be a positive finite number in \(0, 100\], "
                                         r"got -1"):
        obj.check({"sigma": -1})
    with pytest.raises(ValueError, match=r"unknown parameter.*'sigmaa'.*did you mean 'sigma'"):
        obj.grad_hess(S, Y, GP, sigmaa=1.0)


def test_fixed_parameters_and_methods(registered):
    entry = registered.register(PairLogistic, name="pair_logistic_bound", summary="the bound Hessian, fixed",
                                fixed={"hessian": "bound", "mode": "Both"},
                                methods={"plb": {}, "plb-strong": {"sigma": 3}})
    assert dict(entry.fixed) == {"hessian": "bound", "mode": "both"}  # stored as checked
    assert entry.defaults["hessian"] == "bound" and entry.summary == "the bound Hessian, fixed"
    assert {k: dict(v) for k, v in entry.methods.items()} == {"plb": {}, "plb-strong": {"sigma": 3.0}}
    np.testing.assert_array_equal(entry.grad_hess(S, Y, GP)[1], PairLogistic(Y, GP, hessian="bound").grad_hess(S)[1])
    entry.check({"hessian": "bound"})  # the fixed value itself is accepted
    with pytest.raises(ValueError, match=r"objective 'pair_logistic_bound' fixes hessian='bound'; got hessian='exact'"):
        entry.loss(S, Y, GP, hessian="exact")
    with pytest.raises(ValueError, match="fixes hessian='bound'"):
        entry.search_space({"hessian": "exact"})
    assert "hessian" not in entry.search_space({})


@pytest.mark.parametrize("kwargs,exc,match", [
    ({"name": "qbrank"}, ValueError,
     r"objective 'qbrank' is already registered \(QBRankObjective\); pass replace=True"),
    ({"name": "Pair"}, ValueError, "an objective name must be lower case"),
    ({"name": "pair[1]"}, ValueError, "an objective name must be lower case"),
    ({"summary": " "}, ValueError, "needs a one-line summary"),
    ({"fixed": {"sigmaa": 1.0}}, ValueError, r"unknown parameter.*'sigmaa'.*did you mean 'sigma'"),
    ({"fixed": {"sigma": 0.0}}, ValueError, r"pair_logistic: sigma must be a positive finite number"),
    ({"fixed": {"pairs": [[0, 1]]}}, ValueError, r"fixed cannot fix \['pairs'\]: row indices belong to one training"),
    ({"fixed": [("sigma", 1.0)]}, TypeError, "fixed must be a dict"),
    ({"methods": {"qbrank": {}}}, ValueError, r"method name 'qbrank' is already listed by objective 'qbrank'"),
    ({"methods": {"mpboost-ldd": {}}}, ValueError, "already listed by objective 'mpboost'"),
    ({"methods": {"Bad Name": {}}}, ValueError, "method name must be lower case"),
    ({"methods": {"pl": {"strict": "yes"}}}, TypeError, "pair_logistic: strict must be True or False"),
    ({"fixed": {"strict": False}, "methods": {"pl": {"strict": False}}}, ValueError,
     r"method 'pl' sets \['strict'\], which the objective fixes"),
])
def test_register_refuses_naming_the_problem(registered, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        registered.register(PairLogistic, **kwargs)
    assert "pair_logistic" not in registered.names()


def test_register_checks_the_contract_and_replace_keeps_the_place(registered):
    with pytest.raises(TypeError, match="Broken does not implement _grad_hess"):
        registered.register(_subclass(_grad_hess=Loss._grad_hess))
    with pytest.raises(TypeError, match="subclass of boostplug.objectives.Loss"):
        registered.register(object)
    registered.register(HalfSquares)
    registered.register(PairLogistic)
    order = registered.names()

    class HalfSquaresTwice(HalfSquares):
        def _loss(self, scores):
            return 2.0 * super()._loss(scores)

    with pytest.raises(ValueError, match="already registered"):
        registered.register(HalfSquaresTwice)
    registered.register(HalfSquaresTwice, replace=True)
    assert registered.names() == order and registered.get("half_squares").loss_class is HalfSquaresTwice
    doubled = registered.get("half_squares").loss(np.zeros(5), Y, GP)
    assert doubled == pytest.approx(2 * HalfSquares(Y, GP).loss(np.zeros(5)))


def test_unregister(registered):
    registered.register(HalfSquares)
    entry = registered.unregister("half_squares")
    assert entry.loss_class is HalfSquares and "half_squares" not in registered.names()
    with pytest.raises(ValueError, match=r"unknown objective 'half_squares'; choose one of \['qbrank'"):
        registered.get("half_squares")
    with pytest.raises(ValueError, match="unknown objective 'half_squares'"):
        registered.unregister("half_squares")


def test_an_unknown_objective_name_suggests_the_closest():
    from boostplug import objectives

    with pytest.raises(ValueError, match=r"unknown objective 'MPBost'; did you mean 'mpboost'\? choose one of "
                                         r"\['qbrank', 'mpboost', 'ndcg_boost', 'rankboost'"):
        objectives.get("MPBost")
    with pytest.raises(ValueError, match=r"unknown objective 'oblivious'; choose one of \["):
        objectives.get("oblivious")  # nothing close: no guess


def test_the_built_in_entries():
    from boostplug import objectives
    from boostplug.objectives import mpboost, ndcg_boost, qbrank

    assert objectives.names()[:4] == ["qbrank", "mpboost", "ndcg_boost", "rankboost"]
    expect = {
        "qbrank": (qbrank.QBRankObjective, {}, {"qbrank": {}}, ("pairs", "labeled_rows"), {"bound": "bound", "mean": "fitting"}),
        "mpboost": (mpboost.MPBoostObjective, {},
                    {f"mpboost-{d}": {"ddf": d} for d in ("binary", "ldd", "logdd", "logitdd")},
                    (), {"newton": "exact", "gentle": "fitting"}),
        "ndcg_boost": (ndcg_boost.NDCGBoostObjective, {}, {"ndcg_boost": {}}, (), {"bound": "bound", "exact": "exact"}),
        "rankboost": (mpboost.MPBoostObjective, {"ddf": "binary"}, {"rankboost-loss": {}}, (),
                      {"newton": "exact", "gentle": "fitting"}),
    }
    for name, (cls, fixed, methods, rows, kinds) in expect.items():
        e = objectives.get(name)
        assert e.loss_class is cls and dict(e.fixed) == fixed and e.row_params == rows and e.hessian_kinds == kinds
        # only QBRank's "mean" (the paper's averaged targets) rescales d loss / d score
        assert e.gradient_kinds == {m: "scaled" if (name, m) == ("qbrank", "mean") else "exact" for m in kinds}
        assert {k: dict(v) for k, v in e.methods.items()} == methods
        assert e.module.__name__ == cls.__module__
    # compare --tune's ranges
    assert objectives.get("qbrank").search_space() == {"w": Search(0.1, 0.9),
                                                       "tau": Search(choices=("grade", 0.5, 1.0, 2.0))}
    mp = objectives.get("mpboost")
    assert mp.search_space() == {"lam": Search(0.3, 10.0, log=True)}
    assert mp.search_space({"ddf": "ldd"}) == {"alpha": Search(0.05, 1.0, log=True)}
    assert mp.search_space({"ddf": "LOGITDD"}) == {"beta": Search(0.1, 5.0, log=True)}
    assert mp.search_space({"ddf": "binary"}) == {} and objectives.get("rankboost").search_space() == {}
    assert objectives.get("ndcg_boost").search_space() == {"sigma": Search(0.5, 8.0, log=True)}
    assert objectives.get("mpboost").prepare([1.0, 0.0], [0, 2], ddf="binary").log_loss([0.0, 0.0]) == 0.0



class StoredHessian(Loss):
    """Gradient 2 s - y with a Hessian array it keeps (zeros): the floor must not reach it."""

    name = "stored_hessian"
    hessians = {"exact": Hessian("exact", "0 (test objective)")}

    def setup(self) -> None:
        self.zeros = np.zeros(self.n_docs)
        self.shape_bug = False

    def _loss(self, scores):
        return 0.0

    def _grad_hess(self, scores):
        with np.errstate(over="ignore"):
            grad = 2.0 * scores - self.labels
        return (np.zeros(self.n_docs + 1) if self.shape_bug else grad), self.zeros


def test_the_floor_never_writes_into_an_array_the_objective_keeps():
    obj = StoredHessian(np.array([1.0, 0.0, 2.0]), np.array([0, 3]))
    g, h = obj.grad_hess(np.array([0.5, 0.5, 1.0]))     # rows 0 and 2: grad 0 and hess 0, no information
    np.testing.assert_array_equal(g, [0.0, 1.0, 0.0])
    np.testing.assert_array_equal(h, [NO_INFO_HESSIAN, HESSIAN_FLOOR, NO_INFO_HESSIAN])
    np.testing.assert_array_equal(obj.zeros, 0.0)
    obj.shape_bug = True
    with pytest.raises(ValueError, match=r"stored_hessian: _grad_hess returned shapes \(4,\) and \(3,\) for 3 "
                                         r"scores; both must be \(3,\)"):
        obj.grad_hess(np.zeros(3))


def test_non_finite_values_are_refused_naming_the_first_row_and_their_count():
    big = np.finfo(np.float64).max
    obj = StoredHessian(np.zeros(4), np.array([0, 2, 4]))
    with pytest.raises(ValueError, match=r"stored_hessian: the gradient or Hessian overflows float64 at row 2 "
                                         r"\(query 1, 2 such rows\): grad inf"):
        obj.grad_hess(np.array([1.0, 0.0, big, -big]))
