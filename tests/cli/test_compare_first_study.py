"""A user's first study on their own data: command 1 says how to run it fairly (``--data PATH --tune 20``,
with what ``pip install .`` brings), a LETOR folder as downloaded reads (Fold1..Fold5 beside S1..S5.txt:
the Fold folders, said in one line), the documented LETOR commands run on the downloads' folder shapes,
a --tune study says its size and its time, and bad folders are one line each, with nothing left in --out."""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import pytest

from boostplug.cli import main
from boostplug.data import RankingData, fold_plan, make_ranking, write_letor

ROOT = Path(__file__).resolve().parents[2]
FAST = ["--rounds", "2", "--no-progress", "--no-plots"]


def _parts(n_features: int, n: int = 5) -> list[RankingData]:
    made = [make_ranking(n_queries=6, docs_per_query=(4, 8), n_features=n_features, n_informative=2, n_labels=3,
                         seed=k) for k in range(n)]
    return [RankingData(d.X, d.y, d.qid + 100 * k) for k, d in enumerate(made)]  # one qid per query in a fold


def _download(root: Path, n_features: int = 46, *, parts: int = 5, folds: str | None = "letor4") -> Path:
    """A LETOR folder shaped as downloaded: parts S1..Sk.txt and, with ``folds`` (a layout), the Fold folders
    that layout makes of them (LETOR 4.0's download holds both; OHSUMED's parts come alone)."""
    root.mkdir()
    data = _parts(n_features, parts)
    for k, part in enumerate(data):
        write_letor(root / f"S{k + 1}.txt", part)
    for i, (train, vali, test) in enumerate(fold_plan(folds, parts) if folds else []):
        (root / f"Fold{i + 1}").mkdir()
        for split, d in (("train", RankingData.concat(*(data[j] for j in train))), ("vali", data[vali]),
                         ("test", data[test])):
            write_letor(root / f"Fold{i + 1}" / f"{split}.txt", d)
    return root


def _run(capsys, argv: list[str]) -> tuple[int, str, str]:
    code = main(["compare", *argv])
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def _error(capsys, argv: list[str]) -> str:
    code, _, err = _run(capsys, argv)
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1 and lines[0].startswith("boostplug compare: error: "), err
    return lines[0].removeprefix("boostplug compare: error: ")


# ---- command 1 leads to the next step ----------------------------------------------------------------

def test_command_1_ends_with_the_fair_study_on_your_own_data(capsys, tmp_path: Path) -> None:
    code, _, err = _run(capsys, ["--methods", "regression", *FAST])
    assert code == 0
    assert err.splitlines()[-3:] == [
        "boostplug compare: plots and CSVs: add --out DIR",
        "boostplug compare: the same on your own data, fairly: boostplug compare --data PATH --tune 20",
        "  (--tune searches each method's own parameters alike, the built-ins' included: the fair protocol)"]
    code, _, err = _run(capsys, ["--methods", "regression", *FAST, "--out", str(tmp_path / "o")])
    assert code == 0 and "--data PATH --tune 20" in err and "add --out" not in err


def test_pip_install_brings_what_tune_needs_and_nothing_sends_tune_to_an_extra(capsys, monkeypatch) -> None:
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "optuna>=4.0" in project["dependencies"]
    assert project["optional-dependencies"]["tune"] == ["optuna-integration>=4.0"]  # the LightGBM tuners alone
    monkeypatch.setattr(sys, "argv", ["boostplug"])
    with pytest.raises(SystemExit):
        main(["compare", "--help"])
    said = capsys.readouterr().out
    monkeypatch.setitem(sys.modules, "optuna", None)
    said += _error(capsys, ["--tune", "2", "--methods", "regression", *FAST])
    for page in ("README.md", "docs/compare.md"):
        said += (ROOT / page).read_text()
    assert "boostplug[tune]" not in said and ".[tune]" not in said
    first = (ROOT / "README.md").read_text().split("## Where to go next")[1].lstrip().split("\n* ")[0]
    assert first.startswith("* ") and "boostplug compare --data PATH --tune 20" in first  # where to go next: first


# ---- LETOR folders as downloaded -------------------------------------------------------------------

def test_a_folder_as_downloaded_reads_its_fold_folders_whatever_the_layout_and_says_so(tmp_path: Path,
                                                                                         capsys) -> None:
    root = _download(tmp_path / "MQ2008")
    for layout in ("letor4", "letor3", "rotate"):
        code, table, err = _run(capsys, ["--data", str(root), "--layout", layout, "--methods", "regression", *FAST])
        assert code == 0 and "over 5 folds" in table
        said = [line for line in err.splitlines() if "Fold1..Fold5" in line]
        assert said == [f"boostplug compare: --data {root} holds Fold1..Fold5 beside parts S1..Sk.txt: the Fold "
                        f"folders are read, as shipped (--layout {layout} is for a folder of parts alone)"]
    code, _, err = _run(capsys, ["--data", str(root), "--methods", "regression", *FAST])
    assert code == 0 and "Fold1..Fold5" not in err  # no --layout: the folds, as always


