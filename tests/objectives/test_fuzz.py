"""Bounded fuzzing (hypothesis, derandomized, a few seconds) of every registered objective and of
the booster model files:

* every objective and Hessian mode, at each configuration the registry lists, on random queries
  (ties, one-document queries, all-equal labels, query weights including 0, scores up to
  +-1.7e308): finite gradients and positive finite Hessians, or a ValueError naming the objective;
  shifting all scores by a constant changes nothing in a query with two grades or more (one with
  a single grade may be anchored: the contract suite's invariance), of an objective that declares
  itself shift-invariant;
* every public parameter with hostile values (NaN, inf, huge, negative, wrong types, strings):
  accepted values give finite results, the others a ValueError/TypeError naming the parameter
  with plain numbers (no ``np.float64(...)``);
* random corruptions of a valid model file: it loads and predicts exactly as the original, or it
  is a ValueError naming the file.
"""

from __future__ import annotations

import functools
import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from boostplug import objectives
from boostplug.boosters import AdaRank, MPBoost, NDCGBoost, RankBoost, load
from boostplug.objectives import NO_INFO_HESSIAN
from boostplug.objectives._contract import NonFiniteError
from boostplug.testing import Case, cases, contract_data, multi_label_queries

#: fuzzed scores starve the Hessians on purpose: the floor's advice is for training, not for these
pytestmark = pytest.mark.filterwarnings("ignore::boostplug.objectives.HessianFloorWarning")

FUZZ = settings(derandomize=True, max_examples=40, deadline=None, database=None)

#: The registry's configurations (defaults, methods) and the row-index parameters built from the data.
CONFIGURATIONS = [c for c in cases() if c.configuration]

SCORE_VALUES = [0.0, 1.0, -1.0, 0.5, 1e-300, 1e300, -1e300, 1.7e308, -1.7e308, 1e17, 3.0]

#: every mode of every objective; of the losses written in JAX, whose modes are their base's code (approx_ap fuzzes
#: them all), the default only: each mode and batch shape is a JAX compile of seconds
MODES = [(name, mode) for name in objectives.names() for mode in objectives.get(name).hessians
         if name == "approx_ap" or mode == objectives.get(name).loss_class.default_hessian
         or not hasattr(objectives.get(name).loss_class, "query_loss")]


@st.composite
def rankings(draw, extreme: bool = True):
    """(scores, labels, group_ptr, weights or None): 1-5 queries of 1-7 documents."""
    sizes = draw(st.lists(st.integers(1, 7), min_size=1, max_size=5))
    n = sum(sizes)
    values = st.sampled_from(SCORE_VALUES) | st.floats(-10, 10) if extreme else st.integers(-32, 32).map(lambda k: k / 8)
    scores = np.array(draw(st.lists(values, min_size=n, max_size=n)), dtype=np.float64)
    top = draw(st.sampled_from([0, 1, 4]))  # 0: every label equal
    labels = np.array(draw(st.lists(st.integers(0, top), min_size=n, max_size=n)), dtype=np.float64)
    gp = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    weights = draw(st.none() | st.lists(st.sampled_from([0.0, 0.5, 1.0, 3.0]), min_size=len(sizes),
                                        max_size=len(sizes)).map(np.array))
    return scores, labels, gp, weights


def _configurations(name: str, mode: str) -> st.SearchStrategy[Case]:
    """The registry's configurations of one objective in one Hessian mode (its defaults, its
    methods, its row-index parameters built from the data)."""
    return st.sampled_from([c for c in CONFIGURATIONS if (c.name, c.mode) == (name, mode)])


def _names(case: Case) -> tuple[str, str]:
    """The names a message about this objective may use (the entry's, its class's)."""
    return case.name, case.entry.loss_class.name


