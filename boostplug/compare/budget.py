"""What a comparison holds in memory, checked before any training.

A run keeps the validation and test scores of every round (the round is chosen on the
validation curve afterwards), and ``--tune`` keeps a record of every trial of every tuned
(method, fold). Rounds or trials whose least memory already exceeds what the machine has
available cannot finish: they are refused with the estimate instead of failing (or swapping)
after hours of training.
"""

from __future__ import annotations

from typing import Any, Sequence

from .._memory import check_fits, format_bytes
from .._validation import check_rounds
from .methods import get_method

__all__ = ["SCORE_BYTES", "TRIAL_BYTES", "Budget", "check_budget"]

#: Bytes of one document's score in one round (float64), kept for the validation and test parts.
SCORE_BYTES = 8

#: The least memory one ``--tune`` trial's record keeps until the results are written (its
#: parameters, value, round and time; Optuna's own record of the trial comes on top).
TRIAL_BYTES = 512


class Budget:
    """The least memory of a comparison: ``rounds`` rounds of each run's validation and test
    scores for the runs training at once (``min(jobs, runs)``, each on the largest validation +
    test part), and ``tune`` trial records of each run whose method has a search space.

    ``folds``: ``(index, (train, vali, test))``; ``runs``: the methods of the (method, fold) runs
    still to train, one entry per run."""

    def __init__(self, *, rounds: int, tune: int, folds: Sequence[tuple[int, Any]], runs: Sequence[str],
                 jobs: int) -> None:
        self.rounds, self.tune, self.jobs = rounds, tune, jobs
        self.rows = max((vali.n_docs + test.n_docs for _, (_, vali, test) in folds), default=0)
        self.parallel = min(jobs, len(runs))
        # a method without a search space runs one trial whatever --tune says
        self.tuned_runs = sum(1 for m in runs if get_method(m).search_space()) if tune else 0

    @property
    def score_bytes(self) -> int:
        return self.parallel * self.rounds * self.rows * SCORE_BYTES

    @property
    def trial_bytes(self) -> int:
        return self.tuned_runs * self.tune * TRIAL_BYTES

    def describe(self) -> str:
        """What the estimate is made of."""
        scores = (f"the scores of {self.rounds:,} rounds x {self.rows:,} validation and test documents x "
                  f"{SCORE_BYTES} bytes" + (f" x {self.parallel} runs at once" if self.parallel > 1 else ""))
        trials = f"the records of {self.tune:,} trials x {self.tuned_runs:,} tuned runs x {TRIAL_BYTES} bytes"
        if not self.trial_bytes:
            return scores
        return f"{scores} ({format_bytes(self.score_bytes)}) and {trials} ({format_bytes(self.trial_bytes)})"


def check_budget(*, rounds: int, tune: int, folds: Sequence[tuple[int, Any]], runs: Sequence[str], jobs: int) -> None:
    """``rounds`` in ``[1, 2^31 - 1]`` (:func:`~boostplug._validation.check_rounds`), and the least
    memory of the comparison (:class:`Budget`) within the memory available, else a ``ValueError``
    giving the estimate, what makes it up and what to lower."""
    check_rounds(rounds, "rounds")
    b = Budget(rounds=rounds, tune=tune, folds=folds, runs=runs, jobs=jobs)
    lower = ["the rounds"] + (["the trials"] if b.trial_bytes else []) + (["the parallel jobs"] if b.parallel > 1 else [])
    check_fits(b.score_bytes + b.trial_bytes, f"this comparison, {b.describe()},",
               "lower " + (", ".join(lower[:-1]) + " or " + lower[-1] if len(lower) > 1 else lower[0]))
