"""``--resume`` on a results.json that an earlier version of ``boostplug compare`` wrote
(``earlier_run/``: fold 1 of 3 of ``data.txt``, regression and rb-c, 3 rounds, written before the
command kept its settings in a run record): it resumes, and the new file keeps the earlier keys."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from boostplug.cli import main
from boostplug.compare import FRAMEWORKS

EARLIER = Path(__file__).parent / "earlier_run"
ARGV = ["compare", "--data", "data.txt", "--kfold", "3", "--methods", "regression,rb-c", "--rounds", "3",
        "--no-plots", "--no-progress", "--out", "out", "--resume"]


@pytest.fixture
def earlier_run(tmp_path: Path, monkeypatch) -> dict:
    """The earlier run's data and --out folder in the working directory (it gave relative paths)."""
    shutil.copy(EARLIER / "data.txt", tmp_path / "data.txt")
    (tmp_path / "out").mkdir()
    shutil.copy(EARLIER / "results.json", tmp_path / "out" / "results.json")
    monkeypatch.chdir(tmp_path)
    return json.loads((EARLIER / "results.json").read_text())


def test_an_earlier_versions_results_json_resumes_with_the_same_keys(earlier_run: dict, monkeypatch, capsys) -> None:
    from boostplug.compare import execution

    real, trained = execution.run_method, []

    def counting(name, *a, **k):
        trained.append((name, k["fold"]))
        return real(name, *a, **k)

    monkeypatch.setattr(execution, "run_method", counting)
    assert main(ARGV) == 0
    assert "carries no digests (an earlier version wrote it)" in capsys.readouterr().err
    assert sorted(trained) == [("rb-c", 1), ("rb-c", 2), ("regression", 1), ("regression", 2)]
    now = json.loads(Path("out/results.json").read_text())
    # the same keys in the same order, and those this version adds (the file and its runs: digest)
    assert [k for k in now if k not in ("degenerate", "digest", "significance_by_metric")] == list(earlier_run)
    assert "metrics" not in earlier_run["conventions"]  # written before --metrics: the default set, kept
    assert now["conventions"]["metrics"] == ["ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10", "map"]
    # the same keys, in the same order; --frameworks' default now names CatBoost too
    assert now["settings"] == {**earlier_run["settings"], "folds": "all", "frameworks": ",".join(FRAMEWORKS)}
    assert list(now["settings"]) == list(earlier_run["settings"])
    assert list(now["provenance"]) == [*earlier_run["provenance"], "earlier_runs"]
    assert now["provenance"]["earlier_runs"] == [earlier_run["provenance"]]
    assert now["provenance"]["data_sha256"] == earlier_run["provenance"]["data_sha256"]
    assert now["provenance"]["argv"] == ["boostplug", *ARGV]
    assert [{k: v for k, v in r.items() if k != "digest"} for r in now["results"] if r["fold"] == 1] == \
        earlier_run["results"]
    assert now["compared_folds"] == [1, 2, 3] and now["folds_completed"] == {"regression": [1, 2, 3],
                                                                             "rb-c": [1, 2, 3]}


def test_an_earlier_versions_results_json_refuses_other_settings(earlier_run: dict, capsys) -> None:
    assert main([*ARGV[:8], "4", *ARGV[9:]]) == 2
    assert "rounds was 3 in the earlier run, now 4" in capsys.readouterr().err
    assert json.loads(Path("out/results.json").read_text()) == earlier_run


def test_an_earlier_versions_results_json_refuses_metrics_it_lacks(earlier_run: dict, capsys) -> None:
    """Its runs keep per-query metric values, not test scores: ERR@10 cannot be computed from them."""
    assert main([*ARGV, "--metrics", "ndcg@10,err@10,mrr,map"]) == 2
    err = capsys.readouterr().err
    assert "the earlier run has no err@10, mrr" in err
    assert "resume with --metrics ndcg@1,ndcg@3,ndcg@5,ndcg@10,map" in err
    assert json.loads(Path("out/results.json").read_text()) == earlier_run
