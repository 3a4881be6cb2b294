"""Stopping the workers of a Dask training when its client is interrupted or fails: Dask cannot
stop a task that runs, so the training's :class:`~boostplug.frameworks.distributed.stop.StopFlag`
is set in every worker process, and the task's framework callback raises before its next round
(the task's thread, its network ports and the worker's slot are then free for the next try).
The user's side: docs/dask.md, "Interrupting a training"."""

from __future__ import annotations

from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING, Any, Iterator

if TYPE_CHECKING:  # pragma: no cover
    from distributed import Client

    from ..distributed.stop import StopFlag

__all__ = ["stop_workers", "stopping_workers", "stopped_on_error", "STOP_WAIT_S"]

#: How long an interrupted training waits for its tasks to end (to leave XGBoost's collective).
STOP_WAIT_S = 10.0


def stop_workers(client: "Client", stop: "StopFlag") -> None:
    """Set ``stop`` in every worker process of ``client``'s cluster (once). Best effort: the
    client is failing already, with an error of its own."""
    if stop.sent:
        return
    stop.sent = True
    with suppress(Exception):  # the scheduler is gone, and the workers' tasks with it
        client.run(stop.set_here, on_error="return")


@contextmanager
def stopping_workers(client: "Client") -> Iterator["StopFlag"]:
    """A new flag for one training on ``client``, set in the workers when the block ends with an
    exception (KeyboardInterrupt included)."""
    from ..distributed.stop import StopFlag

    stop = StopFlag()
    try:
        yield stop
    except BaseException:
        stop_workers(client, stop)
        raise


@contextmanager
def stopped_on_error(client: "Client", futures: list[Any], stop: "StopFlag") -> Iterator[None]:
    """Waiting for the training tasks ``futures``: when this block ends with an exception (a task's
    error, a worker that left, or the client interrupted), ``stop`` is set in the workers and the
    tasks are cancelled. An interrupt first waits up to :data:`STOP_WAIT_S` for the tasks to end,
    so that they leave XGBoost's collective before its tracker closes (a task's own error needs no
    wait: its peers' connections broke with it)."""
    from distributed import wait

    try:
        yield
    except BaseException as exc:
        stop_workers(client, stop)
        if not isinstance(exc, Exception):  # KeyboardInterrupt: the tasks are still training
            with suppress(Exception):  # a task still running after STOP_WAIT_S: cancelled below
                wait(futures, timeout=STOP_WAIT_S)
        client.cancel(futures)
        raise
