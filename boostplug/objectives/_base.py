"""The work estimate of the per-document objective kernels.

The objective contract (declarations, the :class:`Loss` base class, the conventions every
objective follows) lives in :mod:`._contract`; serial or parallel kernels:
:mod:`boostplug._core.dispatch`.
"""

from __future__ import annotations

#: Dispatch work (:mod:`boostplug._core.dispatch`) of one document in QBRank's and MPBoost's
#: kernels: as much as 50 pair visits, so they go parallel from 100,000 documents
#: (docs/results/objectives_notes/README.md).
DOC_WORK = 50

__all__ = ["DOC_WORK"]
