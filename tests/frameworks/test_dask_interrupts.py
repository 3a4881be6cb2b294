"""A Dask training interrupted in its client (a notebook's KeyboardInterrupt) or losing a worker
stops every worker's training and frees what it held: on boostplug's keyed path, through
``lightgbm.dask`` and through ``xgboost.dask``. A cluster of two worker processes on loopback."""

from __future__ import annotations

import time

import numpy as np
import pytest

pytest.importorskip("dask.dataframe")
pytest.importorskip("distributed")

import dask  # noqa: E402
import dask.dataframe as dd  # noqa: E402
import pandas as pd  # noqa: E402

from boostplug import dask as bpd  # noqa: E402
from boostplug.data import make_ranking  # noqa: E402
from tests._interrupts import (counts_once_still, interrupt_at_round, listening_ports,  # noqa: E402
                               tracker_threads)
from tests._objectives import CountsRounds  # noqa: E402

pytestmark = pytest.mark.dask

COLS = [f"f{i}" for i in range(4)]


def _cluster():
    from distributed import LocalCluster

    return LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0", host="127.0.0.1")


@pytest.fixture(scope="module")
def client():
    from distributed import Client

    with dask.config.set(scheduler=None), _cluster() as cluster, Client(cluster) as c:
        yield c


def _frame(client):
    """60 small queries on two partitions, one on each worker."""
    from distributed import wait

    d = make_ranking(60, (4, 10), n_features=len(COLS), n_informative=2, seed=5)
    df = pd.DataFrame(np.round(d.X, 1), columns=COLS).assign(label=d.y, qid=d.qid, doc=np.arange(d.n_docs))
    frame = client.persist(bpd.repartition_by_query(dd.from_pandas(df, npartitions=2), npartitions=2))
    wait(frame)
    assert len({w for ws in client.who_has(frame).values() for w in ws}) == 2
    return frame


def _train(client, frame, framework: str, keyed: bool, rounds: int, **objective_params):
    kw = {"doc_col": "doc"} if keyed else {}
    if framework == "lightgbm":
        return bpd.train_lightgbm(client, frame, CountsRounds, objective_params=objective_params, feature_cols=COLS,
                                  n_estimators=rounds, num_leaves=4, min_child_samples=2, verbose=-1, **kw)
    return bpd.train_xgboost(client, frame, CountsRounds, objective_params=objective_params, feature_cols=COLS,
                             params={"max_depth": 2}, num_boost_round=rounds, **kw)


def _busy(client) -> dict:
    """Each worker's tasks still running (a cancelled task whose thread runs on included)."""
    return client.run(lambda dask_worker: dask_worker.state.executing_count)


@pytest.mark.parametrize("framework", ["lightgbm", "xgboost"])
@pytest.mark.parametrize("keyed", [True, False], ids=["keyed", "dask-module"])
def test_an_interrupt_stops_every_worker_and_a_retry_runs(client, tmp_path, framework: str, keyed: bool) -> None:
    """A KeyboardInterrupt in the client once the workers train: within a few seconds neither
    worker's round count moves, no task runs, no tracker thread or listening port is left in the
    client or the workers; a training right after runs as long as the interrupted one took to start."""
    frame = _frame(client)
    ports, worker_ports = listening_ports(), client.run(listening_ports)
    threads = set(tracker_threads())  # xgboost.dask's own tracker threads of earlier tests may still run
    with pytest.raises(KeyboardInterrupt), interrupt_at_round(tmp_path) as seen:
        _train(client, frame, framework, keyed, 3000, progress_dir=str(tmp_path), round_s=0.01)
    counts = counts_once_still(tmp_path, within=10)
    assert len(counts) == 2 and max(counts.values()) < 500, counts
    deadline = time.monotonic() + 10
    while any(_busy(client).values()):
        assert time.monotonic() < deadline, f"tasks still running: {_busy(client)}"
        time.sleep(0.2)
    assert set(tracker_threads()) - threads == set()
    assert listening_ports() == ports
    assert client.run(listening_ports) == worker_ports
    start = time.monotonic()
    _train(client, frame, framework, keyed, 5)
    assert time.monotonic() - start < 2 * seen["after"] + 10, (time.monotonic() - start, seen)


