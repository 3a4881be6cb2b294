"""The docstring examples as tests (``--doctest-modules``, see pyproject.toml).

Only modules with examples are collected (the others have nothing to run, and collecting would
import them). A module whose examples need an optional extra is skipped when the extra is not
installed.

Names the examples use without defining them, built once from a small seeded data set:

* ``X, y, qid`` -- training rows, labels and query ids; ``Xv, yv, qid_v`` validation;
  ``Xt, yt, qid_t`` test (whole queries of :func:`boostplug.data.make_ranking`);
* ``scores, labels, group_ptr`` -- zero scores for the training queries, as the objectives see them;
* ``name, objective_params`` -- a boostplug objective name and its parameters.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from boostplug._extras import installed

_EXAMPLE = re.compile(r"^\s*>>>", re.MULTILINE)

#: Modules built on an optional extra (paths relative to this folder), with the packages it brings.
_EXTRAS = {
    "dask.py": ("dask", "distributed", "pandas"),
    "frameworks/dask": ("dask", "distributed", "pandas"),
    "compare/plots.py": ("matplotlib",),
    "compare/tuning.py": ("optuna",),
    "export/onnx.py": ("onnx", "onnxruntime"),
    "autodiff": ("jax",),
}


collect_ignore = [path for path, packages in _EXTRAS.items() if not all(map(installed, packages))]


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    if collection_path.suffix == ".py" and not _EXAMPLE.search(collection_path.read_text(encoding="utf-8")):
        return True
    return None


def _read_only(*arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    # The examples share these arrays: one that wrote into its input would change the next.
    for a in arrays:
        a.setflags(write=False)
    return arrays


def _example_names() -> dict[str, Any]:
    """The names the docstring examples take as given (see the module docstring)."""
    from boostplug.data import make_ranking, train_test_split_by_query

    data = make_ranking(n_queries=24, docs_per_query=(4, 12), n_features=8, seed=0)
    rest, test = train_test_split_by_query(data, test_size=0.25, seed=0)
    train, vali = train_test_split_by_query(rest, test_size=0.2, seed=0)
    names: dict[str, Any] = {"name": "mpboost", "objective_params": {"ddf": "logdd"}}
    for keys, part in ((("X", "y", "qid"), train), (("Xv", "yv", "qid_v"), vali), (("Xt", "yt", "qid_t"), test)):
        names.update(zip(keys, _read_only(np.array(part.X), np.array(part.y), np.array(part.qid))))
    names["scores"], names["labels"], names["group_ptr"] = _read_only(
        np.zeros(len(train.y)), np.array(train.y), np.array(train.group_ptr))
    return names


@pytest.fixture(scope="session", autouse=True)
def _doctest_names(doctest_namespace: dict[str, Any]) -> None:
    doctest_namespace.update(_example_names())
