"""The contract's names under their old home, and the work estimate of the per-document kernels.

The objective contract (declarations, the :class:`Loss` base class, the conventions every
objective follows) lives in :mod:`._contract`; ``HESSIAN_FLOOR``, ``NO_INFO_HESSIAN``,
``floor_hessian``, ``check_params`` and ``PreparedObjective`` are importable from here too.
Serial or parallel kernels: :mod:`boostplug._core.dispatch`.
"""

from __future__ import annotations

from .._validation import show
from ._contract import HESSIAN_FLOOR, NO_INFO_HESSIAN, PreparedObjective, check_params, floor_hessian

#: Dispatch work (:mod:`boostplug._core.dispatch`) of one document in QBRank's and MPBoost's
#: kernels: as much as 50 pair visits, so they go parallel from 100,000 documents
#: (docs/results/objectives_notes/README.md).
DOC_WORK = 50

__all__ = ["HESSIAN_FLOOR", "NO_INFO_HESSIAN", "floor_hessian", "DOC_WORK", "PreparedObjective", "check_params",
           "show"]
