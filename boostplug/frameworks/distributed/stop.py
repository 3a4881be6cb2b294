"""Stopping a distributed training's workers from its driver. A driver interrupted (a notebook's
KeyboardInterrupt) or failing stops waiting for its workers, but a worker's training loop runs in
the framework's C++ code and nothing reaches it: it would train to its last round, holding its
threads, ports and network. Each training gets a :class:`StopFlag`; the driver sets it in every
worker process (Dask: ``client.run``), and a callback the worker's framework calls before each
round raises :class:`TrainingStopped` once it is set. (Spark's barrier tasks need none: Spark
kills the Python workers of a cancelled job.)"""

from __future__ import annotations

import os
import socket
import struct
import threading
import uuid
import weakref
from collections import OrderedDict
from contextlib import suppress
from typing import Any

import xgboost as xgb

__all__ = ["TrainingStopped", "StopFlag", "XGBoostStop", "LightGBMStop", "end_running_network"]

#: The flags set in this process (the last ones: a flag can arrive after its training ended).
_SET: "OrderedDict[str, None]" = OrderedDict()
_KEEP = 1024
_LOCK = threading.Lock()


class TrainingStopped(RuntimeError):
    """A worker's training stopped because its driver asked (interrupted, or failed)."""


class StopFlag:
    """One training's stop flag, by a token that travels to the workers with their tasks."""

    def __init__(self, token: str | None = None) -> None:
        self.token = uuid.uuid4().hex if token is None else token
        #: Whether the driver has set it in the workers (the driver's to know: it does not travel).
        self.sent = False

    def __reduce__(self) -> tuple[Any, ...]:
        return StopFlag, (self.token,)

    def set_here(self) -> None:
        """Set the flag in this process (what the driver runs in each worker's)."""
        with _LOCK:
            _SET[self.token] = None
            while len(_SET) > _KEEP:
                _SET.popitem(last=False)

    def is_set(self) -> bool:
        return self.token in _SET

    def check(self) -> None:
        """Raise :class:`TrainingStopped` when the flag is set in this process."""
        if self.token in _SET:
            raise TrainingStopped("the training was stopped by its driver (interrupted, or failed elsewhere)")


class XGBoostStop(xgb.callback.TrainingCallback):
    """An XGBoost training callback: :meth:`StopFlag.check` before each round."""

    def __init__(self, flag: StopFlag) -> None:
        super().__init__()
        self.flag = flag

    def before_iteration(self, model: Any, epoch: int, evals_log: Any) -> bool:
        self.flag.check()
        return False


#: How long a worker whose flag is set may take to reach its callback before its network is broken.
BREAK_AFTER_S = 0.5


#: The :class:`LightGBMStop` of the LightGBM training each thread runs (a weak reference).
_RUNNING = threading.local()


class LightGBMStop:
    """A LightGBM callback run before each round: :meth:`StopFlag.check`, first freeing the
    booster's network (its sockets and listening port; the booster left inside ``lgb.train``
    would keep them until it is garbage). ``booster``: the booster trained, once the first round
    began (:meth:`free` frees its network however the training ends; ``free(reset=True)`` when
    it failed, so that its peers fail at once).

    A worker can miss its callback for good: a peer that stopped closed its sockets with nothing
    unread, and LightGBM's receive loop (``Linkers::Recv``) adds up the 0 bytes ``recv`` returns
    after a peer's FIN forever (a busy loop: only a reset connection raises). So from the first
    round a watchdog thread holds the booster's sockets (found from the ``machines`` and
    ``local_listen_port`` of its parameters); once the flag is set and the training still runs
    :data:`BREAK_AFTER_S` later, it shuts them down and puts an unconnected socket in their place:
    LightGBM's next ``send``/``recv`` fails, ``lgb.train`` raises, and :meth:`free` closes them.
    The watchdog ends once the network is freed, whoever frees it (``lightgbm.dask``'s task frees
    a trained booster's itself): a descriptor closed, or reused by another file, is left alone."""

    order = 0
    before_iteration = True

    def __init__(self, flag: StopFlag) -> None:
        self.flag = flag
        self.booster: Any = None
        self._lock = threading.Lock()  # held to break the sockets, and to free them (no fd reused meanwhile)
        self._freed = False
        self._done = threading.Event()
        self._sockets: dict[int, int] = {}

    def __call__(self, env: Any) -> None:
        if self.booster is None:
            self.booster = env.model
            _RUNNING.stop = weakref.ref(self)
            machines, port = env.params.get("machines"), env.params.get("local_listen_port")
            if machines and port:
                self._sockets = network_sockets(str(machines), int(port))
                threading.Thread(target=self._watch, args=(self._sockets,), name="boostplug-lightgbm-stop",
                                 daemon=True).start()
        if self.flag.is_set():
            self.free()
            self.flag.check()

    def _watch(self, sockets: dict[int, int]) -> None:
        """Until the network is freed (its descriptors closed, by :meth:`free` or by whoever frees
        it: ``lightgbm.dask`` does), break its sockets once the flag has been set for
        :data:`BREAK_AFTER_S` and the training still runs."""
        while not self._done.wait(0.1) and _still_open(sockets):
            if self.flag.is_set():
                if not self._done.wait(BREAK_AFTER_S):
                    with self._lock:
                        if not self._freed:
                            break_sockets(_still_open(sockets))
                return

    def free(self, reset: bool = False) -> None:
        """Free the booster's network (once) and end the watchdog. ``reset``: this worker's
        training failed; its connections first close with a reset (``SO_LINGER`` 0), which its
        peers' next receive fails on at once ("Connection reset by peer", which
        :func:`~.peers.lost_peer` knows). A plain close would not do: LightGBM's receive loop
        takes a stream that ended for zero bytes and asks again, for ever."""
        self._done.set()
        with self._lock:
            if self.booster is not None and not self._freed:
                self._freed = True
                if reset:
                    for fd in _still_open(self._sockets):
                        # a duplicate (LightGBM closes its own); OSError: closed meanwhile
                        with suppress(OSError), socket.socket(fileno=os.dup(fd)) as sock:
                            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.booster.free_network()
        if _running() is self:
            _RUNNING.stop = None

    def __reduce__(self) -> tuple[Any, ...]:
        return LightGBMStop, (self.flag,)