def _die_before_joining() -> None:
    """Make this worker's keyed XGBoost task kill its process before it joins the collective."""
    import os
    import signal

    from boostplug.frameworks.distributed import xgboost_worker

    xgboost_worker.train_part = lambda *a, **k: os.kill(os.getpid(), signal.SIGKILL)


def test_a_worker_killed_while_the_workers_join_is_named_and_frees_its_peer() -> None:
    """Keyed XGBoost, worker 0 killed before joining XGBoost's collective while worker 1 waits in it:
    the training fails within seconds naming worker 0, the tracker's thread and port are gone from
    the client, and worker 1's task ends (it would wait in the collective's start for the tracker)."""
    from distributed import Client

    with dask.config.set(scheduler=None), _cluster() as cluster, Client(cluster) as client:
        frame = _frame(client)
        workers = client.scheduler_info()["workers"]
        zero = next(a for a, w in workers.items() if w["name"] == 0)
        one = next(a for a in workers if a != zero)
        client.run(_die_before_joining, workers=[zero])
        ports, threads = listening_ports(), set(tracker_threads())
        start = time.monotonic()
        with pytest.raises(RuntimeError, match=rf"^train_xgboost: Dask worker {zero} \(name 0\) left the cluster"):
            _train(client, frame, "xgboost", True, 5)
        assert time.monotonic() - start < 20
        assert set(tracker_threads()) - threads == set()
        assert listening_ports() == ports
        deadline = time.monotonic() + 10
        while client.run(lambda dask_worker: dask_worker.state.executing_count, workers=[one])[one]:
            assert time.monotonic() < deadline, "worker 1's task still waits to join the collective"
            time.sleep(0.2)


def _one_of_two_machines(rank: int, machines: str, port: int) -> tuple[str, int, float]:
    """One of two LightGBM machines (``train_part``), its stop flag set as ``client.run`` sets
    them, one worker after the other: machine 0's in round 3 (it stops at its next callback,
    closing its sockets with nothing unread), machine 1's a second later (in the meantime it sent
    its next round's data and waits for machine 0's). The error's name, the rounds run, the seconds
    from the flag to the end."""
    import threading

    from boostplug.frameworks.distributed.lightgbm_worker import train_part
    from boostplug.frameworks.distributed.rows import Part
    from boostplug.frameworks.distributed.stop import StopFlag

    stop, rounds, flagged = StopFlag(), [], []

    def set_flag() -> None:
        flagged.append(time.monotonic())
        stop.set_here()

    def squared_error(scores, dataset):
        rounds.append(1)
        if len(rounds) == 3 and rank == 0:
            set_flag()
        elif len(rounds) == 3:
            threading.Timer(1.0, set_flag).start()
        time.sleep(0.2 * rank)  # machine 1 sends after machine 0 closed
        return scores - dataset.get_label(), np.ones_like(scores)

    d = make_ranking(20, (4, 10), n_features=len(COLS), n_informative=2, seed=rank)
    try:
        train_part(Part(d.X, d.y, d.qid, None), {"verbose": -1, "num_threads": 1}, squared_error, 100_000,
                   machines=machines, port=port, n_workers=2, stop=stop)
        outcome = "finished"
    except Exception as exc:
        outcome = type(exc).__name__
    return outcome, len(rounds), time.monotonic() - flagged[0] if flagged else -1.0


def test_a_worker_waiting_for_a_stopped_peers_data_stops_within_seconds_of_its_flag(client) -> None:
    """After its peer's FIN, LightGBM's receive loop adds up the 0 bytes ``recv`` returns forever:
    the worker whose flag comes once it waits for the stopped peer never reaches its callback. It
    stops within seconds of its flag all the same (the stop's watchdog breaks its sockets)."""
    from distributed import wait

    from boostplug.frameworks.distributed.lightgbm_worker import free_port

    workers = sorted(client.scheduler_info()["workers"])
    pinned = {"pure": False, "allow_other_workers": False}
    ports = client.gather([client.submit(free_port, "127.0.0.1", workers=[w], **pinned) for w in workers])
    machines = ",".join(f"127.0.0.1:{p}" for p in ports)
    futures = [client.submit(_one_of_two_machines, rank, machines, ports[rank], workers=[w], **pinned)
               for rank, w in enumerate(workers)]
    wait(futures, timeout=30)  # a machine spinning in LightGBM's receive loop never ends
    (first, first_rounds, _), (second, second_rounds, after_flag) = client.gather(futures)
    assert first == "TrainingStopped" and first_rounds == 3, (first, first_rounds)
    assert second in ("TrainingStopped", "LightGBMError") and second_rounds >= 3, (second, second_rounds)
    assert after_flag < 5, after_flag
    assert not any(_busy(client).values())


