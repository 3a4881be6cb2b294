"""The replication scripts (examples/replication/) run end to end on tiny synthetic data, and
their helpers agree with brute-force references."""

from __future__ import annotations

import importlib
import itertools
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests._helpers import need_data

SCRIPTS = Path(__file__).resolve().parents[2] / "examples" / "replication"


def _load(name: str) -> Any:
    if str(SCRIPTS) not in sys.path:
        sys.path.insert(0, str(SCRIPTS))
    return importlib.import_module(name)


# ---------------------------------------------------------------- helpers

def test_tiny_folds_rotate_disjoint_parts_with_single_label_queries() -> None:
    C = _load("_common")
    folds = C.tiny_folds()
    assert len(folds) == 5
    for train, vali, test in folds:
        ids = [set(np.unique(d.qid).tolist()) for d in (train, vali, test)]
        assert not (ids[0] & ids[1]) and not (ids[0] & ids[2]) and not (ids[1] & ids[2])
        assert len(ids[0] | ids[1] | ids[2]) == 30
    train = folds[0][0]
    g = train.group_ptr
    singles = [q for q in range(train.n_queries) if np.unique(train.y[g[q]:g[q + 1]]).size == 1]
    assert singles, "tiny data must hold single-label queries (QBRank's L1)"


def test_lgb_staged_sums_to_the_full_prediction() -> None:
    import lightgbm as lgb

    C = _load("_common")
    train = C.tiny_folds()[0][0]
    bst = lgb.train({"objective": "regression", "verbose": -1, "num_threads": 1, "min_data_in_leaf": 5},
                    lgb.Dataset(train.X, train.y), num_boost_round=7)
    staged = C.lgb_staged(bst, train.X, 7)
    assert len(staged) == 7
    np.testing.assert_allclose(staged[-1], bst.predict(train.X, raw_score=True), rtol=0, atol=1e-12)
    np.testing.assert_allclose(staged[2], bst.predict(train.X, num_iteration=3, raw_score=True), atol=1e-12)


def test_best_round_is_first_maximum_and_mean_std() -> None:
    C = _load("_common")
    assert C.paired([0.5, 0.2, 0.3], [0.4, 0.3, 0.3]) == "better in 1 of 3, mean diff +0.0000"
    assert C.paired([0.1, 0.2], [0.3, 0.1], higher_is_better=False) == "better in 1 of 2, mean diff -0.0500"
    with pytest.raises(ValueError, match="2 values against 3"):
        C.paired([1.0, 2.0], [1.0, 2.0, 3.0])
    assert C.best_round([0.1, 0.3, 0.3, 0.2]) == 2
    assert C.best_round([]) == 0
    assert C.mean_std([1.0, 3.0]) == f"2.0000±{np.std([1.0, 3.0], ddof=1):.4f}"


def test_score_rejects_unknown_metric() -> None:
    C = _load("_common")
    d = C.tiny_folds()[0][2]
    with pytest.raises(ValueError, match="'err@5'"):
        C.score("err@5", np.zeros(d.y.size), d)


def test_missing_data_folder_is_a_one_line_exit(tmp_path: Path) -> None:
    mod = _load("ndcg_boost_stability")
    with pytest.raises(SystemExit, match="data folder not found"):
        mod.main(["--data", str(tmp_path / "nowhere")])


def test_critical_pairs_and_single_label_match_loops() -> None:
    rq = _load("rankboost_per_query")
    qb = _load("qbrank_gbt")
    rng = np.random.default_rng(5)
    for _ in range(20):
        y = rng.integers(0, 4, size=rng.integers(1, 12)).astype(float)
        brute = sum(1 for i, j in itertools.combinations(range(y.size), 2) if y[i] != y[j])
        assert rq.critical_pairs(y) == brute
    C = _load("_common")
    train = C.tiny_folds()[0][0]
    g = train.group_ptr
    mask = qb.single_label_queries(train)
    assert mask.tolist() == [len(set(train.y[g[q]:g[q + 1]])) == 1 for q in range(train.n_queries)]


def test_doc_parts_partition_and_stratify() -> None:
    rq = _load("rankboost_per_query")
    y = np.array([0] * 23 + [1] * 9 + [2] * 6, dtype=float)
    parts = rq.doc_parts(y)
    allrows = np.concatenate(parts)
    assert sorted(allrows.tolist()) == list(range(y.size))
    for grade in (0, 1, 2):
        counts = [int((y[p] == grade).sum()) for p in parts]
        assert max(counts) - min(counts) <= 1, (grade, counts)
    sizes = [p.size for p in parts]
    assert max(sizes) - min(sizes) <= 1


