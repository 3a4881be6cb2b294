"""``boostplug info``: summaries of files, folders and the embedded example; one-line errors."""

from __future__ import annotations

import argparse
import io
from pathlib import Path

import numpy as np
import pytest

from boostplug.cli.info import add_parser, run, summarize
from boostplug.data import RankingData, write_letor


def _run(path: str) -> tuple[int, str, str]:
    parser = argparse.ArgumentParser(prog="boostplug")
    sub = parser.add_subparsers(dest="command")
    add_parser(sub)
    args = parser.parse_args(["info", path])
    out, err = io.StringIO(), io.StringIO()
    code = args.run(args, stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def _tiny() -> RankingData:
    # q1: labels 2, 0, 1 (3 critical pairs); q2: 0, 0 (single label); q3: 1 (single label, one doc).
    X = np.arange(12, dtype=np.float64).reshape(6, 2) + 1
    return RankingData(X, [2, 0, 1, 0, 0, 1], qid=[7, 7, 7, 3, 3, 9])


def _slow_pairs(y: list[float], ptr: list[int]) -> int:
    return sum(1 for q in range(len(ptr) - 1) for i in range(ptr[q], ptr[q + 1])
               for j in range(ptr[q], ptr[q + 1]) if y[i] > y[j])


def test_summarize_tiny():
    s = summarize(_tiny())
    assert s["queries"] == 3 and s["documents"] == 6 and s["features"] == 2
    assert s["labels"] == {0.0: 3, 1.0: 2, 2.0: 1}
    assert s["docs_per_query"] == {"min": 1, "median": 2.0, "mean": 2.0, "max": 3}
    assert s["single_label_queries"] == 2
    assert s["critical_pairs"] == 3


def test_summarize_random_against_loops(rng):
    sizes = rng.integers(1, 8, size=15)
    y = rng.integers(0, 3, size=int(sizes.sum())).astype(float)
    d = RankingData(np.zeros((y.size, 1)), y, group_ptr=np.concatenate(([0], np.cumsum(sizes))))
    s = summarize(d)
    ptr = d.group_ptr.tolist()
    assert s["critical_pairs"] == _slow_pairs(y.tolist(), ptr)
    single = sum(1 for q in range(15) if len(set(y[ptr[q]:ptr[q + 1]].tolist())) == 1)
    assert s["single_label_queries"] == single
    assert s["docs_per_query"]["median"] == float(np.median(sizes))


def test_file(tmp_path):
    path = tmp_path / "tiny.txt"
    write_letor(path, _tiny())
    code, out, err = _run(str(path))
    assert code == 0 and err == ""
    assert str(path) in out
    for line in ("queries               3", "documents             6", "features              2",
                 "0: 3 (50.0%)  1: 2 (33.3%)  2: 1 (16.7%)", "min 1, median 2, mean 2.0, max 3",
                 "single-label queries  2 (66.7%)", "critical pairs        3"):
        assert line in out


def test_parts_folder_prints_each_part_and_total(tmp_path):
    for i in range(1, 4):
        write_letor(tmp_path / f"S{i}.txt", _tiny())
    code, out, _ = _run(str(tmp_path))
    assert code == 0
    assert out.count("\n  queries ") == 4  # three parts and the total
    assert "(all 3 parts)" in out and "critical pairs        9" in out


def test_fold_folder(tmp_path):
    for name in ("train", "vali", "test"):
        (tmp_path / "Fold1").mkdir(exist_ok=True)
        write_letor(tmp_path / "Fold1" / f"{name}.txt", _tiny())
    code, out, _ = _run(str(tmp_path))
    assert code == 0 and out.count("\n  queries ") == 3 and "Fold1/vali.txt" in out


def test_example():
    code, out, _ = _run("example")
    assert code == 0
    assert "documents             3,005" in out and "documents             768" in out
    assert "features              300" in out


@pytest.mark.parametrize("content, expected", [
    (None, "no such file or folder"),
    ("1 qid:1 1:1\n0 1:2\n", "line 2: this line has no qid:"),
    ("1 qid:1 1:x\n", "line 1: bad token '1:x'"),
    ("1 qid:1 1:1\n0 qid:1 99999999999:0.5\n", "line 2: bad token '99999999999:0.5': feature index"),
    ("1 qid:1 1:1\n0 qid:99999999999999999999 1:1\n", "line 2: query id 99999999999999999999 does not fit"),
    ("1 1:1\n0 1:2\n", "put qid:<id> on every line"),
])
def test_errors_are_one_line_exit_2(tmp_path, content, expected):
    path = tmp_path / "f.txt"
    if content is not None:
        path.write_text(content)
    code, out, err = _run(str(path))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("boostplug info: error: ") and expected in err


def test_not_a_letor_folder(tmp_path):
    code, _, err = _run(str(tmp_path))
    assert code == 2 and "not a LETOR folder" in err


def test_through_main(tmp_path, capsys):
    cli = pytest.importorskip("boostplug.cli")
    path = tmp_path / "tiny.txt"
    write_letor(path, _tiny())
    assert cli.main(["info", str(path)]) == 0
    assert "critical pairs        3" in capsys.readouterr().out
    assert cli.main(["info", str(tmp_path / "missing.txt")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "missing.txt: no such file or folder" in err


def test_closed_pipe_ends_quietly(tmp_path):
    """``boostplug info ... | head``: the reader leaves early; no traceback on stderr."""
    import subprocess
    import sys

    path = tmp_path / "tiny.txt"
    write_letor(path, _tiny())
    proc = subprocess.Popen([sys.executable, "-m", "boostplug.cli", "info", str(path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # the reader is gone before anything is written
    err = proc.stderr.read().decode()
    proc.wait(timeout=120)
    assert "Traceback" not in err and "BrokenPipeError" not in err, err
    assert proc.returncode == 141


@pytest.mark.realdata
def test_mq2008_s1(mq2008_dir: Path):
    code, out, _ = _run(str(mq2008_dir / "S1.txt"))
    assert code == 0 and "queries               157" in out and "documents             2,933" in out
