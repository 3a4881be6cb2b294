"""``boostplug compare`` end to end through boostplug.cli.main on tiny data: every data kind,
the CSV/JSON/PNG outputs and their agreement, --methods list, and the one-line errors."""

from __future__ import annotations

import csv
import os
import re
import subprocess
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from boostplug import metrics
from boostplug.cli import main
from boostplug.compare import METHODS
from boostplug.data import RankingData, make_ranking, write_letor

FAST = ["--rounds", "3", "--no-progress", "--no-plots"]


def _data(n_queries: int = 12, seed: int = 0) -> RankingData:
    return make_ranking(n_queries=n_queries, docs_per_query=(4, 8), n_features=4, n_informative=2, seed=seed)


def _csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture
def letor_file(tmp_path: Path) -> Path:
    p = tmp_path / "data.txt"
    write_letor(p, _data(15))
    return p


def test_letor_file_kfold_with_outputs_that_agree(letor_file: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "out"
    code = main(["compare", "--data", str(letor_file), "--kfold", "3", "--folds", "1,3", "--methods",
                 "lambdarank,xgb-rank:ndcg,rb-c", "--rounds", "4", "--no-progress", "--out", str(out)])
    table = capsys.readouterr().out
    assert code == 0
    for name in ("lambdarank", "xgb-rank:ndcg", "rb-c"):
        assert name in table
    rows = _csv(out / "results.csv")
    assert [(r["method"], r["fold"]) for r in rows] == [
        (m, f) for f in ("1", "3") for m in ("lambdarank", "xgb-rank:ndcg", "rb-c")]
    payload = json.loads((out / "results.json").read_text())
    assert payload["baseline"] == "lambdarank"
    assert payload["interrupted"] is False and payload["compared_folds"] == [1, 3]
    assert payload["folds_completed"] == {m: [1, 3] for m in ("lambdarank", "xgb-rank:ndcg", "rb-c")}
    per_query = _csv(out / "per_query.csv")
    curves = _csv(out / "curves.csv")
    for row, res in zip(rows, payload["results"]):
        assert res["method"] == row["method"] and res["fold"] == int(row["fold"])  # numbered from 1 in both
        assert float(row["ndcg@10"]) == pytest.approx(res["test"]["ndcg@10"])
        # the CSV metric is the mean of the per-query values and the test curve at the chosen round
        pq = [float(q["ndcg@10"]) for q in per_query if q["method"] == row["method"] and q["fold"] == row["fold"]]
        assert float(row["ndcg@10"]) == pytest.approx(np.nanmean(pq))
        c = [q for q in curves if q["method"] == row["method"] and q["fold"] == row["fold"]]
        assert len(c) == int(row["rounds_trained"])
        vali = [float(q["vali_select"]) for q in c]
        assert int(row["best_round"]) == int(np.argmax(vali)) + 1
        assert float(c[int(row["best_round"]) - 1]["test_ndcg@10"]) == pytest.approx(float(row["ndcg@10"]))
    summary = {r["method"]: r for r in _csv(out / "summary.csv")}
    lam = [float(r["ndcg@10"]) for r in rows if r["method"] == "lambdarank"]
    assert float(summary["lambdarank"]["ndcg@10_mean"]) == pytest.approx(np.mean(lam))
    assert float(summary["lambdarank"]["ndcg@10_std"]) == pytest.approx(np.std(lam))
    assert payload["significance"]["rb-c"]["n"] == len(per_query) // 3
    for png in ("curves.png", "metrics.png"):
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_saved_per_query_values_recompute_from_data(letor_file: Path, tmp_path: Path) -> None:
    """per_query.csv recomputed from the data: a model that cannot split scores every document
    alike, so its test NDCG@10 per query is that of the file order."""
    out = tmp_path / "o"
    assert main(["compare", "--data", str(letor_file), "--kfold", "3", "--folds", "2", "--methods", "regression",
                 "--param", "min_data_in_leaf=1000", "--out", str(out), *FAST]) == 0
    # min_data_in_leaf above the data size: no split, constant scores, so the test NDCG@10 is the
    # input-order NDCG of the test queries (ties kept in file order)
    from boostplug.compare.data import file_folds
    from boostplug.data import load_letor

    test = file_folds(load_letor(letor_file), 3, seed=0)[1][2]
    expected = metrics.by_name("ndcg@10")(np.zeros(test.n_docs), test.y, test.group_ptr, per_query=True)
    got = [float(q["ndcg@10"]) for q in _csv(out / "per_query.csv")]
    assert got == pytest.approx(expected.tolist())


def _folder(root: Path, kind: str) -> Path:
    root.mkdir()
    if kind == "folds":
        for k in (1, 2):
            (root / f"Fold{k}").mkdir()
            for j, split in enumerate(("train", "vali", "test")):
                write_letor(root / f"Fold{k}" / f"{split}.txt", _data(10, seed=10 * k + j))
    else:
        for k in range(1, 4):
            write_letor(root / f"S{k}.txt", _data(10, seed=k))
    return root


@pytest.mark.parametrize("kind,n_folds,layout", [("folds", 2, []), ("parts", 3, ["--layout", "rotate"])])
def test_letor_folders(tmp_path: Path, kind: str, n_folds: int, layout: list[str]) -> None:
    root = _folder(tmp_path / kind, kind)
    out = tmp_path / "out"
    assert main(["compare", "--data", str(root), *layout, "--methods", "regression,mpboost-ldd", "--out", str(out),
                 *FAST]) == 0
    rows = _csv(out / "results.csv")
    assert sorted({int(r["fold"]) for r in rows}) == list(range(1, n_folds + 1))
    assert main(["compare", "--data", str(root), *layout, "--folds", "2", "--methods", "regression", "--out",
                 str(out), "--overwrite", *FAST]) == 0
    assert [r["fold"] for r in _csv(out / "results.csv")] == ["2"]


def test_embedded_example_with_a_baseline(tmp_path: Path, capsys) -> None:
    out = tmp_path / "ex"
    assert main(["compare", "--methods", "regression,ndcg_boost", "--baseline", "ndcg_boost", "--out", str(out),
                 *FAST]) == 0
    table = capsys.readouterr().out
    assert "(baseline)" in next(line for line in table.splitlines() if line.startswith("ndcg_boost "))
    assert json.loads((out / "results.json").read_text())["settings"]["data"] == "example"


def test_frameworks_restrict_all(letor_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "b"
    assert main(["compare", "--data", str(letor_file), "--kfold", "2", "--folds", "1", "--methods", "all",
                 "--frameworks", "booster", "--out", str(out), *FAST]) == 0
    ran = [r["method"] for r in _csv(out / "results.csv")]
    assert ran == [n for n, m in METHODS.items() if m.framework == "booster"]


def test_methods_list(capsys) -> None:
    assert main(["compare", "--methods", "list"]) == 0
    text = capsys.readouterr().out
    for name, m in METHODS.items():
        assert any(line.split()[:2] == [name, m.framework] for line in text.splitlines())

    assert max(map(len, text.splitlines())) <= 100  # wrapped descriptions, as the table's legend


def test_help_names_the_frameworks_and_keeps_method_names_whole(monkeypatch, capsys) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert all(f in text for f in ("LightGBM", "XGBoost", "CatBoost")), text
    monkeypatch.setenv("COLUMNS", "60")  # narrow: argparse wraps every help text
    with pytest.raises(SystemExit):
        main(["compare", "--help"])
    broken = [line for line in capsys.readouterr().out.splitlines() if re.search(r"\w-$", line)]
    assert not broken, broken


def _parser_error(capsys, argv: list[str]) -> str:
    """argparse's refusal: one line (on main its 30 lines of usage came first)."""
    with pytest.raises(SystemExit) as e:
        main(["compare", *argv])
    assert e.value.code == 2
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("boostplug compare: error:"), lines
    return lines[0]


def test_an_unknown_option_gets_the_closest(capsys) -> None:
    said = _parser_error(capsys, ["--methds", "lambdarank"])
    assert "unrecognized arguments: --methds lambdarank; did you mean --methods" in said
    assert said.endswith("(the options: boostplug compare --help)")


@pytest.mark.parametrize("argv", [["--rounds", "٥"], ["--kfold", "٣"], ["--seed", "٧"], ["--jobs", "２"],
                                  ["--tune", "٢"], ["--alpha", "٠.١"]], ids=lambda a: a[0])
def test_numbers_in_other_digits_are_refused_as_threads_and_folds_are(capsys, argv: list[str]) -> None:
    """On main int() and float() read them (5, 3, 7, 2, 0.1): one rule for digits, ASCII."""
    assert f"argument {argv[0]}: {argv[1]!r} is not a number in ASCII digits" in _parser_error(capsys, argv)


def test_out_empty_or_a_dangling_link_is_refused_saying_what_it_is(tmp_path: Path, monkeypatch, capsys) -> None:
    """On main --out '' wrote the results into the current folder, and a dangling link said "File exists"."""
    from boostplug.compare import execution

    monkeypatch.setattr(execution, "run_method", lambda *a, **k: pytest.fail("trained despite a bad --out"))
    monkeypatch.chdir(tmp_path)
    assert "argument --out: '' is empty: give a folder" in _parser_error(capsys, ["--methods", "regression", "--out", ""])
    (tmp_path / "link").symlink_to(tmp_path / "gone")
    for out in ("link", "link/sub"):
        assert f"--out {out}: link is a symbolic link to {tmp_path / 'gone'}, which does not exist" in _error(
            capsys, ["--methods", "regression", *FAST, "--out", out])


def test_out_a_file_says_only_that_without_matplotlib(tmp_path: Path, monkeypatch, capsys) -> None:
    """On main the unrelated "plots are skipped (no matplotlib ...)" came first."""
    from boostplug.cli import compare_options

    monkeypatch.setattr(compare_options, "installed", lambda name: name != "matplotlib")
    (tmp_path / "existing.txt").write_text("x")
    assert "exists and is not a folder" in _error(capsys, ["--methods", "regression", "--rounds", "2",
                                                            "--out", str(tmp_path / "existing.txt")])


def test_the_help_names_every_framework_whole_method_names_and_no_file_of_the_repository(capsys, monkeypatch) -> None:
    """On main --frameworks' help left out linear, the default method list broke inside a name
    ("ndcg_boo" / "st-stumps") and the help sent a pip user to docs/compare.md."""
    from boostplug.compare import DEFAULT_METHODS, FRAMEWORKS

    monkeypatch.setenv("COLUMNS", "60")
    with pytest.raises(SystemExit):
        main(["compare", "--help"])
    out = capsys.readouterr().out
    words = set(re.split(r"[\s,()]+", out))
    assert set(DEFAULT_METHODS) <= words and "docs/" not in out
    frameworks_help = " ".join(out.split("\n  --frameworks FRAMEWORKS")[1].split("(default")[0].split())
    assert all(f in frameworks_help for f in FRAMEWORKS), frameworks_help


def _error(capsys, argv: list[str]) -> str:
    assert main(["compare", *argv]) == 2
    cap = capsys.readouterr()
    lines = [line for line in cap.err.splitlines() if line.strip()]
    assert len(lines) == 1, cap.err
    assert "Traceback" not in cap.err and lines[0].startswith("boostplug compare: error:")
    return lines[0]


def test_error_messages(tmp_path: Path, letor_file: Path, capsys) -> None:
    assert "no such file or folder" in _error(capsys, ["--data", str(tmp_path / "nope.txt")])
    noqid = tmp_path / "noqid.txt"
    write_letor(noqid, _data(4), write_qid=False, write_query_file=True)
    Path(str(noqid) + ".query").unlink()  # no qid: and no group sizes
    assert "no qid" in _error(capsys, ["--data", str(noqid)])
    assert "--methods list" in _error(capsys, ["--methods", "lambdarank,nope"])
    assert "fold 9 does not exist" in _error(capsys, ["--data", str(letor_file), "--folds", "9", *FAST])
    assert "KEY=VALUE" in _error(capsys, ["--param", "depth=3"])
    assert "not an integer" in _error(capsys, ["--param", "num_leaves=many"])
    assert "not a number" in _error(capsys, ["--param", "learning_rate=fast"])
    assert "'٠.١' is not a number" in _error(capsys, ["--param", "learning_rate=٠.١"])  # (on main: 0.1)
    assert "--frameworks" in _error(capsys, ["--frameworks", "catboost"])
    assert "not in --frameworks" in _error(capsys, ["--methods", "rb-c", "--frameworks", "lightgbm"])
    assert "--baseline" in _error(capsys, ["--methods", "regression", "--baseline", "lambdarank"])
    assert "--rounds" in _error(capsys, ["--rounds", "0"])
    assert "--threads" in _error(capsys, ["--threads", "none"])
    assert "--early-stopping-metric" in _error(capsys, ["--early-stopping-metric", "auc"])
    assert "--kfold" in _error(capsys, ["--kfold", "1"])
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "not a LETOR folder" in _error(capsys, ["--data", str(empty)])


@pytest.mark.parametrize("param,says", [
    ("num_leaves=1", "--param num_leaves=1: must be between 2 and 131072"),
    ("learning_rate=-1", "learning_rate=-1.0: must be > 0"),
    ("learning_rate=nan", "must be finite"),
    ("feature_fraction=0", "feature_fraction=0.0: must be in (0, 1]"),
    ("max_bin=1", "max_bin=1: must be >= 2"),
    ("min_data_in_leaf=-1", "must be >= 0"),
    ("num_leaves=2.5", "'2.5' is not an integer"),
])
def test_bad_tree_parameter_is_refused_before_training(capsys, monkeypatch, param: str, says: str) -> None:
    from boostplug.compare import execution

    monkeypatch.setattr(execution, "run_method", lambda *a, **k: pytest.fail("trained despite a bad --param"))
    assert says in _error(capsys, ["--methods", "lambdarank,xgb-rank:ndcg", "--param", param, *FAST])


@pytest.mark.parametrize("n_queries,kfold,says", [
    (2, [], "--kfold 5: the data has only 2 queries; compare needs at least 3"),
    (4, [], "--kfold 5: more folds than the data's 4 queries; use --kfold between 2 and 4"),
    (3, ["--kfold", "2"], "--kfold 2: on 3 queries this leaves a training part of 1 query"),
])
def test_kfold_that_does_not_fit_the_file_names_kfold(tmp_path: Path, capsys, n_queries: int, kfold: list[str],
                                                      says: str) -> None:
    path = tmp_path / "few.txt"
    write_letor(path, _data(n_queries))
    assert says in _error(capsys, ["--data", str(path), *kfold, "--methods", "regression", *FAST])
    if n_queries == 3:  # the value the message offers works
        assert main(["compare", "--data", str(path), "--kfold", "3", "--methods", "regression", *FAST]) == 0


def test_bad_out_is_refused_before_training(tmp_path: Path, monkeypatch, capsys) -> None:
    from boostplug.compare import execution

    monkeypatch.setattr(execution, "run_method", lambda *a, **k: pytest.fail("trained despite a bad --out"))
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    argv = ["--methods", "regression", *FAST, "--out"]
    assert f"--out {a_file}: exists and is not a folder" in _error(capsys, [*argv, str(a_file)])
    assert f"--out {a_file / 'sub'}: {a_file} is not a folder" in _error(capsys, [*argv, str(a_file / "sub")])
    assert "--out /dev/null/x: /dev/null is not a folder" in _error(capsys, [*argv, "/dev/null/x"])


def test_out_folder_is_created_before_training(tmp_path: Path, monkeypatch) -> None:
    from boostplug.compare import execution

    out = tmp_path / "new" / "deeper"
    real = execution.run_method

    def check(*a, **k):
        if not out.is_dir():
            pytest.fail("training started before --out was created")  # BaseException: not a method failure
        return real(*a, **k)

    monkeypatch.setattr(execution, "run_method", check)
    assert main(["compare", "--methods", "regression", "--out", str(out), *FAST]) == 0
    assert (out / "results.csv").is_file()


def test_a_path_error_while_writing_is_one_line_after_the_table(tmp_path: Path, monkeypatch, capsys) -> None:
    import errno
    import os

    monkeypatch.delenv("BOOSTPLUG_DEBUG", raising=False)
    out = tmp_path / "o"
    real_fsync = os.fsync

    def disk_full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    from boostplug.cli import compare as cli_compare

    real_write = cli_compare.write_outputs

    def write_on_a_full_disk(*a, **k):  # training is over: only the writing finds the disk full
        monkeypatch.setattr(os, "fsync", disk_full)
        try:
            return real_write(*a, **k)
        finally:
            monkeypatch.setattr(os, "fsync", real_fsync)

    monkeypatch.setattr(cli_compare, "write_outputs", write_on_a_full_disk)
    assert main(["compare", "--methods", "regression", "--out", str(out), *FAST]) == 2
    cap = capsys.readouterr()
    assert "regression" in cap.out  # the table came first
    assert "Traceback" not in cap.err
    assert cap.err.splitlines()[-1] == (f"boostplug compare: error: {out / 'results.csv'}: No space left on device; "
                                        "nothing was written, the folder is as it was before the run")
    assert not out.exists()  # nothing half-written, no staging folder left: the folder the run made is gone


def test_an_output_name_taken_by_a_folder_is_refused_before_training(tmp_path: Path, monkeypatch, capsys) -> None:
    _no_training(monkeypatch)
    out = tmp_path / "o"
    (out / "results.csv").mkdir(parents=True)
    line = _error(capsys, ["--methods", "regression", "--out", str(out), "--overwrite", *FAST])
    assert line == f"boostplug compare: error: --out {out}: results.csv is a folder; a run writes a file there"


def test_internal_errors_keep_their_traceback(monkeypatch, capsys) -> None:
    """Only user errors are one line: a ValueError or an OSError without a path from boostplug's
    own code is a bug, and main() lets it through (its traceback) instead of a one-line 'error'."""
    from boostplug.cli import compare as cli_compare

    def broken(*a, **k):
        raise ValueError("an internal bug")

    monkeypatch.setattr(cli_compare, "format_table", broken)
    with pytest.raises(ValueError, match="an internal bug"):
        main(["compare", "--methods", "regression", *FAST])
    monkeypatch.setattr(cli_compare, "format_table", lambda *a, **k: (_ for _ in ()).throw(OSError("no path")))
    with pytest.raises(OSError, match="no path"):
        main(["compare", "--methods", "regression", *FAST])


def test_debug_prints_the_traceback_of_a_one_line_error(monkeypatch, capsys) -> None:
    monkeypatch.setenv("BOOSTPLUG_DEBUG", "1")
    assert main(["compare", "--methods", "nope"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" in err and err.splitlines()[-1].startswith("boostplug compare: error: --methods: unknown method")


def test_without_matplotlib_out_writes_everything_but_the_plots(letor_file: Path, tmp_path: Path, monkeypatch,
                                                               capsys) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib raises ImportError
    out = tmp_path / "p"
    assert main(["compare", "--data", str(letor_file), "--kfold", "2", "--folds", "1", "--methods", "regression",
                 "--rounds", "2", "--no-progress", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    skipped = [line for line in err.splitlines() if "plots" in line]
    assert len(skipped) == 1 and 'pip install "boostplug[plot]"' in skipped[0], err
    written = {p.name for p in out.iterdir()}
    assert {"results.csv", "per_query.csv", "curves.csv", "summary.csv", "results.json"} <= written, written
    assert not written & {"curves.png", "metrics.png"}


def _fail_on(monkeypatch, method: str) -> None:
    from boostplug.compare import execution

    real = execution.run_method

    def failing(name, *a, **k):
        if name == method:
            raise RuntimeError("boom:\nthe second line")
        return real(name, *a, **k)

    monkeypatch.setattr(execution, "run_method", failing)


def test_a_failing_method_is_one_line_and_the_others_are_kept(letor_file: Path, tmp_path: Path, monkeypatch,
                                                             capsys) -> None:
    monkeypatch.delenv("BOOSTPLUG_DEBUG", raising=False)
    _fail_on(monkeypatch, "ndcg_boost")
    out = tmp_path / "f"
    code = main(["compare", "--data", str(letor_file), "--kfold", "3", "--folds", "1,2", "--methods",
                 "regression,ndcg_boost", "--out", str(out), *FAST])
    cap = capsys.readouterr()
    assert code == 1
    assert "regression" in cap.out and "ndcg_boost" not in cap.out
    assert "Traceback" not in cap.err
    assert "boostplug compare: ndcg_boost failed on fold 1,2: RuntimeError: boom: the second line" in cap.err
    assert "BOOSTPLUG_DEBUG=1" in cap.err
    assert [r["method"] for r in _csv(out / "results.csv")] == ["regression", "regression"]
    failures = json.loads((out / "results.json").read_text())["failures"]
    assert [(f["method"], f["fold"]) for f in failures] == [("ndcg_boost", 1), ("ndcg_boost", 2)]
    assert "Traceback" in failures[0]["traceback"] and "RuntimeError" in failures[0]["traceback"]
    # BOOSTPLUG_DEBUG=1: the tracebacks on stderr too
    monkeypatch.setenv("BOOSTPLUG_DEBUG", "1")
    assert main(["compare", "--methods", "regression,ndcg_boost", *FAST]) == 1
    assert "Traceback" in capsys.readouterr().err


def test_every_method_failing_exits_1(monkeypatch, capsys) -> None:
    monkeypatch.delenv("BOOSTPLUG_DEBUG", raising=False)
    _fail_on(monkeypatch, "regression")
    assert main(["compare", "--methods", "regression", *FAST]) == 1
    err = capsys.readouterr().err
    assert "regression failed on fold 1: RuntimeError" in err and "no method finished" in err


def test_interrupt_still_writes_outputs(tmp_path: Path, monkeypatch, capsys) -> None:
    from boostplug.compare import execution

    real = execution.run_method

    def stop_on_second(name, *a, **k):
        if name == "ndcg_boost":
            raise KeyboardInterrupt
        return real(name, *a, **k)

    monkeypatch.setattr(execution, "run_method", stop_on_second)
    out = tmp_path / "int"
    assert main(["compare", "--methods", "regression,ndcg_boost", "--out", str(out), *FAST]) == 130
    assert [r["method"] for r in _csv(out / "results.csv")] == ["regression"]
    assert "regression" in capsys.readouterr().out


def test_interrupt_between_folds_compares_the_common_folds(letor_file: Path, tmp_path: Path, monkeypatch,
                                                            capsys) -> None:
    from boostplug.compare import execution

    real = execution.run_method

    def stop_in_fold_2(name, *a, **k):
        if name == "rb-c" and k["fold"] == 1:
            raise KeyboardInterrupt
        return real(name, *a, **k)

    monkeypatch.setattr(execution, "run_method", stop_in_fold_2)
    out = tmp_path / "i"
    assert main(["compare", "--data", str(letor_file), "--kfold", "3", "--folds", "1,2", "--methods",
                 "regression,rb-c", "--out", str(out), *FAST]) == 130
    table = capsys.readouterr().out
    assert "left out: fold 2 (not finished by rb-c)" in table and "±" not in table
    payload = json.loads((out / "results.json").read_text())
    assert payload["interrupted"] is True
    assert payload["folds_completed"] == {"regression": [1, 2], "rb-c": [1]}
    assert payload["compared_folds"] == [1]
    # every finished run is kept; the summary and the tests are over fold 1 only
    rows = _csv(out / "results.csv")
    assert [(r["method"], r["fold"]) for r in rows] == [("regression", "1"), ("rb-c", "1"), ("regression", "2")]
    summary = {r["method"]: r for r in _csv(out / "summary.csv")}
    assert summary["regression"]["folds"] == "1"
    assert float(summary["regression"]["ndcg@10_mean"]) == pytest.approx(float(rows[0]["ndcg@10"]))
    assert payload["summary"]["regression"]["folds"] == [1]
    n_fold1 = sum(1 for q in _csv(out / "per_query.csv") if q["method"] == "regression" and q["fold"] == "1")
    assert payload["significance"]["rb-c"]["n"] == n_fold1


def _no_training(monkeypatch) -> None:
    from boostplug.compare import execution

    monkeypatch.setattr(execution, "run_method", lambda *a, **k: pytest.fail("trained despite a bad argument"))


@pytest.mark.parametrize("argv,says", [
    (["--threads", "99999"], "--threads 99999: at most "),  # LightGBM segfaulted (rc 139)
    (["--threads", "40000"], "--threads 40000: at most "),  # libgomp aborted
    (["--jobs", "40000"], "--jobs 40000: at most "),
    (["--jobs", "3", "--threads", "0"], "--threads must be a positive integer"),
    (["--threads", "\u0662"], "--threads must be a positive integer"),  # an Arabic-Indic two: int() reads it
    (["--folds", "1,\u0662"], "--folds: '\u0662' is not a fold number"),
])
def test_threads_and_jobs_are_bounded_before_training(capsys, monkeypatch, argv: list[str], says: str) -> None:
    import os

    from boostplug.compare import max_parallel

    _no_training(monkeypatch)
    line = _error(capsys, ["--methods", "lambdarank", *argv, *FAST])
    assert says in line
    if "at most" in line:
        assert f"at most {max_parallel()} (4 x the {os.cpu_count()} cores" in line


def test_the_limit_itself_is_accepted(monkeypatch) -> None:
    from boostplug.compare import check_parallel, max_parallel, run

    limit = max_parallel()
    check_parallel(limit, limit)
    assert max_parallel(cores=2) == 8 and max_parallel(cores=0) == 4
    with pytest.raises(ValueError, match=f"threads must be between 1 and {limit} .*, got {limit + 1}$"):
        run(["regression"], [], rounds=1, threads=limit + 1)
    with pytest.raises(TypeError, match="jobs must be an integer, got 2.0"):
        run(["regression"], [], rounds=1, jobs=2.0)


def test_a_fifo_as_data_is_refused_before_it_is_opened(tmp_path: Path, capsys, monkeypatch) -> None:
    import os
    import threading
    import time

    fifo = tmp_path / "data.fifo"
    os.mkfifo(fifo)
    done = threading.Event()

    def unblock() -> None:  # bounds the test: a reader blocked on the FIFO gets end-of-file after 10 s
        if not done.wait(10):
            with open(fifo, "w"):
                pass

    threading.Thread(target=unblock, daemon=True).start()
    t0 = time.monotonic()
    try:
        line = _error(capsys, ["--data", str(fifo), *FAST])
    finally:
        done.set()
    assert line == (f"boostplug compare: error: --data {fifo}: not a regular file (a FIFO); give a LETOR file or "
                    "folder, or 'example'")
    # not a speed limit: a reader blocked on the FIFO would wait for unblock()'s 10 s; refused
    # before opening, the command answers at once (a wide margin for a busy machine)
    assert time.monotonic() - t0 < 5


# ---- the --out folder: one complete run, never two at once --------------------------------------
def _files(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in out.iterdir()}


def test_a_file_size_limit_while_writing_keeps_the_earlier_complete_run(tmp_path: Path, monkeypatch, capsys) -> None:
    """A real file-size limit (RLIMIT_FSIZE, as ``ulimit -f``) hit while writing over an earlier
    complete run: one error line, exit 2, the earlier run's files byte for byte, nothing else."""
    import resource
    import signal

    from boostplug.cli import compare as cli_compare

    monkeypatch.delenv("BOOSTPLUG_DEBUG", raising=False)
    out = tmp_path / "o"
    assert main(["compare", "--methods", "regression", "--rounds", "3", "--no-progress", "--out", str(out)]) == 0
    before = _files(out)
    assert sorted(before) == ["curves.csv", "curves.png", "metrics.png", "per_query.csv", "results.csv",
                              "results.json", "summary.csv"]
    real_write = cli_compare.write_outputs

    def write_under_a_limit(*a, **k):  # the limit only for the writing (numba caches while training)
        soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, hard))
        try:
            return real_write(*a, **k)
        finally:
            resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))

    monkeypatch.setattr(cli_compare, "write_outputs", write_under_a_limit)
    old_xfsz = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the default would kill pytest on the old code
    try:
        code = main(["compare", "--methods", "regression", "--rounds", "5", "--no-progress", "--out", str(out),
                     "--overwrite"])
    finally:
        signal.signal(signal.SIGXFSZ, old_xfsz)
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert err.splitlines()[-1] == (f"boostplug compare: error: {out / 'per_query.csv'}: File too large; nothing "
                                    "was written, the folder is as it was before the run")
    assert _files(out) == before


def test_an_out_folder_with_results_needs_overwrite_before_training(tmp_path: Path, monkeypatch, capsys) -> None:
    out = tmp_path / "o"
    assert main(["compare", "--methods", "regression", "--rounds", "2", "--no-progress", "--out", str(out)]) == 0
    before = _files(out)
    capsys.readouterr()
    from boostplug.compare import execution

    real = execution.run_method
    _no_training(monkeypatch)
    line = _error(capsys, ["--methods", "regression", *FAST, "--out", str(out)])
    assert line == (f"boostplug compare: error: --out {out}: holds an earlier run's results (results.csv, "
                    "per_query.csv, curves.csv, summary.csv, results.json, curves.png, metrics.png); give "
                    "--overwrite to replace them, or another folder")
    assert _files(out) == before
    # with --overwrite: replaced, and the earlier run's plots do not stay beside a run without plots
    monkeypatch.setattr(execution, "run_method", real)
    assert main(["compare", "--methods", "regression", *FAST, "--out", str(out), "--overwrite"]) == 0
    assert sorted(_files(out)) == ["curves.csv", "per_query.csv", "results.csv", "results.json", "summary.csv"]
    assert json.loads((out / "results.json").read_text())["settings"]["rounds"] == 3


def test_a_second_run_on_the_same_out_is_refused_and_a_killed_run_leaves_no_lock(tmp_path: Path, capsys) -> None:
    """A real concurrent run (a subprocess training a method that never finishes) holds --out:
    another run there is refused before training, naming its pid. Once it is SIGKILLed its lock
    file stays behind, but the lock went with the process: the next run goes ahead."""
    import signal

    from tests.compare.test_runtime import Driver  # the subprocess helper of the signal tests

    out = tmp_path / "o"
    d = Driver(tmp_path, ["--methods", "rb-c", "--rounds", "3", "--no-plots", "--no-progress", "--out", str(out)])
    try:
        d.wait_started("rb-c")
        line = _error(capsys, ["--methods", "regression", *FAST, "--out", str(out), "--overwrite"])
        assert line == (f"boostplug compare: error: --out {out}: another boostplug compare (pid {d.proc.pid}) is "
                        "writing there; wait for it to finish or choose another folder")
    finally:
        d.proc.send_signal(signal.SIGKILL)
        d.proc.wait(timeout=60)
    assert (out / ".boostplug-compare.lock").exists()  # stale file, no lock
    assert main(["compare", "--methods", "regression", *FAST, "--out", str(out)]) == 0
    assert sorted(_files(out)) == ["curves.csv", "per_query.csv", "results.csv", "results.json", "summary.csv"]


def test_a_failed_rename_while_moving_in_keeps_the_runs_written_before_and_says_so(tmp_path: Path, monkeypatch,
                                                                                   capsys) -> None:
    """The third rename of the last move into --out fails (as on a failing disk): the set written as the
    run finished stays, byte for byte, the error says so, and --resume of it trains nothing. It had
    deleted the earlier results.json, left old and new files mixed and deleted the staged set."""
    import errno

    from boostplug.cli import compare as cli_compare

    monkeypatch.delenv("BOOSTPLUG_DEBUG", raising=False)
    out = tmp_path / "o"
    argv = ["compare", "--methods", "regression", *FAST, "--out", str(out)]
    real_write, real_replace = cli_compare.write_outputs, os.replace
    renames, before = [], {}
    results_files = lambda: {p.name: p.read_bytes() for p in out.iterdir() if p.is_file() and p.name[0] != "."}  # noqa

    def failing_replace(src, dst, *a, **k):
        renames.append(dst)
        if len(renames) == 3:
            raise OSError(errno.EIO, "Input/output error")
        return real_replace(src, dst, *a, **k)

    def then_fail_the_third_rename(folder, results, *a, **k):  # the files are staged: now the move
        real_write(folder, results, *a, **k)
        if not results.interrupted:  # the study's last set (each run's own is written as it ends)
            before.update(results_files())
            monkeypatch.setattr(os, "replace", failing_replace)

    monkeypatch.setattr(cli_compare, "write_outputs", then_fail_the_third_rename)
    code = main(argv)
    monkeypatch.setattr(os, "replace", real_replace)
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert err.splitlines()[-1] == (f"boostplug compare: error: {out / 'per_query.csv'}: Input/output error; the new "
                                    "results were not moved in: the folder holds the complete set of results it "
                                    "held before")
    assert results_files() == before and json.loads(before["results.json"])["interrupted"] is True
    monkeypatch.setattr(cli_compare, "write_outputs", real_write)
    _no_training(monkeypatch)
    assert main([*argv, "--resume"]) == 0  # the run is in the set written as it ended: nothing to train
    assert "1 run(s) finished earlier are kept" in capsys.readouterr().err


def test_a_results_file_that_is_a_symbolic_link_is_refused_before_training(tmp_path: Path, monkeypatch,
                                                                           capsys) -> None:
    """compare replaces its files as one set, by renames in --out: it does not write through a link
    (which could point to another disk), and says so rather than replace the link by a file."""
    _no_training(monkeypatch)
    out = tmp_path / "o"
    out.mkdir()
    (tmp_path / "elsewhere.csv").write_text("kept")
    (out / "results.csv").symlink_to(tmp_path / "elsewhere.csv")
    line = _error(capsys, ["--methods", "regression", *FAST, "--out", str(out), "--overwrite"])
    assert line == (f"boostplug compare: error: --out {out}: results.csv is a symbolic link; a run replaces its "
                    "files as one set and does not write through links: remove the link, or choose another folder")
    assert (out / "results.csv").is_symlink() and (tmp_path / "elsewhere.csv").read_text() == "kept"


def test_parts_folder_needs_its_layout_named(tmp_path: Path, capsys, letor_file: Path) -> None:
    root = _folder(tmp_path / "parts", "parts")
    line = _error(capsys, ["--data", str(root), "--methods", "regression", *FAST])
    assert "holds parts S1.txt..S3.txt, but no layout says how they make folds; name one: --layout letor4 (LETOR " \
           "4.0 parts" in line and "; --layout letor3 (LETOR 3.0" in line
    line = _error(capsys, ["--data", str(root), "--layout", "letor4", "--methods", "regression", *FAST])
    assert "--layout letor4 has five parts S1..S5, got 3" in line
    line = _error(capsys, ["--data", str(_folder(tmp_path / "folds", "folds")), "--layout", "letor3", *FAST])
    assert "fold folders Fold1..Fold2, read as they are; --layout letor3 is for parts S1..Sk.txt alone (give " \
           "--layout folds or none)" in line
    assert "--layout letor4: applies to a LETOR folder only" in _error(capsys, ["--data", str(letor_file),
                                                                                "--layout", "letor4", *FAST])


def test_protocol_and_convention_flags_reach_table_json_and_values(tmp_path: Path, capsys) -> None:
    d = _data(15)
    d.y[d.group_ptr[0]:d.group_ptr[-1]][d.qid == d.qid[0]] = 0.0  # a query without a relevant document
    path = tmp_path / "zero.txt"
    write_letor(path, d)
    out = tmp_path / "o"
    assert main(["compare", "--data", str(path), "--kfold", "3", "--methods", "regression", "--protocol", "letor",
                 "--out", str(out), *FAST]) == 0
    assert capsys.readouterr().out.splitlines()[0].startswith("letor conventions: NDCG gain 2^r-1, LETOR discount")
    payload = json.loads((out / "results.json").read_text())
    assert payload["conventions"] == {"gain": "exp2", "discount": "letor", "empty": 0.0, "ties": "order",
                                      "protocol": "letor", "max_grade": 2.0,
                                      "metrics": ["ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10", "map"]}
    letor = {(r["fold"], r["qid"]): float(r["ndcg@10"]) for r in _csv(out / "per_query.csv")}
    assert main(["compare", "--data", str(path), "--kfold", "3", "--methods", "regression", "--out", str(out),
                 "--overwrite", *FAST]) == 0
    assert capsys.readouterr().out.splitlines()[0].startswith("library conventions: NDCG gain 2^r-1, discount")
    library = {(r["fold"], r["qid"]): float(r["ndcg@10"]) for r in _csv(out / "per_query.csv")}
    zero = str(int(d.qid[0]))  # the query without a relevant document, by its qid
    assert [v for (fold, qid), v in letor.items() if qid == zero] == [0.0]
    assert [v for (fold, qid), v in library.items() if qid == zero] == [1.0]
    assert main(["compare", "--data", str(path), "--kfold", "3", "--methods", "regression", "--protocol", "letor",
                 "--empty", "skip", "--ties", "average", "--out", str(out), "--overwrite", *FAST]) == 0
    assert capsys.readouterr().out.splitlines()[0].startswith("custom conventions:")
    conv = json.loads((out / "results.json").read_text())["conventions"]
    assert (conv["empty"], conv["ties"], conv["discount"], conv["protocol"]) == ("skip", "average", "letor", "custom")
    assert any(r["ndcg@10"] == "nan" for r in _csv(out / "per_query.csv"))


def test_bootstrap_intervals_in_table_summary_and_json(tmp_path: Path, capsys, letor_file: Path) -> None:
    out = tmp_path / "ci"
    assert main(["compare", "--data", str(letor_file), "--kfold", "3", "--folds", "1", "--methods",
                 "regression,lambdarank", "--out", str(out), "--wide", *FAST]) == 0
    table = capsys.readouterr().out
    assert "NDCG@10 95% CI" in table.splitlines()[1] and "dNDCG@10 95% CI" in table.splitlines()[1]
    rows = {r["method"]: r for r in _csv(out / "summary.csv")}
    payload = json.loads((out / "results.json").read_text())
    boot = payload["bootstrap"]
    assert (boot["resamples"], boot["level"], boot["seed"]) == (2000, 0.95, 0)
    ci = boot["intervals"]["regression"]
    assert float(rows["regression"]["ndcg@10_ci_low"]) == ci["mean"]["ndcg@10"]["low"]
    assert float(rows["regression"]["dndcg@10_ci_high"]) == ci["diff_ndcg@10"]["high"]
    assert ci["mean"]["ndcg@10"]["low"] <= float(rows["regression"]["ndcg@10_mean"]) <= ci["mean"]["ndcg@10"]["high"]
    assert boot["intervals"]["lambdarank"]["diff_ndcg@10"] is None and rows["lambdarank"]["dndcg@10_ci_low"] == ""


def test_results_json_records_provenance_and_per_query_names_qids(tmp_path: Path) -> None:
    import hashlib
    import platform

    import lightgbm
    import sklearn

    root = _folder(tmp_path / "parts", "parts")
    out = tmp_path / "prov"
    argv = ["compare", "--data", str(root), "--layout", "rotate", "--folds", "2", "--methods", "regression",
            "--seed", "7", "--out", str(out), *FAST]
    assert main(argv) == 0
    prov = json.loads((out / "results.json").read_text())["provenance"]
    assert prov["argv"] == ["boostplug", *argv]
    assert prov["python"] == platform.python_version()
    assert prov["versions"]["lightgbm"] == lightgbm.__version__ and prov["versions"]["scikit-learn"] == sklearn.__version__
    assert {"boostplug", "xgboost", "numpy"} <= set(prov["versions"])
    assert prov["seeds"] == {"splits_and_training": 7, "bootstrap": 0}
    parts = sorted(root.glob("S*.txt"))
    assert prov["data_sha256"] == {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in parts}
    rows = _csv(out / "per_query.csv")
    # fold 2 of 3 rotated parts tests on S1: its queries, by the qids in the file, in file order
    s1 = [int(q) for q in dict.fromkeys(line.split()[1].removeprefix("qid:")
                                        for line in (root / "S1.txt").read_text().splitlines())]
    assert [int(r["qid"]) for r in rows] == s1 and {r["fold"] for r in rows} == {"2"}
    assert [int(r["position"]) for r in rows] == list(range(len(s1)))


def test_resume_trains_only_what_an_interrupted_run_left_and_equals_an_uninterrupted_run(
        letor_file: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    from boostplug.compare import execution

    real = execution.run_method
    trained: list[tuple[str, int]] = []

    def stop_in_fold_2(name, *a, **k):
        if name == "rb-c" and k["fold"] == 1 and not trained:
            raise KeyboardInterrupt
        return real(name, *a, **k)

    argv = ["compare", "--data", str(letor_file), "--kfold", "3", "--methods", "regression,rb-c", *FAST]
    monkeypatch.setattr(execution, "run_method", stop_in_fold_2)
    out = tmp_path / "r"
    assert main([*argv, "--folds", "1,2", "--out", str(out)]) == 130

    def counting(name, *a, **k):
        trained.append((name, k["fold"]))
        return real(name, *a, **k)

    monkeypatch.setattr(execution, "run_method", counting)
    assert main([*argv, "--out", str(out), "--resume"]) == 0
    assert "resuming" in capsys.readouterr().err
    # fold 2 of rb-c and all of fold 3; nothing that had finished
    assert sorted(trained) == [("rb-c", 1), ("rb-c", 2), ("regression", 2)]
    resumed = json.loads((out / "results.json").read_text())
    assert resumed["interrupted"] is False and resumed["compared_folds"] == [1, 2, 3]
    assert len(resumed["provenance"]["earlier_runs"]) == 1
    assert "--resume" not in resumed["provenance"]["earlier_runs"][0]["argv"]

    full = tmp_path / "full"
    assert main([*argv, "--out", str(full)]) == 0
    whole = json.loads((full / "results.json").read_text())
    key = lambda r: (r["fold"], r["method"])  # noqa: E731
    for a, b in zip(sorted(resumed["results"], key=key), sorted(whole["results"], key=key)):
        assert (a["method"], a["fold"], a["best_round"]) == (b["method"], b["fold"], b["best_round"])
        assert a["test"] == pytest.approx(b["test"], rel=1e-12)
    assert resumed["summary"]["rb-c"]["ndcg@10"] == pytest.approx(whole["summary"]["rb-c"]["ndcg@10"])


@pytest.mark.parametrize("change, says", [
    (["--rounds", "4"], "rounds was 3 in the earlier run, now 4"),
    (["--methods", "regression"], "same methods"),
    (["--protocol", "letor"], "same --protocol"),
    (["--seed", "1"], "seed was 0"),
    (["--param", "num_leaves=7"], "tree_params was"),
])
def test_resume_refuses_settings_that_change_results(letor_file: Path, tmp_path: Path, capsys, change: list[str],
                                                     says: str) -> None:
    out = tmp_path / "r"
    argv = ["compare", "--data", str(letor_file), "--kfold", "3", "--folds", "1", "--methods", "regression,rb-c",
            "--out", str(out), *FAST]
    assert main(argv) == 0
    before = (out / "results.json").read_bytes()
    capsys.readouterr()
    assert main([*argv, "--resume", *change]) == 2
    assert says in capsys.readouterr().err
    assert (out / "results.json").read_bytes() == before


def test_resume_refuses_changed_data_and_needs_a_run_to_resume(letor_file: Path, tmp_path: Path, capsys) -> None:
    assert main(["compare", "--resume", "--methods", "regression", *FAST]) == 2
    assert "--resume needs --out" in capsys.readouterr().err
    out = tmp_path / "r"
    argv = ["compare", "--data", str(letor_file), "--kfold", "3", "--folds", "1", "--methods", "regression",
            "--out", str(out), *FAST]
    assert main([*argv, "--resume"]) == 2
    assert "nothing to resume" in capsys.readouterr().err
    assert main(argv) == 0
    write_letor(letor_file, _data(15, seed=1))
    capsys.readouterr()
    assert main([*argv, "--resume"]) == 2
    assert "the data differ from the earlier run's (data.txt:" in capsys.readouterr().err


_PLUGIN = '''
import numpy as np
from boostplug import objectives


class ToyRank(objectives.Loss):
    name = "toyrank"
    summary = "squared error to the grades (a test plugin)"
    params = {}
    hessians = {"exact": objectives.Hessian("exact", "2 W_q per document")}

    def _weights(self):
        return np.repeat(self.query_weights, np.diff(self.group_ptr))

    def _loss(self, scores):
        return float(np.sum(self._weights() * (scores - self.labels) ** 2))

    def _grad_hess(self, scores):
        w = self._weights()
        return 2.0 * w * (scores - self.labels), 2.0 * w


objectives.register(ToyRank, replace=True)
'''


@pytest.fixture
def toy_plugin(tmp_path: Path):
    from boostplug import objectives

    path = tmp_path / "toy_plugin.py"
    path.write_text(_PLUGIN)
    yield path
    if "toyrank" in objectives.names():
        objectives.unregister("toyrank")
    for name in [m for m in sys.modules if m.startswith("boostplug_plugin_toy_plugin")]:
        del sys.modules[name]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_import_registers_a_users_objective_for_the_command_and_its_workers(
        toy_plugin: Path, letor_file: Path, tmp_path: Path, monkeypatch, capsys, jobs: str) -> None:
    """In workers at both --jobs (as the command trains), which import the plugin too."""
    from boostplug import objectives
    from boostplug.cli import compare as cli_compare

    monkeypatch.setattr(cli_compare, "IN_WORKERS", True)
    assert "toyrank" not in objectives.names()
    assert main(["compare", "--import", str(toy_plugin), "--methods", "list"]) == 0
    listed = capsys.readouterr().out
    assert "toyrank" in listed and "xgb-toyrank" in listed
    out = tmp_path / "o"
    assert main(["compare", "--import", str(toy_plugin), "--data", str(letor_file), "--kfold", "3", "--folds", "1,2",
                 "--methods", "toyrank,xgb-toyrank,regression", "--jobs", jobs, "--out", str(out), *FAST]) == 0
    payload = json.loads((out / "results.json").read_text())
    assert payload["folds_completed"] == {"toyrank": [1, 2], "xgb-toyrank": [1, 2], "regression": [1, 2]}
    assert not payload["failures"]
    # squared error on the grades is LightGBM's own regression objective: the same models
    by = {(r["method"], r["fold"]): r for r in payload["results"]}
    for fold in (1, 2):
        assert by[("toyrank", fold)]["test"] == pytest.approx(by[("regression", fold)]["test"], abs=1e-6)


def test_one_job_trains_in_a_worker_unless_a_script_registered_its_own(toy_plugin: Path, monkeypatch) -> None:
    """A worker has the library's objectives and the --import ones: --jobs 1 trains there (a signal
    ends it anywhere). One registered by the calling script alone would be unknown there: then
    --jobs 1 trains in this process, as docs/objectives/custom.md promises for that use."""
    from boostplug import objectives
    from boostplug.cli import compare as cli_compare
    from boostplug.compare.plugins import load_plugins, registered_here

    monkeypatch.setattr(cli_compare, "IN_WORKERS", True)
    load_plugins([str(toy_plugin)])
    assert registered_here() == [] and cli_compare.in_workers()
    toy = objectives.get("toyrank").loss_class
    objectives.register(type("Mine", (toy,), {"name": "mine_here"}))
    try:
        assert registered_here() == ["mine_here"] and not cli_compare.in_workers()
    finally:
        objectives.unregister("mine_here")
    assert cli_compare.in_workers()
    objectives.register(type("Mine", (toy,), {"name": "toyrank"}), replace=True)  # the plugin's, replaced
    assert registered_here() == ["toyrank"] and not cli_compare.in_workers()


def test_import_from_a_config_file_and_its_errors(toy_plugin: Path, tmp_path: Path, capsys) -> None:
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"import": [str(toy_plugin)], "methods": "list"}))
    assert main(["compare", "--config", str(cfg)]) == 0
    assert "toyrank" in capsys.readouterr().out
    assert main(["compare", "--import", "no_such_module_xyz", "--methods", "list"]) == 2
    assert "--import no_such_module_xyz: ModuleNotFoundError" in capsys.readouterr().err
    assert main(["compare", "--import", str(tmp_path / "missing.py"), "--methods", "list"]) == 2
    assert "no such file" in capsys.readouterr().err
    broken = tmp_path / "broken.py"
    broken.write_text("raise RuntimeError('boom')\n")
    assert main(["compare", "--import", str(broken), "--methods", "list"]) == 2
    assert "RuntimeError: boom" in capsys.readouterr().err