def test_average_ranks_by_hand() -> None:
    rq = _load("rankboost_per_query")
    metrics = {m: 0.0 for m in rq.METRICS}
    task1 = {"RankBoost+": dict(metrics, r1=0.1, **{"ndcg@3": 0.9}), "Rb-c": dict(metrics, r1=0.2, **{"ndcg@3": 0.8}),
             "Rb-d": dict(metrics, r1=0.3, **{"ndcg@3": 0.7})}
    task2 = {"RankBoost+": dict(metrics, r1=0.2, **{"ndcg@3": 0.5}), "Rb-c": dict(metrics, r1=0.2, **{"ndcg@3": 0.6}),
             "Rb-d": dict(metrics, r1=0.1, **{"ndcg@3": 0.7})}
    ranks = rq.average_ranks([task1, task2])
    assert ranks["RankBoost+"]["r1"] == pytest.approx((1 + 2.5) / 2)
    assert ranks["Rb-c"]["r1"] == pytest.approx((2 + 2.5) / 2)
    assert ranks["Rb-d"]["r1"] == pytest.approx((3 + 1) / 2)
    assert ranks["RankBoost+"]["ndcg@3"] == pytest.approx((1 + 3) / 2)  # higher NDCG ranks first
    assert ranks["Rb-d"]["ndcg@3"] == pytest.approx((3 + 1) / 2)
    assert ranks["Rb-c"]["r2"] == pytest.approx(2.0)  # all tied: everyone gets the middle rank


# ---------------------------------------------------------------- end to end

def test_mpboost_script_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mod = _load("mpboost_ddf")
    C = _load("_common")
    png = tmp_path / "img" / "curves.png"
    out = mod.main(["--tiny", "--folds", "1", "2", "--rounds", "6", "--grid", "--out", str(tmp_path), "--png", str(png)])
    text = capsys.readouterr().out
    assert "Stump MPBoost, Figure 2 parameters" in text and "tuned on vali" in text and "LightGBM trees" in text
    assert png.stat().st_size > 1000
    saved = json.loads((tmp_path / "mpboost_ddf.json").read_text())
    assert set(saved["stumps"]) >= {"BINARY", "LDD alpha=0.2", "LOGDD lam=3", "LOGITDD beta=0.5", "LOGDD lam=0.5"}
    # the reported row is the test value at the round with the best vali NDCG@5
    test = C.tiny_folds()[1][2]
    for rows in list(out["stumps"].values()) + list(out["trees"].values()):
        for row in rows:
            assert row["round"] == int(np.argmax(row["vali_curve_ndcg@5"])) + 1
            assert len(row["curve_ndcg@10"]) <= 6
            assert 0.0 <= row["ndcg@10"] <= 1.0
    mod.main(["--summarize", str(tmp_path / "mpboost_ddf.json")])
    again = capsys.readouterr().out
    assert "each DDF against BINARY" in again and "tuned on vali" in again and "LightGBM trees" in again
    row = out["stumps"]["BINARY"][1]
    assert row["curve_ndcg@10"][row["round"] - 1] == pytest.approx(row["ndcg@10"])
    model = mod.MPBoost(ddf="binary", n_rounds=6, random_state=0)
    train = C.tiny_folds()[1][0]
    model.fit(train.X, train.y, group=np.diff(train.group_ptr))
    staged = list(model.staged_predict(test.X))
    assert C.score("ndcg@10", staged[row["round"] - 1], test) == pytest.approx(row["ndcg@10"])


def test_qbrank_script_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mod = _load("qbrank_gbt")
    png = tmp_path / "qb.png"
    out = mod.main(["--tiny", "--folds", "1", "--rounds", "5", "--leaves", "4", "--out", str(tmp_path),
                    "--png", str(png)])
    text = capsys.readouterr().out
    assert "L1 = " in text and "single-label queries" in text and "prec@100%" in text
    assert png.stat().st_size > 1000 and (tmp_path / "qbrank_gbt.json").exists()
    res = out["results"]
    assert set(res) == {"GBT L2", "GBT L1+L2", "QBRank P2", "QBRank P2+L1", "QBRank P2+L1+L2 labels",
                        "QBRank P2+L1 line search"}
    for rows in res.values():
        assert 0.0 <= rows[0]["prec@100%"] <= 1.0 and rows[0]["dcg@5"] >= 0.0
        assert len(rows[0]["curve_dcg@5"]) == 5
    mod.main(["--summarize", str(tmp_path / "qbrank_gbt.json")])
    again = capsys.readouterr().out
    assert "QBRank P2 vs GBT L2" in again and "prec@100%: better in" in again
    # L1 holds queries, so adding it to the labeled term changes the model
    assert res["QBRank P2"][0]["curve_dcg@5"] != res["QBRank P2+L1"][0]["curve_dcg@5"]