def _assert_moving_together_changes_nothing(before, after, labels, gp, *, rtol=0.0, atol=0.0) -> None:
    """``(grad, hess)`` ``before`` and ``after`` every score moved by one constant: equal (within
    ``rtol``/``atol``) in each query with two grades or more; a document without any term (zero
    gradient, NO_INFO_HESSIAN) keeps none; a query with one grade may be anchored (nothing to
    rank), so it is not compared otherwise."""
    (g1, h1), (g2, h2) = before, after
    ranked = np.zeros(len(labels), dtype=bool)
    for q in multi_label_queries(labels, gp):
        ranked[gp[q]:gp[q + 1]] = True
    np.testing.assert_allclose(g2[ranked], g1[ranked], rtol=rtol, atol=atol, equal_nan=False)
    np.testing.assert_allclose(h2[ranked], h1[ranked], rtol=rtol, atol=atol, equal_nan=False)
    none = (g1 == 0.0) & (h1 == NO_INFO_HESSIAN)
    np.testing.assert_array_equal(g2[none], 0.0)
    np.testing.assert_array_equal(h2[none], NO_INFO_HESSIAN)


@pytest.mark.parametrize("name,mode", MODES, ids=[f"{n}-{m}" for n, m in MODES])
@FUZZ
@given(data=rankings(), pick=st.data())
def test_gradients_are_finite_or_a_clear_error(name, mode, data, pick):
    s, y, gp, w = data
    case = pick.draw(_configurations(name, mode))
    try:
        prep = case.prepare(y, gp, w)
        g, h = prep.grad_hess(s)
    except ValueError as e:
        assert any(n in str(e) for n in _names(case)) and "np.float64" not in str(e)
        return
    # positive with the Hessian floor; without it (lambdarank's default) a document in no pair has 0
    assert np.isfinite(g).all() and np.isfinite(h).all() and ((h > 0) if prep.hessian_floor else (h >= 0)).all()
    try:
        loss = prep.loss(s)
    except NonFiniteError as e:  # an overflow of the data, refused: never the objective's own NaN
        assert e.cause == "data" and not math.isnan(e.value), str(e)
        return
    assert math.isfinite(loss)


#: the modes of the objectives that declare themselves shift-invariant (RankCosine does not)
SHIFTED = [(n, m) for n, m in MODES if objectives.get(n).loss_class.shift_invariant]


