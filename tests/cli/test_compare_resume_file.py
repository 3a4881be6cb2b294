"""``--resume`` reads results.json through one schema (boostplug.compare.results_schema): a
damaged or edited file is refused with one line naming what is wrong (the key path, or the
method, fold and metric), before anything is trained or written, and the file stays as it was.
Each corruption here was accepted before (or ended in a traceback): a repeated (method, fold)
counted as an extra fold, NaN or 7.5 as an NDCG, a file without settings and provenance passed
the same-data check."""

from __future__ import annotations

import copy
import json
import math
import shutil
from pathlib import Path
from typing import Any, Callable

import pytest

from boostplug.cli import main
from boostplug.compare.results_schema import read_results, with_digests
from boostplug.data import make_ranking, write_letor

FAST = ["--rounds", "3", "--no-progress", "--no-plots"]


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> tuple[Path, dict[str, Any]]:
    """A finished run (regression and rb-c on folds 1 and 2 of 3) and its results.json."""
    root = tmp_path_factory.mktemp("finished")
    data = root / "data.txt"
    write_letor(data, make_ranking(n_queries=15, docs_per_query=(4, 8), n_features=4, n_informative=2, seed=0))
    assert main([*_argv(data, root / "out")[:-1]]) == 0
    return data, json.loads((root / "out" / "results.json").read_text())


def _argv(data: Path, out: Path) -> list[str]:
    return ["compare", "--data", str(data), "--kfold", "3", "--folds", "1,2", "--methods", "regression,rb-c",
            "--out", str(out), *FAST, "--resume"]


def _resume(finished: tuple[Path, dict[str, Any]], tmp_path: Path, payload: Any, capsys) -> tuple[int, str]:
    """--resume on ``payload`` as the earlier run's results.json: the exit code and stderr; the
    file must be left as it was."""
    data, _ = finished
    out = tmp_path / "out"
    out.mkdir()
    text = json.dumps(payload, indent=1)
    (out / "results.json").write_text(text)
    capsys.readouterr()
    code = main(_argv(data, out))
    err = capsys.readouterr().err
    if code != 0:
        assert (out / "results.json").read_text() == text
        assert "Traceback" not in err
    return code, err


def test_the_file_as_written_resumes(finished, tmp_path: Path, capsys) -> None:
    code, err = _resume(finished, tmp_path, finished[1], capsys)
    assert code == 0, err
    assert "4 run(s) finished earlier are kept" in err


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    """Set the value at a dotted path (``results.2.test.ndcg@10``) of the payload."""

    def change(payload: dict[str, Any]) -> None:
        *head, last = path.split(".")
        node: Any = payload
        for key in head:
            node = node[int(key)] if isinstance(node, list) else node[key]
        node[int(last) if isinstance(node, list) else last] = value

    return change


def _delete(*keys: str) -> Callable[[dict[str, Any]], None]:
    def change(payload: dict[str, Any]) -> None:
        for k in keys:
            del payload[k]

    return change


def _repeat_a_run(payload: dict[str, Any]) -> None:
    payload["results"].append(copy.deepcopy(payload["results"][1]))


def _other_queries(payload: dict[str, Any]) -> None:
    for r in payload["results"]:  # both methods of fold 1, consistently: not the data's queries
        if r["fold"] == 1:
            r["test_qids"] = [q + 100 for q in r["test_qids"]]


def _a_fold_the_data_has_not(payload: dict[str, Any]) -> None:
    for r in payload["results"]:
        if r["fold"] == 2:
            r["fold"] = 6
    payload["folds_completed"] = {m: [1, 6] for m in payload["folds_completed"]}


def _per_query_and_mean(value: float) -> Callable[[dict[str, Any]], None]:
    def change(payload: dict[str, Any]) -> None:
        r = payload["results"][3]
        r["test_per_query"]["map"][0] = value
        values = r["test_per_query"]["map"]
        r["test"]["map"] = sum(values) / len(values)

    return change