def test_rankboost_script_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mod = _load("rankboost_per_query")
    out = mod.main(["--tiny", "--min-pairs", "20", "--rounds", "5", "--max-tasks", "3", "--out", str(tmp_path)])
    text = capsys.readouterr().out
    assert "Average rank over 3 tasks" in text
    assert out["n_tasks"] == 3
    for m in mod.METRICS:
        assert sum(out["ranks"][lb][m] for lb in mod.VARIANTS) == pytest.approx(6.0)  # 1 + 2 + 3
    assert json.loads((tmp_path / "rankboost_per_query.json").read_text())["min_pairs"] == 20
    again = mod.main(["--summarize", str(tmp_path / "rankboost_per_query.json")])
    assert capsys.readouterr().out.count("Average rank over 3 tasks") == 1 and "Wilcoxon" in text
    assert again["ranks"] == out["ranks"]
    with pytest.raises(SystemExit, match="no such file"):
        mod.main(["--summarize", str(tmp_path / "missing.json")])
    with pytest.raises(SystemExit, match="critical pairs"):
        mod.main(["--tiny", "--min-pairs", "100000"])


def test_adarank_script_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mod = _load("adarank_measures")
    out = mod.main(["--tiny", "--folds", "1", "2", "--rounds", "20", "--fixed-rounds", "4", "--out", str(tmp_path)])
    text = capsys.readouterr().out
    assert "Figures 9-10" in text
    fixed = out["results"]["paper, no stop"]
    for rows in fixed.values():
        assert all(r["rounds_fitted"] == 4 for r in rows)
        assert all(len(r["train_curve_map"]) == 4 for r in rows)
        assert all(r["train_map"] == r["train_curve_map"][-1] for r in rows)
    for by in out["results"].values():
        for rows in by.values():
            for r in rows:
                if r["rounds_fitted"]:
                    assert 1 <= r["round"] <= r["rounds_fitted"]
    assert (tmp_path / "adarank_measures.json").exists()


def test_ndcg_boost_script_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mod = _load("ndcg_boost_stability")
    table = tmp_path / "table.json"
    fake = {"folds": [1, 2], "results": {
        "NDCG_Boost": [{"ndcg@10": 0.5}, {"ndcg@10": 0.6}], "Other": [{"ndcg@10": 0.55}, {"ndcg@10": 0.5}]}}
    table.write_text(json.dumps(fake))
    out = mod.main(["--tiny", "--folds", "1", "2", "--rounds", "5", "--table", str(table), "--out", str(tmp_path)])
    text = capsys.readouterr().out
    assert "rank among these 2 boosters" in text
    assert out["versus_table"]["ranks"] == [2, 1]
    assert out["versus_table"]["mean_rank"] == {"NDCG_Boost": 1.5, "Other": 1.5}
    assert [r["round"] for r in out["results"]["stumps, T=100 (paper)"]] == [100, 100]
    with pytest.raises(SystemExit, match="pass the same --folds"):
        mod.main(["--tiny", "--folds", "1", "--rounds", "5", "--table", str(table)])


def test_trees_script_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mod = _load("trees_vs_builtin")
    C = _load("_common")
    out = mod.main(["--tiny", "--folds", "1", "--rounds", "4", "--methods", "lambdarank", "qbrank",
                    "--out", str(tmp_path)])
    text = capsys.readouterr().out
    assert "Paired against lambdarank" in text and "qbrank" in text
    for rows in out["results"].values():
        row = rows[0]
        assert 1 <= row["round"] <= 4
        # the mean of the per-query values is the reported NDCG@10 (empty queries 0)
        assert np.mean(row["per_query_ndcg@10"]) == pytest.approx(row["ndcg@10"])
        # the empty=1 convention adds exactly the all-0 test queries' share (ties are rare with trees)
        test = C.tiny_folds()[0][2]
        g = test.group_ptr
        share = np.mean([test.y[g[q]:g[q + 1]].max() == 0 for q in range(test.n_queries)])
        assert row["ndcg@10 (empty=1, ties=order)"] == pytest.approx(row["ndcg@10"] + share, abs=0.02)
    mod.main(["--summarize", str(tmp_path / "trees_vs_builtin.json")])
    assert "Paired against lambdarank" in capsys.readouterr().out


