"""What a comparison holds in memory (:class:`Budget`), checked before any training: rounds or
trials whose least memory already exceeds what the machine has available cannot finish, so they
are refused with the estimate instead of failing (or swapping) after hours of training.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from .._memory import check_fits, format_bytes
from .._validation import check_rounds
from .methods import get_method

__all__ = ["SCORE_BYTES", "TRIAL_BYTES", "Budget", "check_budget"]

#: Bytes of one document's score in one round (float64), kept for the validation and test parts (the
#: round is chosen on the validation curve afterwards).
SCORE_BYTES = 8

#: The least memory one ``--tune`` trial's record keeps until the results are written (its
#: parameters, value, round and time; Optuna's own record of the trial comes on top).
TRIAL_BYTES = 512


class Budget:
    """A lower bound of a comparison's memory: the scores the largest run holds at its end (its
    rounds, a booster's own ``n_rounds`` setting or ``rounds``, times its fold's validation and
    test documents), plus ``tune`` trial records for every run whose method has a search space
    (kept until the results are written).

    ``folds``: ``(index, (train, vali, test))``; ``runs``: the ``(method, fold index)`` runs still
    to train; ``method``: the :class:`~.methods.Method` a name trains as (the click protocol's
    methods train as compare methods)."""

    def __init__(self, *, rounds: int, tune: int, folds: Sequence[tuple[int, Any]],
                 runs: Sequence[tuple[str, int]], method: Callable[[str], Any] = get_method) -> None:
        self.rounds, self.tune = rounds, tune
        rows = {i: vali.n_docs + test.n_docs for i, (_, vali, test) in folds}
        methods = {m: method(m) for m, _ in runs}
        # a booster's n_rounds setting replaces rounds for that method (compare.training._train_booster)
        own = {m: int(meth.loss_params.get("n_rounds", rounds)) if meth.framework == "booster" else rounds
               for m, meth in methods.items()}
        largest = max(runs, key=lambda r: own[r[0]] * rows[r[1]], default=None)
        self.run_rounds, self.run_rows = (own[largest[0]], rows[largest[1]]) if largest else (0, 0)
        # a method without a search space runs one trial whatever tune says
        self.tuned_runs = sum(1 for m, _ in runs if methods[m].search_space()) if tune else 0
        self.score_bytes = self.run_rounds * self.run_rows * SCORE_BYTES
        self.trial_bytes = self.tuned_runs * tune * TRIAL_BYTES

    def describe(self) -> str:
        """What the estimate is made of."""
        scores = (f"the scores of {self.run_rounds:,} rounds x {self.run_rows:,} validation and test documents x "
                  f"{SCORE_BYTES} bytes that one run keeps")
        if not self.trial_bytes:
            return scores
        trials = f"the records of {self.tune:,} trials x {self.tuned_runs:,} tuned runs x {TRIAL_BYTES} bytes"
        return f"{scores} ({format_bytes(self.score_bytes)}) and {trials} ({format_bytes(self.trial_bytes)})"


def check_budget(*, rounds: int, tune: int, folds: Sequence[tuple[int, Any]], runs: Sequence[tuple[str, int]],
                 method: Callable[[str], Any] = get_method) -> None:
    """``rounds`` in ``[1, 2^31 - 1]`` (:func:`~boostplug._validation.check_rounds`), and the least
    memory of the comparison (:class:`Budget`) within the memory available, else a ``ValueError``
    giving the estimate, what makes it up and what to lower."""
    check_rounds(rounds, "rounds")
    b = Budget(rounds=rounds, tune=tune, folds=folds, runs=runs, method=method)
    check_fits(b.score_bytes + b.trial_bytes, f"this comparison, {b.describe()},",
               "lower the rounds (a model may stop short of its best round)"
               + (" or the trials (a smaller search)" if b.trial_bytes else ""))
