"""The booster JSON model file (boostplug/boosters/_model_file.py): every booster type round-trips
bit for bit (through a file and through ``to_dict``/``from_dict``), every class of corruption is a
ValueError naming the file (or "the model dict") and the field (never a model that predicts wrongly
or an IndexError at predict), and saving is atomic."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from boostplug.boosters import AdaRank, MPBoost, NDCGBoost, RankBoost, RankingBooster, load


def data(seed: int = 0, n_queries: int = 5, max_docs: int = 10, n_feat: int = 4):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, max_docs + 1, size=n_queries)
    n = int(sizes.sum())
    X = np.round(rng.normal(size=(n, n_feat)), 1)
    X[rng.random((n, n_feat)) < 0.15] = np.nan  # missing values: -inf thresholds
    y = rng.integers(0, 3, size=n).astype(np.float64)
    return X, y, np.repeat(np.arange(n_queries), sizes)


BOOSTERS = {
    "rb-d": lambda: RankBoost(variant="rb-d", n_rounds=8, thresholds="all"),
    "rb-c": lambda: RankBoost(variant="rb-c", n_rounds=8),
    "rankboost+": lambda: RankBoost(variant="rankboost+", n_rounds=8, random_state=0),
    "rb-ranklib": lambda: RankBoost(variant="rb-c", n_rounds=8, thresholds="ranklib"),  # float32 stumps
    "adarank": lambda: AdaRank(measure="ndcg@5", n_rounds=8, tolerance=None, update="multiplicative"),
    "mpboost": lambda: MPBoost(ddf="ldd", n_rounds=8),
    "ndcgboost": lambda: NDCGBoost(n_rounds=8),
}


@pytest.fixture(scope="module")
def fitted():
    X, y, qid = data()
    return X, {name: make().fit(X, y, qid=qid) for name, make in BOOSTERS.items()}


@pytest.mark.parametrize("name", list(BOOSTERS))
def test_every_booster_round_trips_bit_for_bit(name, fitted, tmp_path):
    X, models = fitted
    model = models[name]
    path = tmp_path / f"{name}.json"
    model.save(path)
    back = load(path)
    assert type(back) is type(model) and back.to_dict() == model.to_dict()
    assert np.array_equal(back.predict(X), model.predict(X))
    assert type(back).load(path).to_dict() == model.to_dict()


@pytest.mark.parametrize("name", list(BOOSTERS))
def test_from_dict_gives_what_load_gives(name, fitted, tmp_path):
    X, models = fitted
    model = models[name]
    model.save(tmp_path / "m.json")
    from_file, from_dict = load(tmp_path / "m.json"), RankingBooster.from_dict(model.to_dict())
    assert type(from_dict) is type(model) and from_dict.to_dict() == from_file.to_dict() == model.to_dict()
    assert np.array_equal(from_dict.predict(X), model.predict(X))
    assert type(model).from_dict(model.to_dict()).get_params() == model.get_params()
    # neither the dict nor the model built from it shares an object with the model it came from
    d = model.to_dict()
    d["rankers"][0]["feature"] = d["history"][0]["round"] = -1
    from_dict.rankers_[0]["feature"] = from_dict.history_[0]["round"] = -1
    assert model.rankers_[0]["feature"] >= 0 and model.history_[0]["round"] == 1


def test_from_dict_validates_as_load_does(fitted):
    _, models = fitted
    d = models["mpboost"].to_dict()
    d["rankers"][0] = dict(d["rankers"][0], feature=4)
    with pytest.raises(ValueError, match=r"^the model dict: rankers\[0\]\.feature = 4 is outside \[0, 4\)"):
        RankingBooster.from_dict(d)
    with pytest.raises(ValueError, match=r"^the model dict holds a MPBoost, not a RankBoost$"):
        RankBoost.from_dict(models["mpboost"].to_dict())
    with pytest.raises(ValueError, match=r"^the model dict is not a boostplug booster JSON file"):
        RankingBooster.from_dict({"format": "lightgbm"})


def test_the_fixture_covers_minus_inf_thresholds_and_float32(fitted):
    _, models = fitted
    thresholds = [r["threshold"] for m in models.values() for r in m.rankers_ if r["kind"] == "stump"]
    assert -np.inf in thresholds
    assert any(r.get("float32") for r in models["rb-ranklib"].rankers_)


def _corrupt(tmp_path, models, name, mutate):
    path = tmp_path / "bad.json"
    models[name].save(path)
    d = json.loads(path.read_text())
    mutate(d)
    path.write_text(json.dumps(d))
    return path


def _set_ranker(key, value, t=0):
    def mutate(d):
        d["rankers"][t][key] = value
    return mutate


def _del(*keys):
    def mutate(d):
        obj = d
        for k in keys[:-1]:
            obj = obj[k]
        del obj[keys[-1]]
    return mutate


def _top(key, value):
    def mutate(d):
        d[key] = value
    return mutate


def _weight(value, t=1):
    def mutate(d):
        d["weights"][t] = value
    return mutate


CORRUPTIONS = [
    # feature indices: exact integer type, within n_features_in (4)
    ("mpboost", _set_ranker("feature", -1), r"rankers\[0\]\.feature = -1 is outside \[0, 4\)"),
    ("mpboost", _set_ranker("feature", 4), r"rankers\[0\]\.feature = 4 is outside \[0, 4\)"),
    ("mpboost", _set_ranker("feature", 2.7), r"rankers\[0\]\.feature must be an integer, got a JSON float \(2\.7\)"),
    ("mpboost", _set_ranker("feature", 2.0), r"rankers\[0\]\.feature must be an integer, got a JSON float"),
    ("mpboost", _set_ranker("feature", "3"), r"rankers\[0\]\.feature must be an integer, got a JSON str \('3'\)"),
    ("mpboost", _set_ranker("feature", True), r"rankers\[0\]\.feature must be an integer, got a boolean"),
    ("adarank", _set_ranker("feature", None), r"rankers\[0\]\.feature must be an integer, got null"),
    # thresholds: finite or -Infinity
    ("mpboost", _set_ranker("threshold", float("nan")), r"rankers\[0\]\.threshold must be finite or -Infinity"),
    ("mpboost", _set_ranker("threshold", float("inf")), r"rankers\[0\]\.threshold must be finite or -Infinity"),
    ("mpboost", _set_ranker("threshold", "0.5"), r"rankers\[0\]\.threshold must be a number"),
    ("mpboost", _del("rankers", 0, "threshold"), r"rankers\[0\] \(a stump\) has no 'threshold'"),
    # kinds and keys
    ("mpboost", _del("rankers", 2, "kind"), r"rankers\[2\] has no 'kind'"),
    ("mpboost", _set_ranker("kind", "tree", 3), r"rankers\[3\]\.kind = 'tree' is not a known weak ranker kind"),
    ("mpboost", _set_ranker("treshold", 0.5), r"rankers\[0\] \(a stump\) has unknown keys \['treshold'\]"),
    ("rb-ranklib", _set_ranker("float32", "yes"), r"rankers\[0\]\.float32 must be true or false"),
    ("mpboost", lambda d: d["rankers"].__setitem__(0, 1), r"rankers\[0\] must be a JSON object"),
    # weights
    ("mpboost", _weight(float("nan")), r"weights\[1\] must be finite, got nan"),
    ("mpboost", _weight(float("inf")), r"weights\[1\] must be finite, got inf"),
    ("mpboost", _weight("0.3"), r"weights\[1\] must be a number"),
    ("mpboost", _weight(True), r"weights\[1\] must be a number, got a boolean"),
    # numbers JSON can spell but float64 cannot hold (json reads a 400-digit integer exactly, as an int)
    ("mpboost", _weight(10**400), r"weights\[1\] must be finite, got 100000000000\.\.\.\(401 digits\), beyond the float64"),
    ("mpboost", _weight(-(10**400)), r"weights\[1\] must be finite, got -100000000000\.\.\.\(401 digits\)"),
    ("mpboost", _set_ranker("threshold", 10**400),
     r"rankers\[0\]\.threshold must be finite or -Infinity .*\(401 digits\), beyond the float64 range"),
    ("mpboost", _set_ranker("threshold", -(10**400)), r"rankers\[0\]\.threshold must be finite or -Infinity"),
    ("mpboost", _set_ranker("feature", 10**400), r"rankers\[0\]\.feature = 100000000000\.\.\.\(401 digits\) is outside"),
    ("mpboost", _top("n_features_in", 2**31), r"n_features_in = 2147483648 is outside \[1, 2147483648\)"),
    # weights whose absolute values overflow when summed: a stump ensemble would predict inf
    ("mpboost", lambda d: d.__setitem__("weights", [1.7e308] * len(d["weights"])),
     r"weights\[1\] = 1\.7e\+308 makes \|weights\[0\]\| \+ \.\.\. \+ \|weights\[1\]\| overflow float64"),
    ("adarank", lambda d: d.__setitem__("weights", [-1e308] * len(d["weights"])), r"weights\[1\] = -1e\+308 makes"),
    # the envelope
    ("mpboost", _top("version", True), r"has booster format version True"),
    ("mpboost", _top("version", "1"), r"has booster format version '1'"),
    ("mpboost", _top("n_features_in", 2.5), r"n_features_in must be an integer"),
    ("mpboost", _top("n_features_in", 0), r"n_features_in = 0 is outside \[1, 2147483648\)"),
    ("mpboost", _top("n_features_in", 2), r"rankers\[\d+\]\.feature = \d is outside \[0, 2\)"),
    ("mpboost", _del("class"), r"has no 'class'"),
    ("mpboost", _del("weights"), r"has no 'weights'"),
    ("mpboost", _top("extra", 1), r"has unknown keys \['extra'\]"),
    ("mpboost", _top("best_iteration", 99), r"best_iteration = 99 is outside \[1, 9\)"),
    ("mpboost", _top("best_iteration", 1.5), r"best_iteration must be an integer"),
    ("mpboost", _top("stop_reason", 3), r"stop_reason must be a string or null"),
    ("mpboost", _top("history", {"a": 1}), r"history must be a JSON list of objects"),
    ("mpboost", _top("params", {"n_rounds": 8, "depth": 3}), r"params has keys \['depth'\] that MPBoost does not take"),
    ("mpboost", _top("fitted", {"span_size_": 1}), r"fitted has keys \['span_size_'\] that a MPBoost model does not have"),
    ("rb-c", _top("fitted", {"undefined_round_": None, "span_size_": -1, "pruned_round_": None}),
     r"fitted\.span_size_ = -1 is outside >= 0"),
    ("rb-c", _top("fitted", {"undefined_round_": None, "span_size_": 0, "pruned_round_": 0.5}),
     r"fitted\.pruned_round_ must be an integer"),
    ("rb-c", _top("fitted", {"undefined_round_": {"ranker": {"kind": "stump", "feature": 9, "threshold": 0.0}},
                             "span_size_": 0, "pruned_round_": None}),
     r"fitted\.undefined_round_\.ranker\.feature = 9 is outside \[0, 4\)"),
]


@pytest.mark.parametrize("name,mutate,match", CORRUPTIONS, ids=[c[2][:48] for c in CORRUPTIONS])
def test_each_corruption_is_a_value_error_naming_the_file_and_field(name, mutate, match, fitted, tmp_path):
    _, models = fitted
    path = _corrupt(tmp_path, models, name, mutate)
    with pytest.raises(ValueError, match=match) as info:
        load(path)
    assert str(info.value).startswith(str(path))


def test_weights_summing_to_just_below_overflow_load_and_predict_finitely(fitted, tmp_path):
    X, models = fitted
    d = models["mpboost"].to_dict()
    d["weights"] = [1.7e308 / len(d["weights"])] * len(d["weights"])  # the most a stump ensemble may hold
    scores = RankingBooster.from_dict(d).predict(X)
    assert np.isfinite(scores).all() and scores.max() > 1e307


def test_integers_beyond_the_digit_limit_name_the_file_or_the_dict(fitted, tmp_path):
    _, models = fitted
    path = tmp_path / "m.json"
    text = json.dumps(models["mpboost"].to_dict()).replace('"weights": [', '"weights": [' + "1" * 5000 + ", ", 1)
    path.write_text(text)
    with pytest.raises(ValueError, match=r"m\.json is not a boostplug booster JSON file \(it holds a number that "
                                         r"cannot be read"):
        load(path)
    d = models["mpboost"].to_dict()
    d["weights"][0] = 10**5000
    with pytest.raises(ValueError, match="the model dict cannot be read as a model file"):
        RankingBooster.from_dict(d)


def test_old_checks_still_hold(fitted, tmp_path):
    _, models = fitted
    path = _corrupt(tmp_path, models, "mpboost", _top("class", "XGBRanker"))
    with pytest.raises(ValueError, match="unknown booster class 'XGBRanker'"):
        load(path)
    path = _corrupt(tmp_path, models, "rb-c", _del("fitted", "span_size_"))
    with pytest.raises(ValueError, match=r"lacks the fitted attributes \['span_size_'\]"):
        load(path)
    path = _corrupt(tmp_path, models, "mpboost", lambda d: None)
    with pytest.raises(ValueError, match="holds a MPBoost, not a RankBoost"):
        RankBoost.load(path)
    (tmp_path / "deep.json").write_text("[" * 100_000)
    with pytest.raises(ValueError, match="not valid JSON"):
        load(tmp_path / "deep.json")


# ---- atomic save --------------------------------------------------------------------------------
def test_a_failed_save_leaves_the_old_model_whole(fitted, tmp_path, monkeypatch):
    X, models = fitted
    path = tmp_path / "model.json"
    models["mpboost"].save(path)
    before = path.read_bytes()

    def disk_full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("boostplug._atomic.os.fsync", disk_full)
    with pytest.raises(OSError, match="could not write"):
        models["ndcgboost"].save(path)
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["model.json"]  # no temporary file left behind
    assert np.array_equal(load(path).predict(X), models["mpboost"].predict(X))


def test_an_unwritable_parameter_leaves_the_old_model_whole(tmp_path):
    X, y, qid = data(1)
    path = tmp_path / "model.json"
    AdaRank(n_rounds=2).fit(X, y, qid=qid).save(path)
    before = path.read_bytes()
    custom = AdaRank(measure=lambda s, l, g: np.zeros(g.shape[0] - 1), n_rounds=2).fit(X, y, qid=qid)
    with pytest.raises(TypeError, match="callable"):
        custom.save(path)
    assert path.read_bytes() == before
    assert isinstance(RankingBooster.load(path), AdaRank)
