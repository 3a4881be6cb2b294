"""LightGBM's learning-to-rank example, shipped inside boostplug.

``rank.train`` (3,005 documents, 201 queries) and ``rank.test`` (768
documents, 50 queries) from LightGBM's ``examples/lambdarank`` (MIT license,
``_example/LICENSE``): 300 features, labels 0-4. Every stored value has two
decimals, so each split is kept as a compressed CSR matrix of *hundredths*
(``uint8``) and converted back as ``hundredths / 100.0``: IEEE division is
correctly rounded, so this gives exactly the float64 that parsing the
original text (``"0.89"``) gives.
"""

from __future__ import annotations

from importlib import resources

import numpy as np
import scipy.sparse as sp

from .dataset import RankingData

__all__ = ["load_example", "EXAMPLE_N_FEATURES"]

EXAMPLE_N_FEATURES = 300
_SCALE = 100.0


def _load_split(name: str, dense: bool) -> RankingData:
    ref = resources.files(__package__).joinpath("_example", f"{name}.npz")
    with resources.as_file(ref) as path, np.load(path) as z:
        data = z["hundredths"].astype(np.float64) / _SCALE
        X = sp.csr_matrix(
            (data, z["indices"].astype(np.int32), z["indptr"].astype(np.int64)),
            shape=(int(z["indptr"].shape[0] - 1), EXAMPLE_N_FEATURES),
        )
        y = z["labels"].astype(np.float64)
        sizes = z["sizes"].astype(np.int64)
    group_ptr = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    return RankingData(X.toarray() if dense else X, y, None, group_ptr)


def load_example(*, dense: bool = True) -> tuple[RankingData, RankingData]:
    """``(train, test)`` of LightGBM's lambdarank example, embedded in the package.

    Equal to ``load_letor("rank.train")`` / ``load_letor("rank.test",
    n_features=300)`` on LightGBM's files (qid ``0..n_queries-1`` from the
    ``.query`` sizes). ``dense=False`` gives CSR ``X``.
    """
    return _load_split("train", dense), _load_split("test", dense)
