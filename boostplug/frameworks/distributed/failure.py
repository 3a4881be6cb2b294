"""A worker's own failure, kept for its driver. When one worker of a distributed training fails
(its objective raises), its peers fail too, with the framework's error for a connection that
broke, and a driver may hear from a peer first; that error names no cause. So each worker
process keeps the first exception its training raised (:func:`record_failure`: the worker's
``train_part``, or the objective's round where the framework's own Dask code runs the training),
and Dask's driver asks every worker for it (:func:`recorded_failure`) when all it got is a lost
connection."""

from __future__ import annotations

import pickle

from .peers import lost_peer

__all__ = ["record_failure", "recorded_failure", "forget_failure"]

#: The first failure of this process since :func:`forget_failure`: ``(objective name, pickled
#: exception or its text)``.
_FAILURE: list[tuple[str, bytes | str]] = []


def forget_failure() -> None:
    """Forget the failure this process recorded (a distributed training starts)."""
    _FAILURE.clear()


def recorded_failure() -> tuple[str, bytes | str] | None:
    """The first failure recorded in this process since :func:`forget_failure`."""
    return _FAILURE[0] if _FAILURE else None


def record_failure(name: str, exc: BaseException) -> None:
    """Keep ``exc``, raised by the training with the objective ``name``, unless a failure is kept
    already or ``exc`` is only the consequence of another worker's (a lost connection, or the
    driver's stop: :class:`~.stop.TrainingStopped`)."""
    from .stop import TrainingStopped

    if _FAILURE or lost_peer(exc) or isinstance(exc, TrainingStopped):
        return
    try:
        _FAILURE.append((name, pickle.dumps(exc)))
    except Exception:  # an exception that does not pickle: its text
        _FAILURE.append((name, f"{type(exc).__name__}: {exc}"))
