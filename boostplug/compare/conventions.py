"""The metric conventions of a comparison (``--protocol``, ``--gain``, ``--discount``, ``--empty``,
``--ties``, ``--max-grade``): one set for every reported metric, the round selection and the
significance tests. :data:`PROTOCOLS` holds ``"library"`` (default: boostplug's, LightGBM's and
XGBoost's) and ``"letor"`` (the official LETOR evaluation script's); what each sets:
docs/compare.md, "Protocol" (the conventions themselves: docs/metrics.md). The reported test
metrics (``--metrics``, :func:`parse_metrics`) travel with the conventions.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, replace
from typing import Any, Callable, Sequence

from numpy.typing import ArrayLike

from .. import metrics

__all__ = ["Conventions", "PROTOCOLS", "GAINS", "DISCOUNTS", "TIES", "EMPTIES", "REPORT_METRICS", "make_conventions",
           "parse_metric", "parse_metrics", "higher_is_better"]

#: Test metrics a comparison reports by default (``--metrics``).
REPORT_METRICS = ("ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10", "map")

GAINS = ("exp2", "linear")
DISCOUNTS = ("log2", "letor")
TIES = ("order", "average", "worst")
#: ``--empty`` values: what a query without a relevant document scores (``skip``: left out of means and tests)
EMPTIES = ("1", "0", "skip")
#: which convention each metric takes (the others do not apply to it)
_TAKES = {"ndcg": ("gain", "discount", "empty", "ties"), "dcg": ("gain", "discount", "ties"),
          "map": ("empty", "ties"), "precision": ("ties",), "mrr": ("empty", "ties"), "err": ("max_grade", "ties"),
          "rbp": ("ties",), "r1": (), "r2": ()}
_FUNCTIONS = {"ndcg": metrics.ndcg, "dcg": metrics.dcg, "map": metrics.average_precision,
              "precision": metrics.precision, "mrr": metrics.reciprocal_rank, "err": metrics.err, "rbp": metrics.rbp}
_RBP = re.compile(r"^rbp(?:@(.*))?$")
#: RBP's persistence when a name gives none (``boostplug.metrics.rbp``'s default)
RBP_PERSISTENCE = 0.8


def parse_metric(name: str) -> tuple[str, int | None, dict[str, Any]]:
    """``(base, k, options)`` of a metric name of ``--metrics`` or ``--select``: those of
    ``boostplug.metrics.parse_name`` (``"p@5"`` -> ``("precision", 5, {})``; ``ndcg@10``, ``map``, ``err@10``,
    ``mrr``, ...) and ``rbp@P`` (``("rbp", None, {"persistence": P})``, ``P`` in (0, 1); ``rbp``: 0.8).
    ``ValueError`` naming the name otherwise."""
    text = name.strip().lower() if isinstance(name, str) else name
    rbp = _RBP.match(text) if isinstance(text, str) and text.isascii() else None  # float() reads ٥ too
    if rbp is None:
        try:
            base, k = metrics.parse_name(name)
        except ValueError as e:
            raise ValueError(f"{e}; and rbp@P (rank-biased precision, persistence P in (0, 1); rbp: "
                             f"{RBP_PERSISTENCE})") from None
        return base, k, {}
    try:
        p = RBP_PERSISTENCE if rbp.group(1) is None else float(rbp.group(1))
    except ValueError:
        p = float("nan")
    if not 0.0 < p < 1.0:
        raise ValueError(f"metric {name!r}: rbp@P takes a persistence P in (0, 1), e.g. rbp@0.8 (rbp alone: "
                         f"{RBP_PERSISTENCE}); got {rbp.group(1)!r}")
    return "rbp", None, {"persistence": p}


def higher_is_better(name: str) -> bool:
    """False for the losses ``r1``/``r2``, True for every other metric name of :func:`parse_metric`."""
    return parse_metric(name)[0] not in ("r1", "r2")


def parse_metrics(text: str | Sequence[str]) -> tuple[str, ...]:
    """``--metrics``: comma-separated names of :func:`parse_metric` (or ``default``:
    :data:`REPORT_METRICS`), lower-cased; ``ndcg@10`` among them (the curves, the table's paired test and
    the verdict are NDCG@10's). ``ValueError`` naming the bad token, a repeated one, or the lack."""
    tokens = [t.strip().lower() for t in (text.split(",") if isinstance(text, str) else text) if t.strip()]
    if tokens == ["default"]:
        return REPORT_METRICS
    seen: dict[tuple[Any, ...], str] = {}
    for t in tokens:
        try:
            base, k, opts = parse_metric(t)
        except ValueError as e:
            raise ValueError(f"--metrics: {t!r}: {e}") from None
        if base in ("r1", "r2"):
            raise ValueError(f"--metrics: {t!r}: a loss over pairs, not a per-query test metric")
        key = (base, k, tuple(opts.items()))
        if key in seen:
            raise ValueError(f"--metrics: {t!r} repeats {seen[key]!r}")
        seen[key] = t
    if "ndcg@10" not in tokens:
        raise ValueError(f"--metrics {','.join(tokens) or text!r}: ndcg@10 must be one of them (the curves, the "
                         "table's paired test and the verdict are NDCG@10's)")
    return tuple(tokens)


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
    #: ERR's largest grade (``R_g = (2^g - 1) / 2^max_grade``)
    max_grade: float = metrics.ERR_MAX_GRADE
    #: the reported test metrics (:func:`parse_metrics`), in the table's order
    metrics: tuple[str, ...] = REPORT_METRICS

    def __post_init__(self) -> None:
        for name, allowed in (("gain", GAINS), ("discount", DISCOUNTS), ("ties", TIES)):
            value = getattr(self, name)
            if value not in allowed:
                raise ValueError(f"{name} must be one of {', '.join(allowed)}; got {value!r}")
        if not (self.empty == "skip" or (not isinstance(self.empty, bool) and self.empty in (0.0, 1.0))):
            raise ValueError(f"empty must be 1, 0 or 'skip'; got {self.empty!r}")
        if isinstance(self.max_grade, bool) or not isinstance(self.max_grade, (int, float)) \
                or not 0 < self.max_grade <= 64:
            raise ValueError(f"max_grade (ERR's largest grade) must be a number in (0, 64]; got {self.max_grade!r}")
        object.__setattr__(self, "metrics", parse_metrics(self.metrics))

    def options(self, name: str) -> dict[str, Any]:
        """The keyword options the metric called ``name`` takes from these conventions."""
        base, _, opts = parse_metric(name)
        return {**opts, **{k: getattr(self, k) for k in _TAKES.get(base, ())}}

    def metric(self, name: str) -> Callable[..., Any]:
        """``fn(scores, labels, group_ptr, per_query=False)``: metric ``name`` under these conventions."""
        base, k, _ = parse_metric(name)
        opts = self.options(name)
        if not opts:
            return metrics.by_name(name)
        fn = _FUNCTIONS[base]

        def metric(scores: ArrayLike, labels: ArrayLike, group_ptr: ArrayLike, per_query: bool = False) -> Any:
            return fn(scores, labels, group_ptr, k, per_query=per_query, **opts)

        metric.__name__ = name
        return metric

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "metrics": list(self.metrics)}

    def check_grades(self, folds: Sequence[tuple[int, Any]], select: str) -> None:
        """``ValueError`` naming ``--max-grade`` when ERR is reported or selects the round (``select``) and a label of
        ``folds`` (``(index, (train, vali, test))``) exceeds its maximum grade: refused before training."""
        if "err" not in {parse_metric(m)[0] for m in (*self.metrics, select)}:
            return
        top = max((float(part.y.max()) for _, fold in folds for part in fold if part.y.size), default=0.0)
        if top > self.max_grade:
            raise ValueError(f"the data have label {top:g}, above ERR's maximum grade {self.max_grade:g} "
                             f"({self.protocol} conventions): give --max-grade {top:g} (or more)")

    def footer(self) -> str:
        """The table's footer line: the conventions of the reported ERR, MRR, RBP and P@k (ERR's grade
        scale, ...); "" without them."""
        bases = {parse_metric(m)[0] for m in self.metrics}
        empty = "left out" if self.empty == "skip" else f"scores {self.empty:g}"
        parts = {"err": f"ERR: maximum grade {self.max_grade:g}, R_g = (2^g-1)/2^{self.max_grade:g}",
                 "mrr": f"MRR: relevance label >= 1, a query without a relevant document {empty}",
                 "rbp": f"RBP: binary relevance (label >= 1), persistence as named (rbp: {RBP_PERSISTENCE:g})",
                 "precision": "P@k: divided by k"}
        return "; ".join(text for base, text in parts.items() if base in bases)

    def describe(self) -> str:
        """One line for the table: every convention in words."""
        empty = ("left out" if self.empty == "skip" else f"scores {self.empty:g}")
        return (f"{self.protocol} conventions: NDCG {_WORDS['gain'][self.gain]}, {_WORDS['discount'][self.discount]}; "
                f"a query without a relevant document {empty} (NDCG, MAP); {_WORDS['ties'][self.ties]}; "
                "MAP relevance label >= 1")


#: The named sets of ``--protocol``.
PROTOCOLS = {
    "library": Conventions(),
    "letor": Conventions(discount="letor", empty=0.0, protocol="letor", max_grade=2.0),
}


def make_conventions(protocol: str = "library", *, gain: str | None = None, discount: str | None = None,
                     empty: str | float | None = None, ties: str | None = None, max_grade: float | None = None,
                     metrics: str | Sequence[str] | None = None) -> Conventions:
    """``PROTOCOLS[protocol]`` with the given conventions overriding it (``protocol`` becomes
    ``"custom"`` when one changes a value) and the reported ``metrics`` (:func:`parse_metrics`).
    ``empty``: ``"1"``/``1``, ``"0"``/``0`` or ``"skip"``.
    ``ValueError`` naming the value and the choices otherwise."""
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {', '.join(PROTOCOLS)}; got {protocol!r}")
    base = PROTOCOLS[protocol]
    changes: dict[str, Any] = {k: v for k, v in (("gain", gain), ("discount", discount), ("ties", ties),
                                                  ("max_grade", max_grade)) if v is not None}
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
    return out if metrics is None else replace(out, metrics=parse_metrics(metrics))
