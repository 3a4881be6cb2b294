"""XGBoost UBJSON models are checked before XGBoost parses them (boostplug/frameworks/xgboost/ubjson.py).

XGBoost 3.2's UBJSON reader trusts the lengths and counts it reads: some cuts of a model file
kill the process (SIGSEGV), others hang it. Every cut point of a real small model, loaded the
three ways boostplug loads one (``load_model``, ``objective_of(path)``, ``XGBRanker.load_model``
from a path or from bytes), must be refused with a ValueError naming the file and the byte, or
load the complete model; in a child process with a time limit, so that a hole in the check fails
the test instead of killing or hanging pytest.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest
import xgboost as xgb

from boostplug import xgboost as bpx
from boostplug.frameworks.xgboost.ubjson import parse_ubjson, looks_like_ubjson
from tests._child import run_child
from tests._helpers import fifo_in


def _model(path: Path) -> xgb.Booster:
    """A boostplug-trained model of 3 trees of depth 2, saved with its objective record."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 4))
    y = rng.integers(0, 3, 120).astype(float)
    obj = bpx.objective("ndcg_boost")
    booster = xgb.train({"max_depth": 2, "nthread": 1, "seed": 0}, bpx.dmatrix(X, y, qid=np.repeat(np.arange(12), 10)),
                        3, obj=obj)
    bpx.save_model(booster, path, objective=obj)
    return booster


CUTS = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    from boostplug import xgboost as bpx

    source, cut_path = Path(sys.argv[1]), Path(sys.argv[2])
    data = source.read_bytes()
    ways = [lambda p, b: bpx.load_model(p), lambda p, b: bpx.objective_of(p),
            lambda p, b: bpx.XGBRanker().load_model(p), lambda p, b: bpx.XGBRanker().load_model(bytearray(b))]
    out = {"refused": 0, "loaded": [], "wrong": []}
    for cut in range(len(data) + 1):
        cut_path.write_bytes(data[:cut])
        way = cut % len(ways)  # each way on a quarter of the cuts, all four on the complete file
        for w in (range(len(ways)) if cut == len(data) else [way]):
            print(cut, w, file=sys.stderr, flush=True)  # the last line names a cut that kills the process
            name = "the model bytes" if w == 3 else str(cut_path)
            try:
                ways[w](cut_path, data[:cut])
            except ValueError as e:
                if str(e).startswith(name + ": not a complete UBJSON model") and f"of {cut}" in str(e):
                    out["refused"] += 1
                else:
                    out["wrong"].append([cut, w, str(e)])
                continue
            except Exception as e:
                out["wrong"].append([cut, w, repr(e)])
                continue
            out["loaded"].append([cut, w])
    print(json.dumps(out))
