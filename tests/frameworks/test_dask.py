"""boostplug.dask: query-whole partitions, the split-query check, distributed training and evaluation.

Layout and evaluation tests run on Dask's synchronous scheduler; the training tests on a
``distributed.LocalCluster`` with two worker processes on loopback (module-scoped).
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("dask.dataframe")
pytest.importorskip("distributed")

import dask  # noqa: E402
import dask.array as da  # noqa: E402
import dask.dataframe as dd  # noqa: E402
import pandas as pd  # noqa: E402

from boostplug import dask as bpd  # noqa: E402
from boostplug.data import make_ranking  # noqa: E402
from boostplug.frameworks.dask import partition  # noqa: E402
from boostplug.groups import group_ptr_from_qid, sizes_from_group_ptr  # noqa: E402
from boostplug.metrics import by_name  # noqa: E402

pytestmark = pytest.mark.dask

FEATURES = [f"f{i}" for i in range(6)]


def _frame(n_queries: int, seed: int, docs: tuple[int, int] = (1, 25)) -> pd.DataFrame:
    d = make_ranking(n_queries, docs, n_features=len(FEATURES), n_informative=4, seed=seed)
    return pd.DataFrame(d.X, columns=FEATURES).assign(label=d.y, qid=d.qid * 7 + 3)


@pytest.fixture(autouse=True)
def _sync_scheduler():
    with dask.config.set(scheduler="sync"):
        yield


def _partitions(frame: dd.DataFrame) -> list[pd.DataFrame]:
    return [p.compute() for p in frame.partitions]


def _assert_query_whole(parts: list[pd.DataFrame]) -> None:
    seen: set = set()
    for part in parts:
        gp = group_ptr_from_qid(part["qid"].to_numpy())  # raises if not contiguous
        ids = set(part["qid"].to_numpy()[gp[:-1]].tolist())
        assert not (ids & seen)
        seen |= ids


# --------------------------------------------------------------------------- balanced cuts


def _brute_cuts(sizes: np.ndarray, k: int) -> list[int]:
    """Slow reference: for each j, the query boundary whose document count is nearest j*N/k
    (ties to the left), then pushed apart so that no partition is empty."""
    k = min(k, len(sizes))
    cum = [0]
    for s in sizes:
        cum.append(cum[-1] + int(s))
    cuts = [0]
    for j in range(1, k):
        target = cum[-1] * j / k
        best = min(range(1, len(sizes)), key=lambda b: (abs(cum[b] - target), b))
        cuts.append(best)
    cuts.append(len(sizes))
    for j in range(1, k):
        cuts[j] = max(cuts[j], cuts[j - 1] + 1)
    for j in range(k - 1, 0, -1):
        cuts[j] = min(cuts[j], cuts[j + 1] - 1)
    return cuts


@pytest.mark.parametrize("seed", range(6))
def test_balanced_cuts_match_brute_force_and_bound(seed: int) -> None:
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 40, size=int(rng.integers(2, 30)))
    for k in (1, 2, 3, 5, 40):
        cuts = partition._balanced_cuts(sizes.astype(np.int64), k)
        assert cuts.tolist() == _brute_cuts(sizes, k)
        assert np.all(np.diff(cuts) >= 1)
        kk = len(cuts) - 1
        if kk == k:  # enough queries: each partition is within one query of an even split
            docs = np.add.reduceat(sizes, cuts[:-1])
            assert np.all(np.abs(docs - sizes.sum() / k) <= 2 * sizes.max())


# --------------------------------------------------------------------------- repartition


def test_repartition_pandas_whole_queries_balanced_order_kept() -> None:
    df = _frame(60, seed=1)
    frame = bpd.repartition_by_query(df, npartitions=4)
    parts = _partitions(frame)
    assert len(parts) == 4
    _assert_query_whole(parts)
    out = pd.concat(parts, ignore_index=True)
    pd.testing.assert_frame_equal(out, df.reset_index(drop=True))  # already contiguous: nothing moves
    docs = np.array([len(p) for p in parts])
    assert np.all(np.abs(docs - len(df) / 4) <= 25)  # within one query (max 25 docs)


def test_repartition_pandas_regroups_scattered_rows_stably() -> None:
    df = _frame(20, seed=2)
    shuffled = df.sample(frac=1.0, random_state=0)
    parts = _partitions(bpd.repartition_by_query(shuffled, npartitions=3))
    _assert_query_whole(parts)
    out = pd.concat(parts, ignore_index=True)
    # Queries in order of first appearance, rows of a query in their input order.
    first = pd.unique(shuffled["qid"])
    expected = pd.concat([shuffled[shuffled["qid"] == q] for q in first], ignore_index=True)
    pd.testing.assert_frame_equal(out, expected)


def test_repartition_dask_shuffles_whole_queries_sorted_by_qid() -> None:
    df = _frame(40, seed=3)
    scattered = dd.from_pandas(df.sample(frac=1.0, random_state=1), npartitions=5)
    frame = bpd.repartition_by_query(scattered, npartitions=3)
    parts = _partitions(frame)
    assert len(parts) == 3
    _assert_query_whole(parts)
    out = pd.concat(parts, ignore_index=True)
    expected = scattered.compute().sort_values("qid", kind="stable").reset_index(drop=True)
    pd.testing.assert_frame_equal(out, expected)
    sizes = df.groupby("qid").size().to_numpy()
    assert [len(p) for p in parts] == np.add.reduceat(sizes, partition._balanced_cuts(sizes, 3)[:-1]).tolist()


def test_repartition_more_partitions_than_queries_and_one_row_tail() -> None:
    df = pd.DataFrame({"qid": ["b", "b", "b", "a"], "label": [0.0, 1.0, 0.0, 1.0], "f0": [1.0, 2.0, 3.0, 4.0]})
    parts = _partitions(bpd.repartition_by_query(df, npartitions=9))
    assert [p["qid"].tolist() for p in parts] == [["b", "b", "b"], ["a"]]


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "2"])
def test_repartition_rejects_bad_npartitions(bad: object) -> None:
    with pytest.raises((TypeError, ValueError), match="npartitions must be an integer >= 1"):
        bpd.repartition_by_query(_frame(5, seed=0), npartitions=bad)  # type: ignore[arg-type]


def test_repartition_rejects_bad_inputs() -> None:
    with pytest.raises(ValueError, match="no query-id column 'query'"):
        bpd.repartition_by_query(_frame(5, seed=0), qid_col="query", npartitions=2)
    with pytest.raises(TypeError, match="pandas or Dask DataFrame"):
        bpd.repartition_by_query(np.zeros((4, 2)), npartitions=2)
    with pytest.raises(ValueError, match="empty frame"):
        bpd.repartition_by_query(_frame(5, seed=0).iloc[:0], npartitions=2)


# --------------------------------------------------------------------------- check


def test_check_partitions_layout() -> None:
    df = _frame(30, seed=4)
    frame = bpd.repartition_by_query(df, npartitions=3)
    layout = bpd.check_partitions(frame)
    gp = group_ptr_from_qid(df["qid"].to_numpy())
    assert layout.docs_per_partition.sum() == len(df)
    assert layout.queries_per_partition.sum() == gp.shape[0] - 1
    local = np.concatenate([layout.group_sizes(i) for i in range(3)])
    assert local.tolist() == sizes_from_group_ptr(gp).tolist()
    assert np.concatenate(layout.first_qids).tolist() == df["qid"].to_numpy()[gp[:-1]].tolist()
    assert layout.query_offsets.tolist() == [0, *np.cumsum(layout.queries_per_partition)[:-1].tolist()]
    # A qid Series or a 1-D array with the same chunks gives the same layout.
    arr = frame["qid"].to_dask_array(lengths=True)
    for qid in (frame["qid"], arr):
        again = bpd.check_partitions(qid)
        assert [g.tolist() for g in again.group_ptrs] == [g.tolist() for g in layout.group_ptrs]


def test_check_partitions_fires_on_split_query() -> None:
    df = pd.DataFrame({"qid": [5, 5, 5, 6, 6, 6], "label": [0.0, 1, 2, 0, 1, 0], "f0": np.arange(6.0)})
    bad = dd.from_pandas(df, npartitions=2, sort=False)  # rows 0-2 | 3-5 is fine ...
    bpd.check_partitions(bad)
    bad = dd.from_pandas(df, npartitions=1).repartition(divisions=[0, 2, 5])  # ... rows 0-1 | 2-5 is not
    with pytest.raises(ValueError, match=r"query 5 is split between partitions 0 and 1.*repartition_by_query"):
        bpd.check_partitions(bad)


def test_check_partitions_fires_on_noncontiguous_query_in_a_partition() -> None:
    df = pd.DataFrame({"qid": [1, 1, 2, 1], "label": [0.0, 1, 1, 0], "f0": np.arange(4.0)})
    with pytest.raises(ValueError, match=r"query 1 is not contiguous inside partition 0.*repartition_by_query"):
        bpd.check_partitions(dd.from_pandas(df, npartitions=1))


def test_check_partitions_names_a_missing_query_id_by_partition_and_row() -> None:
    # it said "qid must be finite; row 2 has qid nan", a row number that did not say it counted within a partition
    df = pd.DataFrame({"qid": [5.0, 5, 6, np.nan, 6, 7], "label": [0.0, 1, 2, 0, 1, 0], "f0": np.arange(6.0)})
    bad = dd.from_pandas(df, npartitions=2, sort=False)  # rows 0-2 | 3-5
    with pytest.raises(ValueError, match=r"^1 rows have a missing query id \(NaN or None\) in column 'qid', the first "
                                         r"in partition 1 at its row 0 \(counting from 0 within the partition: "
                                         r"frame.partitions\[1\]\); every row needs its query's id$"):
        bpd.check_partitions(bad)
    with pytest.raises(ValueError, match=r"in partition 0 at its row 1 "):
        bpd.check_partitions(dd.from_pandas(df.assign(qid=[5, None, 6, 6, 6, 7]).astype({"qid": object}),
                                            npartitions=1))


def test_check_partitions_rejects_bad_types() -> None:
    with pytest.raises(TypeError, match="Dask DataFrame"):
        bpd.check_partitions(np.array([1, 1, 2]))
    with pytest.raises(ValueError, match="one-dimensional"):
        bpd.check_partitions(da.zeros((4, 2), chunks=2))
    with pytest.raises(ValueError, match="no query-id column 'qid'"):
        bpd.check_partitions(dd.from_pandas(pd.DataFrame({"q": [1]}), npartitions=1))


def test_dense_qid_sorted_codes_in_partition_order() -> None:
    df = _frame(25, seed=5)
    shuffled = df.sample(frac=1.0, random_state=3)
    frame = bpd.repartition_by_query(shuffled, npartitions=3)
    layout = bpd.check_partitions(frame)
    codes = bpd.dense_qid(frame, layout).compute().to_numpy()
    qid = frame["qid"].compute().to_numpy()
    gp = group_ptr_from_qid(qid)
    assert codes.tolist() == np.repeat(np.arange(gp.shape[0] - 1), np.diff(gp)).tolist()


def test_lightgbm_group_chunks_follow_partitions() -> None:
    frame = bpd.repartition_by_query(_frame(25, seed=6), npartitions=3)
    layout = bpd.check_partitions(frame)
    group = bpd.lightgbm_group(layout)
    assert group.chunks == (tuple(layout.queries_per_partition.tolist()),)
    for i, block in enumerate(group.to_delayed().ravel()):
        assert block.compute().sum() == layout.docs_per_partition[i]


# --------------------------------------------------------------------------- arrays


def test_from_arrays_one_partition_per_row_chunk_of_x() -> None:
    df = _frame(12, seed=8)
    gp = group_ptr_from_qid(df["qid"].to_numpy())
    rows = tuple(np.diff(gp[[0, 4, 5, 12]]).tolist())  # chunk edges on query boundaries
    X = da.from_array(df[FEATURES].to_numpy(), chunks=(rows, 2))  # several column chunks too
    y = df["label"].to_numpy()  # NumPy label, Dask qid with other chunks: both follow X
    qid = da.from_array(df["qid"].to_numpy(), chunks=7)
    frame = bpd.from_arrays(X, y, qid, feature_names=FEATURES)
    parts = _partitions(frame)
    assert [len(p) for p in parts] == list(rows)
    pd.testing.assert_frame_equal(pd.concat(parts), df, check_index_type=False)
    layout = bpd.check_partitions(frame)
    assert layout.queries_per_partition.tolist() == [4, 1, 7]
    assert frame[FEATURES].to_dask_array(lengths=True).compute().shape == (len(df), len(FEATURES))
    # Chunks that cut a query: the check names it; repartitioning fixes it.
    cut = int(gp[3]) + 1
    bad = bpd.from_arrays(da.from_array(df[FEATURES].to_numpy(), chunks=((cut, len(df) - cut), 6)), y, qid)
    q3 = df["qid"].to_numpy()[gp[3]]
    with pytest.raises(ValueError, match=rf"query {q3} is split between partitions 0 and 1"):
        bpd.check_partitions(bad)
    _assert_query_whole(_partitions(bpd.repartition_by_query(bad, npartitions=2)))


def test_from_arrays_rejects_bad_inputs() -> None:
    X = da.zeros((6, 2), chunks=3)
    y, qid = np.zeros(6), np.repeat([1, 2], 3)
    with pytest.raises(TypeError, match="X as a 2-D Dask array, got ndarray"):
        bpd.from_arrays(np.zeros((6, 2)), y, qid)
    with pytest.raises(ValueError, match=r"X must be two-dimensional, got shape \(6,\)"):
        bpd.from_arrays(da.zeros(6, chunks=3), y, qid)
    with pytest.raises(ValueError, match="X has unknown chunk sizes"):
        bpd.from_arrays(X[X[:, 0] == 0], y, qid)
    with pytest.raises(ValueError, match="y has 5 rows but X has 6"):
        bpd.from_arrays(X, np.zeros(5), qid)
    with pytest.raises(ValueError, match=r"qid must be one-dimensional, got shape \(6, 1\)"):
        bpd.from_arrays(X, y, qid.reshape(-1, 1))
    with pytest.raises(ValueError, match="3 feature names for 2 columns"):
        bpd.from_arrays(X, y, qid, feature_names=["a", "b", "c"])
    with pytest.raises(ValueError, match="column names must be distinct"):
        bpd.from_arrays(X, y, qid, feature_names=["a", "qid"])


# --------------------------------------------------------------------------- evaluation


def test_evaluate_matches_single_machine_metrics() -> None:
    df = _frame(40, seed=7)
    df.loc[df["qid"] == df["qid"].iloc[0], "label"] = 0.0  # an all-zero query
    frame = bpd.repartition_by_query(df, npartitions=3)
    rng = np.random.default_rng(0)
    scores_np = np.round(rng.normal(size=len(df)), 1)  # ties
    scores = da.from_array(scores_np, chunks=(tuple(bpd.check_partitions(frame).docs_per_partition.tolist()),))
    names = ["ndcg@10", "map@5", "p@3", "mrr", "err@10"]
    out = bpd.evaluate(scores, frame, names, per_query=True)
    gp = group_ptr_from_qid(df["qid"].to_numpy())
    y = df["label"].to_numpy()
    for name in names:
        assert out[name] == pytest.approx(by_name(name)(scores_np, y, gp), rel=1e-12, abs=1e-12)
        expected = by_name(name)(scores_np, y, gp, per_query=True)
        np.testing.assert_array_equal(out["per_query"][name].to_numpy(), expected)
    assert out["per_query"]["qid"].tolist() == df["qid"].to_numpy()[gp[:-1]].tolist()
    # Scores as a Dask Series aligned with the frame work too.
    series = frame.map_partitions(lambda p: pd.Series(np.arange(len(p), dtype=float)[::-1], index=p.index),
                                  meta=("s", "f8"))
    got = bpd.evaluate(series, frame, "ndcg@10")
    assert set(got) == {"ndcg@10"}


def test_evaluate_fires_on_split_query_and_bad_inputs() -> None:
    df = pd.DataFrame({"qid": [5, 5, 5, 6], "label": [0.0, 1, 2, 1], "f0": np.arange(4.0)})
    bad = dd.from_pandas(df, npartitions=1).repartition(divisions=[0, 2, 3])
    scores = da.from_array(np.arange(4.0), chunks=2)
    with pytest.raises(ValueError, match="split between partitions 0 and 1"):
        bpd.evaluate(scores, bad, ["ndcg@10"])
    good = bpd.repartition_by_query(df, npartitions=1)
    with pytest.raises(ValueError, match="averages over critical pairs"):
        bpd.evaluate(da.from_array(np.arange(4.0), chunks=4), good, ["r2"])
    with pytest.raises(ValueError, match="unknown metric name"):
        bpd.evaluate(da.from_array(np.arange(4.0), chunks=4), good, ["nope@3"])
    with pytest.raises(ValueError, match="scores have 2 partitions but the frame has 1"):
        bpd.evaluate(scores, good, ["ndcg@10"])
    with pytest.raises(ValueError, match="partition 0: 3 scores for 4 rows"):
        bpd.evaluate(da.from_array(np.arange(3.0), chunks=3), good, ["ndcg@10"])
    with pytest.raises(TypeError, match="Dask Series or Dask array"):
        bpd.evaluate(np.arange(4.0), good, ["ndcg@10"])


# --------------------------------------------------------------------------- distributed training


@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster

    with dask.config.set(scheduler=None):
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                               host="127.0.0.1")
        with Client(cluster) as c:
            yield c
        cluster.close()


@pytest.fixture(scope="module")
def split_data():
    """~35k documents: 1400 training queries on two partitions, 600 test queries."""
    d = make_ranking(2000, (5, 30), n_features=10, n_informative=5, seed=3)
    cols = [f"f{i}" for i in range(10)]
    df = pd.DataFrame(d.X, columns=cols).assign(label=d.y, qid=d.qid)
    train = df["qid"] < 1400
    return cols, df[train], df[~train]


def _test_ndcg(scores: np.ndarray, test: pd.DataFrame) -> float:
    return float(by_name("ndcg@10")(scores, test["label"].to_numpy(), group_ptr_from_qid(test["qid"].to_numpy())))


def _on_both_workers(client, frame):
    """``frame`` (two partitions) with partition i held by worker i: the comparison with one machine
    means something only when the partitions really are on two workers (one worker trains exactly
    the local model), and the scheduler, left to itself, may put both on one worker on a busy machine."""
    from distributed import wait

    workers = sorted(client.scheduler_info()["workers"])
    assert frame.npartitions == 2 == len(workers), (frame.npartitions, workers)
    placed = dd.concat([client.persist(frame.get_partition(i), workers=[w], allow_other_workers=False)
                        for i, w in enumerate(workers)])
    wait(placed)
    holders = [h for hs in client.who_has(placed).values() for h in hs]
    assert len(set(holders)) == 2, holders
    return placed


@pytest.fixture
def distributed_scheduler(client):
    with dask.config.set(scheduler=client):
        yield client


def test_lightgbm_distributed_matches_single_machine(distributed_scheduler, split_data) -> None:
    import lightgbm as lgb

    from boostplug.lightgbm import sklearn_objective

    client = distributed_scheduler
    cols, train, test = split_data
    frame = bpd.repartition_by_query(train, npartitions=2).persist()
    frame = _on_both_workers(client, frame)
    params = dict(n_estimators=40, learning_rate=0.1, num_leaves=15, min_child_samples=20, verbose=-1)
    ranker = bpd.train_lightgbm(client, frame, "mpboost", objective_params={"ddf": "logdd"}, **params)
    gp = group_ptr_from_qid(train["qid"].to_numpy())
    local = lgb.LGBMRanker(objective=sklearn_objective("mpboost", ddf="logdd"), **params)
    local.fit(train[cols], train["label"], group=sizes_from_group_ptr(gp))
    dist_ndcg = _test_ndcg(ranker.to_local().predict(test[cols]), test)
    local_ndcg = _test_ndcg(local.predict(test[cols]), test)
    assert dist_ndcg > 0.7
    assert abs(dist_ndcg - local_ndcg) <= 0.005
    # Distributed evaluation on the workers equals the local metric of the same scores.
    test_frame = bpd.repartition_by_query(test, npartitions=2).persist()
    scores = ranker.predict(test_frame[cols])
    got = bpd.evaluate(scores, test_frame, ["ndcg@10"], client=client)
    assert got["ndcg@10"] == pytest.approx(dist_ndcg, abs=1e-9)


def test_xgboost_distributed_matches_single_machine(distributed_scheduler, split_data) -> None:
    import xgboost as xgb
    import xgboost.dask as xgb_dask

    from boostplug import xgboost as bpx

    client = distributed_scheduler
    cols, train, test = split_data
    # Scattered rows, regrouped by the Dask shuffle path.
    scattered = dd.from_pandas(train.sample(frac=1.0, random_state=0), npartitions=3)
    frame = bpd.repartition_by_query(scattered, npartitions=2).persist()
    frame = _on_both_workers(client, frame)
    xparams = dict(max_depth=4, eta=0.1, min_child_weight=1.0)
    out = bpd.train_xgboost(client, frame, "ndcg_boost", params=xparams, num_boost_round=40)
    local = xgb.train(bpx.params(**xparams), bpx.dmatrix(train[cols], train["label"].to_numpy(),
                                                          qid=train["qid"].to_numpy()),
                      40, obj=bpx.objective("ndcg_boost"))
    dtest = xgb.DMatrix(test[cols])
    dist_ndcg = _test_ndcg(out["booster"].predict(dtest), test)
    local_ndcg = _test_ndcg(local.predict(dtest), test)
    assert dist_ndcg > 0.7
    assert abs(dist_ndcg - local_ndcg) <= 0.005
    test_frame = bpd.repartition_by_query(test, npartitions=2).persist()
    scores = xgb_dask.predict(client, out["booster"], test_frame[cols])
    got = bpd.evaluate(scores, test_frame, ["ndcg@10"], client=client)
    assert got["ndcg@10"] == pytest.approx(dist_ndcg, abs=1e-9)


@pytest.mark.parametrize("framework", ["lightgbm", "xgboost"])
def test_training_refuses_a_split_query(distributed_scheduler, split_data, framework: str) -> None:
    client = distributed_scheduler
    _, train, _ = split_data
    rows = train.iloc[:3000].reset_index(drop=True)
    gp = group_ptr_from_qid(rows["qid"].to_numpy())
    cut = int(gp[40]) + 2  # inside query 40 (every query has >= 5 documents)
    bad = dd.from_pandas(rows, npartitions=1).repartition(divisions=[0, cut, len(rows) - 1])
    train_fn = bpd.train_lightgbm if framework == "lightgbm" else bpd.train_xgboost
    with pytest.raises(ValueError, match=r"split between partitions 0 and 1.*repartition_by_query"):
        train_fn(client, bad, "rankboost")


@pytest.mark.parametrize("name", ["early_stopping_rounds", "early_stopping_round", "n_iter_no_change"])
def test_train_lightgbm_refuses_early_stopping_before_training(name: str) -> None:
    """LightGBM's Dask interface has no early stopping: the training failed inside LightGBM ("For early stopping, at
    least one dataset and eval metric is required"); refused in one line before any work, naming the alternatives."""
    data = make_ranking(n_queries=4, docs_per_query=5, n_features=3, n_informative=3, seed=0)
    frame = dd.from_pandas(pd.DataFrame(data.X, columns=["a", "b", "c"]).assign(label=data.y, qid=data.qid),
                           npartitions=1)
    with pytest.raises(ValueError, match=rf"cannot stop early.*{name}=10.*train_xgboost") as e:
        bpd.train_lightgbm(None, frame, "lambdarank", n_estimators=20, **{name: 10})
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("framework, params, want", [("lightgbm", {}, 1), ("xgboost", {}, 1),
                                                     ("xgboost", {"nthread": 2}, 2), ("lightgbm", {"n_jobs": 2}, 1)])
