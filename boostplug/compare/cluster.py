"""A comparison's runs on a Dask cluster (``boostplug compare --scheduler``, ``run(client=...)``).

Each (method, fold) run, with its whole ``--tune`` search, is one Dask task; Dask schedules them and
runs a task again on another worker when the one running it dies. Before anything is sent, every
worker's versions are checked against this process's and the ``--import`` modules are loaded on each
(a worker plugin of the study's own: a worker that joins or restarts later loads them too). Ctrl-C
cancels the tasks not finished and keeps the finished runs; so does a scheduler that goes away, or a
cluster on which no worker could take a run for :data:`STALL_SECONDS`.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import logging
import os
import pickle
import sys
import time
import uuid
from concurrent.futures import CancelledError
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from .data import Fold
from .plugins import load_plugins, loaded_plugins, registered_here
from .run_record import JAX, PACKAGES, versions

try:
    import dask
    from distributed import WorkerPlugin
except ImportError:  # the dask extra is not installed: connect() says so
    dask, WorkerPlugin = None, object

__all__ = ["WAIT_SECONDS", "STALL_SECONDS", "STALL_ENV", "connect", "parse_scheduler", "prepare", "run_tasks"]

#: How long to wait for a reachable scheduler's first worker, and for an unreachable or silent scheduler.
WAIT_SECONDS = 30.0
#: How long a study waits while no worker can take a run (all paused by Dask for memory, or gone) before it
#: ends as interrupted, its finished runs kept; the environment variable :data:`STALL_ENV` sets it too.
STALL_SECONDS = 300.0
STALL_ENV = "BOOSTPLUG_STALL_SECONDS"
#: How often a study looks at its runs and its workers.
POLL_SECONDS = 1.0


def _say(text: str) -> None:
    print(f"boostplug compare: {text}", file=sys.stderr)


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
    _stall_seconds()  # a bad STALL_ENV refused before the cluster
    with contextlib.ExitStack() as stack:
        if isinstance(spec, int):
            client = stack.enter_context(Client(stack.enter_context(_local_cluster(spec))))
        else:
            try:
                _handshake(spec, wait)
                client = stack.enter_context(Client(spec, timeout=wait))
            except (OSError, TimeoutError, ValueError) as e:
                raise ValueError(f"--scheduler {spec}: no Dask scheduler answers there ({type(e).__name__}); "
                                 "check that 'dask scheduler' runs at that address and its port is reachable "
                                 "from here") from None
        # its scheduler gone, the client says so in a log record as it gives up; run_tasks says it in one line
        quiet, log = (lambda r: "Failed to reconnect" not in r.getMessage()), logging.getLogger("distributed.client")
        log.addFilter(quiet)
        stack.callback(log.removeFilter, quiet)
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


def parse_scheduler(text: str, limit: int) -> str | int:
    """``--scheduler``'s value: N for ``local:N`` (1 to ``limit``, 4 x the cores), else a Dask scheduler's address
    as given: ``tcp://`` (the default) or ``tls://`` (with Dask's TLS configuration set), a host and a
    port from 1 to 65535. ``ValueError`` in one line suggesting the right form (an overlong value shown
    by its start and its length), without trying to connect."""
    shown = repr(text) if len(text) <= 80 else f"{text[:40]!r}... ({len(text):,} characters)"
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


def _handshake(address: str, wait: float) -> None:
    """Dask's handshake with ``address`` within ``wait`` seconds (a ``Client`` waits for it forever:
    ``TimeoutError`` then, from a socket that accepts and never answers)."""
    import asyncio

    from distributed.comm import connect as dial
    from distributed.security import Security

    async def hello() -> None:
        comm = await asyncio.wait_for(dial(address, timeout=wait, **Security().get_connection_args("client")), wait)
        await comm.close()

    asyncio.run(hello())


def prepare(client: Any, say: Callable[[str], None] = _say) -> tuple[list[str], str]:
    """Check ``client``'s workers and load the ``--import`` modules on each; returns their addresses and
    the name of the study's worker plugin. ``ValueError`` before anything is sent: an objective registered
    only in this process, a worker whose :func:`versions` differ (naming it, the package and both
    versions), an import that fails there, a worker lost twice during the check (once is said, and the
    check made again)."""
    here = registered_here()
    if here:
        raise ValueError(f"objective(s) {', '.join(here)} are registered in this process only, which a cluster's "
                         "workers never see: put them in a module or .py file and name it with --import")
    workers = _check_versions(client, say)
    imports = _Imports(loaded_plugins())
    client.register_plugin(imports, name=imports.name)
    return workers, imports.name


def _check_versions(client: Any, say: Callable[[str], None]) -> list[str]:
    packages = PACKAGES + JAX * ("jax" in sys.modules)  # a JaxLoss's study imported JAX here
    here = versions(packages)
    lost: dict[str, BaseException] = {}
    for again in (False, True):  # again: without the workers lost, which the scheduler may not have dropped yet
        there = client.run(versions, packages, on_error="return",
                           workers=[a for a in client.scheduler_info(n_workers=-1)["workers"] if a not in lost])
        lost = {a: e for a, e in there.items() if isinstance(e, BaseException)}
        if not lost:
            break
        said = "; ".join(f"{a} ({type(e).__name__}: {str(e)[:100]})" for a, e in sorted(lost.items()))
        if again:
            raise ValueError(f"worker(s) lost during the version check, twice: {said}; see the workers' logs (a "
                             "memory limit too small for the libraries?)")
        say(f"worker(s) lost during the version check: {said}; checking the workers again")
    for address, theirs in sorted(there.items()):
        for package in here:
            if theirs.get(package) != here[package]:
                raise ValueError(f"worker {address} has {package} {theirs.get(package) or 'not installed'}, this "
                                 f"process {here[package] or 'not installed'}: every worker must run the same "
                                 "versions (a run would not be the one asked for)")
    return sorted(there)


def _digest(spec: str) -> str | None:
    """SHA-256 of an ``--import``'s source: the file, or the module's; a package's over every file of
    its top-level package, so that an edit of any of them shows (None: not found here)."""
    path, files, root = Path(spec), None, None
    if not path.is_file():
        try:
            found = importlib.util.find_spec(spec)
            top = importlib.util.find_spec(spec.partition(".")[0]) if found is not None else None
        except (ImportError, ValueError):
            found = top = None
        path = Path(found.origin) if found is not None and found.origin and found.has_location else None
        if path is not None and top is not None and top.submodule_search_locations:
            root = Path(top.origin).parent
            files = sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    if path is None:
        return None
    digest = hashlib.sha256()
    for file in files or [path]:  # by its place in the package: installed elsewhere on a worker, the same
        digest.update(str(file.relative_to(root or path.parent)).encode() + b"\0" + file.read_bytes())
    return digest.hexdigest()


#: On a worker: the source digest of each ``--import`` this process imported (Python imports it once).
_IMPORTED: dict[str, str | None] = {}
#: On a worker: the error of each study's imports that failed there (by plugin name); its runs fail with it.
_FAILED: dict[str, str] = {}


class _Imports(WorkerPlugin):  # type: ignore[misc,valid-type]
    """The worker plugin that imports a study's ``--import`` modules and files on every worker: each must
    be there with the same source as here, and not an earlier version of it imported by that process.
    Named by the imports' digests: studies sharing a cluster keep each its own, which a restarted worker
    loads again; a worker where they fail runs none of the study's runs."""

    def __init__(self, specs: Sequence[str]) -> None:
        self.digests = {spec: _digest(spec) for spec in specs}
        self.name = "boostplug-compare-imports-" + hashlib.sha256(json.dumps(self.digests).encode()).hexdigest()[:16]

    def setup(self, worker: Any) -> None:
        try:
            for spec, digest in self.digests.items():
                there = _digest(spec)
                if there != digest:
                    raise ValueError(f"--import {spec}: " + (
                        "not found there; put it where every worker reads it, or install it there" if there is None
                        else "its source differs from this process's"))
                if _IMPORTED.setdefault(spec, digest) != digest:
                    raise ValueError(f"imported an earlier version of --import {spec}; restart the workers to load "
                                     "this one (Python imports a module once per process)")
            load_plugins(list(self.digests))
        except ValueError as e:
            _FAILED[self.name] = f"worker {worker.address}: {e}"
            raise ValueError(_FAILED[self.name]) from None
        _FAILED.pop(self.name, None)


