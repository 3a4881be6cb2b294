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


@pytest.fixture(scope="session")
def click_pl(spark):
    """QBRank's P ∪ L as one process builds it and as a Spark frame.

    Click preferences counted from a Spark log of 30 queries (documents keyed by their row), the
    feature rows the pairs touch found by a Spark join, and 12 judged queries L of their own ids
    (``judged`` true, their labels in ``label``; the click rows' labels are 0 and unread). Returns
    ``(df, kw, ts)``: the frame (``f0..f4``, ``label``, ``qid``, ``doc``, ``judged``), QBRank's
    parameters with the keyed pairs, and ``clicks.training_set``'s one-process set."""
    import pandas as pd
    from pyspark.sql import functions as F

    from boostplug import clicks
    from boostplug.data import make_ranking

    data = make_ranking(n_queries=30, docs_per_query=(4, 10), n_features=5, n_informative=3, seed=7)
    judged = make_ranking(n_queries=12, docs_per_query=(4, 10), n_features=5, n_informative=3, seed=8)
    for d in (data, judged):
        d.X[:] = np.round(d.X, 1)
    log = clicks.simulate(data, scores=np.zeros(data.n_docs), n_sessions=400, seed=2).to_pandas()
    prefs = clicks.preferences(spark.createDataFrame(log))
    ts = clicks.training_set(clicks.to_rows(prefs, data.qid), data.X, data.group_ptr, labeled=judged)
    feats = [f"f{j}" for j in range(data.X.shape[1])]

    def rows(d, qid_offset, judged_rows):
        return pd.DataFrame({**{f: d.X[:, j] for j, f in enumerate(feats)}, "label": d.y, "qid": d.qid + qid_offset,
                             "doc": np.arange(d.n_docs), "judged": judged_rows})

    features = spark.createDataFrame(rows(data, 0, False).assign(label=0.0))
    pref_df = spark.createDataFrame(prefs.to_pandas())
    touched = (pref_df.select(F.col("query").alias("qid"), F.col("preferred").alias("doc"))
               .union(pref_df.select(F.col("query").alias("qid"), F.col("other").alias("doc"))).distinct())
    click_rows = features.join(touched, ["qid", "doc"], "left_semi")
    df = click_rows.unionByName(spark.createDataFrame(rows(judged, 1000, True))).orderBy("qid", "doc")
    kw = {"pairs": prefs.keyed(), "w": 0.5, "pair_tau": 1.0, "label_pairs": False}
    return df, kw, ts
