"""benchmarks/tuned_runs.py: two tuned compare runs' chosen trials and search costs side by side."""

from __future__ import annotations

import gzip
import importlib.util
import json
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "tuned_runs.py"


def _script():
    spec = importlib.util.spec_from_file_location("tuned_runs", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(method, fold, values, chosen, seconds, states, ndcg, map_):
    trials = [{"number": i, "params": {}, "value": v, "best_round": 1, "seconds": s, "state": st}
              for i, (v, s, st) in enumerate(zip(values, seconds, states))]
    return {"method": method, "fold": fold, "test": {"ndcg@10": ndcg, "map": map_},
            "info": {"tuning": {"best_trial": chosen, "trials": trials}}}


def _write(path: Path, runs, gz: bool) -> Path:
    data = json.dumps({"results": runs})
    if gz:
        with gzip.open(path, "wt") as f:
            f.write(data)
    else:
        path.write_text(data)
    return path


def test_the_table_averages_over_the_folds_both_runs_completed(tmp_path, capsys):
    first = [_run("a", 1, [0.4, 0.5], 1, [1.0, 2.0], ["complete", "complete"], 0.30, 0.20),
             _run("a", 2, [0.6, 0.1], 0, [3.0, 4.0], ["complete", "pruned"], 0.50, 0.40),
             _run("b", 1, [0.2], 0, [5.0], ["complete"], 0.1, 0.1)]
    second = [_run("a", 1, [0.45, 0.3], 0, [1.0, 1.0], ["complete", "pruned"], 0.40, 0.30),
              _run("a", 2, [0.5, 0.7], 1, [2.0, 2.0], ["complete", "complete"], 0.60, 0.50)]   # b: not run
    m = _script()
    assert m.main([str(_write(tmp_path / "one.json.gz", first, True)), str(_write(tmp_path / "two.json", second, False)),
                   "--names", "old,new"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("| method | vali chosen, old | new |")
    # a: chosen 0.5 and 0.6 -> 0.55 first, 0.45 and 0.7 -> 0.575 second; tests 0.4/0.5, 0.3/0.4; 1/4 pruned both;
    # search seconds per fold (3 + 7) / 2 = 5 and (2 + 4) / 2 = 3
    assert out[2] == "| a | 0.5500 | 0.5750 | 0.4000 | 0.5000 | 0.3000 | 0.4000 | 1/4 | 1/4 | 5 | 3 |"
    assert len(out) == 5 and "b |" not in "\n".join(out)
    assert out[4] == "chosen validation value, new minus old: mean +0.0250 over 1 methods, lower for 0, largest drop -0.0250"


def test_a_run_without_tuning_records_is_refused(tmp_path):
    run = {"method": "a", "fold": 1, "test": {"ndcg@10": 0.1, "map": 0.1}, "info": {}}
    path = _write(tmp_path / "r.json", [run], False)
    with pytest.raises(SystemExit, match="a fold 1: no tuning record"):
        _script().main([str(path), str(path)])
