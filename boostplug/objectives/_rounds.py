"""The rounds of an objective that draws at random, round by round (YetiRank's perturbed orders,
XE-NDCG's gammas, XGBoost's ``"mean"`` pairs): a mixin for their classes.

Every ``grad_hess(scores)`` without held weights starts a new round: :attr:`RandomRounds.rounds`
counts them (a call that raises starts none), and :attr:`RandomRounds.current_round` is the index of
the latest, ``round_offset() + rounds - 1`` (before any round: ``round_offset()``, the first round's
index; 0 unless a parameter says where a continued training resumes, as YetiRank's ``first_round``).
The objective draws round ``current_round``'s numbers: ``grad_hess`` those of the round it starts;
``loss``, held calls (``weights_at=``) and the private ``_loss``/``_grad_hess`` those of the current
round, starting none. The count belongs to one bound instance: the adapters bind one per training
set, so each ``lgb.cv`` fold counts its own rounds from the first, as a framework's per-fold
objective does.
"""

from __future__ import annotations

from typing import Any, ClassVar

from numpy.typing import ArrayLike

__all__ = ["RandomRounds"]


class RandomRounds:
    """Mixin (before :class:`~._loss.Loss` in the bases) counting the rounds of an objective that
    draws at random (module docstring)."""

    random_draws: ClassVar[bool] = True
    #: rounds started: ``grad_hess`` calls without held weights that did not raise
    rounds: int = 0

    def round_offset(self) -> int:
        """The index of the first round: the parameter ``first_round`` where an objective declares it (where
        a continued training resumes, as YetiRank's and every JaxLoss's), else 0."""
        return int(self.settings.get("first_round", 0))  # type: ignore[attr-defined]

    @property
    def current_round(self) -> int:
        """The index of the latest round, whose draws ``loss`` and held calls use (before any
        round: the first, ``round_offset()``)."""
        return self.round_offset() + max(self.rounds - 1, 0)

    def grad_hess(self, scores: ArrayLike, *, weights_at: ArrayLike | None = None) -> Any:
        if weights_at is not None or getattr(self, "weights_held", False):  # a held call starts no round
            return super().grad_hess(scores, weights_at=weights_at)  # type: ignore[misc]
        self.rounds += 1
        try:
            return super().grad_hess(scores)  # type: ignore[misc]
        except BaseException:
            self.rounds -= 1
            raise
