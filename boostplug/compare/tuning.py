"""``boostplug compare --tune N``: the same search budget for every method (how the search runs
and what it records: docs/compare.md, "Tuning with the same budget for every method").

Each (method, fold) gets its own Optuna study (TPE, seeded from ``--seed``, the fold and the
method's name, so that a run in a parallel job searches exactly as a serial one) of ``N`` trials
over :meth:`Method.search_space`; trial 0 is the method as it stands, the best trial's model is
the one evaluated on test (nothing is retrained), and a method with an empty space has one trial.
Pruning: Optuna's median rule at each tenth of a trial's rounds, once :data:`PRUNE_STARTUP` trials
have finished and from the :data:`PRUNE_WARMUP`-th point on; trial 0 is never pruned.
"""

from __future__ import annotations

import math
import time
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable

from .conventions import higher_is_better
from .method_specs import format_value, parse_value
from .methods import Method
from .run_warnings import at_trial
from .training import Trained

__all__ = ["Trial", "TuningRecord", "tune", "require_optuna", "study_seed", "PRUNE_STARTUP", "PRUNE_WARMUP"]

#: ``score(trained) -> (value at the best round, best round 1-based)`` on the validation part.
Score = Callable[[Trained], "tuple[float, int]"]
#: ``value(vali_scores)``: the selection metric of one round's validation scores.
Value = Callable[[Any], float]
#: Finished trials before any trial is pruned, and checkpoints a trial always runs.
PRUNE_STARTUP = 5
PRUNE_WARMUP = 3


class _Pruned(Exception):
    """Raised through the training loop by a checkpoint that the pruner stops."""


@dataclass
class Trial:
    """One trial: its parameters (those searched), validation value at its best round, seconds."""

    number: int
    params: dict[str, Any]
    value: float | None
    best_round: int
    seconds: float
    error: str = ""
    #: "complete", "pruned" (its value: the best checkpoint value it reached) or "failed"
    state: str = "complete"
    #: the round at which a pruned trial stopped
    pruned_at: int = 0


@dataclass
class TuningRecord:
    """A finished study: the space, the chosen parameters, every trial and the total seconds."""

    n_trials: int
    metric: str
    space: dict[str, str]
    chosen: dict[str, Any]
    best_trial: int
    seconds: float
    trials: list[Trial] = field(default_factory=list)


def require_optuna() -> Any:
    """Optuna (a dependency of boostplug), or an ``ImportError`` that says how to install it."""
    try:
        import optuna
    except ImportError:
        raise ImportError("--tune needs Optuna, a dependency of boostplug: pip install 'optuna>=4.0'") from None
    return optuna


def study_seed(seed: int, fold: int, name: str) -> int:
    """The TPE sampler's seed for one (method, fold), as the module docstring says."""
    return (seed * 1_000_003 + fold * 7919 + zlib.crc32(name.encode())) % (2**32)


def tune(method: Method, n_trials: int, train_one: Callable[..., Trained], score: Score, *,
         metric: str, seed: int, fold: int, progress: Callable[[int, int], None] | None = None,
         value: Value | None = None) -> tuple[Trained, TuningRecord]:
    """Search ``method``'s space with ``n_trials`` trials (one when the space is empty); returns the
    best trial's :class:`Trained` and the record. ``train_one(configured_method, checkpoint)``
    trains (calling ``checkpoint(round, vali_scores)`` during training, which may raise to prune);
    ``score`` reads the validation value and best round; ``value`` gives a checkpoint's value
    (``None``: no pruning). A trial that raises is recorded and the search goes on; when every
    trial raised, the first error is raised."""
    optuna = require_optuna()
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    space = method.search_space()
    total = n_trials if space else 1
    maximize = higher_is_better(metric)
    sampler = optuna.samplers.TPESampler(seed=study_seed(seed, fold, method.name),
                                         n_startup_trials=min(10, max(1, total // 2)))
    pruner = (optuna.pruners.MedianPruner(n_startup_trials=PRUNE_STARTUP, n_warmup_steps=PRUNE_WARMUP - 1)
              if value is not None else optuna.pruners.NopPruner())
    study = optuna.create_study(direction="maximize" if maximize else "minimize", sampler=sampler, pruner=pruner)
    trials: list[Trial] = []
    errors: list[BaseException] = []
    done = progress or (lambda finished, of: None)
    best: dict[str, Any] = {}

    def objective(trial: Any) -> float:
        # trial 0 is the method as configured (no suggestion: its values may lie outside the space)
        params = {} if trial.number == 0 else {k: d.suggest(trial, k) for k, d in space.items()}
        at_trial(trial.number)  # the warnings this trial raises name it
        t0 = time.perf_counter()
        seen: list[float] = []  # the best checkpoint value so far, per checkpoint

        def record(value: float | None, best_round: int, **more: Any) -> None:
            trials.append(Trial(trial.number, _plain(params), value, best_round, time.perf_counter() - t0, **more))
            done(trial.number + 1, total)

        def checkpoint(step: int, vali_scores: Any) -> None:
            if value is None or trial.number == 0:
                return
            v = float(value(vali_scores))
            if seen and math.isfinite(seen[-1]) and not (v > seen[-1] if maximize else v < seen[-1]):
                v = seen[-1]
            seen.append(v)
            trial.report(v, len(seen) - 1)
            if trial.should_prune():
                raise _Pruned(step)

        try:
            trained = train_one(method.configure(params, rename=False) if params else method, checkpoint)
            value_, best_round = score(trained)
        except _Pruned as p:
            record(seen[-1], 0, state="pruned", pruned_at=int(p.args[0]))
            raise optuna.TrialPruned() from None
        except Exception as e:  # not an interrupt: it stops the search without redrawing the bar
            errors.append(e)
            record(None, 0, error=f"{type(e).__name__}: {e}", state="failed")
            raise
        record(value_, best_round)
        if value_ is not None and math.isfinite(value_) and (
                not best or (value_ > best["value"] if maximize else value_ < best["value"])):
            best.update(value=value_, trained=trained, number=trial.number, params=params)
        return value_

    t0 = time.perf_counter()
    study.optimize(objective, n_trials=total, catch=(Exception,))
    at_trial(None)
    seconds = time.perf_counter() - t0
    if not best:
        raise errors[0] if errors else ValueError(f"{method.name}: no trial gave a finite validation value")
    chosen = {**{k: v for k, v in method.parameters().items() if k in space}, **_plain(best["params"])}
    record = TuningRecord(n_trials=total, metric=metric, space={k: d.describe() for k, d in space.items()},
                          chosen=chosen, best_trial=best["number"], seconds=seconds, trials=trials)
    return best["trained"], record


def _plain(params: dict[str, Any]) -> dict[str, Any]:
    """JSON-ready values (numpy scalars as plain numbers)."""
    return {k: parse_value(format_value(v)) if not isinstance(v, (str, bool)) else v for k, v in params.items()}
