"""The feature matrix a data set, a loader or a booster takes: :func:`check_features` (its shape,
dtype and values, messages naming the offending column or cell) and :func:`first_infinite`."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    import scipy.sparse as sp

__all__ = ["check_features", "first_infinite"]


def first_infinite(X: object) -> tuple[int, int, float] | None:
    """``(row, column, value)`` of the first infinite entry of a 2-d array or the first stored
    one of a scipy CSR matrix (row-major order), or ``None``."""
    if hasattr(X, "indptr"):
        k = np.flatnonzero(np.isinf(X.data))
        if not k.size:
            return None
        row = int(np.searchsorted(X.indptr, k[0], side="right")) - 1
        return row, int(X.indices[k[0]]), float(X.data[k[0]])
    cells = np.argwhere(np.isinf(X))
    if not cells.size:
        return None
    r, c = (int(v) for v in cells[0])
    return r, c, float(X[r, c])


def check_features(X: object, name: str = "X", *, dense: bool, allow_inf: bool,
                   allow_empty: bool) -> NDArray[np.float64] | sp.csr_matrix:
    """A feature matrix ``(n_docs, n_features)`` of float64; NaN (a missing value) is kept.

    The rules that differ between callers are parameters:

    * ``dense``: ``True`` gives a C-contiguous array (sparse input densified), as the
      boosters index columns; ``False`` keeps scipy-sparse input as CSR and dense input in
      its memory order (a data container should not copy what it only holds);
    * ``allow_inf``: ``False`` refuses infinite values, naming the first cell;
    * ``allow_empty``: ``False`` refuses a matrix without columns (a ranker needs one).

    Errors name ``name``: ``ValueError`` for a shape or value, ``TypeError`` for a dtype.
    """
    import scipy.sparse as sp  # only where a matrix is checked: the metrics need no scipy

    if sp.issparse(X) and not dense:
        out: NDArray[np.float64] | sp.csr_matrix = sp.csr_matrix(X, dtype=np.float64)
    else:
        out = np.asarray(X.toarray() if hasattr(X, "toarray") else X)
    if out.ndim != 2:
        raise ValueError(f"{name} must be two-dimensional (n_docs, n_features), got shape {out.shape}")
    if out.dtype.kind not in "biuf":
        raise TypeError(_not_numeric(X, out, name))
    if not allow_empty and out.shape[1] == 0:
        raise ValueError(f"{name} has no features (shape {out.shape}): a ranker needs at least one feature column")
    if not sp.issparse(out):
        out = np.ascontiguousarray(out, dtype=np.float64) if dense else np.asarray(out, dtype=np.float64)
    if not allow_inf:
        cell = first_infinite(out)
        if cell is not None:
            r, c, v = cell
            raise ValueError(f"{name} must not hold infinite values; {name}[{r}, {c}] = {v}")
    return out


def _not_numeric(X: object, arr: np.ndarray, name: str) -> str:
    """Why the 2-d ``arr`` (``X`` as an array) is not numeric, naming the first column that is not:
    by its name for a pandas DataFrame, else by its index, with a value it holds."""
    fix = "; encode it as numbers or drop it"
    dtypes = getattr(X, "dtypes", None)
    if dtypes is not None and hasattr(dtypes, "items"):  # a DataFrame: the first column of another dtype
        for column, dtype in dtypes.items():
            if getattr(dtype, "kind", "O") not in "biuf":
                values = X[column].to_numpy()
                return (f"{name} must be numeric: column {column!r} has dtype {dtype}{_first_value(values)}; encode "
                        "it as numbers (e.g. pandas.get_dummies, or .cat.codes for a category) or drop it")
    for j in range(arr.shape[1]):
        try:
            np.asarray(arr[:, j], dtype=np.float64)
        except (TypeError, ValueError):
            return (f"{name} must be numeric, got dtype {arr.dtype}: column {j} is not numeric"
                    f"{_first_value(arr[:, j])}{fix}")
    return f"{name} must be numeric, got dtype {arr.dtype} (its values are numbers: np.asarray({name}, dtype=float))"


def _first_value(values: np.ndarray) -> str:
    """`` (e.g. 'x' in row 3)``: the first value of a column that is not a number."""
    for i, v in enumerate(values.tolist()):
        try:
            float(v)
        except (TypeError, ValueError):
            return f" (e.g. {v!r} in row {i})"
    return ""