""")


def test_every_cut_point_of_a_real_ubj_model_is_refused_or_loads_whole(tmp_path):
    source = tmp_path / "model.ubj"
    _model(source)
    data = source.read_bytes()
    assert looks_like_ubjson(data) and b"boostplug_objective" in data
    out = run_child(CUTS, str(source), str(tmp_path / "cut.ubj"))  # its stderr's last line: the cut and way
    assert out["wrong"] == []
    assert out["loaded"] == [[len(data), w] for w in range(4)]
    assert out["refused"] == len(data)


def test_the_check_names_the_offset_and_what_is_wrong(tmp_path):
    source = tmp_path / "model.ubj"
    booster = _model(source)
    data = source.read_bytes()
    parse_ubjson(data, "m")
    with pytest.raises(ValueError, match=r"^m: not a complete UBJSON model \(cut short or damaged\): a string "
                                         r"needs \d+ bytes, \d+ are left at byte \d+ of 100$"):
        parse_ubjson(data[:100], "m")
    with pytest.raises(ValueError, match=r"the closing '\}' needs 1 bytes, 0 are left at byte "
                                         rf"{len(data) - 1} of {len(data) - 1}$"):
        parse_ubjson(data[:-1], "m")
    with pytest.raises(ValueError, match=r"^m: not a complete UBJSON model: the outermost value ends at byte "
                                         rf"{len(data)}, but the data has {len(data) + 1} bytes$"):
        parse_ubjson(data + b"}", "m")
    # a key length damaged to a huge value, and a typed array's count beyond the data
    first_key = data.index(b"learner") - 8
    damaged = data[:first_key] + (2 ** 40).to_bytes(8, "big") + data[first_key + 8:]
    with pytest.raises(ValueError, match=r"a key needs 1099511627776 bytes, \d+ are left at byte 10 of"):
        parse_ubjson(damaged, "m")
    typed = data.index(b"[$")
    assert data[typed + 3:typed + 4] == b"#"
    count = data[typed + 4:typed + 5]
    width = {b"i": 1, b"U": 1, b"I": 2, b"l": 4, b"L": 8}[count]
    damaged = data[:typed + 5] + b"\x7f" * width + data[typed + 5 + width:]
    with pytest.raises(ValueError, match=r"(a typed array of|a container count of) \d+ "):
        parse_ubjson(damaged, "m")
    # a complete file loads and predicts as the booster it came from; JSON text cut short is refused
    # too (XGBoost's own error message for it is not valid UTF-8)
    X = np.random.default_rng(1).normal(size=(20, 4))
    assert np.array_equal(bpx.load_model(source).predict(xgb.DMatrix(X)), booster.predict(xgb.DMatrix(X)))
    text = tmp_path / "model.json"
    bpx.save_model(booster, text)
    assert not looks_like_ubjson(text.read_bytes())
    assert bpx.objective_of(text).name == "ndcg_boost"
    text.write_bytes(text.read_bytes()[:200])
    with pytest.raises(ValueError, match=rf"^{text}: not a complete JSON model \(cut short or damaged\): "
                                         r".*\(char \d+\)$"):
        bpx.load_model(text)


def test_a_file_that_is_no_model_or_no_file_is_named(tmp_path):
    """A binary file without .ubj gave XGBoost's error, whose quoted bytes are not UTF-8 (a
    UnicodeDecodeError naming no file); a FIFO blocked the read; /dev/null gave XGBoost's
    'cannot get file size'; a bytes path was XGBoost's TypeError."""
    source = tmp_path / "model.ubj"
    booster = _model(source)
    binary = tmp_path / "model.bin"
    binary.write_bytes(b"\xff\xfe\x00 not a model")
    for path in (binary, str(binary), bytes(binary)):
        with pytest.raises(ValueError, match=rf"^{binary}: not an XGBoost model: XGBoost reads JSON and UBJSON "
                                             r"models, which start with '\{', and this starts with b'\\xff\\xfe"):
            bpx.load_model(path)
    binary.write_bytes(b"")
    with pytest.raises(ValueError, match=rf"^{binary}: not an XGBoost model: .* and this is empty$"):
        bpx.objective_of(binary)
    with pytest.raises(ValueError, match=r"^/dev/null: a character device, not a model file$"):
        bpx.load_model("/dev/null")
    with fifo_in(tmp_path) as fifo, pytest.raises(ValueError, match=rf"^{fifo}: a FIFO, not a model file$"):
        bpx.load_model(fifo)  # it blocked until something wrote to the FIFO
    with pytest.raises(TypeError, match=r"expected a path \(str, bytes or os.PathLike\), got int \(47\)"):
        bpx.load_model(47)
    # a model under any name, and its path as bytes, still loads
    renamed = tmp_path / "model.bin"
    renamed.write_bytes(source.read_bytes())
    X = np.random.default_rng(1).normal(size=(20, 4))
    assert np.array_equal(bpx.load_model(bytes(renamed)).predict(xgb.DMatrix(X)), booster.predict(xgb.DMatrix(X)))
