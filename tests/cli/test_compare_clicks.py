"""``boostplug compare --clicks`` end to end through boostplug.cli.main on tiny data: simulated
clicks and a real log from a CSV, the outputs (results.json records the protocol), parallel jobs
training on the same clicks, resume, and the one-line errors naming the option."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import numpy as np
import pytest

from boostplug import clicks
from boostplug.cli import main
from boostplug.groups import index_within_query
from boostplug.compare.data import file_folds
from boostplug.data import load_letor, make_ranking, write_letor

FAST = ["--rounds", "3", "--no-progress", "--no-plots"]
SIM = ["--clicks", "simulate", "--sessions", "600", "--labeled-fraction", "0.3"]


@pytest.fixture(scope="module")
def letor_file(tmp_path_factory) -> Path:
    p = tmp_path_factory.mktemp("data") / "data.txt"
    write_letor(p, make_ranking(n_queries=45, docs_per_query=8, n_features=4, n_informative=2, seed=1))
    return p


def _data_args(letor_file: Path) -> list[str]:
    return ["--data", str(letor_file), "--kfold", "3", "--folds", "1"]


def _csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_simulated_clicks_with_outputs(letor_file: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "out"
    code = main(["compare", *_data_args(letor_file), *SIM, "--methods", "lgb-clicks,labeled-only,qbrank-PL[w=0.3],"
                 "rankboost-P", "--rounds", "3", "--no-progress", "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "click protocol: every method trains on 600 simulated sessions (pbm" in captured.err
    for name in ("lgb-clicks", "labeled-only", "qbrank-PL[w=0.3]", "rankboost-P"):
        assert name in captured.out
    # the legend explains the click protocol's names by its own table (what --methods list prints with --clicks)
    from boostplug.compare.clicks import CLICK_METHODS

    legend = " ".join(captured.out.split("methods (boostplug compare --methods list):")[1].split())
    for name in ("lgb-clicks", "qbrank-PL[w=0.3]"):
        assert f"{name} {' '.join(CLICK_METHODS[name.split('[')[0]].summary.split())}" in legend
    payload = json.loads((out / "results.json").read_text())
    assert payload["baseline"] == "labeled-only"
    protocol = payload["settings"]["clicks_protocol"]
    assert protocol["source"] == "simulate" and protocol["n_sessions"] == 600 and protocol["model"] == "pbm"
    assert protocol["labeled_fraction"] == 0.3 and protocol["select"] == "labels"
    runs = payload["results"]
    assert len({r["info"]["clicks"]["log"]["sha256"] for r in runs}) == 1
    assert set(payload["significance"]) == {"lgb-clicks", "labeled-only", "qbrank-PL[w=0.3]", "rankboost-P"}
    assert len(_csv(out / "per_query.csv")) == 4 * 15
    assert (out / "curves.png").is_file() and (out / "metrics.png").is_file()


def test_parallel_jobs_train_on_the_same_clicks(letor_file: Path, tmp_path: Path, capsys) -> None:
    results = []
    for jobs in ("1", "2"):
        out = tmp_path / f"jobs{jobs}"
        code = main(["compare", *_data_args(letor_file), *SIM, "--methods", "lgb-clicks,qbrank-P", *FAST,
                     "--jobs", jobs, "--out", str(out)])
        assert code == 0, capsys.readouterr().err
        results.append(json.loads((out / "results.json").read_text())["results"])
    for a, b in zip(*results):
        assert a["info"]["clicks"]["log"] == b["info"]["clicks"]["log"]
        assert a["test_per_query"] == b["test_per_query"]


def _log_csv(letor_file: Path, path: Path) -> None:
    """A click log on fold 1's training and test queries, keyed by index within the query, with
    its own column names (clicks favour higher grades)."""
    train, _, test = file_folds(load_letor(letor_file), 3, folds=[0])[0]
    rng = np.random.default_rng(3)
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["sid", "qid", "doc", "rank", "click"])
        for s in range(300):
            part = train if s % 5 else test
            q = int(rng.integers(part.n_queries))
            a, b = part.group_ptr[q], part.group_ptr[q + 1]
            shown = rng.permutation(b - a)
            for r, d in enumerate(shown):
                w.writerow([f"s{s}", part.qid[a], index_within_query(part.group_ptr)[a + d], r + 1,
                            int(rng.random() < 0.1 + 0.2 * part.y[a + d])])


def test_a_real_click_log_from_csv(letor_file: Path, tmp_path: Path, capsys) -> None:
    log = tmp_path / "log.csv"
    _log_csv(letor_file, log)
    out = tmp_path / "out"
    code = main(["compare", *_data_args(letor_file), "--clicks", str(log), "--click-columns",
                 "session=sid,query=qid,position=rank,clicked=click", "--labeled-fraction", "0.3", "--methods",
                 "default", *FAST, "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert f"the click log {log}" in captured.err
    payload = json.loads((out / "results.json").read_text())
    protocol = payload["settings"]["clicks_protocol"]
    assert protocol["source"] == "log" and protocol["log"] == str(log)
    assert protocol["columns"] == {"session": "sid", "query": "qid", "position": "rank", "clicked": "click"}
    assert "n_sessions" not in protocol and "eta" not in protocol
    assert str(log) in payload["provenance"]["data_sha256"]
    runs = payload["results"]
    # every method but production, whose ranker a real log does not know
    assert [r["method"] for r in runs] == ["random", "lgb-clicks", "lgb-position", "xgb-unbiased", "labeled-only",
                                           "qbrank-P", "lgb-clicks+qbrank-P", "qbrank-PL", "mpboost-P",
                                           "rankboost-P"]
    info = runs[1]["info"]["clicks"]
    assert info["log_source"] == "given" and info["log"]["impressions"] == 240
    assert info["impressions_of_other_queries"] == 60  # the test queries' sessions are left out


def test_resume_refuses_other_click_settings(letor_file: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "out"
    args = ["compare", *_data_args(letor_file), *SIM, "--methods", "lgb-clicks", *FAST, "--out", str(out)]
    assert main(args) == 0
    capsys.readouterr()
    assert main([*args, "--resume", "--sessions", "700"]) == 2
    err = capsys.readouterr().err
    assert "--resume: clicks_protocol was" in err and "'n_sessions': 600" in err and "'n_sessions': 700" in err
    assert main([*args, "--resume"]) == 0
    assert "1 run(s) finished earlier are kept" in capsys.readouterr().err


def test_methods_list_shows_the_click_methods(capsys) -> None:
    assert main(["compare", "--clicks", "simulate", "--methods", "list"]) == 0
    out = capsys.readouterr().out
    for name in ("lgb-clicks", "lgb-position", "xgb-unbiased", "labeled-only", "qbrank-P", "qbrank-PL", "mpboost-P",
                 "rankboost-P"):
        assert f"\n{name} " in out
    assert not any(line.startswith("lambdarank ") for line in out.splitlines())  # no labeled-data method


@pytest.mark.parametrize("extra, message", [
    (["--sessions", "0"], "--sessions must be >= 1, got 0"),
    (["--noise", "1.0"], "--noise '1.0': expected EPS_PLUS,EPS_MINUS"),
    (["--noise", "1.0,2"], r"--noise \(eps-\) must be a finite number in \[0, 1\], got 2.0"),
    (["--eta", "-1"], "--eta must be a finite number in .*got -1.0"),
    (["--labeled-fraction", "0"], "--labeled-fraction must be above 0 for a click simulation"),
    (["--select-on", "labels", "--vali-fraction", "1.5"], "--vali-fraction .*got 1.5"),
    (["--strategies", "click>skip-below"], "--strategies: unknown click strategy 'click>skip-below'"),
    (["--min-support", "0"], "--min-support must be >= 1"),
    (["--methods", "qbrank-X"], "--methods: unknown click method 'qbrank-X' .did you mean qbrank-P"),
    (["--methods", "lambdarank"], "--methods: unknown click method 'lambdarank'"),
    (["--methods", "qbrank-PL[w=3]"], "--methods: .*w .*got 3"),
    (["--pair-weight", "wilson", "--methods", "mpboost-P"], "mpboost-P: .*weight must be 'unit', 'count' or 'net'"),
    (["--methods", "xgb-unbiased", "--frameworks", "lightgbm"], "xgb-unbiased are not in --frameworks lightgbm"),
    (["--click-columns", "session=sid"], "--click-columns describes a click log"),
    (["--click-preset", "ultra-pbm", "--eta", "2"], "--click-preset ultra-pbm sets the click model: leave out --eta"),
    (["--min-vali-queries", "0"], "--min-vali-queries must be >= 1"),
    (["--methods", "production[num_leaves=3]"], "'production' is a fixed ranker and takes no parameters"),
])
def test_bad_click_settings_are_one_line_errors_naming_the_option(extra, message, capsys) -> None:
    code = main(["compare", "--data", "example", *SIM, *extra, *FAST])
    err = capsys.readouterr().err
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and "error: " in err
    assert re.search(message, err), err


def test_bad_logs_and_stray_options_are_one_line_errors(letor_file: Path, tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("session,query,doc,position,clicked\n1,0,0,1,0\n1,0,0,2,1\n")
    cases = [
        (["--clicks", str(bad)], "--clicks .*bad.csv: click log: session 1, query 0 .*document 0 is shown twice"),
        (["--clicks", str(tmp_path / "none.csv")], "--clicks .*none.csv: no such file"),
        (["--clicks", str(letor_file)], "a click log is a .csv or .parquet file"),
        (["--clicks", str(bad), "--eta", "2"], "--eta configure a simulation; --clicks .* reads a log"),
        (["--clicks", str(bad), "--click-columns", "sess=sid"], "--click-columns 'sess=sid': expected ROLE=NAME"),
        (["--sessions", "100"], "--sessions configure the click protocol: give --clicks simulate or --clicks LOG"),
        (["--clicks", str(bad), "--presentation", "shuffle"], "--presentation configure a simulation"),
    ]
    for extra, message in cases:
        code = main(["compare", *_data_args(letor_file), *extra, *FAST])
        err = capsys.readouterr().err
        assert code == 2 and len(err.strip().splitlines()) == 1, err
        assert re.search(message, err), err


def test_a_preset_is_recorded_and_the_production_ranker_is_the_baseline(letor_file: Path, tmp_path: Path,
                                                                           capsys) -> None:
    out = tmp_path / "out"
    code = main(["compare", *_data_args(letor_file), *SIM, "--click-preset", "ultra-pbm", "--methods",
                 "production,random,lgb-clicks", *FAST, "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "examination and click probability given" in captured.err
    payload = json.loads((out / "results.json").read_text())
    protocol = payload["settings"]["clicks_protocol"]
    assert protocol["examination"] == [0.68, 0.61, 0.48, 0.34, 0.28, 0.2, 0.11, 0.1, 0.08, 0.06]
    assert protocol["click_prob"] == [0.1, 0.16, 0.28, 0.52, 1.0] and protocol["min_vali_queries"] == 30
    assert payload["baseline"] == "production"
    runs = {r["method"]: r for r in payload["results"]}
    assert runs["production"]["test"]["ndcg@10"] == pytest.approx(
        runs["lgb-clicks"]["info"]["clicks"]["production"]["test_ndcg@10"])


def test_shuffled_presentation_is_recorded_and_changes_the_log(letor_file: Path, tmp_path: Path, capsys) -> None:
    logs = {}
    for presentation in ("fixed", "shuffle"):
        out = tmp_path / presentation
        code = main(["compare", *_data_args(letor_file), *SIM, "--presentation", presentation, "--methods",
                     "qbrank-P", *FAST, "--out", str(out)])
        captured = capsys.readouterr()
        assert code == 0, captured.err
        assert ("shuffled) shown by" in captured.err) == (presentation == "shuffle")
        payload = json.loads((out / "results.json").read_text())
        assert payload["settings"]["clicks_protocol"]["presentation"] == presentation
        logs[presentation] = payload["results"][0]["info"]["clicks"]["log"]["sha256"]
    assert logs["fixed"] != logs["shuffle"]


def test_document_keys_without_features_are_refused_before_any_run_or_skipped(letor_file: Path, tmp_path: Path,
                                                                             capsys) -> None:
    log = tmp_path / "log.csv"
    _log_csv(letor_file, log)
    rows = _csv(log)
    k = next(i for i, r in enumerate(rows) if r["sid"] == "s1")  # a training query's session
    rows[k]["doc"] = "99"  # the queries have 8 documents: no feature row
    with open(log, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    args = ["compare", *_data_args(letor_file), "--clicks", str(log), "--click-columns",
            "session=sid,query=qid,position=rank,clicked=click", "--labeled-fraction", "0.3", *FAST]
    code = main([*args, "--methods", "labeled-only,qbrank-P"])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1, err  # a usage error, before any training
    assert re.search(r"--clicks .*log\.csv: session 's1', query \d+, position \d+: document 99 .*; "
                     r"--click-on-missing skip leaves their impressions out", err), err
    assert "on_missing=" not in err
    code = main([*args, "--methods", "labeled-only,qbrank-P", "--click-on-missing", "skip"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "failed" not in captured.err
    assert re.search(r"--click-on-missing skip: 1 of \d+ impressions .* left out", captured.err), captured.err
    # the option belongs to a click log
    code = main(["compare", *_data_args(letor_file), *SIM, "--click-on-missing", "skip", *FAST])
    assert code == 2 and "--click-on-missing describes a click log" in capsys.readouterr().err


def test_an_empty_or_damaged_click_log_is_a_one_line_error(letor_file: Path, tmp_path: Path, capsys) -> None:
    header = tmp_path / "empty.csv"
    header.write_text("session,query,doc,position,clicked\n")
    blank = tmp_path / "blank.csv"
    blank.write_text("")
    cut = tmp_path / "cut.csv"
    cut.write_text("session,query,doc,position,clicked\n1,0,0,1,0\n1,0,1,2,1\n1,0,2")
    for path, message in ((header, "the click log has no rows"), (blank, "is empty: not even a header line"),
                          (cut, "line 4: expected 5 fields, got 3")):
        code = main(["compare", *_data_args(letor_file), "--clicks", str(path), *FAST])
        err = capsys.readouterr().err
        assert code == 2 and len(err.strip().splitlines()) == 1, err
        assert re.search(rf"--clicks .*{path.name}: .*{message}", err), err
