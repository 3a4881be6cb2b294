"""One SparkSession (``local[2]``, loopback only, UI off, quiet) for every Spark test of the run.

The tests skip, saying why, when pyspark or Java is absent: pyspark comes with the ``test`` and
``spark`` extras, Java from the system (Debian: ``apt-get install openjdk-17-jre-headless``)."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]


def _why_not() -> str | None:
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return "pyspark is not installed (pip install 'boostplug[spark]')"
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        return "no Java runtime for Spark (Debian: apt-get install openjdk-17-jre-headless)"
    return None


@pytest.fixture(scope="session")
def spark():
    why = _why_not()
    if why is not None:
        pytest.skip(why)
    from pyspark.sql import SparkSession

    # The executors' Python workers run this interpreter and import boostplug from this checkout, like the driver.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    session = (SparkSession.builder.master("local[2]").appName("boostplug-tests")
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "2").config("spark.default.parallelism", "2")
               .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.sql.execution.arrow.pyspark.enabled", "true")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def ranking():
    """40 queries of 4-12 documents; features rounded to one decimal, so that every feature has
    fewer distinct values than XGBoost's and LightGBM's bins (their histogram cuts are then exact,
    the same on one machine and on two workers)."""
    from boostplug.data import make_ranking

    data = make_ranking(n_queries=40, docs_per_query=(4, 12), n_features=6, n_informative=3, seed=3)
    data.X[:] = np.round(data.X, 1)
    return data


def frame(spark, data, *, vector: bool = True, weight=None, qid_offset: int = 0):
    """``data`` as a Spark DataFrame: ``features`` (a vector) or ``f0..`` columns, ``label``, ``qid``."""
    import pandas as pd

    cols = {f"f{j}": data.X[:, j] for j in range(data.X.shape[1])}
    pdf = pd.DataFrame({**cols, "label": data.y, "qid": data.qid + qid_offset})
    if weight is not None:
        pdf["w"] = weight
    df = spark.createDataFrame(pdf)
    if vector:
        from pyspark.ml.feature import VectorAssembler

        df = VectorAssembler(inputCols=list(cols), outputCol="features").transform(df).drop(*cols)
    return df


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.spark)
