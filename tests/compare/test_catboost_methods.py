"""CatBoost's ranking losses as compare methods (cb-*): they train under compare's protocol (every
tree scored, the round chosen on validation), take their settings as name[key=value], are searched
by --tune, resume, and say how to install catboost when it is not."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from boostplug.compare import METHODS, get_method
from boostplug.compare.methods import CATBOOST_METHODS
from boostplug.compare.protocol import choose_round, run_method
from boostplug.data import load_example, make_ranking

catboost = pytest.importorskip("catboost")

#: a few trees of depth 3: the protocol, not the model, is under test
SMALL = "depth=3"


@pytest.fixture(scope="module")
def example():
    train, test = load_example()
    return train, test


@pytest.mark.parametrize("name", [n for n in CATBOOST_METHODS if n != "cb-yetirank-pairwise"])
def test_every_catboost_loss_trains_under_the_protocol(example, name: str) -> None:
    train, test = example
    r = run_method(f"{name}[{SMALL}]", train, test, test, rounds=4, threads=1)
    assert r.framework == "catboost" and r.rounds_trained == 4 and len(r.vali_curve) == 4
    assert r.best_round == choose_round(r.vali_curve, "ndcg@10") + 1  # chosen on validation
    assert 0.0 < r.test["ndcg@10"] <= 1.0 and "degenerate" not in r.info


def test_yetirank_pairwise_trains_under_the_protocol(example) -> None:
    train, test = example
    r = run_method(f"cb-yetirank-pairwise[{SMALL}]", train, test, test, rounds=2, threads=1)
    assert r.rounds_trained == 2 and 0.0 < r.test["ndcg@10"] <= 1.0


def test_staged_scores_are_catboosts_predictions_and_the_seed_fixes_them() -> None:
    """Each round's scores are predict(ntree_end=t); two runs with one seed are equal, another seed differs."""
    from catboost import CatBoost, Pool

    from boostplug.compare.training import _catboost_loss, catboost_params

    d = make_ranking(n_queries=20, docs_per_query=(3, 12), n_features=5, seed=1)
    m = get_method("cb-yetirank[depth=3,permutations=2]")
    a = m.train(d, d, d, rounds=5, tree_params={"num_leaves": 31, "learning_rate": 0.3}, seed=3, threads=1)
    b = m.train(d, d, d, rounds=5, tree_params={"num_leaves": 31, "learning_rate": 0.3}, seed=3, threads=1)
    c = m.train(d, d, d, rounds=5, tree_params={"num_leaves": 31, "learning_rate": 0.3}, seed=4, threads=1)
    assert all(np.array_equal(x, y) for x, y in zip(a.test_scores, b.test_scores))
    assert not all(np.array_equal(x, y) for x, y in zip(a.test_scores, c.test_scores))
    params = {**catboost_params({"num_leaves": 31, "learning_rate": 0.3}, 3, 3, 1), "iterations": 5,
              "loss_function": _catboost_loss(m)}
    model = CatBoost(params)
    model.fit(Pool(d.X, label=d.y, group_id=d.qid))
    for t, s in enumerate(a.test_scores, start=1):
        assert np.allclose(s, model.predict(d.X, ntree_end=t, prediction_type="RawFormulaVal"), rtol=1e-12, atol=1e-12)


def test_parameters_mapping_and_search_space() -> None:
    from boostplug.compare.training import _catboost_loss, catboost_params

    m = get_method("cb-lambdamart-err[sigma=2.0,norm=false,depth=4]")
    assert m.name == "cb-lambdamart-err[sigma=2.0,norm=false,depth=4]"
    assert _catboost_loss(m) == "LambdaMart:metric=ERR;sigma=2.0;norm=false"
    assert _catboost_loss(METHODS["cb-pairlogit"]) == "PairLogit"
    assert _catboost_loss(METHODS["cb-yetirank"]) == "YetiRank:permutations=10;decay=0.85"
    p = catboost_params({"num_leaves": 31, "learning_rate": 0.1, "lambda_l2": 2.0, "feature_fraction": 0.5,
                         "max_bin": 63, "min_data_in_leaf": 7}, None, 5, 0)
    assert p["depth"] == 5 and p["l2_leaf_reg"] == 2.0 and p["rsm"] == 0.5 and p["border_count"] == 63
    assert p["random_seed"] == 5 and p["thread_count"] == -1 and p["allow_writing_files"] is False
    assert catboost_params({"num_leaves": 31}, 8, 0, 2)["depth"] == 8
    assert set(METHODS["cb-yetirank"].search_space()) == {"learning_rate", "lambda_l2", "depth", "permutations",
                                                          "decay"}
    assert set(m.search_space()) == {"learning_rate", "lambda_l2"}  # sigma, norm and depth fixed by the name
    assert set(METHODS["cb-pairlogit"].search_space()) == {"learning_rate", "lambda_l2", "depth"}


