"""Every setting given to ``boostplug compare`` (``name[key=value]``, ``--param``, ``--config``) is applied or refused
before any training, in one line naming the method, the parameter, the value and why. Each case is a reproducer of a
reliability round: on the code before, it trained as if the setting were not given, failed in every fold with the
framework's own message, or crashed the worker."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from boostplug.cli import main

FAST = ["--kfold", "3", "--rounds", "2", "--no-plots", "--no-progress"]


@pytest.fixture(scope="module")
def letor(tmp_path_factory) -> Path:
    """A LETOR file of 30 queries x 10 documents, labels 0-3."""
    rng = np.random.default_rng(0)
    path = tmp_path_factory.mktemp("settings") / "g.txt"
    lines = []
    for q in range(30):
        for y in rng.integers(0, 4, 10):
            x = rng.normal(size=5) + 0.3 * y
            lines.append(f"{y} qid:{q + 1} " + " ".join(f"{j + 1}:{v:.4f}" for j, v in enumerate(x)))
    path.write_text("\n".join(lines) + "\n")
    return path


def _refused(capsys, argv: list[str]) -> str:
    """The one line of a refusal: exit code 2, nothing trained (no fold failed, no table)."""
    assert main(["compare", *argv]) == 2
    cap = capsys.readouterr()
    lines = [line for line in cap.err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("boostplug compare: error:") and not cap.out, cap.err
    return lines[0]


@pytest.mark.parametrize("methods, said", [
    # F1: LightGBM's truncation level is a 32-bit int (2^31 wrapped around and crashed every worker)
    ("lambdarank[lambdarank_truncation_level=2147483648]",
     "method 'lambdarank': lambdarank: lambdarank_truncation_level must be an integer in [1, 2147483647], got "
     "2147483648"),
    # F4: tree parameters the framework does not read (the table named a configuration that did not run)
    ("xgb-rank:ndcg[min_data_in_leaf=100]", "method 'xgb-rank:ndcg': min_data_in_leaf=100: XGBoost's trees do not "
                                            "read it"),
    ("cb-yetirank[min_data_in_leaf=100]", "method 'cb-yetirank': min_data_in_leaf=100: CatBoost's trees do not read it"),
    ("cb-yetirank[depth=3,num_leaves=64]", "method 'cb-yetirank': num_leaves=64: CatBoost's trees take depth=3 instead"),
    ("cb-yetirank[max_bin=70000]", "max_bin=70000: CatBoost's border_count is at most 65535"),
    # P1: one number rule, ASCII digits without underscores (they ran as 0.1 and 10)
    ("lambdarank[learning_rate=٠.١]", "method 'lambdarank': learning_rate=٠.١: '٠.١' is not a number in ASCII digits "
                                       "without underscores"),
    ("lambdarank[lambdarank_truncation_level=1_0]", "lambdarank_truncation_level=1_0: '1_0' is not a number in ASCII "
                                                    "digits without underscores"),
    # P2: a key given twice (ran as sigmoid=3)
    ("lambdarank[sigmoid=2,sigmoid=3]", "method 'lambdarank': sigmoid is given twice (2 and 3)"),
    # P3: settings without effect in this run, or that make every gradient 0 (a constant model)
    ("lambdarank[lambdarank_position_bias_regularization=5]",
     "lambdarank_position_bias_regularization=5 has no effect: the training data has no positions"),
    ("xgb-rank:ndcg[lambdarank_bias_norm=5]", "lambdarank_bias_norm=5 has no effect: lambdarank_unbiased is off"),
    ("lambdarank[label_gain=[0,0,0,0]]", "label_gain=[0,0,0,0] gives every training label the same gain: every "
                                         "pair's |Delta NDCG|, so every gradient, is 0"),
    # P4: a label_gain shorter than the labels (LightGBM's "Label 2 is not less than the number of label mappings")
    ("lambdarank[label_gain=[0,1]]", "method 'lambdarank[label_gain=[0,1]]': label_gain=[0,1] has 2 gains; the training "
                                     "labels go up to 3"),
    # P6: XGBoost's rank:map on graded labels (XGBoost's raw "Check failed: is_binary" in every fold)
    ("xgb-rank:map", "method 'xgb-rank:map': XGBoost's rank:map takes labels 0 and 1; the training labels go up to 3"),
    # P7: a space before the bracket ("unknown method(s) lambdarank")
    ("lambdarank [sigmoid=2]", "method 'lambdarank [sigmoid=2]': no space before the bracket: lambdarank[sigmoid=2]"),
    # P8: the bracket syntax's errors name the method and the parameter ("'[0,1,3]]' is not a JSON list")
    ("lambdarank[label_gain=[0,1,3]]]", "method 'lambdarank': label_gain=[0,1,3]]: '[0,1,3]]' is not a JSON list"),
])
def test_a_setting_is_applied_or_refused_before_any_training(letor, capsys, methods: str, said: str) -> None:
    if methods.startswith("cb-"):
        pytest.importorskip("catboost")
    assert said in _refused(capsys, ["--data", str(letor), "--methods", methods, *FAST])


def test_settings_as_their_own_argument_get_the_right_spelling(letor, capsys) -> None:
    # P7: on the code before, "unknown method(s) ;"
    assert ("--methods: '[sigmoid=2]' follows no method name: settings go right after the name, without a space: "
            "lambdarank[sigmoid=2]") in _refused(capsys, ["--data", str(letor), "--methods", "lambdarank", "[sigmoid=2]",
                                                          *FAST])


def test_a_shared_tree_parameter_applies_where_it_is_read_and_is_refused_where_nothing_reads_it(letor, capsys) -> None:
    said = _refused(capsys, ["--data", str(letor), "--methods", "rb-c,xgb-rank:ndcg", "--param", "min_data_in_leaf=50",
                             *FAST])
    assert "the shared tree parameter min_data_in_leaf=50: no method of the run reads it" in said
    assert main(["compare", "--data", str(letor), "--methods", "lambdarank,xgb-rank:ndcg", "--param",
                 "min_data_in_leaf=50", *FAST]) == 0  # LightGBM's lambdarank reads it
    capsys.readouterr()


@pytest.mark.parametrize("argv, said", [
    (["--param", "num_leaves=1_5"], "--param 'num_leaves=1_5': '1_5' is not a number in ASCII digits without "
                                    "underscores"),
    (["--param", "num_leaves=5", "--param", "num_leaves=6"], "--param 'num_leaves=6': num_leaves is given twice"),
])
def test_param_has_the_same_number_rule_and_takes_each_key_once(letor, capsys, argv: list[str], said: str) -> None:
    assert said in _refused(capsys, ["--data", str(letor), "--methods", "lambdarank", *argv, *FAST])


def test_every_number_option_has_the_one_rule(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["compare", "--rounds", "1_0"])
    assert "argument --rounds: '1_0' is not a number in ASCII digits without underscores" in capsys.readouterr().err


@pytest.mark.parametrize("methods, said", [
    # P2 in a JSON config: json.loads kept the last value
    ('[{"name": "lambdarank", "sigmoid": 2, "sigmoid": 3}]', "the key 'sigmoid' is given twice"),
    # P8: settings in the name and as keys ("got '2][sigmoid=3'")
    ('[{"name": "lambdarank[sigmoid=2]", "sigmoid": 3}]', "method 'lambdarank': sigmoid is given twice (2 and 3)"),
])
def test_config_takes_each_key_once(letor, tmp_path, capsys, methods: str, said: str) -> None:
    config = tmp_path / "c.json"
    config.write_text(f'{{"methods": {methods}}}')
    assert said in _refused(capsys, ["--data", str(letor), "--config", str(config), *FAST])


def test_config_settings_in_the_name_and_as_keys_make_one_method(letor, tmp_path, capsys) -> None:
    config = tmp_path / "c.json"
    config.write_text(json.dumps({"methods": [{"name": "lambdarank[sigmoid=2]", "lambdarank_truncation_level": 3}]}))
    assert main(["compare", "--data", str(letor), "--config", str(config), *FAST]) == 0
    assert "lambdarank[sigmoid=2,lambdarank_truncation_level=3]" in capsys.readouterr().out


def test_catboost_overflowing_to_infinity_is_said_with_its_loss(letor, capsys) -> None:
    # P5: on the code before, CatBoost's "JSON writer: invalid float value: inf" alone. The overflow depends on the
    # data and the learning rate (beta=100 overflows here too), so it is no limit a check could know before training
    pytest.importorskip("catboost")
    assert main(["compare", "--data", str(letor), "--methods", "cb-querysoftmax[beta=3.4e38]", *FAST]) == 1
    assert ("cb-querysoftmax[beta=3.4e+38] failed on fold 1,2,3: ValueError: CatBoost's QuerySoftMax:beta=3.4e+38 "
            "overflowed to infinity in training") in capsys.readouterr().err


def test_tune_searches_what_each_methods_trees_read(letor, tmp_path, capsys) -> None:
    # min_data_in_leaf was searched for XGBoost's trees too, where it changed nothing; refused now, it is not searched
    pytest.importorskip("optuna")
    from boostplug.compare import get_method

    assert "min_data_in_leaf" not in get_method("xgb-rank:ndcg").search_space()
    assert "min_data_in_leaf" in get_method("lambdarank").search_space()
    out = tmp_path / "out"
    assert main(["compare", "--data", str(letor), "--methods", "xgb-rank:ndcg", "--tune", "3", "--folds", "1",
                 "--out", str(out), *FAST]) == 0
    capsys.readouterr()
    trials = json.loads((out / "results.json").read_text())["results"][0]["info"]["tuning"]["trials"]
    assert len(trials) == 3 and {t["state"] for t in trials} <= {"complete", "pruned"}


def test_the_python_api_refuses_them_before_training_too(letor) -> None:
    from boostplug.compare import load_folds, run

    folds = load_folds(str(letor), n_folds=3)
    with pytest.raises(ValueError, match=r"method 'lambdarank\[label_gain=\[0,1\]\]': label_gain=\[0,1\] has 2 gains"):
        run(["lambdarank[label_gain=[0,1]]"], folds, rounds=2)
    with pytest.raises(ValueError, match="the shared tree parameter min_data_in_leaf=50: no method of the run reads it"):
        run(["xgb-rank:ndcg"], folds, rounds=2, tree_params={"min_data_in_leaf": 50})
