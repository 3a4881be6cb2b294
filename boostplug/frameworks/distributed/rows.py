"""One worker's rows of one set (training or validation), as numpy arrays."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Part"]


@dataclass
class Part:
    """One worker's rows of one set: whole queries, contiguous; ``doc`` the rows' document keys."""

    X: np.ndarray
    y: np.ndarray
    qid: np.ndarray
    weight: np.ndarray | None
    doc: np.ndarray | None = None

    @property
    def n_rows(self) -> int:
        return int(self.y.shape[0])