def _held(fold: Fold) -> Fold:
    return fold


def _task(attempt: Callable[..., Any], name: str, fold_index: int, fold: Fold, kwargs: dict[str, Any],
          imports: str) -> Any:
    """One run on a worker (``imports``: the study's plugin, whose failure here fails the run, naming it);
    a finished run records the worker's address."""
    from distributed import get_worker

    if imports in _FAILED:
        raise ValueError(f"{_FAILED[imports]}: this worker cannot run the study's methods")
    outcome = attempt(name, fold_index, fold, kwargs)
    if hasattr(outcome, "info"):
        outcome.info = {**outcome.info, "worker": get_worker().address}
    return outcome


def _stall_seconds() -> float:
    text = os.environ.get(STALL_ENV, str(STALL_SECONDS))
    if not (text.replace(".", "", 1).isdecimal() and float(text) > 0):  # no sign, exponent, nan nor inf
        raise ValueError(f"{STALL_ENV}={text}: expected the seconds a study waits while no worker can take a run, "
                         "a number > 0")
    return float(text)


def run_tasks(client: Any, tasks: Sequence[tuple[str, int, Fold]], kwargs: dict[str, Any],
              attempt: Callable[..., Any], failure: Callable[[str, int, BaseException], Any],
              record: Callable[[Any], None], say: Callable[[str], None], cluster: dict[str, Any]) -> bool:
    """Every ``(method, fold_index, fold)`` of ``tasks`` as one task on ``client``'s cluster; each
    outcome (``attempt``'s, or ``failure``'s for a task Dask gave up on) goes to ``record`` as it
    arrives. ``cluster`` receives the run's record (results.json's ``provenance.cluster``), also when
    interrupted. Ctrl-C cancels the tasks not finished and raises on, the finished ones recorded.
    Workers paused by Dask (memory) or gone are said as it happens. True when the study stopped early
    (said in one line, and in ``cluster["stopped"]``): the scheduler went away, or no worker could take a
    run for :data:`STALL_SECONDS` (:data:`STALL_ENV`)."""
    import dask
    from distributed import wait
    from distributed.comm.core import CommClosedError

    stall, address = _stall_seconds(), client.scheduler.address
    token, imports = uuid.uuid4().hex[:8], ""
    held: dict[int, Any] = {}
    pending: dict[Any, tuple[str, int]] = {}
    try:
        workers, imports = prepare(client, say)
        say(f"the Dask cluster at {address}: {len(workers)} worker(s)")
        folds = {i: f for _, i, f in tasks}
        # Each fold is a task whose result is the fold: sent once to the scheduler, copied to every worker,
        # and made again from the scheduler's copy should every worker holding it die (data scattered to the
        # workers would be lost then, and every run waiting for it with it). On every worker, so that Dask,
        # which places a task beside its data, does not queue the runs on the one worker holding it.
        with dask.config.set({"distributed.admin.large-graph-warning-threshold": "1 TiB"}):  # the data, on purpose
            held = {i: client.submit(_held, fold, pure=False, key=(f"boostplug-fold-{token}", i + 1))
                    for i, fold in folds.items()}
        wait(list(held.values()))
        client.replicate(list(held.values()))
        cluster.update(scheduler=address, workers=workers, data="sent once to the scheduler",
                       fold_bytes=sum(len(pickle.dumps(f, protocol=pickle.HIGHEST_PROTOCOL)) for f in folds.values()))
        waiting, watch = [(n, i) for n, i, _ in reversed(tasks)], _watch(client, say)
        while waiting or pending:
            # No more tasks out than the workers' threads: Dask blames every task assigned to a worker that
            # dies, also one queued there behind the one that killed it, and gives a task up after its
            # allowed failures; fewer tasks queued, fewer runs taken down with a method that kills workers.
            while waiting and len(pending) < max(1, sum(client.nthreads().values())):
                n, i = waiting.pop()
                # one key prefix for every run: Dask learns a run's duration from the first ones, and weighs
                # a busy worker's queue against an idle one's copy of the fold with it
                pending[client.submit(_task, attempt, n, i, held[i], kwargs, imports, pure=False,
                                      key=(f"boostplug-compare-{token}", f"{n} fold {i + 1}"))] = (n, i)
            with contextlib.suppress(TimeoutError):
                wait(list(pending), timeout=POLL_SECONDS, return_when="FIRST_COMPLETED")
            ready = [f for f in pending if f.done()]
            for future in ready:
                name, i = pending.pop(future)
                exc = future.exception()
                record(failure(name, i, exc) if exc is not None else future.result())
                future.release()
            if watch(bool(ready)) > stall:
                cluster["stopped"] = (f"no worker of the Dask cluster at {address} could take a run for {stall:g} s "
                                      f"({STALL_ENV} sets how long)")
                break
    except BaseException as e:
        # the scheduler went away: FutureCancelledError, CommClosedError, or an OSError of a lost connection
        # (not one of this process: --out full)
        if not isinstance(e, (CancelledError, CommClosedError)) and not (isinstance(e, OSError) and
                                                                         client.status != "running"):
            with contextlib.suppress(Exception):
                client.cancel(list(pending), force=True)
            raise
        cluster["stopped"] = f"the Dask scheduler at {address} went away ({type(e).__name__})"
    finally:
        with contextlib.suppress(Exception):
            if imports:  # a worker restarted later loads the running studies' only
                client.unregister_worker_plugin(imports)
        with contextlib.suppress(Exception):
            for future in held.values():
                future.release()
    if "stopped" not in cluster:
        return False
    with contextlib.suppress(Exception):
        client.cancel(list(pending), force=True)
    say(f"{cluster['stopped']}: the study ends here, its finished runs kept; boostplug compare --resume with the "
        "same --out continues it, on the cluster once it is back or with --jobs")
    return True


