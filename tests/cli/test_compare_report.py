"""What ``boostplug compare`` prints: a table within 100 columns (``--wide``: every column), the
verdict under it (``--alpha``), the legend of the method names, and the hint to ``--out``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from boostplug.cli import main
from boostplug.compare import METHODS
from boostplug.data import make_ranking, write_letor

FAST = ["--rounds", "3", "--no-progress", "--no-plots"]
HINT = "boostplug compare: plots and CSVs: add --out DIR"


@pytest.fixture(scope="module")
def letor_file(tmp_path_factory) -> Path:
    p = tmp_path_factory.mktemp("data") / "data.txt"
    write_letor(p, make_ranking(n_queries=15, docs_per_query=(4, 8), n_features=4, n_informative=2, seed=0))
    return p


def test_default_output_is_table_verdict_legend_within_100_columns(letor_file: Path, capsys) -> None:
    methods = ["lambdarank", "xgb-reg:squarederror", "ndcg_boost-stumps"]
    assert main(["compare", "--data", str(letor_file), "--kfold", "3", "--methods", ",".join(methods), *FAST]) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert max(len(line) for line in lines) <= 100
    header = next(line for line in lines if line.startswith("method"))
    assert header.split()[:4] == ["method", "rounds", "NDCG@10", "MAP"] and "NDCG@1 " not in header
    verdict = next(i for i, line in enumerate(lines) if line.startswith("verdict: best NDCG@10 "))
    assert "lambdarank" in " ".join(lines[verdict:verdict + 3]).split(";")[1]
    legend = lines.index("methods (boostplug compare --methods list):")
    assert verdict < legend
    text = " ".join(" ".join(lines[legend + 1:]).split())
    for name in methods:
        assert f"{name} {' '.join(METHODS[name].summary.split())}" in text
    # the hint comes last, on stderr, and only without --out
    assert captured.err.splitlines()[-1] == HINT and HINT not in captured.out


def test_with_out_no_hint_and_wide_keeps_every_column(letor_file: Path, tmp_path: Path, capsys) -> None:
    assert main(["compare", "--data", str(letor_file), "--kfold", "3", "--folds", "1,2", "--methods",
                 "lambdarank,regression", "--wide", "--out", str(tmp_path / "o"), *FAST]) == 0
    captured = capsys.readouterr()
    header = next(line for line in captured.out.splitlines() if line.startswith("method"))
    for column in ("NDCG@1", "NDCG@5", "NDCG@10 95% CI", "dNDCG@10 95% CI", "p(t)", "p(W)"):
        assert column in header
    assert "verdict (folds 1,2 of 3: partial): best NDCG@10" in captured.out and "plots and CSVs" not in captured.err


def test_a_partial_study_says_so_and_the_runs_warnings_follow_the_table(letor_file: Path, tmp_path: Path,
                                                                         capsys) -> None:
    """--folds 1,2 of 3: the verdict names its scope, the queries that can tell the methods apart right under
    it; a warning a run raised is shown once after the table, with how many runs raised it, and is in
    results.json with its run."""
    warns = "ndcg_boost[hessian=exact]"  # the floor raises most of its Hessians
    assert main(["compare", "--data", str(letor_file), "--kfold", "3", "--folds", "1,2", "--methods",
                 f"lambdarank,{warns}", "--out", str(tmp_path / "o"), *FAST]) == 0
    lines = capsys.readouterr().out.splitlines()
    k = next(i for i, line in enumerate(lines) if line.startswith("verdict"))
    assert lines[k].startswith("verdict (folds 1,2 of 3: partial): ")
    assert next(line for line in lines[k:] if line.startswith("queries: ")).startswith("queries: ")
    assert max(len(line) for line in lines) <= 100
    said = lines.index("warnings the runs raised (each with its run and --tune trial in results.json, info.warnings):")
    assert said > k and lines[said + 1].startswith(f"  2 of 4 run(s) ({warns}): HessianFloorWarning: ndcg_boost: ")
    runs = json.loads((tmp_path / "o" / "results.json").read_text())["results"]
    for run in runs:
        kept = [w["warning"].split(":")[0] for w in run["info"].get("warnings", [])]
        assert kept == (["HessianFloorWarning"] if run["method"] == warns else []), run["method"]
        assert run["info"]["relevant_queries"] == 5


def test_alpha_sets_the_level_of_the_verdict(letor_file: Path, capsys) -> None:
    args = ["compare", "--data", str(letor_file), "--kfold", "3", "--folds", "1", "--methods", "lambdarank,rb-c",
            *FAST]
    assert main([*args, "--alpha", "0.999999"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "at p(t) < 0.999999 against lambdarank, " in out and ("better: rb-c" in out or "worse: rb-c" in out)
    assert main([*args, "--alpha", "1e-12"]) == 0
    assert "no difference to lambdarank is significant at p(t) < 1e-12" in " ".join(capsys.readouterr().out.split())
    for bad in ("0", "1", "nan", "-0.1"):
        assert main([*args, "--alpha", bad]) == 2
        assert capsys.readouterr().err.strip().startswith(
            "boostplug compare: error: --alpha must be a significance level between 0 and 1")


# ---- a missing --data: said as such, and no --out folder left behind ----------------------------
def _error(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    return err[-1]


def test_missing_data_folder_is_named_and_leaves_no_out_folder(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["compare", "--data", "MQ2008", "--layout", "letor4", "--out", "results/mq2008"]) == 2
    line = _error(capsys)
    assert line == (f"boostplug compare: error: --data MQ2008: no such file or folder ({tmp_path / 'MQ2008'}); "
                    "give a LETOR file or folder, or 'example'")
    assert "--layout" not in line
    assert list(tmp_path.iterdir()) == []  # neither results/ nor results/mq2008


def test_an_error_after_out_was_taken_removes_only_the_folders_it_made(tmp_path: Path, capsys) -> None:
    """A --data that fails once read (no qid:) leaves no new folder; an --out that existed stays."""
    bad = tmp_path / "noqid.txt"
    bad.write_text("1 1:0.5 2:0.1\n0 1:0.2 2:0.3\n")
    assert main(["compare", "--data", str(bad), "--out", str(tmp_path / "a" / "b"), *FAST]) == 2
    assert "no qid: on the first data line" in _error(capsys)
    assert not (tmp_path / "a").exists()
    (tmp_path / "kept").mkdir()
    assert main(["compare", "--data", str(bad), "--out", str(tmp_path / "kept"), *FAST]) == 2
    assert (tmp_path / "kept").is_dir() and list((tmp_path / "kept").iterdir()) == []
