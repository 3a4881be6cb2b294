"""A booster as bytes and back (boostplug.frameworks.model_bytes): what travels to Spark executors
and distributed workers predicts as the booster did, keeps its objective record, and bad input is
named."""

from __future__ import annotations

import textwrap

import lightgbm as lgb
import numpy as np
import pytest
import xgboost as xgb

from boostplug import lightgbm as bpl
from boostplug import xgboost as bpx
from boostplug.data import make_ranking
from boostplug.frameworks.model_bytes import booster_bytes, booster_from_bytes
from tests._child import run_child


@pytest.fixture(scope="module")
def data():
    return make_ranking(n_queries=12, docs_per_query=(4, 12), n_features=5, seed=3)


def test_lightgbm_round_trip_keeps_scores_and_record(data):
    obj = bpl.objective("mpboost")
    params = {"objective": obj, "num_leaves": 4, "verbose": -1, "num_threads": 1}
    booster = bpl.record_objective(lgb.train(params, bpl.dataset(data.X, data.y, group_ptr=data.group_ptr), 5), obj)
    kind, raw = booster_bytes(booster)
    assert kind == "lightgbm" and isinstance(raw, bytes)
    back = booster_from_bytes(kind, raw)
    np.testing.assert_array_equal(back.predict(data.X, raw_score=True), booster.predict(data.X, raw_score=True))
    assert bpl.objective_of(back).name == "mpboost"


def test_xgboost_round_trip_keeps_scores(data):
    dm = bpx.dmatrix(data.X, data.y, group_ptr=data.group_ptr)
    booster = xgb.train(bpx.params(max_depth=2, nthread=1), dm, 5, obj=bpx.objective("qbrank"))
    kind, raw = booster_bytes(booster)
    assert kind == "xgboost"
    back = booster_from_bytes(kind, raw)
    np.testing.assert_array_equal(back.predict(xgb.DMatrix(data.X), output_margin=True),
                                  booster.predict(xgb.DMatrix(data.X), output_margin=True))


def test_bad_input_is_named():
    with pytest.raises(TypeError, match="got dict"):
        booster_bytes({})
    with pytest.raises(ValueError, match="'catboost'"):
        booster_from_bytes("catboost", b"")
    with pytest.raises(ValueError, match="model string"):
        booster_from_bytes("lightgbm", b"tree\nversion=v4\n")


CUTS = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    from boostplug.frameworks.model_bytes import booster_from_bytes

    out = {}
    for kind, path in zip(sys.argv[1::2], sys.argv[2::2]):
        raw = Path(path).read_bytes()
        seen = out[kind] = {"refused": 0, "loaded": [], "wrong": []}
        for cut in range(len(raw) + 1):
            print(kind, cut, file=sys.stderr, flush=True)  # the last line names a cut that kills the process
            try:
                booster_from_bytes(kind, raw[:cut])
            except ValueError as e:
                if str(e).startswith(("the model bytes: not ", "the model string")):
                    seen["refused"] += 1
                else:
                    seen["wrong"].append([cut, str(e)])
                continue
            except Exception as e:
                seen["wrong"].append([cut, repr(e)])
                continue
            seen["loaded"].append(cut)
    print(json.dumps(out))
""")


def test_every_cut_point_of_a_payload_is_refused_with_a_value_error(data, tmp_path):
    """What a Spark RankerModel, a distributed worker's result or a ModelBytes loads goes through
    booster_from_bytes. Every cut of a small boostplug-trained model of each framework is refused
    with boostplug's ValueError (XGBoost's own reader aborts the process at the empty cut and
    segfaults or hangs on others; its XGBoostError is a ValueError too, hence the message is
    checked); in a child process with a time limit, so a crash or a hang fails this test."""
    obj = bpx.objective("ndcg_boost")
    dm = bpx.dmatrix(data.X, data.y, group_ptr=data.group_ptr)
    xgb_booster = bpx.record_objective(xgb.train(bpx.params(max_depth=2, nthread=1), dm, 3, obj=obj), obj)
    lobj = bpl.objective("mpboost")
    lgb_booster = bpl.record_objective(lgb.train({"objective": lobj, "num_leaves": 3, "verbose": -1, "num_threads": 1},
                                                 bpl.dataset(data.X, data.y, group_ptr=data.group_ptr), 2), lobj)
    args, raws = [], {}
    for booster in (xgb_booster, lgb_booster):
        kind, raw = booster_bytes(booster)
        raws[kind] = raw
        (tmp_path / kind).write_bytes(raw)
        args += [kind, str(tmp_path / kind)]
    out = run_child(CUTS, *args)
    assert out["xgboost"] == {"refused": len(raws["xgboost"]), "loaded": [len(raws["xgboost"])], "wrong": []}
    # LightGBM's text loads whole without its final newline; cut right after 'end of parameters'
    # (LightGBM's own writer's ending) it no longer matches the checksum its record carries
    n = len(raws["lightgbm"])
    assert out["lightgbm"] == {"refused": n - 1, "loaded": [n - 1, n], "wrong": []}


def test_bytes_that_are_no_model_are_named():
    with pytest.raises(ValueError, match=r"^the model bytes: not an XGBoost UBJSON model \(it starts with "
                                         r"b'\\x89PNG'"):
        booster_from_bytes("xgboost", b"\x89PNG")
    with pytest.raises(ValueError, match=r"^the model bytes: not a LightGBM text model \(byte 5 of 7 is not UTF-8"):
        booster_from_bytes("lightgbm", "tree\né".encode()[:-1] + b"\xff")  # é cut after its first byte
