"""A comparison's runs on a Dask cluster (``boostplug compare --scheduler``, ``run(client=...)``).

Each (method, fold) run, with its whole ``--tune`` search, is one Dask task; Dask schedules them and
runs a task again on another worker when the one running it dies. Before anything is sent, every
worker's versions are checked against this process's and the ``--import`` modules are loaded on each
(a worker plugin: a worker that joins or restarts later loads them too). Ctrl-C cancels the tasks not
finished and keeps the finished runs.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import pickle
import uuid
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from .data import Fold
from .plugins import load_plugins, loaded_plugins, registered_here
from .run_record import versions

try:
    import dask
    from distributed import WorkerPlugin
except ImportError:  # the dask extra is not installed: connect() says so
    dask, WorkerPlugin = None, object

__all__ = ["WAIT_SECONDS", "connect", "parse_scheduler", "prepare", "run_tasks"]

#: How long to wait for a reachable scheduler's first worker, and for an unreachable scheduler.
WAIT_SECONDS = 30.0


@contextlib.contextmanager
def connect(scheduler: str | int, wait: float | None = None) -> Iterator[Any]:
    """A ``distributed.Client`` of ``scheduler``: an address (``tcp://host:8786``), or N for a LocalCluster
    of N single-threaded worker processes, closed on exit. ``ValueError`` in one line for a scheduler that
    cannot be reached or that no worker joins within ``wait`` seconds (default :data:`WAIT_SECONDS`)."""
    try:
        from distributed import Client
    except ImportError:
        raise ValueError('--scheduler needs Dask\'s distributed: pip install "boostplug[dask]"') from None
    spec, wait = scheduler, WAIT_SECONDS if wait is None else wait
    with contextlib.ExitStack() as stack:
        if isinstance(spec, int):
            client = stack.enter_context(Client(stack.enter_context(_local_cluster(spec))))
        else:
            try:
                client = stack.enter_context(Client(spec, timeout=wait))
            except (OSError, TimeoutError, ValueError) as e:
                raise ValueError(f"--scheduler {spec}: no Dask scheduler answers there ({type(e).__name__}); "
                                 "check that 'dask scheduler' runs at that address and its port is reachable "
                                 "from here") from None
        try:
            client.wait_for_workers(1, timeout=wait)
        except TimeoutError:
            raise ValueError(f"--scheduler {spec}: the scheduler has no worker after {wait:g} s; start some with "
                             f"'dask worker {client.scheduler.address}'") from None
        yield client


def _local_cluster(n: int) -> Any:
    """``local:N``'s cluster, which only this process can reach: its scheduler and workers speak TLS with
    credentials made for it and held in memory here (``Security.temporary()``), so a connection without
    them is refused; on loopback, without dashboard, HTTP routes (on a free port: 8787 may be taken) or
    statistical profiler (its thread, every 10 ms, took the core of a busy neighbour)."""
    from distributed import LocalCluster, Security

    security = Security.temporary()  # (an ImportError without cryptography, which boostplug[dask] installs)
    with dask.config.set({"distributed.worker.profile.enabled": False, "distributed.scheduler.http.routes": [],
                          "distributed.worker.http.routes": []}):
        return LocalCluster(n_workers=n, threads_per_worker=1, processes=True, host="127.0.0.1", security=security,
                            dashboard_address=None, scheduler_kwargs={"dashboard_address": "127.0.0.1:0"})


def parse_scheduler(text: str) -> str | int:
    """``--scheduler``'s value: N for ``local:N`` (1 to 4 x the cores), else a Dask scheduler's address
    as given: ``tcp://`` (the default) or ``tls://`` (with Dask's TLS configuration set), a host and a
    port from 1 to 65535. ``ValueError`` in one line suggesting the right form (an overlong value shown
    by its start and its length), without trying to connect."""
    from .execution import max_parallel

    shown, limit = repr(text) if len(text) <= 80 else f"{text[:40]!r}... ({len(text):,} characters)", max_parallel()
    scheme, sep, rest = text.partition("://")
    scheme, rest = (scheme, rest) if sep else ("tcp", text)
    if text.lower().startswith("local:"):
        n = text[len("local:"):]
        ok = n.isascii() and n.isdigit() and len(n) < 9 and 1 <= int(n) <= limit
        if ok and text.startswith("local:"):
            return int(n)
        raise ValueError(f"--scheduler {shown}: local:N, in lower case, takes N worker processes, a whole number from "
                         f"1 to {limit} (4 x the cores), as in local:{n if ok else 2}")
    host, _, port = rest.rpartition(":")
    # Dask's other schemes: ucx:// needs distributed-ucxx and its network, inproc:// reaches only this process,
    # ws:// and wss:// are not tested with boostplug
    why = (f"boostplug connects over tcp:// or tls://, not {scheme}://" if scheme not in ("tcp", "tls") else
           "the port must be a whole number from 1 to 65535 in ASCII digits"
           if not (port.isascii() and port.isdigit() and len(port) <= 5 and 1 <= int(port) <= 65535) else
           "that is not a host name or IP address ([::1] for IPv6)"
           if not host or len(host) > 255 or not host.isprintable() or any(c in host for c in " /@?#") else "")
    if why:
        raise ValueError(f"--scheduler {shown}: {why}; give a Dask scheduler's address, as in tcp://HOST:8786 "
                         "(tls://HOST:8786 with Dask's TLS configuration), or local:N")
    keys = ("distributed.comm.tls.ca-file", "distributed.comm.tls.client.cert", "distributed.comm.tls.client.key")
    if scheme == "tls" and dask is not None and not all(dask.config.get(key, None) for key in keys[:2]):
        raise ValueError(f"--scheduler {shown}: tls:// needs Dask's TLS configuration: {', '.join(keys)} (the CA's "
                         "certificate, this client's and its key; e.g. DASK_DISTRIBUTED__COMM__TLS__CA_FILE=ca.pem)")
    return text


def prepare(client: Any) -> list[str]:
    """Check ``client``'s workers and load the ``--import`` modules on each; returns their addresses.
    ``ValueError`` before anything is sent: an objective registered only in this process, a worker
    whose :func:`versions` differ (naming it, the package and both versions), an import that fails there."""
    here = registered_here()
    if here:
        raise ValueError(f"objective(s) {', '.join(here)} are registered in this process only, which a cluster's "
                         "workers never see: put them in a module or .py file and name it with --import")
    workers = _check_versions(client)
    client.register_plugin(_Imports(loaded_plugins()), name=_Imports.name)
    return workers


def _check_versions(client: Any) -> list[str]:
    here = versions()
    there = client.run(versions)
    for address, theirs in sorted(there.items()):
        for package in here:
            if theirs.get(package) != here[package]:
                raise ValueError(f"worker {address} has {package} {theirs.get(package) or 'not installed'}, this "
                                 f"process {here[package] or 'not installed'}: every worker must run the same "
                                 "versions (a run would not be the one asked for)")
    return sorted(there)


def _digest(spec: str) -> str | None:
    """SHA-256 of an ``--import``'s source: the file, or the module's (None: not found here)."""
    path = Path(spec)
    if not path.is_file():
        try:
            found = importlib.util.find_spec(spec)
        except (ImportError, ValueError):
            found = None
        path = Path(found.origin) if found is not None and found.origin and found.has_location else None
    return None if path is None else hashlib.sha256(path.read_bytes()).hexdigest()


#: On a worker: the source digest of each ``--import`` this process imported (Python imports it once).
_IMPORTED: dict[str, str | None] = {}


class _Imports(WorkerPlugin):  # type: ignore[misc,valid-type]
    """The worker plugin that imports the ``--import`` modules and files on every worker: each must be
    there with the same source as here, and not an earlier version of it imported by that process."""

    name = "boostplug-compare-imports"

    def __init__(self, specs: Sequence[str]) -> None:
        self.digests = {spec: _digest(spec) for spec in specs}

    def setup(self, worker: Any) -> None:
        for spec, digest in self.digests.items():
            there = _digest(spec)
            if there != digest:
                raise ValueError(f"worker {worker.address}: --import {spec}: " + (
                    "not found there; put it where every worker reads it, or install it there" if there is None
                    else "its source differs from this process's"))
            if _IMPORTED.setdefault(spec, digest) != digest:
                raise ValueError(f"worker {worker.address} imported an earlier version of --import {spec}; restart "
                                 "the workers to load this one (Python imports a module once per process)")
        try:
            load_plugins(list(self.digests))
        except ValueError as e:
            raise ValueError(f"worker {worker.address}: {e}") from None


def _held(fold: Fold) -> Fold:
    return fold


def _task(attempt: Callable[..., Any], name: str, fold_index: int, fold: Fold, kwargs: dict[str, Any]) -> Any:
    """One run on a worker; a finished run records the worker's address."""
    from distributed import get_worker

    outcome = attempt(name, fold_index, fold, kwargs)
    if hasattr(outcome, "info"):
        outcome.info = {**outcome.info, "worker": get_worker().address}
    return outcome


def run_tasks(client: Any, tasks: Sequence[tuple[str, int, Fold]], kwargs: dict[str, Any],
              attempt: Callable[..., Any], failure: Callable[[str, int, BaseException], Any],
              record: Callable[[Any], None], say: Callable[[str], None], cluster: dict[str, Any]) -> None:
    """Every ``(method, fold_index, fold)`` of ``tasks`` as one task on ``client``'s cluster; each
    outcome (``attempt``'s, or ``failure``'s for a task Dask gave up on) goes to ``record`` as it
    arrives. ``cluster`` receives the run's record (results.json's ``provenance.cluster``), also when
    interrupted. Ctrl-C cancels the tasks not finished and raises on, the finished ones recorded."""
    import dask
    from distributed import as_completed, wait

    workers = prepare(client)
    say(f"the Dask cluster at {client.scheduler.address}: {len(workers)} worker(s)")
    folds = {i: f for _, i, f in tasks}
    token = uuid.uuid4().hex[:8]
    # Each fold is a task whose result is the fold: sent once to the scheduler, copied to every worker,
    # and made again from the scheduler's copy should every worker holding it die (data scattered to the
    # workers would be lost then, and every run waiting for it with it). On every worker, so that Dask,
    # which places a task beside its data, does not queue the runs on the one worker holding it.
    with dask.config.set({"distributed.admin.large-graph-warning-threshold": "1 TiB"}):  # the data, on purpose
        held = {i: client.submit(_held, fold, pure=False, key=(f"boostplug-fold-{token}", i + 1))
                for i, fold in folds.items()}
    wait(list(held.values()))
    client.replicate(list(held.values()))
    cluster.update(scheduler=client.scheduler.address, workers=workers, data="sent once to the scheduler",
                   fold_bytes=sum(len(pickle.dumps(f, protocol=pickle.HIGHEST_PROTOCOL)) for f in folds.values()))
    waiting, pending, finished = [(n, i) for n, i, _ in reversed(tasks)], {}, as_completed()

    def submit() -> None:
        # No more tasks out than the workers' threads: Dask blames every task assigned to a worker that
        # dies, also one queued there behind the one that killed it, and gives a task up after its
        # allowed failures; fewer tasks queued, fewer runs taken down with a method that kills workers.
        while waiting and len(pending) < max(1, sum(client.nthreads().values())):
            n, i = waiting.pop()
            # one key prefix for every run: Dask learns a run's duration from the first ones, and weighs
            # a busy worker's queue against an idle one's copy of the fold with it
            future = client.submit(_task, attempt, n, i, held[i], kwargs, pure=False,
                                   key=(f"boostplug-compare-{token}", f"{n} fold {i + 1}"))
            pending[future] = (n, i)
            finished.add(future)

    try:
        submit()
        for future in finished:
            name, i = pending.pop(future)
            exc = future.exception()
            record(failure(name, i, exc) if exc is not None else future.result())
            future.release()
            submit()
    except BaseException:
        client.cancel(list(pending), force=True)
        raise
    finally:
        for future in held.values():
            future.release()
