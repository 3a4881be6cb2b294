"""One worker's rows of one set (training or validation), as arrays."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

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

    @classmethod
    def of_frame(cls, rows: Any, X: Any, label_col: str, qid_col: str, weight_col: str | None = None,
                 doc_col: str | None = None, row_sets: Mapping[str, np.ndarray] | None = None) -> "Part":
        """The part of a pandas frame ``rows`` (one worker's rows, on either engine) whose features
        are ``X``: labels and weights as doubles, the query ids and document keys as they are."""
        return cls(X, rows[label_col].to_numpy(np.float64), rows[qid_col].to_numpy(),
                   rows[weight_col].to_numpy(np.float64) if weight_col else None,
                   rows[doc_col].to_numpy() if doc_col else None, dict(row_sets or {}))
