"""What a new user meets first, on a fresh clone: the README's first example shows the output it
prints and says why `boostplug compare` reports other numbers, the README names the linear baselines,
and the objectives page's examples say what they give and leave nothing switched on or warning."""

from __future__ import annotations

import contextlib
import io
import re
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]


def _blocks(page: str, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", (ROOT / page).read_text(encoding="utf-8"), re.S | re.M)


def test_the_readme_shows_its_first_examples_output_and_names_the_linear_baselines() -> None:
    """On main the example printed numbers the page did not show (and command 1's differ), and the
    README named no linear baseline."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(_blocks("README.md", "python")[0], {})
    assert out.getvalue() == _blocks("README.md", "text")[0]
    assert "another protocol" in text and "linear-ridge" in text and "linear-ranksvm" in text


def test_the_objectives_page_says_the_defaults_and_its_xgboost_early_stopping_does_not_warn() -> None:
    """On main the defaults' comment left out 'hessian_floor': True, the err@10 block given maximize=True
    still warned to give it, and mlflow's autolog was left on for every later block."""
    import xgboost as xgb

    from boostplug import objectives
    from boostplug import xgboost as bpx
    from boostplug.data import make_ranking

    page = "docs/objectives/index.md"
    said = re.search(r"^obj\.defaults +# (\{.*\})$", (ROOT / page).read_text(encoding="utf-8"), re.M)
    assert said and said.group(1) == repr(objectives.get("mpboost").defaults)
    block = next(b for b in _blocks(page, "python") if 'bpx.metric("err@10")' in b)
    d, v = (make_ranking(n_queries=20, docs_per_query=(3, 9), n_features=6, seed=s) for s in (0, 1))
    names = {"X": d.X, "y": d.y, "qid": d.qid, "X_vali": v.X, "y_vali": v.y, "qid_vali": v.qid, "xgb": xgb, "bpx": bpx}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        exec(block, names)
    assert np.isfinite(names["dfit"].num_row())
    mlflow = next(b for b in _blocks(page, "python") if "mlflow.lightgbm.autolog()" in b)
    assert mlflow.rstrip().splitlines()[-1].startswith("mlflow.lightgbm.autolog(disable=True)")
