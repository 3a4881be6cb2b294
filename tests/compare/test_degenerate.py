"""A method whose chosen model ranks nothing (one prediction for every test document: a gradient that
overflowed, trees that all stopped at one leaf) is degenerate: marked so in the table, the verdict
and results.json, and never reported as a significant difference."""

from __future__ import annotations

import json

import numpy as np
import pytest

from boostplug.compare import REPORT_METRICS, Result, run_method
from boostplug.compare.comparison import comparison, degenerate_folds
from boostplug.compare.protocol import degenerate
from boostplug.compare.report import format_table, verdict
from boostplug.data import make_ranking
from tests._helpers import three_way_split


@pytest.fixture(scope="module")
def split():
    d = make_ranking(n_queries=40, docs_per_query=(6, 10), n_features=5, n_informative=3, seed=7)
    return three_way_split(d, test_size=20, vali_size=6)


def test_degenerate_names_a_model_with_one_value_for_every_document() -> None:
    assert degenerate(np.full(5, 0.25), 3) == "round 3 predicts one value (0.25) for every test document"
    assert degenerate(np.zeros(5), 0) == "no round trained: every test document scores 0"
    assert degenerate(np.full(4, np.nan), 1) is not None
    assert degenerate(np.array([0.25, 0.25, 0.2500001]), 3) is None
    assert degenerate(np.array([1.0]), 3) is None  # one document: nothing to rank, nothing wrong


def test_trees_stopped_at_one_leaf_make_a_degenerate_run(split) -> None:
    """``min_data_in_leaf`` above the training rows: every tree is one leaf (as when mu=1e39
    overflowed LightGBM's float32 gradients), so every document gets the same score."""
    train, vali, test = split
    flat = run_method("lambdarank[min_data_in_leaf=100000]", train, vali, test, rounds=5)
    assert flat.info["degenerate"].endswith("predicts one value (0) for every test document")
    ranked = run_method("lambdarank", train, vali, test, rounds=5)
    assert "degenerate" not in ranked.info


def _result(method: str, fold: int, ndcg10: np.ndarray, flat: bool = False) -> Result:
    per_query = {m: [float(v) for v in ndcg10] for m in REPORT_METRICS}
    return Result(method=method, framework="lightgbm", fold=fold, best_round=1, rounds_trained=1, seconds=1.0,
                  select_metric="ndcg@10", test={m: float(np.mean(v)) for m, v in per_query.items()},
                  test_per_query=per_query, test_qids=list(range(len(ndcg10))),
                  info={"degenerate": "round 1 predicts one value (0) for every test document"} if flat else {})


def _probe_results() -> list[Result]:
    """The probe's table: a baseline, a method far better on every query but degenerate (its
    NDCG is the tie convention's), and a method no different from the baseline."""
    rng = np.random.default_rng(0)
    out = []
    for fold in range(2):
        base = rng.uniform(0.3, 0.7, 50)
        out += [_result("lambdarank", fold, base),
                _result("ndcg_loss2pp[mu=1e+300]", fold, np.clip(base + 0.2, 0, 1), flat=fold == 1),
                _result("other", fold, np.clip(base + rng.normal(0, 0.05, 50), 0, 1))]
    return out


def test_the_table_and_the_verdict_mark_a_degenerate_method_and_test_nothing_of_it() -> None:
    results = _probe_results()
    cmp = comparison(results, "lambdarank")
    assert degenerate_folds(results) == cmp.degenerate == {"ndcg_loss2pp[mu=1e+300]": [2]}
    assert "ndcg_loss2pp[mu=1e+300]" not in cmp.tests and "other" in cmp.tests
    assert cmp.cis["ndcg_loss2pp[mu=1e+300]"]["diff"] is None
    for wide in (False, True):
        table = format_table(results, "lambdarank", wide=wide)
        row = next(line for line in table.splitlines() if line.startswith("ndcg_loss2p"))
        # the compact table's interval column leaves no room for the settings: they are spelt out under it
        assert row.startswith("ndcg_loss2pp[mu=1e+300] !" if wide else "ndcg_loss2p (1) !") and "degenerate" in row
        assert "*" not in row  # its NDCG@10 is the highest, and not marked best
        assert "<0.001" not in row and "e-" not in row  # no p-value
        assert "! degenerate: ndcg_loss2pp[mu=1e+300] (fold 2): the chosen model predicts one value" in \
            " ".join(table.split())
    text = " ".join(verdict(results, "lambdarank").split())
    assert "ndcg_loss2pp[mu=1e+300] is degenerate (one value for every test document, not tested)" in text
    assert "best NDCG@10 ndcg_loss2pp" not in text and "better: ndcg_loss2pp" not in text


def test_a_degenerate_baseline_is_tested_against_by_nothing() -> None:
    results = [r for r in _probe_results() if r.method != "lambdarank"]
    cmp = comparison(results, "ndcg_loss2pp[mu=1e+300]")
    assert cmp.tests == {} and all(c["diff"] is None for c in cmp.cis.values())
    text = " ".join(verdict(results, "ndcg_loss2pp[mu=1e+300]").split())
    assert text.startswith("verdict: best NDCG@10 other (")
    assert "ndcg_loss2pp[mu=1e+300] is the baseline: nothing is tested against it" in text
    assert "not a ranking; ndcg_loss2pp[mu=1e+300] is the baseline: nothing is tested against it" in \
        " ".join(format_table(results, "ndcg_loss2pp[mu=1e+300]").split())


def test_results_json_lists_the_degenerate_methods(tmp_path) -> None:
    from boostplug.compare.report import write_outputs
    from boostplug.compare.run_record import RunRecord

    record = RunRecord(data="d", layout=None, methods="x", frameworks="lightgbm", folds="all", kfold=2, rounds=1,
                       early_stopping_metric="ndcg@10", seed=0, jobs=1, threads=1, tree_params={}, tune=0,
                       data_sha256={"d.txt": "0" * 64})
    write_outputs(tmp_path, _probe_results(), "lambdarank", record, plots=False)
    payload = json.loads((tmp_path / "results.json").read_text())
    assert payload["degenerate"] == {"ndcg_loss2pp[mu=1e+300]": [2]}
    assert "ndcg_loss2pp[mu=1e+300]" not in payload["significance"]