def test_worker_kernels_run_on_the_workers_threads(distributed_scheduler, split_data, framework, params,
                                                   want) -> None:
    """Each worker's objective runs its kernels with the count the framework's Dask code trains
    with: the worker's thread count (1 here), or XGBoost's ``nthread`` when the parameters set one
    (lightgbm.dask always takes the worker's). boostplug hands the objective that count (the
    frameworks hand it none); nothing is set in the workers' environment."""

    def patch() -> None:
        import numba

        from boostplug.objectives import _contract

        seen: list[int] = []
        original = _contract.Loss.grad_hess

        def recording(self, scores):
            seen.append(numba.get_num_threads())
            return original(self, scores)

        _contract.Loss.grad_hess = recording
        _contract._thread_probe = (original, seen)

    def collect() -> tuple[list[int], str | None]:
        import os

        from boostplug.objectives import _contract

        original, seen = _contract._thread_probe
        _contract.Loss.grad_hess = original
        del _contract._thread_probe
        return sorted(set(seen)), os.environ.get("NUMBA_NUM_THREADS")

    _, train, _ = split_data
    client = distributed_scheduler
    frame = bpd.repartition_by_query(train.iloc[:4000], npartitions=2).persist()
    client.run(patch)
    try:
        if framework == "lightgbm":
            bpd.train_lightgbm(client, frame, "rankboost", n_estimators=3, verbose=-1, **params)
        else:
            bpd.train_xgboost(client, frame, "rankboost", num_boost_round=3, params=params)
    finally:
        seen = client.run(collect)
    assert set(map(str, seen.values())) == {str(([want], None))}


