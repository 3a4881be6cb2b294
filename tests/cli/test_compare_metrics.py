"""``boostplug compare --metrics``: ERR, MRR, RBP and P@k beside NDCG and MAP, under the protocol's
conventions, in every output (table, wide table, CSV, JSON, tests, plots), one parser with
``--select``, errors naming the bad token, and resuming a file of these metrics."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from boostplug import metrics
from boostplug.cli import main
from boostplug.compare import TREE_PARAMS, make_conventions, run_method
from boostplug.compare.conventions import parse_metric, parse_metrics
from boostplug.compare.methods import get_method
from boostplug.data import make_ranking, write_letor
from tests._helpers import three_way_split

FOUR = ["ndcg@10", "err@10", "mrr", "map"]


def _csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def tiny():
    d = make_ranking(n_queries=24, docs_per_query=(4, 9), n_features=5, n_informative=3, seed=3)
    return three_way_split(d, test_size=6, vali_size=6)


@pytest.mark.parametrize("protocol, max_grade", [("library", 4.0), ("letor", 2.0)])
def test_every_metric_is_boostplug_metrics_on_the_same_predictions(tiny, protocol: str, max_grade: float) -> None:
    train, vali, test = tiny
    test = test.subset(np.arange(test.n_queries))
    test.y[:] = np.minimum(test.y, 2.0)  # LETOR's grades
    conv = make_conventions(protocol, metrics="ndcg@10,err@10,mrr,map,rbp@0.9,p@5")
    assert conv.max_grade == max_grade
    tp = {"min_data_in_leaf": 1}
    r = run_method("regression", train, vali, test, rounds=4, tree_params=tp, conventions=conv)
    assert list(r.test) == list(conv.metrics)
    trained = get_method("regression").train(train, vali, test, rounds=4, tree_params={**TREE_PARAMS, **tp},
                                             seed=0, threads=1)
    s, y, g = trained.test_scores[r.best_round - 1], test.y, test.group_ptr
    empty = 0.0 if protocol == "letor" else 1.0
    want = {"err@10": metrics.err(s, y, g, 10, max_grade=max_grade, per_query=True),
            "mrr": metrics.reciprocal_rank(s, y, g, empty=empty, per_query=True),
            "map": metrics.average_precision(s, y, g, empty=empty, per_query=True),
            "rbp@0.9": metrics.rbp(s, y, g, persistence=0.9, per_query=True),
            "p@5": metrics.precision(s, y, g, 5, per_query=True)}
    for m, values in want.items():
        assert np.allclose(r.test_per_query[m], values), m
        assert r.test[m] == pytest.approx(float(np.mean(values)))


@pytest.mark.parametrize("text, bad", [
    ("ndcg@10,errr@10", "'errr@10'"), ("ndcg@10,rbp@1.5", "'rbp@1.5'"), ("ndcg@10,rbp@10", "'rbp@10'"),
    ("ndcg@10,p", "'p'"), ("ndcg@10,r2", "'r2'"), ("ndcg@10,map,MAP", "'map' repeats 'map'"),
    ("err@10,mrr", "ndcg@10 must be one of them"), ("ndcg@10,ndcg@\u0665", "'ndcg@\u0665'"),
    ("ndcg@10,rbp@\u0660.\u0665", "'rbp@\u0660.\u0665'"),  # Arabic-Indic digits: ASCII ones only
])
def test_a_bad_metric_list_names_the_token(text: str, bad: str, capsys) -> None:
    with pytest.raises(ValueError, match="--metrics"):
        parse_metrics(text)
    assert main(["compare", "--metrics", text, "--rounds", "1", "--no-progress"]) == 2
    assert bad in capsys.readouterr().err


def test_select_and_metrics_share_one_parser(capsys) -> None:
    assert parse_metric("rbp@0.9") == ("rbp", None, {"persistence": 0.9})
    assert parse_metric("rbp") == ("rbp", None, {"persistence": 0.8})
    assert parse_metric("P@5") == ("precision", 5, {})
    assert main(["compare", "--select", "rbp@2", "--rounds", "1", "--no-progress"]) == 2
    assert "rbp@P takes a persistence P in (0, 1)" in capsys.readouterr().err


def test_a_label_above_errs_maximum_grade_is_refused_before_training(tmp_path: Path, capsys) -> None:
    d = make_ranking(n_queries=12, docs_per_query=(4, 8), n_features=4, n_informative=2, seed=0)
    d.y[:] = np.minimum(d.y, 2.0)
    d.y[0] = 3.0
    write_letor(tmp_path / "data.txt", d)
    argv = ["compare", "--data", str(tmp_path / "data.txt"), "--kfold", "3", "--protocol", "letor", "--metrics",
            ",".join(FOUR), "--methods", "rb-c", "--rounds", "1", "--no-progress"]
    assert main(argv) == 2
    assert "label 3, above ERR's maximum grade 2 (letor conventions): give --max-grade 3" in capsys.readouterr().err


def test_every_output_carries_the_metrics_and_a_run_of_them_resumes(tmp_path: Path, capsys) -> None:
    d = make_ranking(n_queries=15, docs_per_query=(4, 8), n_features=4, n_informative=2, seed=0)
    write_letor(tmp_path / "data.txt", d)
    out = tmp_path / "out"
    argv = ["compare", "--data", str(tmp_path / "data.txt"), "--kfold", "3", "--methods", "regression,rb-c",
            "--rounds", "3", "--no-progress", "--metrics", ",".join(FOUR), "--out", str(out)]
    assert main([*argv, "--folds", "1,2", "--wide"]) == 0
    table = capsys.readouterr().out
    header = next(line for line in table.splitlines() if line.startswith("method"))
    assert header.split()[2:6] == ["NDCG@10", "ERR@10", "MRR", "MAP"]
    assert "ERR: maximum grade 4, R_g = (2^g-1)/2^4" in table
    payload = json.loads((out / "results.json").read_text())
    assert payload["conventions"]["metrics"] == FOUR and payload["conventions"]["max_grade"] == 4
    for run in payload["results"]:
        assert list(run["test"]) == FOUR and list(run["test_per_query"]) == FOUR
    assert set(payload["significance_by_metric"]) == set(FOUR)
    assert payload["significance_by_metric"]["ndcg@10"] == payload["significance"]
    assert set(payload["bootstrap"]["intervals"]["rb-c"]["mean"]) == set(FOUR)
    results = _csv(out / "results.csv")
    per_query = _csv(out / "per_query.csv")
    summary = {r["method"]: r for r in _csv(out / "summary.csv")}
    for row, run in zip(results, payload["results"]):
        assert [float(row[m]) for m in FOUR] == [run["test"][m] for m in FOUR]
    assert [float(r["err@10"]) for r in per_query if r["method"] == "rb-c" and r["fold"] == "1"] == \
        payload["results"][1]["test_per_query"]["err@10"]
    for m in FOUR[1:]:
        test = payload["significance_by_metric"][m]["rb-c"]
        assert float(summary["rb-c"][f"p_ttest_{m}"]) == test["t_pvalue"]
        assert float(summary["rb-c"][f"d{m}"]) == test["mean_diff"]
        assert f"{m}_mean" in summary["rb-c"] and f"{m}_ci_low" in summary["rb-c"]
    # the compact table shows the four too
    assert main([*argv[:-2], "--folds", "1"]) == 0
    assert "NDCG@10   ERR@10      MRR      MAP" in capsys.readouterr().out
    # fold 3 added to the same folder: the earlier runs of these metrics are read back
    assert main([*argv, "--resume"]) == 0
    assert "4 run(s) finished earlier are kept" in capsys.readouterr().err
    again = json.loads((out / "results.json").read_text())
    assert again["compared_folds"] == [1, 2, 3]
    assert [r["test"] for r in again["results"][:4]] == [r["test"] for r in payload["results"]]
    # another metric list on resume: refused, naming what the file lacks
    assert main([*argv[:-4], "--metrics", "ndcg@10,mrr", "--out", str(out), "--resume"]) == 2
    assert "--metrics ndcg@10,err@10,mrr,map" in capsys.readouterr().err


def test_the_round_is_chosen_by_rbp_or_err_under_the_conventions(tiny) -> None:
    train, vali, test = tiny
    vali = vali.subset(np.arange(vali.n_queries))
    vali.y[:] = np.minimum(vali.y, 2.0)
    tp = {"min_data_in_leaf": 1}
    trained = get_method("regression").train(train, vali, test, rounds=4, tree_params={**TREE_PARAMS, **tp},
                                             seed=0, threads=1)
    for select, fn in (("rbp@0.9", lambda s: metrics.rbp(s, vali.y, vali.group_ptr, persistence=0.9)),
                       ("err@10", lambda s: metrics.err(s, vali.y, vali.group_ptr, 10, max_grade=2.0))):
        r = run_method("regression", train, vali, test, rounds=4, tree_params=tp, metric=select,
                       conventions=make_conventions("letor"))
        assert r.select_metric == select
        assert r.vali_curve == [pytest.approx(fn(s)) for s in trained.vali_scores]
