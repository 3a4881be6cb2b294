"""Ending LightGBM's socket network at once when this machine's objective fails, so that the other
machines of a distributed training fail too instead of waiting for ever.

LightGBM's machines exchange histograms over TCP, and a machine waiting for another's reads until it
has them all. When the other machine's objective raises, its network stays open as long as the Booster
lives, and the exception's traceback keeps the Booster alive as long as the exception is kept (Dask
keeps a failed task's): the peers then wait until LightGBM's time-out (two hours by default). Freeing
the network closes the sockets, but a plain close tells the peer that the stream ended, and
LightGBM's receive loop takes an ended stream for zero bytes and asks again, for ever. So the
sockets are first set to close with a reset (``SO_LINGER`` 0): the peers' receive fails at once
with LightGBM's "Socket recv error, Connection reset by peer", which
:func:`boostplug.frameworks.distributed.peers.lost_peer` knows for a peer's failure.
"""

from __future__ import annotations

import os
import socket
import struct
import sys
from typing import Any

__all__ = ["end_callers_network"]

#: How many frames above the objective's round to look for the Booster that calls it (LightGBM's
#: ``Booster.update``, through scikit-learn's wrapper and a few of the user's).
_BOOSTER_DEPTH = 8


def end_callers_network() -> None:
    """When the Booster whose round called the objective trains on a network (distributed
    training), reset its connections and free it; otherwise nothing."""
    import lightgbm as lgb

    frame = sys._getframe(1)
    for _ in range(_BOOSTER_DEPTH):
        if frame is None:
            return
        booster = frame.f_locals.get("self")
        if isinstance(booster, lgb.Booster):
            if getattr(booster, "_network", False):
                _reset_on_close(booster.params)
                booster.free_network()
            return
        frame = frame.f_back


def _ports(params: dict[str, Any]) -> tuple[int | None, set[int]]:
    """This machine's listening port and the other machines' ports, from LightGBM's ``machines``
    (``host:port,...``) and ``local_listen_port``."""
    own = params.get("local_listen_port")
    own = int(own) if own is not None else None
    ports = set()
    for machine in str(params.get("machines") or "").split(","):
        host, _, port = machine.strip().rpartition(":")
        if host and port.isdigit() and int(port) != own:
            ports.add(int(port))
    return own, ports


def _reset_on_close(params: dict[str, Any]) -> None:
    """Set ``SO_LINGER`` 0 on this process's TCP connections of LightGBM's network: those accepted on
    its listening port and those it opened to another machine's (found among the process's open
    file descriptors, on systems that list them)."""
    own, others = _ports(params)
    folder = next((f for f in ("/proc/self/fd", "/dev/fd") if os.path.isdir(f)), None)
    if folder is None or (own is None and not others):
        return
    for name in os.listdir(folder):
        try:
            fd = os.dup(int(name))  # a duplicate: closing it leaves LightGBM's socket open
        except (OSError, ValueError):  # closed meanwhile (the listing's own)
            continue
        try:
            s = socket.socket(fileno=fd)
        except OSError:  # not a socket
            os.close(fd)
            continue
        with s:
            try:
                if s.type != socket.SOCK_STREAM or s.family not in (socket.AF_INET, socket.AF_INET6):
                    continue
                local, peer = s.getsockname()[1], s.getpeername()[1]
                if local == own or peer in others:
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            except OSError:  # not connected (a listening socket)
                continue