def test_repartition_from_pandas_scatters_balanced_partitions(client, split_data) -> None:
    _, train, _ = split_data
    # The autouse fixture chose the sync scheduler: the running client is not used unasked.
    assert partition._active_client(None) is None
    frame = bpd.repartition_by_query(train, npartitions=4, client=client)
    from distributed import wait

    wait(frame)  # persisted: only aliases of the scattered pieces are left to run
    holders = list(client.who_has(frame).values())  # one entry per partition
    assert len(holders) == 4 and all(len(h) == 1 for h in holders)
    workers = [h[0] for h in holders]
    assert sorted(workers.count(w) for w in set(workers)) == [2, 2]  # spread, not piled on one worker
    with dask.config.set(scheduler=client):
        assert partition._active_client(None) is client
        assert bpd.repartition_by_query(train).npartitions == 2  # default: one per worker
        parts = _partitions(frame)
        _assert_query_whole(parts)
        pd.testing.assert_frame_equal(pd.concat(parts, ignore_index=True), train.reset_index(drop=True))
        sizes = train.groupby("qid", sort=False).size().to_numpy()
        assert [len(p) for p in parts] == np.add.reduceat(sizes, partition._balanced_cuts(sizes, 4)[:-1]).tolist()
        assert frame["qid"].to_dask_array(lengths=True).compute().shape == (len(train),)