def end_running_network() -> None:
    """Free, with a reset (:meth:`LightGBMStop.free`), the network of the LightGBM training this
    thread runs, when its callbacks include a :class:`LightGBMStop`: for an objective whose round
    failed where the framework's own code runs the training (``lightgbm.dask``), and nothing of
    boostplug's catches the error around it."""
    stop = _running()
    if stop is not None:
        stop.free(reset=True)


def _running() -> LightGBMStop | None:
    ref = getattr(_RUNNING, "stop", None)
    return None if ref is None else ref()


def network_sockets(machines: str, port: int) -> dict[int, int]:
    """This process's TCP connections in LightGBM's network ``machines`` (``host:port,...``)
    where this worker listens on ``port`` (those accepted on ``port``, and those to a peer's
    port): their inode by file descriptor, found among the process's open descriptors (on
    systems that list them: ``/proc/self/fd``, ``/dev/fd``; none elsewhere)."""
    peers = set()
    for machine in machines.split(","):
        host, _, peer_port = machine.strip().rpartition(":")
        if not peer_port.isdigit():
            continue
        with suppress(OSError):
            host = socket.gethostbyname(host)
        peers.add((host, int(peer_port)))
    folder = next((f for f in ("/proc/self/fd", "/dev/fd") if os.path.isdir(f)), None)
    found: dict[int, int] = {}
    for name in os.listdir(folder) if folder is not None else []:
        try:
            fd = int(name)
            dup = os.dup(fd)  # a duplicate: closing it leaves the descriptor open
        except (OSError, ValueError):  # closed meanwhile (the listing's own)
            continue
        try:
            sock = socket.socket(fileno=dup)
        except OSError:  # not a socket
            os.close(dup)
            continue
        with sock:
            try:
                if sock.type != socket.SOCK_STREAM or sock.family not in (socket.AF_INET, socket.AF_INET6):
                    continue
                local, peer = sock.getsockname()[1], sock.getpeername()[:2]
            except OSError:  # not connected (a listening socket)
                continue
            if local == port or peer in peers:
                found[fd] = os.fstat(sock.fileno()).st_ino  # the duplicate's: the same socket
    return found


def _still_open(sockets: dict[int, int]) -> list[int]:
    """The descriptors of ``sockets`` (inode by descriptor) that still hold their socket (not
    closed, nor reused by another file)."""
    held = []
    for fd, inode in sockets.items():
        with suppress(OSError):
            if os.fstat(fd).st_ino == inode:
                held.append(fd)
    return held


def break_sockets(fds: list[int]) -> None:
    """Make every ``send``/``recv`` on ``fds`` fail: each socket shut down (which wakes a call
    blocked on it) and replaced by an unconnected one (ENOTCONN; a closed descriptor could be
    reused by another file). The descriptors stay open, for their owner to close."""
    for fd in fds:
        try:
            sock = socket.socket(fileno=os.dup(fd))
        except OSError:
            continue
        with sock:
            with suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as unconnected:
            os.dup2(unconnected.fileno(), fd)