CORRUPTED = [
    ("a (method, fold) twice", _repeat_a_run, ["results[4] repeats method rb-c, fold 1 (results[1])"]),
    ("NDCG NaN", _set("results.1.test.ndcg@10", math.nan),
     ["results[1] (method rb-c, fold 1): test.ndcg@10 is nan; ndcg@10 values are in [0, 1]"]),
    ("NDCG 7.5", _set("results.2.test.ndcg@10", 7.5),
     ["results[2] (method regression, fold 2): test.ndcg@10 is 7.5; ndcg@10 values are in [0, 1]"]),
    ("negative NDCG", _set("results.0.test.ndcg@1", -0.25), ["test.ndcg@1 is -0.25; ndcg@1 values are in [0, 1]"]),
    ("a per-query MAP of 3 with its mean", _per_query_and_mean(3.0),
     ["results[3] (method rb-c, fold 2): test_per_query.map[0] is 3.0; map values are in [0, 1]"]),
    ("a curve value inf", _set("results.0.test_curve.1", math.inf), ["test_curve[1] is inf; ndcg@10 values"]),
    ("a mean that is not its queries'", _set("results.0.test.ndcg@5", 0.999),
     ["results[0] (method regression, fold 1): test.ndcg@5 is 0.999, but the mean of its per-query values is"]),
    ("no settings and no provenance", _delete("settings", "provenance"),
     ["has no 'settings' and no 'provenance': nothing says its runs were made on the same data"]),
    ("no provenance", _delete("provenance"), ["has no 'provenance'"]),
    ("no data digests", _set("provenance.data_sha256", {}), ["provenance.data_sha256 is empty"]),
    ("a setting missing", lambda p: p["settings"].pop("rounds"), ["settings has no 'rounds'"]),
    ("rounds as text", _set("settings.rounds", "3"), ['settings.rounds must be an integer, got string "3"']),
    ("settings a list", _set("settings", []), ["settings must be an object, got list []"]),
    ("results an object", _set("results", {}), ["results must be a list, got object {}"]),
    ("a fold as text", _set("results.0.fold", "0"), ['results[0].fold must be an integer, got string "0"']),
    ("a fold true", _set("results.0.fold", True), ["results[0].fold must be an integer, got boolean true"]),
    ("test a list", _set("results.1.test", [0.5]), ["results[1].test must be an object, got list [0.5]"]),
    ("a per-query value as text", _set("results.1.test_per_query.map.2", "0.5"),
     ['results[1].test_per_query.map[2] must be a number, got string "0.5"']),
    ("a metric missing", lambda p: p["results"][0]["test"].pop("map"), ["missing map"]),
    ("a field of no version", _set("results.0.note", "x"), ["results[0] has field(s) 'note'"]),
    ("a field missing", lambda p: p["results"][0].pop("test_qids"), ["results[0] has no 'test_qids'"]),
    ("a chosen round not trained", _set("results.0.best_round", 9), ["best_round 9 must be one of the rounds"]),
    ("a digest that is not one", _set("provenance.data_sha256", {"data.txt": "abc"}),
     ["provenance.data_sha256.data.txt must be a SHA-256"]),
    ("folds_completed not the runs'", _set("folds_completed.rb-c", [1]),
     ["folds_completed.rb-c is [1] but its runs are of fold(s) [1, 2]"]),
    ("other test queries", _other_queries, ["method regression on fold 1 tested other queries than the data's fold"]),
    ("one method's test queries", _set("results.1.test_qids.0", 999),
     ["results[1] (method rb-c, fold 1) has other test queries than results[0] (method regression)"]),
    ("a fold the data has not", _a_fold_the_data_has_not,
     ["a run of method regression on fold 6, and the data make 3 fold(s)"]),
]


@pytest.mark.parametrize("change, says", [c[1:] for c in CORRUPTED], ids=[c[0] for c in CORRUPTED])
def test_a_corrupted_results_json_is_refused_naming_what(finished, tmp_path: Path, capsys, change, says) -> None:
    payload = copy.deepcopy(finished[1])
    change(payload)
    code, err = _resume(finished, tmp_path, payload, capsys)
    assert code == 2, err
    assert err.startswith("boostplug compare: error: --resume: ") and err.count("\n") == 1  # one line
    for s in says:
        assert s in err, err


def test_a_file_that_is_not_an_object_is_refused(finished, tmp_path: Path, capsys) -> None:
    code, err = _resume(finished, tmp_path, [1, 2], capsys)
    assert code == 2 and "the file must be an object, got list [1, 2]" in err