def test_xgboost_from_dask_arrays_equals_from_frame(distributed_scheduler, split_data) -> None:
    import xgboost as xgb

    client = distributed_scheduler
    cols, train, test = split_data
    frame = bpd.repartition_by_query(train, npartitions=2)
    # Arrays cut from the frame's partitions stay on the same workers: XGBoost then merges the
    # same per-worker quantile sketches, so the two models must be identical (two partitions on
    # two workers vs both on one worker already give different bins).
    X = frame[cols].to_dask_array(lengths=True)
    y = frame["label"].to_dask_array(lengths=True)
    qid = frame["qid"].to_dask_array(lengths=True)
    assert X.chunks[0] == tuple(bpd.check_partitions(frame).docs_per_partition.tolist())
    arrays = bpd.from_arrays(X, y, qid, feature_names=cols).persist()
    xparams = dict(max_depth=3, eta=0.3)
    dtest = xgb.DMatrix(test[cols])
    preds = [bpd.train_xgboost(client, f, "qbrank", params=xparams, num_boost_round=5)["booster"].predict(dtest)
             for f in (frame, arrays)]
    np.testing.assert_allclose(preds[0], preds[1], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("framework", ["lightgbm", "xgboost"])
def test_training_refuses_explicit_row_index_pairs(client, framework: str) -> None:
    frame = bpd.repartition_by_query(_frame(10, seed=9), npartitions=2)
    train_fn = bpd.train_lightgbm if framework == "lightgbm" else bpd.train_xgboost
    with pytest.raises(ValueError, match=r"objective_params\['pairs'\] holds row indices.*label_pairs=True"):
        train_fn(client, frame, "qbrank", objective_params={"pairs": np.array([[0, 1]])})


# --------------------------------------------------------------------------- keyed click pairs


@pytest.fixture(scope="module")
def click_data():
    """Click pairs keyed by (query, document) on 300 training queries, documents named by their
    position in the query (so a key means nothing without its query), features rounded to one
    decimal (fewer distinct values than bins: every worker's quantile cuts are the one-process
    cuts), and one pair of a query that has no row, which every path leaves out."""
    from boostplug import clicks
    from boostplug.groups import index_within_query
    from boostplug.keyed_pairs import KeyedPairs

    d = make_ranking(500, (5, 20), n_features=6, n_informative=4, seed=11)
    cols = [f"f{i}" for i in range(6)]
    doc = index_within_query(d.group_ptr)
    df = pd.DataFrame(np.round(d.X, 1), columns=cols).assign(label=d.y, qid=d.qid, doc=doc)
    train, test = df[df["qid"] < 300], df[df["qid"] >= 300]
    log = clicks.simulate(d, scores=np.zeros(d.n_docs), n_sessions=3000, seed=2).to_pandas()
    log = log[log["query"] < 300].assign(doc=lambda t: doc[t["doc"].to_numpy()])
    kp = clicks.preferences(log).keyed()
    assert kp.n_pairs > 500 and kp.weight is not None
    kp = KeyedPairs(np.append(kp.query, 10_000), np.append(kp.better, 0), np.append(kp.worse, 1),
                    np.append(kp.weight, 1.0))
    return cols, train, test, {"pairs": kp, "w": 0.5}


def _worker_gradients_patch() -> None:
    """Record, in this worker, the labels and the first gradient and Hessian of every objective bound here."""
    from boostplug.objectives import _loss

    seen: list = []
    original = _loss.Loss.grad_hess

    def recording(self, scores):
        g, h = original(self, scores)
        seen.append((np.array(self.labels), np.array(scores), g.copy(), h.copy()))
        return g, h

    _loss.Loss.grad_hess = recording
    _loss._gradient_probe = (original, seen)


def _worker_gradients_collect() -> list:
    from boostplug.objectives import _loss

    original, seen = _loss._gradient_probe
    _loss.Loss.grad_hess = original
    del _loss._gradient_probe
    return seen


def test_lightgbm_keyed_click_pairs_each_worker_gets_its_rows_pairs(distributed_scheduler, click_data) -> None:
    """Each worker's objective gets exactly the pairs whose rows it holds: its first-round gradients
    are the one-process gradients (same keyed pairs, same click weights) of its rows; and the model
    is within noise of the one-process model."""
    import lightgbm as lgb

    from boostplug import lightgbm as bpl

    client = distributed_scheduler
    cols, train, test, kw = click_data
    frame = bpd.repartition_by_query(train, npartitions=2).persist()
    frame = _on_both_workers(client, frame)
    params = dict(learning_rate=0.1, num_leaves=15, min_child_samples=20, verbose=-1)
    client.run(_worker_gradients_patch)
    try:
        booster = bpd.train_lightgbm(client, frame, "qbrank", objective_params=kw, doc_col="doc", n_estimators=30,
                                     **params)
    finally:
        seen = client.run(_worker_gradients_collect)
    y, qid, doc = train["label"].to_numpy(), train["qid"].to_numpy(), train["doc"].to_numpy()
    dtrain = bpl.dataset(train[cols].to_numpy(), y, qid=qid, doc=doc, params={"verbose": -1}).construct()
    obj = bpl.objective("qbrank", **kw)
    ref_g, ref_h = obj(np.zeros(len(train)), dtrain)
    starts = np.concatenate(([0], np.cumsum(bpd.check_partitions(frame).docs_per_partition)))
    assert len(seen) == 2
    matched = []
    for calls in seen.values():
        labels, scores, g, h = calls[0]
        assert not scores.any()  # the first round starts from zero scores, as in one process
        part = next(p for p in range(2) if np.array_equal(labels, y[starts[p]:starts[p + 1]]))
        matched.append(part)
        np.testing.assert_allclose(g, ref_g[starts[part]:starts[part + 1]], rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(h, ref_h[starts[part]:starts[part + 1]], rtol=1e-12, atol=1e-15)
    assert sorted(matched) == [0, 1]
    local = lgb.train({**params, "objective": obj}, bpl.dataset(train[cols].to_numpy(), y, qid=qid, doc=doc), 30)
    dist_ndcg, local_ndcg = (_test_ndcg(b.predict(test[cols].to_numpy()), test) for b in (booster, local))
    assert dist_ndcg > 0.7
    assert abs(dist_ndcg - local_ndcg) <= 0.01
    assert bpl.objective_of(booster).params_with(pairs=kw["pairs"])["pairs"] is kw["pairs"]


def test_xgboost_keyed_click_pairs_equal_one_process(distributed_scheduler, click_data) -> None:
    """XGBoost's workers reduce their histograms exactly and, with fewer distinct feature values
    than bins, cut the features where one process does: the trees are the one-process trees, and
    the predictions agree to float32 rounding of the leaf sums."""
    import xgboost as xgb

    from boostplug import xgboost as bpx

    client = distributed_scheduler
    cols, train, test, kw = click_data
    frame = bpd.repartition_by_query(train, npartitions=2).persist()
    frame = _on_both_workers(client, frame)
    xparams = dict(max_depth=3, eta=0.3)
    out = bpd.train_xgboost(client, frame, "qbrank", objective_params=kw, params=xparams, num_boost_round=10,
                            doc_col="doc")
    ref = xgb.train(bpx.params(**xparams), bpx.dmatrix(train[cols], train["label"].to_numpy(),
                                                       qid=train["qid"].to_numpy(), doc=train["doc"].to_numpy()),
                    10, obj=bpx.objective("qbrank", **kw))
    dtest = xgb.DMatrix(test[cols])
    np.testing.assert_allclose(out["booster"].predict(dtest), ref.predict(dtest), rtol=1e-5, atol=1e-6)
    assert bpx.objective_of(out["booster"]).params_with(pairs=kw["pairs"])["pairs"] is kw["pairs"]


@pytest.mark.parametrize("framework", ["lightgbm", "xgboost"])
def test_keyed_training_refusals(client, click_data, framework: str) -> None:
    cols, train, _, kw = click_data
    rows = train.iloc[:400]
    frame = bpd.repartition_by_query(rows, npartitions=2)
    train_fn = bpd.train_lightgbm if framework == "lightgbm" else bpd.train_xgboost
    with pytest.raises(ValueError, match=r"objective_params\['pairs'\] is a KeyedPairs table.*pass doc_col="):
        train_fn(client, frame, "qbrank", objective_params=kw)
    with pytest.raises(ValueError, match=r"no document-key column doc_col='document'"):
        train_fn(client, frame, "qbrank", objective_params=kw, doc_col="document")
    with pytest.raises(ValueError, match=r"doc_col='qid' is also the query-id column"):
        train_fn(client, frame, "qbrank", objective_params=kw, doc_col="qid")
    with pytest.raises(ValueError, match=r"doc_col='f0' is also in feature_cols"):
        train_fn(client, frame, "qbrank", objective_params=kw, doc_col="f0", feature_cols=cols)
    cut = int(group_ptr_from_qid(rows["qid"].to_numpy())[1]) + 2  # inside the second query (>= 5 documents)
    split = dd.from_pandas(rows.reset_index(drop=True), npartitions=1).repartition(divisions=[0, cut, len(rows) - 1])
    with pytest.raises(ValueError, match=r"split between partitions 0 and 1"):
        train_fn(client, split, "qbrank", objective_params=kw, doc_col="doc")
    from boostplug.keyed_pairs import KeyedPairs

    q0 = rows["qid"].iloc[0]
    with pytest.raises(ValueError, match=rf"on partition 0 .*query {q0} has rows here but none with better document 99"):
        train_fn(client, frame, "qbrank", objective_params={"pairs": KeyedPairs([q0], [99], [0])}, doc_col="doc")
    # A worker's rows with a repeated (qid, doc): the join would be ambiguous, as in one process.
    twice = rows.assign(doc=np.where(np.arange(len(rows)) == 1, rows["doc"].iloc[0], rows["doc"]))
    with pytest.raises(ValueError, match=r"same \(qid, doc\)"):
        train_fn(client, bpd.repartition_by_query(twice, npartitions=2), "qbrank", objective_params=kw, doc_col="doc",
                 **({"n_estimators": 2} if framework == "lightgbm" else {"num_boost_round": 2}))


@pytest.mark.parametrize("framework, kw", [("lightgbm", {"doc_col": "doc", "n_estimators": 20}),
                                           ("xgboost", {"num_boost_round": 20})],
                         ids=["keyed-lightgbm", "xgboost.dask"])
def test_a_worker_that_dies_while_training_is_named(monkeypatch, framework: str, kw: dict) -> None:
    """A worker killed while training, on boostplug's own keyed path (LightGBM) and through xgboost.dask:
    the error names the worker that left, not only the survivor's broken connection ("Socket recv
    error", XGBoost's "Ring allreduce failed") or Dask's "FutureCancelledError ... already forgotten".
    A cluster of its own (the nanny's restart of the killed worker is not waited for)."""
    import os
    from pathlib import Path

    from distributed import Client, LocalCluster, wait

    from boostplug import objectives
    from tests._objectives import KillsDaskWorkerZero, register

    root = str(Path(__file__).resolve().parents[2])  # the workers import the objective from this module
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p))
    register(KillsDaskWorkerZero)
    d = make_ranking(200, (5, 20), n_features=6, n_informative=4, seed=3)
    cols = [f"f{i}" for i in range(6)]
    df = pd.DataFrame(d.X, columns=cols).assign(label=d.y, qid=d.qid, doc=np.arange(d.n_docs))
    train_fn = bpd.train_lightgbm if framework == "lightgbm" else bpd.train_xgboost
    try:
        with dask.config.set(scheduler=None), \
                LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                             host="127.0.0.1") as cluster, Client(cluster) as client, \
                dask.config.set(scheduler=client):
            frame = bpd.repartition_by_query(dd.from_pandas(df, npartitions=2), npartitions=2).persist()
            wait(frame)
            frame = _on_both_workers(client, frame)
            zero = next(a for a, w in client.scheduler_info()["workers"].items() if w["name"] == 0)
            with pytest.raises(RuntimeError, match=rf"^train_{framework}: Dask worker {zero} \(name 0\) left the "
                                                   r"cluster during training \(its process died: .*\), and training "
                                                   r"failed with: "):
                train_fn(client, frame, KillsDaskWorkerZero.name, feature_cols=cols, **kw)
    finally:
        objectives.unregister(KillsDaskWorkerZero.name)
