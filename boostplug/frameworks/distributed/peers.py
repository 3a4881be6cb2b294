"""Telling a worker's own failure from its peers': when one worker of a network fails (an
objective that raises, a killed process), the others fail too, with the framework's error for a
connection that broke. That error says nothing of the cause, so the engines report the cause
instead: Spark's barrier tasks wait for it (:func:`boostplug.spark._barrier.train_or_defer`), and
Dask's training names the worker that left the cluster."""

from __future__ import annotations

import re

__all__ = ["lost_peer", "first_line"]


def lost_peer(exc: BaseException) -> bool:
    """Whether ``exc`` is a framework's error for a connection to another worker that broke:
    LightGBM's socket network ("Socket recv error"...), XGBoost's collective ("Ring allreduce
    failed", "Broken pipe"...), which boostplug's LightGBM early stopping uses too. Told by the
    error's class name, so that neither framework is imported."""
    text = str(exc).lower()
    if type(exc).__name__ == "LightGBMError":
        return "socket" in text or "connect" in text
    if type(exc).__name__ == "XGBoostError":
        return any(w in text for w in ("collective", "socket", "allreduce", "allgather", "broadcast", "broken pipe"))
    return False


#: What XGBoost puts before its words: ``[12:00:00]``, ``[allreduce.cc:135|12:00:00]``, source paths.
_LOCATION = re.compile(r"\[[^\]]*\]|\S+\.(?:cc|h|cu|cpp):\d+")


def first_line(exc: BaseException) -> str:
    """The first line of ``exc``'s message that says something besides where (XGBoost's begin with
    timestamps and source locations, and go on with a stack trace)."""
    for line in str(exc).splitlines():
        if any(c.isalpha() for c in _LOCATION.sub("", line)):
            return line.strip().removeprefix("- ")
    return type(exc).__name__
