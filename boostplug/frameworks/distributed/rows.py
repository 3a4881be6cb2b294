"""One worker's rows of one set (training or validation), as arrays."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Part"]


@dataclass
class Part:
    """One worker's rows of one set: whole queries, contiguous; ``doc`` the rows' document keys."""

    X: Any  # a numpy array, or a scipy CSR matrix of sparse rows
    y: np.ndarray
    qid: np.ndarray
    weight: np.ndarray | None
    doc: np.ndarray | None = None
    #: Row-set objective parameters (QBRank's ``labeled_rows``): parameter -> this worker's row indices.
    row_sets: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def n_rows(self) -> int:
        return int(self.y.shape[0])