@pytest.mark.parametrize("name,mode", SHIFTED, ids=[f"{n}-{m}" for n, m in SHIFTED])
@FUZZ
@given(data=rankings(extreme=False), shift=st.sampled_from([1024.0, -4096.0, 2.0**40]), pick=st.data())
def test_shifting_every_score_changes_nothing(name, mode, data, shift, pick):
    s, y, gp, w = data  # dyadic scores and shifts: every shifted score is exact
    case = pick.draw(_configurations(name, mode))
    prep = case.prepare(y, gp, w)
    again = case.prepare(y, gp, w) if prep.random_draws else prep  # a new round would draw anew
    before, after = prep.grad_hess(s), again.grad_hess(s + shift)
    _assert_moving_together_changes_nothing(before, after, y, gp, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name,mode", SHIFTED, ids=[f"{n}-{m}" for n, m in SHIFTED])
@FUZZ
@given(data=rankings(extreme=False), pick=st.data())
def test_equal_scores_at_zero_and_at_1e30_give_the_same_gradients(name, mode, data, pick):
    """1e30: extreme, and within float32, which the frameworks take (beyond it a value is refused)."""
    _, y, gp, w = data
    case = pick.draw(_configurations(name, mode))
    prep = case.prepare(y, gp, w)
    again = case.prepare(y, gp, w) if prep.random_draws else prep  # a new round would draw anew
    at_zero, at_1e30 = prep.grad_hess(np.zeros(len(y))), again.grad_hess(np.full(len(y), 1e30))
    _assert_moving_together_changes_nothing(at_zero, at_1e30, y, gp)


# ---- hostile parameter values -------------------------------------------------------------------
HOSTILE = [float("nan"), float("inf"), -float("inf"), 1e308, -1e308, np.float64(1e308), np.float64("nan"), -1.0,
           0.0, 0, 1, 5e-324, 1e-200, 1e200, "abc", "", None, True, False, [1.0], {}, (0, 1), np.array([2.0]),
           object()]

PARAMS = [(name, p) for name in objectives.names() for p in objectives.get(name).defaults]


@pytest.mark.parametrize("name,param", PARAMS, ids=[f"{n}-{p}" for n, p in PARAMS])
def test_every_parameter_takes_a_hostile_value_or_names_it(name, param):
    """On the contract suite's data: queries with several grades, a one-document query and a query
    with a single grade, so that every setting has something to fit."""
    obj = objectives.get(name)
    s, y, gp, w, _ = contract_data()
    for value in HOSTILE:
        params = {param: value}
        try:
            obj.check(params)
            g, h = obj.grad_hess(s, y, gp, weights=w, **params)
        except (ValueError, TypeError) as e:
            msg = str(e)
            assert param in msg, (value, msg)
            assert "np.float64" not in msg and "np.int64" not in msg, msg
            continue
        floored = params.get("hessian_floor", obj.defaults["hessian_floor"])  # without it a Hessian may be 0
        assert np.isfinite(g).all() and np.isfinite(h).all() and ((h > 0) if floored else (h >= 0)).all(), \
            (param, value)


# ---- model files ----------------------------------------------------------------------------------
@functools.lru_cache(maxsize=1)
def _models():
    rng = np.random.default_rng(1)
    sizes = rng.integers(2, 9, size=5)
    n = int(sizes.sum())
    X = np.round(rng.normal(size=(n, 3)), 1)
    X[rng.random((n, 3)) < 0.15] = np.nan
    y = rng.integers(0, 3, size=n).astype(np.float64)
    qid = np.repeat(np.arange(5), sizes)
    models = [RankBoost(variant="rankboost+", n_rounds=5, random_state=0), RankBoost(thresholds="ranklib", n_rounds=5),
              AdaRank(n_rounds=5, tolerance=None), MPBoost(n_rounds=5), NDCGBoost(n_rounds=5)]
    return X, [m.fit(X, y, qid=qid) for m in models]


def _replacements(v):
    """Values of another JSON type, or non-finite: never an equally valid value of the field."""
    if isinstance(v, bool):
        return ["yes", 1, None, 0.0]
    if isinstance(v, int):
        return [-1, 2.5, str(v), True, None, [], 2**70, float("nan")]
    if isinstance(v, float):
        return [float("nan"), float("inf"), str(v), True, None, []]
    if isinstance(v, str):
        return [1, None, True, [], "garbage"]
    if v is None:
        return [1.5, [], {}]
    return [None, 3, "x"]


def _nodes(obj, path=()):
    yield path
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _nodes(v, path + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _nodes(v, path + (i,))


def _get(obj, path):
    for k in path:
        obj = obj[k]
    return obj


@settings(derandomize=True, max_examples=150, deadline=None, database=None)
@given(which=st.integers(0, 4), pick=st.integers(0, 10**6), action=st.sampled_from(["replace", "delete", "add", "cut"]),
       choice=st.integers(0, 7))
def test_a_corrupted_model_file_predicts_as_before_or_is_refused_naming_the_file(tmp_path_factory, which, pick,
                                                                                 action, choice):
    X, models = _models()
    model = models[which]
    path = tmp_path_factory.mktemp("fuzz") / "model.json"
    model.save(path)
    text = path.read_text()
    d = json.loads(text)
    nodes = [p for p in _nodes(d) if p]
    node = nodes[pick % len(nodes)]
    parent, key = _get(d, node[:-1]), node[-1]
    if action == "replace":
        options = _replacements(parent[key])
        parent[key] = options[choice % len(options)]
        text = json.dumps(d)
    elif action == "delete":
        del parent[key]
        text = json.dumps(d)
    elif action == "add":
        target = _get(d, node) if isinstance(_get(d, node), (dict, list)) else parent
        if isinstance(target, dict):
            target["zzz_unknown"] = 1
        else:
            target.append({"kind": "stump"})
        text = json.dumps(d)
    else:
        text = text[: pick % len(text)]
    path.write_text(text)
    try:
        back = load(path)
    except ValueError as e:
        assert str(e).startswith(str(path)), str(e)
        return
    assert np.array_equal(back.predict(X), model.predict(X)), (action, node)
