"""The metric conventions of a comparison (``--protocol``, ``--gain``, ``--discount``, ``--empty``,
``--ties``): one set for every reported metric, the round selection and the significance tests.

* ``"library"`` (default): boostplug's defaults, those of LightGBM and XGBoost (``docs/metrics.md``):
  NDCG gain 2^r - 1, discount 1/log2(rank + 1), a query without a relevant document scores 1,
  tied scores in input order, MAP over relevance label >= 1.
* ``"letor"``: the official LETOR evaluation script's: gain 2^r - 1, the LETOR discount (ranks 1
  and 2 undiscounted, then 1/log2(rank)), a query without a relevant document scores 0 (NDCG and
  MAP), ties in input order, MAP over label >= 1.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any, Callable

from numpy.typing import ArrayLike

from .. import metrics

__all__ = ["Conventions", "PROTOCOLS", "GAINS", "DISCOUNTS", "TIES", "EMPTIES", "make_conventions"]

GAINS = ("exp2", "linear")
DISCOUNTS = ("log2", "letor")
TIES = ("order", "average", "worst")
#: ``--empty`` values: what a query without a relevant document scores (``skip``: left out of means and tests)
EMPTIES = ("1", "0", "skip")
#: which convention each metric takes (the others do not apply to it)
_TAKES = {"ndcg": ("gain", "discount", "empty", "ties"), "dcg": ("gain", "discount", "ties"),
          "map": ("empty", "ties"), "precision": ("ties",), "mrr": ("empty", "ties"), "err": ("ties",),
          "r1": (), "r2": ()}
_WORDS = {
    "gain": {"exp2": "gain 2^r-1", "linear": "gain r"},
    "discount": {"log2": "discount 1/log2(rank+1)", "letor": "LETOR discount (ranks 1-2 undiscounted, then 1/log2(rank))"},
    "ties": {"order": "ties in input order", "average": "ties averaged over their orders",
             "worst": "ties worst first (lowest label first)"},
}


@dataclass(frozen=True)
class Conventions:
    """One choice per convention (``boostplug.metrics`` option names and values); ``protocol``
    names the set they started from (``"library"``, ``"letor"``, or ``"custom"`` when overridden)."""

    gain: str = "exp2"
    discount: str = "log2"
    empty: float | str = 1.0
    ties: str = "order"
    protocol: str = "library"

    def __post_init__(self) -> None:
        for name, allowed in (("gain", GAINS), ("discount", DISCOUNTS), ("ties", TIES)):
            value = getattr(self, name)
            if value not in allowed:
                raise ValueError(f"{name} must be one of {', '.join(allowed)}; got {value!r}")
        if not (self.empty == "skip" or (not isinstance(self.empty, bool) and self.empty in (0.0, 1.0))):
            raise ValueError(f"empty must be 1, 0 or 'skip'; got {self.empty!r}")

    def options(self, name: str) -> dict[str, Any]:
        """The keyword options the metric called ``name`` takes from these conventions."""
        base, _ = metrics.parse_name(name)
        return {k: getattr(self, k) for k in _TAKES.get(base, ())}

    def metric(self, name: str) -> Callable[..., Any]:
        """``fn(scores, labels, group_ptr, per_query=False)``: metric ``name`` under these conventions."""
        base, k = metrics.parse_name(name)
        opts = self.options(name)
        if not opts:
            return metrics.by_name(name)
        fn = {"ndcg": metrics.ndcg, "dcg": metrics.dcg, "map": metrics.average_precision,
              "precision": metrics.precision, "mrr": metrics.reciprocal_rank, "err": metrics.err}[base]

        def metric(scores: ArrayLike, labels: ArrayLike, group_ptr: ArrayLike, per_query: bool = False) -> Any:
            return fn(scores, labels, group_ptr, k, per_query=per_query, **opts)

        metric.__name__ = name
        return metric

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def describe(self) -> str:
        """One line for the table: every convention in words."""
        empty = ("left out" if self.empty == "skip" else f"scores {self.empty:g}")
        return (f"{self.protocol} conventions: NDCG {_WORDS['gain'][self.gain]}, {_WORDS['discount'][self.discount]}; "
                f"a query without a relevant document {empty} (NDCG, MAP); {_WORDS['ties'][self.ties]}; "
                "MAP relevance label >= 1")


#: The named sets of ``--protocol``.
PROTOCOLS = {
    "library": Conventions(),
    "letor": Conventions(discount="letor", empty=0.0, protocol="letor"),
}


def make_conventions(protocol: str = "library", *, gain: str | None = None, discount: str | None = None,
                     empty: str | float | None = None, ties: str | None = None) -> Conventions:
    """``PROTOCOLS[protocol]`` with the given conventions overriding it (``protocol`` becomes
    ``"custom"`` when one changes a value). ``empty``: ``"1"``/``1``, ``"0"``/``0`` or ``"skip"``.
    ``ValueError`` naming the value and the choices otherwise."""
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {', '.join(PROTOCOLS)}; got {protocol!r}")
    base = PROTOCOLS[protocol]
    changes: dict[str, Any] = {k: v for k, v in (("gain", gain), ("discount", discount), ("ties", ties))
                               if v is not None}
    if empty is not None:
        text = str(empty).strip().lower()
        if text == "skip":
            changes["empty"] = "skip"
        elif text in ("1", "1.0", "0", "0.0"):
            changes["empty"] = float(text)
        else:
            raise ValueError(f"empty must be one of {', '.join(EMPTIES)}; got {empty!r}")
    out = replace(base, **changes)
    if out != base:
        out = replace(out, protocol="custom")
    return out