@pytest.mark.parametrize("spec, says", [
    ("cb-yetirank[depth=0]", "depth=0: must be an integer from 1 to 16"),
    ("cb-yetirank[decay=1.5]", "decay=1.5: must be a number in (0, 1]"),
    ("cb-yetirank[permutations=2.5]", "permutations=2.5: must be an integer"),
    ("cb-lambdamart-ndcg[norm=1]", "norm=1: must be true or false"),
    ("cb-querysoftmax[sigma=1]", "has no parameter 'sigma'"),
])
def test_bad_settings_are_refused_before_training(spec: str, says: str) -> None:
    with pytest.raises(ValueError, match=rf".*{__import__('re').escape(says)}"):
        get_method(spec)


def test_a_run_of_a_method_a_hyphen_from_another_says_which_is_which(capsys, monkeypatch) -> None:
    """On main cb-lambdamart-map (CatBoost's LambdaMART for MAP) and cb-lambdamart_map (boostplug's)
    ran without a word on which is which."""
    from boostplug.cli import main
    from boostplug.compare import execution

    monkeypatch.setattr(execution, "run_method", lambda *a, **k: pytest.fail("the note comes before training"))
    with pytest.raises(pytest.fail.Exception):
        main(["compare", "--methods", "cb-lambdamart_map", "--no-progress"])
    said = capsys.readouterr().err
    assert ("boostplug compare: cb-lambdamart_map is LambdaMART with |Delta MAP| pair weights" in said
            and "on CatBoost trees; cb-lambdamart-map is CatBoost's LambdaMART for MAP" in said)
    assert METHODS["cb-lambdamart-map"].loss == "LambdaMart:metric=MAP"
    assert METHODS["cb-lambdamart_map"].loss == "boostplug:lambdamart_map"
    from boostplug.cli.compare_options import twins

    assert len(twins(["cb-lambdamart_map", "cb-lambdamart-map", "lambdarank"])) == 1  # a pair is told once


def test_without_catboost_the_methods_are_not_listed_and_asking_says_how_to_install(monkeypatch, capsys) -> None:
    from boostplug.cli import main

    monkeypatch.setitem(sys.modules, "catboost", None)  # import catboost fails, as when it is not installed
    assert not any(n.startswith("cb-") for n in METHODS)
    with pytest.raises(ValueError, match=r"'cb-yetirank' trains with CatBoost.*pip install \"boostplug\[catboost\]\""):
        get_method("cb-yetirank[depth=3]")
    assert main(["compare", "--methods", "lambdarank,cb-lambdamart-map", "--rounds", "2", "--no-progress"]) == 2
    assert 'pip install "boostplug[catboost]"' in capsys.readouterr().err
    assert main(["compare", "--methods", "all", "--frameworks", "catboost"]) == 2
    assert 'pip install "boostplug[catboost]"' in capsys.readouterr().err
    assert main(["compare", "--methods", "list"]) == 0
    assert "cb-yetirank" not in capsys.readouterr().out
    monkeypatch.delitem(sys.modules, "catboost")
    assert "cb-yetirank" in METHODS  # listed again once it can be imported


@pytest.mark.slow
def test_import_boostplug_and_compare_do_not_import_catboost() -> None:
    code = ("import sys, boostplug, boostplug.compare, boostplug.catboost, boostplug.cli; "
            "from boostplug.compare import METHODS; assert 'cb-yetirank' in METHODS; "
            "assert 'catboost' not in sys.modules, 'catboost imported'")
    root = Path(__file__).resolve().parents[2]
    subprocess.run([sys.executable, "-c", code], check=True, cwd=root, env={"PYTHONPATH": str(root), "PATH": ""})


def test_a_comparison_with_catboost_resumes(tmp_path: Path, capsys) -> None:
    """cb-querysoftmax and lambdarank on the embedded data, then --resume: nothing trained again, the
    same results, the CSV and JSON carry the CatBoost method."""
    from boostplug.cli import main

    out = tmp_path / "cb"
    argv = ["compare", "--methods", "lambdarank,cb-querysoftmax[depth=3]", "--rounds", "5", "--no-progress",
            "--no-plots", "--out", str(out)]
    assert main(argv) == 0
    first = json.loads((out / "results.json").read_text())
    assert {r["method"]: r["framework"] for r in first["results"]}["cb-querysoftmax[depth=3]"] == "catboost"
    assert "cb-querysoftmax[depth=3]" in (out / "results.csv").read_text()
    capsys.readouterr()
    assert main([*argv, "--resume"]) == 0
    again = json.loads((out / "results.json").read_text())
    assert [r["test"] for r in again["results"]] == [r["test"] for r in first["results"]]