def test_free_port_is_outside_the_ephemeral_range_and_free(monkeypatch) -> None:
    """Below the ports ``bind(0)`` and outgoing connections take (so no connection of the cluster
    can take it before LightGBM binds it), and free now; with no readable range, or a port that
    does not bind, one from ``bind(0)``."""
    import socket

    from boostplug.frameworks.distributed import lightgbm_worker as lw

    span = lw._ephemeral_range()
    for _ in range(20):
        port = lw.free_port("127.0.0.1")
        if span is not None and span[0] - lw.PORT_FLOOR >= 1_000:
            assert lw.PORT_FLOOR <= port < span[0], (port, span)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("127.0.0.1", port))      # free: it binds
    monkeypatch.setattr(lw, "_ephemeral_range", lambda: (32768, 60999))
    monkeypatch.setattr(lw, "_binds", lambda host, port: False)
    assert lw.free_port("127.0.0.1") > 0      # nothing below binds: bind(0)'s port
    monkeypatch.setattr(lw, "_ephemeral_range", lambda: None)
    assert lw.free_port("127.0.0.1") > 0


def test_a_failed_workers_network_closes_with_a_reset() -> None:
    """What the worker that runs a failed LightGBM training does (``train_part``'s error path, and
    the objective ``lightgbm.dask`` runs): its connections close with a reset, which the peer's
    next receive fails on at once (a plain close is an end of stream, which LightGBM's receive
    loop reads as zero bytes for ever). The connections are found among the process's own
    descriptors (no psutil), the accepted one and the one to a peer's port. Before, the core
    objective round did this, finding the Booster up the call stack."""
    import socket
    from types import SimpleNamespace

    from boostplug.frameworks.distributed.stop import LightGBMStop, StopFlag, network_sockets

    class Booster:  # LightGBM's free_network closes the network's sockets
        def __init__(self, sock):
            self.sock = sock

        def free_network(self):
            self.sock.close()

    for reset in (False, True):
        with socket.create_server(("127.0.0.1", 0)) as server:
            port = server.getsockname()[1]
            peer = socket.create_connection(("127.0.0.1", port))
            mine, _ = server.accept()
            found = network_sockets(f"127.0.0.1:{port},127.0.0.1:1", port)
            assert {mine.fileno(), peer.fileno()} <= set(found) and server.fileno() not in found
            stop = LightGBMStop(StopFlag())
            stop(SimpleNamespace(model=Booster(mine), params={"machines": f"127.0.0.1:{port}",
                                                              "local_listen_port": port}))
            stop.free(reset=reset)
            with peer:
                if reset:
                    with pytest.raises(ConnectionResetError):
                        peer.recv(1)
                else:
                    assert peer.recv(1) == b""


def test_a_worker_keeps_its_own_first_failure_for_the_driver() -> None:
    """The driver asks every worker for the failure it kept when all it got is a lost connection:
    a worker keeps its own first error, not a peer's lost connection nor the driver's stop."""
    import pickle

    from boostplug.frameworks.distributed import failure
    from boostplug.frameworks.distributed.stop import TrainingStopped

    class LightGBMError(Exception):  # lost_peer tells the frameworks' errors by name
        pass

    failure.forget_failure()
    try:
        failure.record_failure("qbrank", LightGBMError("Socket recv error, Connection reset by peer (code: 104)"))
        failure.record_failure("qbrank", TrainingStopped("the training was stopped by its driver"))
        assert failure.recorded_failure() is None
        failure.record_failure("qbrank", ValueError("the objective failed"))
        failure.record_failure("qbrank", RuntimeError("a later error"))
        name, payload = failure.recorded_failure()
        assert name == "qbrank" and repr(pickle.loads(payload)) == "ValueError('the objective failed')"
    finally:
        failure.forget_failure()