def test_trees_script_chooses_the_round_as_compare_does() -> None:
    """trees_vs_builtin's round is boostplug compare's (run_method: library conventions), whatever
    the report's convention (empty queries 0, ties averaged) would choose."""
    from boostplug.compare.protocol import run_method

    mod = _load("trees_vs_builtin")
    C = _load("_common")
    for fold in C.tiny_folds()[:2]:
        for name in ("lambdarank", "regression"):
            row = mod.run(name, fold, 8)
            ref = run_method(name, *fold, rounds=8, seed=0, threads=1)
            assert row["round"] == ref.best_round
            assert row["ndcg@10 (empty=1, ties=order)"] == pytest.approx(ref.test["ndcg@10"])
            assert 1 <= row["round_report_convention"] <= 8


# ---------------------------------------------------------------- --data example

def test_example_data_is_compares_split() -> None:
    from boostplug.compare.data import load_folds

    C = _load("_common")
    args = C.parser(None).parse_args(["--data", "example"])
    numbers, folds, what = C.load_folds(args)
    assert numbers == [1] and len(folds) == 1 and "embedded LightGBM example" in what
    [(_, ref)] = load_folds("example")
    for ours, theirs in zip(folds[0], ref):
        np.testing.assert_array_equal(ours.X, theirs.X)
        np.testing.assert_array_equal(ours.qid, theirs.qid)
    with pytest.raises(SystemExit, match="folds 1..1"):
        C.load_folds(C.parser(None).parse_args(["--data", "example", "--folds", "2"]))