@pytest.mark.parametrize("shape,layout,says", [
    ("folds", "letor3", "--data {root}: holds fold folders Fold1..Fold5, read as they are; --layout letor3 is for "
                        "parts S1..Sk.txt alone (give --layout folds or none)"),
    ("parts", "folds", "--data {root}: holds parts S1.txt..S5.txt, not Fold1..FoldK folders; name one: --layout "
                       "letor4 (LETOR 4.0"),
    ("4 parts", "letor4", "--data {root}: --layout letor4 has five parts S1..S5, got 4"),
    ("45 features", "letor4", "--data {root}: --layout letor4 is for LETOR 4.0 (MQ2007, MQ2008) data, which have 46 "
                              "features, but these parts have 45 (for LETOR 3.0 (OHSUMED; the .gov sets) data use "
                              "--layout letor3; --layout rotate takes parts of any width)"),
])
def test_layout_errors_name_the_option_as_typed(tmp_path: Path, capsys, shape: str, layout: str, says: str) -> None:
    root = _download(tmp_path / "data", 45 if shape == "45 features" else 46, parts=4 if shape == "4 parts" else 5,
                     folds="letor4" if shape == "folds" else None)
    if shape == "folds":
        for part in root.glob("S*.txt"):
            part.unlink()
    line = _error(capsys, ["--data", str(root), "--layout", layout, "--methods", "regression", *FAST])
    assert line.startswith(says.format(root=root)) and "layout=" not in line and "layout '" not in line


def _documented() -> list[list[str]]:
    """docs/compare.md's commands on MQ2008 and OHSUMED (not the click protocol's), as typed."""
    text = (ROOT / "docs" / "compare.md").read_text().replace("\\\n", " ")
    return [shlex.split(line, comments=True)[2:] for line in text.splitlines()
            if line.startswith(("boostplug compare --data MQ2008 ", "boostplug compare --data OHSUMED "))
            and "--clicks" not in line]


def _quick(argv: list[str]) -> list[str]:
    """A documented command with few rounds, two fast methods, two trials."""
    quick, out = {"--methods": "lambdarank,ranknet", "--tune": "2", "--rounds": "2"}, list(argv)
    for i, flag in enumerate(out[:-1]):
        if flag in quick:
            out[i + 1] = quick[flag]
    for flag in ("--methods", "--rounds"):
        if flag not in out:
            out += [flag, quick[flag]]
    return out + ["--no-progress", "--no-plots"]


@pytest.mark.parametrize("mq2008", ["Fold1..Fold5 and S1..S5.txt", "S1..S5.txt"])
def test_the_documented_letor_commands_run_on_the_downloads_folder_shapes(tmp_path: Path, monkeypatch, capsys,
                                                                          mq2008: str) -> None:
    commands = _documented()
    assert {c[1] for c in commands} == {"MQ2008", "OHSUMED"}
    monkeypatch.chdir(tmp_path)
    _download(tmp_path / "MQ2008", 46, folds="letor4" if mq2008.startswith("Fold") else None)
    _download(tmp_path / "OHSUMED", 45, folds=None)  # LETOR 3.0's parts, as docs/data.md says to keep them
    for argv in commands:
        code, table, err = _run(capsys, _quick(argv))
        assert code == 0, (argv, err)
        assert "over 5 folds" in table


# ---- a study's time in sight ---------------------------------------------------------------------------

def test_a_tuned_run_says_its_trainings_first_and_the_rest_once_each_method_ran(tmp_path: Path, capsys) -> None:
    data = tmp_path / "d.txt"
    write_letor(data, make_ranking(n_queries=24, docs_per_query=(6, 10), n_features=4, n_informative=4, n_labels=3,
                                   seed=0))
    code, _, err = _run(capsys, ["--data", str(data), "--kfold", "3", "--tune", "2", "--methods",
                                 "lambdarank,adarank-ndcg", *FAST, "--rounds", "5"])
    assert code == 0, err
    lines = err.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("boostplug compare: 2 method(s) x 3 fold(s)"))
    assert lines[start + 1] == ("boostplug compare: --tune 2: 9 trainings of up to 5 rounds (2 method(s) x 3 fold(s) "
                                "x 2 trials; adarank-ndcg: one per fold, nothing to search)")
    took = r"\d+(\.\d)? (s|min|h)"
    # too small to probe: the rest once every method has a pace (adarank-ndcg's first run)
    assert re.fullmatch(rf"boostplug compare: adarank-ndcg's first run took {took}; the study about {took} more on "
                        r"1 slot\(s\)", lines[start + 2])


# ---- bad input --------------------------------------------------------------------------------------

@pytest.mark.parametrize("bad,says", [
    ("neither", "not a LETOR folder (expected Fold1..FoldK/{train,vali,test}.txt or at least three parts "
                "S1.txt..Sk.txt; found 0 part(s))"),
    ("empty fold", "Fold2/train.txt: missing (a fold folder needs train.txt, vali.txt, test.txt)"),
    ("fold file", "Fold1/vali.txt: no qid: on the first data line and no vali.txt.query; expected LETOR lines with "
                  "queries, LABEL qid:QUERY INDEX:VALUE ..."),
    ("part", "S3.txt: no qid: on the first data line and no S3.txt.query; expected LETOR lines with queries"),
])
def test_a_bad_folder_is_one_line_naming_the_path_and_what_was_expected_and_leaves_no_out(
        tmp_path: Path, capsys, bad: str, says: str) -> None:
    root = _download(tmp_path / "data", folds=None if bad == "part" else "letor4")
    if bad == "neither":
        for entry in [*root.glob("Fold*/*"), *root.glob("Fold*"), *root.glob("S*.txt")]:
            entry.unlink() if entry.is_file() else entry.rmdir()
        (root / "notes.txt").write_text("my data\n")
    elif bad == "empty fold":
        for f in (root / "Fold2").iterdir():
            f.unlink()
    else:
        (root / ("S3.txt" if bad == "part" else "Fold1/vali.txt")).write_text("label,f1,f2\n1,0.5,0.25\n")
    out = tmp_path / "out"
    layout = ["--layout", "letor4"] if bad == "part" else []
    line = _error(capsys, ["--data", str(root), *layout, "--methods", "regression", "--out", str(out), *FAST])
    assert line.startswith(f"--data {root}: {says}")
    assert not out.exists()