def test_a_config_files_import_is_said_and_resolved_from_the_config_files_folder(
        toy_plugin: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    """A config file is code: what its ``import`` runs is printed first, and a relative path is
    the config file's neighbour, not a file of the working directory (it was imported silently,
    from the working directory)."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "toy_plugin.py").write_text("raise RuntimeError('the working directory's file ran')\n")
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"import": ["toy_plugin.py", "json"], "methods": "list"}))
    monkeypatch.chdir(elsewhere)
    assert main(["compare", "--config", "../c.json"]) == 0
    captured = capsys.readouterr()
    assert "toyrank" in captured.out
    assert captured.err.splitlines() == [f"boostplug compare: --config ../c.json imports {toy_plugin} "
                                         "(runs it as Python code)",
                                         "boostplug compare: --config ../c.json imports json (runs it as Python code)"]


@pytest.mark.parametrize("policy", [None, "ACTIVE"])
def test_every_openmp_runtime_of_the_command_sleeps_unless_the_user_chose(policy) -> None:
    """The command sets OMP_WAIT_POLICY=PASSIVE before the first OpenMP runtime loads (scikit-learn's
    copy, which XGBoost shares, loads with the subcommands; LightGBM's and numba's later); a user's
    setting wins. libgomp prints its settings at load with OMP_DISPLAY_ENV=VERBOSE."""
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    env["OMP_DISPLAY_ENV"] = "VERBOSE"
    if policy:
        env["OMP_WAIT_POLICY"] = policy
    code = ("import sys\nfrom boostplug.cli import main\ncode = main(['compare', '--methods', 'list'])\n"
            "import lightgbm, xgboost\nsys.exit(code)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    spins = re.findall(r"GOMP_SPINCOUNT = '(\d+)'", r.stderr)
    assert len(spins) >= 2, r.stderr  # scikit-learn's/XGBoost's copy and the system's (LightGBM, numba)
    assert all(s == "0" for s in spins) if policy is None else all(s != "0" for s in spins), spins


@pytest.mark.parametrize("data,folds,says", [
    ("file", "4", "--folds: fold 4 does not exist; the data has folds 1..3: name some of them, or all"),
    ("example", "2", "--folds: fold 2 does not exist; the data has one fold: name some of them, or all"),
    ("file", "0", "--folds: '0' is not a fold number (use e.g. 1,3 or all)"),
    ("file", ",", "--folds: '' is not a fold number (use e.g. 1,3 or all)"),
])
def test_folds_naming_no_fold_is_one_line_before_training(letor_file: Path, capsys, monkeypatch, data: str,
                                                          folds: str, says: str) -> None:
    """--folds that names no fold of the data: one line saying what the data has and what to give, before any
    training (and before the line announcing the study)."""
    _no_training(monkeypatch)
    where = str(letor_file) if data == "file" else "example"
    assert _error(capsys, ["--data", where, "--kfold", "3", "--folds", folds, *FAST]) == f"boostplug compare: error: {says}"