def test_scripts_run_on_example_data(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trees = _load("trees_vs_builtin").main(["--data", "example", "--rounds", "3", "--methods", "lambdarank",
                                            "regression", "--out", str(tmp_path)])
    assert trees["folds"] == [1] and len(trees["results"]["regression"][0]["per_query_ndcg@10"]) == 50
    ada = _load("adarank_measures").main(["--data", "example", "--rounds", "4", "--fixed-rounds", "2"])
    assert all(r["rounds_fitted"] == 2 for r in ada["results"]["paper, no stop"]["AdaRank.MAP"])
    rq = _load("rankboost_per_query").main(["--data", "example", "--min-pairs", "100", "--rounds", "3",
                                            "--max-tasks", "2"])
    assert rq["n_tasks"] == 2
    assert "embedded LightGBM example" in capsys.readouterr().out


def test_booster_table_on_example_data(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bench = Path(__file__).resolve().parents[2] / "benchmarks"
    if str(bench) not in sys.path:
        sys.path.insert(0, str(bench))
    mod = importlib.import_module("booster_table")
    out = tmp_path / "t.json"
    mod.main(["--data", "example", "--rounds", "3", "--only", "Rb-c", "--only", "AdaRank.MAP (RankLib)",
              "--json", str(out)])
    saved = json.loads(out.read_text())
    assert saved["folds"] == [1] and set(saved["results"]) == {"Rb-c", "AdaRank.MAP (RankLib)"}
    assert "embedded LightGBM example" in capsys.readouterr().out


def test_round_profile_prints_shares(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
                                    tmp_path: Path) -> None:
    """benchmarks/round_profile.py: the objectives' part on a small synthetic set, without the data
    folder (only the boosters' part reads OHSUMED); every share is a percentage and the objective's
    kernel is among them."""
    bench = Path(__file__).resolve().parents[2] / "benchmarks"
    if str(bench) not in sys.path:
        sys.path.insert(0, str(bench))
    mod = importlib.import_module("round_profile")
    monkeypatch.setattr(mod, "SHARED", tmp_path / "no_shared_data")   # as on a clone without ../shared
    assert mod.main(["--boosters", "", "--objectives", "mpboost", "--docs", "3000", "--top", "30"]) == 0
    out = capsys.readouterr().out
    assert "LightGBM with mpboost" in out and "_mpboost_kernels.py" in out
    shares = [float(line.split("%")[0]) for line in out.splitlines() if line.strip().endswith(")") and "%" in line]
    assert shares and all(0.0 <= x <= 100.0 for x in shares) and sum(shares) <= 100.5


# ---------------------------------------------------------------- OHSUMED (LETOR 3.0)

def _write_parts(root: Path) -> None:
    """Parts S1..S5 of two queries each (qid = part * 100 + query), 45 features as OHSUMED."""
    root.mkdir(parents=True, exist_ok=True)
    for i in range(1, 6):
        (root / f"S{i}.txt").write_text("".join(f"{d % 3} qid:{i * 100 + q} 1:{d / 4} 45:0.5\n"
                                                for q in range(2) for d in range(4)))


def _parts_of(d: Any) -> list[int]:
    return list(dict.fromkeys(int(t) // 100 for t in d.qid[d.group_ptr[:-1]]))


def test_ohsumed_folds_are_letor3s_partition_and_ndcg_uses_its_discount(tmp_path: Path) -> None:
    """A folder named OHSUMED rotates as LETOR 3.0 (Fold1 tests on S1), not as LETOR 4.0's MQ2008
    (Fold1 tests on S5), and its NDCG takes LETOR 3.0's discount; another folder resets both."""
    from boostplug import metrics

    C = _load("_common")
    _write_parts(tmp_path / "OHSUMED")
    numbers, folds, what = C.load_folds(C.parser(None).parse_args(["--data", str(tmp_path / "OHSUMED")]))
    assert numbers == [1, 2, 3, 4, 5] and "LETOR 3.0" in what
    assert [[_parts_of(d) for d in f] for f in folds] == [
        [[2, 3, 4], [5], [1]], [[3, 4, 5], [1], [2]], [[4, 5, 1], [2], [3]], [[5, 1, 2], [3], [4]],
        [[1, 2, 3], [4], [5]]]
    assert C.DISCOUNT == "letor" and C.TIES == "order"  # LETOR 3.0's script keeps tied documents in file order
    test = folds[0][2]
    s = np.round(np.linspace(0.0, 1.0, test.n_docs) * 2) / 2  # few distinct scores: ties in every query
    letor = metrics.ndcg(s, test.y, test.group_ptr, 10, discount="letor", empty=0.0, ties="order")
    assert C.score("ndcg@10", s, test) == pytest.approx(letor)
    assert letor != pytest.approx(metrics.ndcg(s, test.y, test.group_ptr, 10, discount="letor", empty=0.0,
                                               ties="average"))
    assert C.score("ndcg@10", s, test) != pytest.approx(
        metrics.ndcg(s, test.y, test.group_ptr, 10, empty=0.0, ties="order"))
    C.load_folds(C.parser(None).parse_args(["--data", str(tmp_path / "OHSUMED"), "--ties", "average"]))
    assert C.TIES == "average" and C.score("ndcg@10", s, test) == pytest.approx(
        metrics.ndcg(s, test.y, test.group_ptr, 10, discount="letor", empty=0.0, ties="average"))
    _write_parts(tmp_path / "MQ")
    _, folds, _ = C.load_folds(C.parser(None).parse_args(["--data", str(tmp_path / "MQ")]))
    assert [_parts_of(d) for d in folds[0]] == [[1, 2, 3], [4], [5]] and C.DISCOUNT == "log2"
    assert C.TIES == "average"
    assert C.parser(None).parse_args(["--data", "ohsumed"]).data == C.OHSUMED_DATA


def test_ohsumed_script_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mod = _load("ohsumed_letor")
    C = _load("_common")
    # three folds: 18 test queries, where Wilcoxon needs no permutation test (slow below 14)
    out = mod.main(["--tiny", "--folds", "1", "2", "3", "--rounds", "6", "--out", str(tmp_path)])
    text = capsys.readouterr().out
    assert "Against LETOR 3.0's published baselines" in text and "NDCG_Boost beats RankBoost" in text
    res = out["results"]
    assert set(res) >= {"RankBoost Rb-c (RankLib)", "MPBoost.BINARY", "MPBoost.LOGDD tuned", "NDCG_Boost T=100"}
    # the paper's NDCG_Boost runs its fixed 100 rounds (--tiny: 20 for the others), no validation
    assert [r["round"] for r in res["NDCG_Boost T=100"]["folds"]] == [100, 100, 100]
    assert {c["claim"] for c in out["claims"]} == {c[0] for c in mod.CLAIMS}
    assert all(t["n"] == 18 for c in out["claims"] for t in c["tests"].values())
    for info in res.values():
        for row in info["folds"]:
            assert np.mean(row["per_query"]["ndcg@10"]) == pytest.approx(row["ndcg@10"])
            assert np.mean(row["per_query"]["map"]) == pytest.approx(row["map"])
    # a tuned DDF is the best of its grid on vali, so never below the paper-parameter row on vali
    for ddf in ("LDD alpha 0.2", "LOGDD lambda 3", "LOGITDD beta 0.5"):
        tuned = res[f"MPBoost.{ddf.split()[0]} tuned"]["folds"]
        for a, b in zip(tuned, res[f"MPBoost.{ddf}"]["folds"]):
            assert a["vali"] >= b["vali"]
    # the reported row is the test value of the round with the best vali MAP
    train, vali, test = C.tiny_folds()[0]
    model = mod.RankBoost(variant="rb-c", thresholds="ranklib", n_rounds=20, random_state=0)
    model.fit(train.X, train.y, group=np.diff(train.group_ptr))
    vcurve = [C.score("map", s, vali) for s in model.staged_predict(vali.X)]
    row = res["RankBoost Rb-c (RankLib)"]["folds"][0]
    assert row["round"] == int(np.argmax(vcurve)) + 1
    assert C.score("ndcg@10", list(model.staged_predict(test.X))[row["round"] - 1], test) == pytest.approx(
        row["ndcg@10"])
    again = mod.main(["--summarize", str(tmp_path / "ohsumed_letor.json")])
    assert capsys.readouterr().out == mod.summarize(again) + "\n"
    assert mod.summarize(again) in text


@pytest.mark.realdata
def test_ohsumed_data_loads_letor3_folds() -> None:
    C = _load("_common")
    need_data(C.OHSUMED_DATA)
    numbers, folds, what = C.load_folds(C.parser(None).parse_args(["--data", "ohsumed"]))
    assert "LETOR 3.0" in what and C.DISCOUNT == "letor"
    # LETOR 3.0's Fold1: train S2-S4 (2,570 + 3,076 + 3,573 rows), vali S5 (3,538), test S1 (3,383)
    assert [d.X.shape for d in folds[0]] == [(9219, 45), (3538, 45), (3383, 45)]
    assert [f[2].n_queries for f in folds] == [22, 21, 21, 21, 21]
    assert sum(f[2].n_queries for f in folds) == 106


def test_clicks_study_choose_and_figure(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from boostplug.cli import main as cli
    from boostplug.data import make_ranking, write_letor

    mod = _load("clicks_study")
    out = mod.main(["choose", "--tiny", "--seeds", "0", "--sessions", "400", "--labeled-fraction", "0.3",
                    "--rounds", "4", "--out", str(tmp_path)])
    assert out == 0
    chosen = json.loads((tmp_path / "choose.json").read_text())
    grid = len(mod.STRATEGY_SETS) * len(mod.WEIGHTS) * len(mod.PAIR_METHODS) + len(mod.BASELINES)
    assert len(chosen["runs"]) == grid * len(mod.PRESENTATIONS) and len(chosen["table"]) == grid
    ranks = [row["mean_rank"] for row in chosen["table"]]
    assert ranks == sorted(ranks) and set(chosen["table"][0]["by_condition"]) == {"400/fixed", "400/shuffle"}
    # a setting's cell is the mean of its runs
    row = chosen["table"][-1]
    runs = [r for r in chosen["runs"] if (r["method"], r["strategies"], r["weight"], r["presentation"]) ==
            (row["method"], row["strategies"], row["weight"], "shuffle")]
    assert row["by_condition"]["400/shuffle"] == pytest.approx(np.mean([r["ndcg@10"] for r in runs]))
    assert "rank" in capsys.readouterr().out

    assert mod.main(["pairs", "--tiny", "--sessions", "500", "--labeled-fraction", "0.3", "--out", str(tmp_path)]) == 0
    told = json.loads((tmp_path / "pairs.json").read_text())
    assert len(told["sets"]) == len(mod.PAIR_SETS) * len(mod.PRESENTATIONS) and 0 < told["random_ndcg@10"] < 1
    alone = next(r for r in told["sets"] if r["presentation"] == "fixed" and r["strategies"] == "skip-above")
    assert alone["pairs"] > 0 and alone["prefer_lower_shown"] == 1.0  # a fixed list: only ever against it
    assert all(r["labels_agree"] + r["labels_contradict"] <= 1.0 for r in told["sets"])

    data = tmp_path / "d.txt"
    write_letor(data, make_ranking(n_queries=40, docs_per_query=8, n_features=4, n_informative=2, seed=2))
    for presentation in ("fixed", "shuffle"):
        for n in (300, 900):
            code = cli(["compare", "--data", str(data), "--kfold", "3", "--folds", "1", "--clicks", "simulate",
                        "--sessions", str(n), "--labeled-fraction", "0.3", "--presentation", presentation,
                        "--methods", "lgb-clicks,lgb-position,labeled-only,qbrank-P,qbrank-PL", "--rounds", "3",
                        "--no-progress", "--no-plots", "--out", str(tmp_path / presentation / f"tiny_{n}")])
            assert code == 0
    capsys.readouterr()
    png = tmp_path / "fig.png"
    assert mod.main(["figure", "--runs", f"fixed={tmp_path / 'fixed'}", f"shuffle={tmp_path / 'shuffle'}",
                     f"fixed:again={tmp_path / 'fixed'}", "--out", str(tmp_path), "--png", str(png)]) == 0
    assert png.stat().st_size > 1000
    result = json.loads((tmp_path / "claims.json").read_text())
    # per size and presentation the claims whose methods ran (not rankboost-P), and the labeled runs'
    # pair-learner claims on the fixed presentation
    assert {r["sessions"] for r in result["claims"]} == {300, 900} and len(result["claims"]) == 2 * 2 * 5 + 2 * 4
    again = [r for r in result["claims"] if r["method"] == "qbrank-PL (again)" and r["against"] == "qbrank-P (again)"]
    assert len(again) == 2 and all(r["mean_diff"] == pytest.approx(o["mean_diff"]) for r, o in zip(again, [
        r for r in result["claims"] if r["presentation"] == "fixed" and r["method"] == "qbrank-PL"
        and r["against"] == "qbrank-P"]))
    assert [p["sessions"] for p in result["series"]["shuffle"]["tiny"]["qbrank-P"]] == [300, 900]
    # the claim's difference is the per-query difference of the two runs' test NDCG@10
    payload = json.loads((tmp_path / "fixed" / "tiny_900" / "results.json").read_text())
    pq = {r["method"]: np.array(r["test_per_query"]["ndcg@10"]) for r in payload["results"]}
    claim = next(r for r in result["claims"] if r["presentation"] == "fixed" and r["sessions"] == 900
                 and r["method"] == "qbrank-PL" and r["against"] == "qbrank-P")
    assert claim["mean_diff"] == pytest.approx(float(np.mean(pq["qbrank-PL"] - pq["qbrank-P"])))


def test_clicks_study_diagnose_and_routes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mod = _load("clicks_study")
    variants = ["qbrank-P", "qbrank-P[pair_tau=0.3]", "qbrank-P@unit", "rankboost-P"]
    assert mod.main(["diagnose", "--tiny", "--seeds", "0", "1", "--sessions", "400", "--labeled-fraction", "0.3",
                     "--rounds", "4", "--variants", *variants, "--out", str(tmp_path)]) == 0
    told = json.loads((tmp_path / "diagnose.json").read_text())
    rows = {r["variant"]: r for r in told["table"]}
    assert list(rows) == variants and all(len(r["by_seed"]) == 2 for r in rows.values())
    assert rows["qbrank-P"]["ndcg@10"] == pytest.approx(np.mean(rows["qbrank-P"]["by_seed"]))
    # on the pairs alone the margin only scales the scores: the same rankings, the same NDCG
    assert rows["qbrank-P[pair_tau=0.3]"]["by_seed"] == pytest.approx(rows["qbrank-P"]["by_seed"])
    assert rows["rankboost-P"]["vs first"]["diff"] == pytest.approx(-rows["qbrank-P"]["vs rankboost-P"]["diff"])
    assert "vs first" not in rows["qbrank-P"] and rows["qbrank-P@unit"]["vs first"]["against"] == "qbrank-P"

    out = tmp_path / "routes"
    routes = ["qbrank-P", "rankboost-P", "lgb-clicks", "lgb-ips"]
    # one process's share of the conditions, then the rest
    assert mod.main(["routes", "--tiny", "--rounds", "4", "--routes", *routes, "--shard", "1/2", "--out", str(out)]) == 0
    n_all = len(mod._conditions([("choose", mod.TINY_CHOOSE, mod.PRESENTATIONS),
                                 ("held-out", mod.TINY_HELD_OUT, mod.PRESENTATIONS)]))
    assert len(list((out / "conditions").iterdir())) == n_all // 2
    assert mod.main(["routes", "--tiny", "--rounds", "4", "--routes", *routes, "--out", str(out)]) == 0
    result = json.loads((out / "routes.json").read_text())
    conds = result["conditions"]
    n_choose = sum(len(m) * len(s) for _, _, m, s in mod.TINY_CHOOSE) * len(mod.PRESENTATIONS)
    assert [c["half"] for c in conds].count("choose") == n_choose
    # the held-out half shares neither a data fold nor a click model with the chosen-on half
    seen = {(c["data"], c["fold"]) for c in conds if c["half"] == "choose"}
    models = {c["model"] for c in conds if c["half"] == "choose"}
    assert all((c["data"], c["fold"]) not in seen and c["model"] not in models for c in conds if c["half"] == "held-out")
    # the inverse-propensity route runs only where the log allows an estimate; it cannot be chosen
    assert all(("lgb-ips" in c["runs"]) == (c["presentation"] == "shuffle") for c in conds)
    assert result["winner"] != "lgb-ips" and result["winner"] in routes
    ranks = result["choose_ranks"]
    assert ranks[result["winner"]]["mean_rank"] == min(v["mean_rank"] for r, v in ranks.items() if r != "lgb-ips")
    # a rank by hand in one condition
    c = next(c for c in conds if c["half"] == "choose" and c["presentation"] == "fixed")
    best = max((r for r in routes if r in c["runs"]), key=lambda r: c["runs"][r]["ndcg@10"])
    assert all(c["runs"][best]["ndcg@10"] >= c["runs"][r]["ndcg@10"] for r in c["runs"] if r in routes)
    held = result["winner_held_out"]

    def c_of(row: dict) -> dict:
        return next(c for c in conds if all(c[k] == row[k] for k in ("data", "fold", "model", "sessions", "presentation")))
    assert len(held) == sum(c["half"] == "held-out" for c in conds)
    for row in held:
        assert set(mod.REFERENCES) - {result["winner"]} <= set(row)
        assert row["target_met"] == (row["production"]["diff"] >= mod.TARGET_OVER_PRODUCTION and all(
            row[r]["diff"] >= -mod.LEVEL for r in ("lgb-clicks", "lgb-position", "xgb-unbiased") if r in row))
        assert row["best"] in c_of(row)["runs"] and all(
            v["ndcg@10"] <= c_of(row)["runs"][row["best"]]["ndcg@10"] for v in c_of(row)["runs"].values())
    assert "chosen on CHOOSE" in (out / "routes.txt").read_text()
    # each inverse-propensity route against itself unweighted, where both ran
    shuffled = [c for c in conds if c["presentation"] == "shuffle"]
    assert [(r["route"], r["against"]) for r in result["ips"]] == [("lgb-ips", "lgb-clicks")] * len(shuffled)
    c, r = shuffled[0], result["ips"][0]
    assert r["diff"] == pytest.approx(np.mean(c["runs"]["lgb-ips"]["per_query"]) -
                                      np.mean(c["runs"]["lgb-clicks"]["per_query"]))
    # another presentation and session count: its own conditions
    swap = tmp_path / "swap"
    assert mod.main(["routes", "--tiny", "--rounds", "3", "--routes", "qbrank-P-ips", "qbrank-P", "--half", "held-out",
                     "--presentations", "swap", "--sessions", "300", "--out", str(swap)]) == 0
    told = json.loads((swap / "routes.json").read_text())
    assert {(c["presentation"], c["sessions"]) for c in told["conditions"]} == {("swap", 300)}
    assert all("qbrank-P-ips" in c["runs"] for c in told["conditions"]) and "winner" not in told
    # a second run reuses the finished conditions and runs only the routes they lack
    again = mod.main(["routes", "--tiny", "--rounds", "4", "--routes", *routes, "mpboost-P", "--out", str(out)])
    latest = json.loads((out / "routes.json").read_text())
    more = latest["conditions"]
    assert again == 0 and all("mpboost-P" in c["runs"] for c in more)
    assert [{k: v for k, v in c["runs"].items() if k != "mpboost-P"} for c in more] == [c["runs"] for c in conds]
    # the extension grid (fixed presentation), reusing the first run's conditions: the same choice, a
    # reused condition completed on its own log, a second seed, and the seeds pooled per test query
    ext = tmp_path / "more"
    assert mod.main(["routes", "--tiny", "--rounds", "4", "--grid", "more", "--half", "held-out", "--routes", *routes,
                     "qbrank-PL[num_leaves=3]", "--reuse", str(out / "routes.json"), "--out", str(ext)]) == 0
    told = json.loads((ext / "routes.json").read_text())
    assert told["winner"] == latest["winner"] and told["choose_ranks"] == latest["choose_ranks"]
    held = [c for c in told["conditions"] if c["half"] == "held-out"]
    assert {(c["model"], c["presentation"], c["seed"]) for c in held} == {
        ("dcm", "fixed", 0), ("pbm-eta2", "fixed", 0), ("pbm-eta2", "fixed", 1)}
    first = next(c for c in conds if (c["model"], c["presentation"]) == ("pbm-eta2", "fixed"))
    again = next(c for c in held if (c["model"], c["seed"]) == ("pbm-eta2", 0))
    assert again["log_sha256"] == first["log_sha256"] and "qbrank-PL[num_leaves=3]" in again["runs"]
    assert all(again["runs"][r] == first["runs"][r] for r in first["runs"])
    seeds = {c["seed"]: c for c in held if c["model"] == "pbm-eta2"}
    assert seeds[1]["log_sha256"] != seeds[0]["log_sha256"]
    pooled = next(r for r in told["winner_held_out"] if r["seed"] == "0+1")
    w = told["winner"]
    mean_pq = (np.asarray(seeds[0]["runs"][w]["per_query"]) + seeds[1]["runs"][w]["per_query"]) / 2
    ref_pq = (np.asarray(seeds[0]["runs"]["production"]["per_query"]) + seeds[1]["runs"]["production"]["per_query"]) / 2
    assert pooled["ndcg@10"] == pytest.approx(mean_pq.mean())
    assert pooled["production"]["diff"] == pytest.approx(float(np.mean(mean_pq - ref_pq)))
    assert "qbrank-PL[num_leaves=3]" in pooled and "seed 0+1" in (ext / "routes.txt").read_text()
    capsys.readouterr()