def _watch(client: Any, say: Callable[[str], None]) -> Callable[[bool], float]:
    """What, called after each look at the runs with whether one finished, says each worker that Dask
    paused (memory: with its limit) or that is gone, in one line as it happens, and returns the seconds
    for which no run finished while no worker could take one."""
    import dask

    seen: dict[str, tuple[str, int]] = {}  # each worker's status and memory limit at the last look
    since = time.monotonic()

    def look(finished: bool) -> float:
        nonlocal seen, since
        info = client.scheduler_info(n_workers=-1)["workers"]
        now = {a: str(w.get("status", "running")).rpartition(".")[2] for a, w in info.items()}
        for a in sorted(seen.keys() | now.keys()):
            status, limit = now.get(a, "gone"), info.get(a, {}).get("memory_limit") or seen.get(a, (0, 0))[1]
            if status != "running" and seen.get(a, ("", 0))[0] != status:
                say(f"worker {a} is {status} (memory limit {f'{limit / 2**20:.0f} MiB' if limit else 'none'}; Dask "
                    f"pauses a worker above {dask.config.get('distributed.worker.memory.pause')} of it), "
                    f"{sum(s == 'running' for s in now.values())} worker(s) running; the runs wait")
        seen = {a: (status, info[a].get("memory_limit") or 0) for a, status in now.items()}
        if finished or "running" in now.values():
            since = time.monotonic()
        return time.monotonic() - since

    return look