def test_nan_is_a_value_only_where_the_conventions_leave_a_query_out(finished) -> None:
    """--empty skip: a query without a relevant document is NaN per query, left out of the mean."""
    payload = copy.deepcopy(finished[1])
    r = payload["results"][0]
    r["test_per_query"]["ndcg@10"][0] = math.nan
    kept = r["test_per_query"]["ndcg@10"][1:]
    r["test"]["ndcg@10"] = sum(kept) / len(kept)
    r["test_curve"][r["best_round"] - 1] = r["test"]["ndcg@10"]  # the curve at the chosen round is that mean
    with pytest.raises(ValueError, match=r"results\[0\] \(method regression, fold 1\): test_per_query.ndcg@10\[0\] "
                                         r"is nan; ndcg@10 values are in \[0, 1\]"):
        read_results(payload)
    payload["conventions"]["empty"] = "skip"
    runs = read_results(payload)
    assert math.isnan(runs[0].test_per_query["ndcg@10"][0])
    for q in range(len(kept) + 1):  # every query left out: the mean is NaN
        r["test_per_query"]["ndcg@10"][q] = math.nan
    r["test"]["ndcg@10"] = r["test_curve"][r["best_round"] - 1] = math.nan
    assert math.isnan(read_results(payload)[0].test["ndcg@10"])
    r["test"]["ndcg@10"] = 0.5
    with pytest.raises(ValueError, match=r"test.ndcg@10 is 0.5, but"):
        read_results(payload)


def test_an_edited_copy_resumes_nowhere_else(finished, tmp_path: Path, capsys) -> None:
    """The duplicated run of the issue: lambdarank's mean fell and every method 'beat' it; now the
    file is refused and a copy of the clean file still resumes."""
    payload = copy.deepcopy(finished[1])
    _repeat_a_run(payload)
    code, err = _resume(finished, tmp_path, payload, capsys)
    assert code == 2 and "repeats method rb-c, fold 1" in err
    shutil.rmtree(tmp_path / "out")
    assert _resume(finished, tmp_path, finished[1], capsys)[0] == 0


# ---- edits the schema's ranges cannot see: the runs' own consistency and the digests --------------------
def _swap_names(payload: dict[str, Any]) -> None:
    a, b = payload["results"][0], payload["results"][1]  # regression and rb-c of fold 1
    a["method"], b["method"] = b["method"], a["method"]


def _other_best_round(payload: dict[str, Any]) -> None:
    """The probe's best_round edited to 15, within this run's 3 rounds: another round than the curve's."""
    r = payload["results"][2]
    r["best_round"] = r["best_round"] % r["rounds_trained"] + 1


def _curve_choosing_another_round(payload: dict[str, Any]) -> None:
    r = payload["results"][0]
    other = r["best_round"] % r["rounds_trained"]  # 0-based index of another round
    r["vali_curve"][other] = 1.0
    r["vali_ndcg10_curve"][other] = 1.0


def _summary_edited(payload: dict[str, Any]) -> None:
    payload["summary"]["rb-c"]["ndcg@10"]["mean"] = 0.99


EDITED = [
    ("best_round edited", _other_best_round, "results[2] (method regression, fold 2): best_round", True),
    ("validation curve edited", _curve_choosing_another_round,
     "results[0] (method regression, fold 1): best_round", True),
    ("two methods' names swapped", _swap_names,
     "results[0] (method rb-c, fold 1) stands before results[1] (method regression, fold 1)", True),
    ("a per-query value edited with its mean", _per_query_and_mean(0.5),
     "results[3] (method rb-c, fold 2) does not match its digest", False),
    ("the summary edited", _summary_edited, "the file does not match its digest", False),
]


# each edit with the digests as written; those the run's own consistency catches also with digests
# recomputed over the edit (which hides it from the digests)
_EDIT_CASES = [(name, change, says, recomputed) for name, change, says, consistency in EDITED
               for recomputed in ((False, True) if consistency else (False,))]


@pytest.mark.parametrize("change, says, recomputed", [c[1:] for c in _EDIT_CASES],
                         ids=[f"{c[0]}{', digests recomputed' if c[3] else ''}" for c in _EDIT_CASES])
def test_an_edited_results_json_is_refused_naming_the_entry(finished, tmp_path: Path, capsys, change, says,
                                                           recomputed) -> None:
    """The probe's edits, each accepted before: refused by the run's own consistency (best round
    against its validation curve, names against the methods' order), else by the digest of the
    entry or of the file."""
    payload = copy.deepcopy(finished[1])
    assert "digest" in payload and all("digest" in r for r in payload["results"])
    change(payload)
    if recomputed:
        payload = with_digests(payload)
    code, err = _resume(finished, tmp_path, payload, capsys)
    assert code == 2, err
    assert err.startswith("boostplug compare: error: --resume: ") and err.count("\n") == 1
    assert says in err, err


def test_a_digest_removed_from_one_run_is_refused(finished, tmp_path: Path, capsys) -> None:
    payload = copy.deepcopy(finished[1])
    del payload["results"][1]["digest"]
    code, err = _resume(finished, tmp_path, payload, capsys)
    assert code == 2 and "results[1] (method rb-c, fold 1) has no digest, though the file has digests" in err
