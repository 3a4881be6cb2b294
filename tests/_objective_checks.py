"""What every registered objective is checked for, in pieces the contract suite
(test_objective_contract_suite.py) and the per-paper tests share.

* :data:`CASES`: every registered objective x each of its Hessian modes x settings read from the
  registry (see :func:`cases`), so that an objective registered later is checked with no edit;
  :data:`CONFIGURATIONS`: those at the configurations the registry lists;
* :func:`contract_data`: small random data (grades 0-4, several queries among which a
  one-document and a single-label query, per-query weights, a few features);
* :func:`five_point`, :func:`fd_gradient`, :func:`fd_jacobian`: central five-point differences;
* assertions about a Hessian mode's kind (:func:`assert_exact_diagonal`,
  :func:`assert_bound_majorises`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, NamedTuple

import numpy as np

from boostplug import objectives
from boostplug.objectives import HESSIAN_FLOOR, NO_INFO_HESSIAN, floor_hessian

__all__ = ["Case", "CASES", "CONFIGURATIONS", "ContractData", "cases", "contract_data", "query_pairs",
           "multi_label_queries", "five_point", "fd_gradient", "fd_jacobian", "assert_exact_diagonal",
           "assert_bound_majorises"]


# ---- finite differences ---------------------------------------------------------------------------------
def five_point(f: Callable[[np.ndarray], Any], x: np.ndarray, i: int, h: float = 1e-4) -> Any:
    """Central five-point difference of ``f`` (a float or an array of ``x``) along coordinate ``i``."""

    def at(d: float) -> Any:
        y = np.array(x, dtype=np.float64)
        y[i] += d
        return f(y)

    return (-at(2 * h) + 8 * at(h) - 8 * at(-h) + at(-2 * h)) / (12 * h)


def fd_gradient(loss: Callable[[np.ndarray], float], x: np.ndarray, h: float = 1e-4) -> np.ndarray:
    """The gradient of ``loss`` at ``x`` by five-point differences."""
    return np.array([five_point(loss, x, i, h) for i in range(len(x))])


def fd_jacobian(grad: Callable[[np.ndarray], np.ndarray], x: np.ndarray, h: float = 1e-4) -> np.ndarray:
    """``J[:, k]`` = d grad / d x_k by five-point differences (the Hessian when ``grad`` is a gradient)."""
    return np.column_stack([five_point(grad, x, k, h) for k in range(len(x))])


# ---- what a Hessian mode's kind promises ------------------------------------------------------------------
def assert_exact_diagonal(g: np.ndarray, h: np.ndarray, diag: np.ndarray, *, rtol: float = 1e-6,
                          atol: float = 1e-8) -> None:
    """``h`` (as ``grad_hess`` returns it) is the floored ``diag`` (the loss's Hessian diagonal):
    equal where it is above the floor, :data:`HESSIAN_FLOOR` where it is negative, and
    :data:`NO_INFO_HESSIAN` for a document the loss does not involve (zero gradient and curvature)."""
    np.testing.assert_allclose(h, floor_hessian(g, diag), rtol=rtol, atol=atol)
    negative = diag < -atol
    np.testing.assert_array_equal(h[negative], HESSIAN_FLOOR)
    np.testing.assert_array_equal(h[(g == 0.0) & (diag == 0.0)], NO_INFO_HESSIAN)


def assert_bound_majorises(bound: np.ndarray, hessian: np.ndarray, *, tol: float) -> None:
    """``bound`` >= |diagonal of ``hessian``| and ``diag(bound) - hessian`` is positive
    semi-definite: a Newton step on any leaf partition stays under the quadratic upper bound."""
    assert np.all(bound >= np.abs(np.diag(hessian)) - tol), (bound, np.diag(hessian))
    gap = np.diag(bound) - 0.5 * (hessian + hessian.T)
    assert np.linalg.eigvalsh(gap).min() >= -tol


# ---- data -------------------------------------------------------------------------------------------------
class ContractData(NamedTuple):
    scores: np.ndarray
    labels: np.ndarray
    group_ptr: np.ndarray
    weights: np.ndarray
    X: np.ndarray


def contract_data(seed: int = 3, n_queries: int = 6, max_docs: int = 7) -> ContractData:
    """Grades 0-4 in ``n_queries`` queries: query 0 has one document, query 1 one label for all its
    documents, the others at least two grades; continuous scores (no ties, no hinge at its kink);
    per-query weights that float32 holds exactly (LightGBM stores weights as float32)."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(3, max_docs + 1, size=n_queries)
    sizes[0] = 1
    group_ptr = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    labels = np.empty(int(group_ptr[-1]))
    for q, (a, b) in enumerate(zip(group_ptr[:-1], group_ptr[1:])):
        grades = rng.integers(0, 5, size=b - a).astype(np.float64)
        if q == 1:
            grades[:] = 2.0
        elif q > 1:
            grades[:2] = rng.choice(5, size=2, replace=False)
        labels[a:b] = grades
    scores = rng.normal(size=labels.shape[0])
    weights = rng.choice([0.5, 1.25, 2.0, 3.0], size=n_queries)
    X = rng.normal(size=(labels.shape[0], 3))
    return ContractData(scores, labels, group_ptr, weights, X)


def query_pairs(labels: np.ndarray, group_ptr: np.ndarray) -> np.ndarray:
    """Row pairs inside each query (its last row before its first, its first before its second),
    for row-index parameters: ``shape (P, 2)``, possibly empty."""
    rows = []
    for a, b in zip(group_ptr[:-1], group_ptr[1:]):
        if b - a >= 2:
            rows.append([b - 1, a])
        if b - a >= 3:
            rows.append([a, a + 1])
    return np.array(rows, dtype=np.int64).reshape(-1, 2)


def multi_label_queries(labels: np.ndarray, group_ptr: np.ndarray) -> list[int]:
    """The queries with at least two different grades: those with something to rank."""
    return [q for q, (a, b) in enumerate(zip(group_ptr[:-1], group_ptr[1:])) if np.unique(labels[a:b]).size > 1]


# ---- the cases, from the registry -----------------------------------------------------------------------
@dataclass(frozen=True)
class Case:
    """One registered objective in one Hessian mode with some settings.

    ``rows``: the objective's row-index parameters are set to :func:`query_pairs` of the data.
    ``registered``: the settings are a configuration the registry lists (the defaults or one of
    the entry's ``methods``), not a variation of one parameter.
    """

    name: str
    mode: str
    settings: tuple[tuple[str, Any], ...] = ()
    rows: bool = False
    registered: bool = False

    @property
    def entry(self) -> objectives.Objective:
        return objectives.get(self.name)

    @property
    def kind(self) -> str:
        """The Hessian mode's kind: ``"exact"``, ``"bound"`` or ``"fitting"``."""
        return self.entry.hessian_kinds[self.mode]

    @property
    def gradient(self) -> str:
        """What the mode declares its gradient to be: ``"exact"`` or ``"scaled"``."""
        return self.entry.gradient_kinds[self.mode]

    @property
    def id(self) -> str:
        parts = [self.name, self.mode] + [f"{k}={v}" for k, v in self.settings]
        return "-".join(parts + (["rows"] if self.rows else []))

    def params(self, labels: np.ndarray, group_ptr: np.ndarray) -> dict[str, Any]:
        """The parameters for data with these labels and groups."""
        p = dict(self.settings)
        if "hessian" in self.entry.loss_class.declared_params():
            p["hessian"] = self.mode
        if self.rows:
            pairs = query_pairs(labels, group_ptr)
            p.update({k: pairs for k in self.entry.row_params})
        return p

    def prepare(self, labels: np.ndarray, group_ptr: np.ndarray, weights: np.ndarray | None = None):
        return self.entry.prepare(labels, group_ptr, weights=weights, **self.params(labels, group_ptr))


def _search_values(search: objectives.Search) -> tuple[Any, ...]:
    return search.choices or (search.low, search.high)


def _settings_of(name: str) -> list[tuple[dict[str, Any], bool]]:
    """(settings, registered) for one objective: the defaults, each of its ``methods``, each other
    value of a choice or bool parameter, and both ends (or every choice) of each parameter that
    ``search_space`` offers at the defaults and at each method."""
    entry = objectives.get(name)
    declared = entry.loss_class.declared_params()
    defaults = entry.defaults
    found: list[tuple[dict[str, Any], bool]] = []

    def add(settings: Mapping[str, Any], registered: bool) -> None:
        effective = {k: v for k, v in settings.items() if defaults.get(k) != v}
        if all(effective != s for s, _ in found):
            found.append((effective, registered))

    starts = [{}] + [dict(m) for m in entry.methods.values()]
    for s in starts:
        add(s, True)
    for pname, p in declared.items():
        if pname == "hessian" or pname in entry.fixed:
            continue
        alternatives = p.choices if p.kind == "choice" else (True, False) if p.kind == "bool" else ()
        for v in alternatives:
            add({pname: v}, False)
    for s in starts:
        for pname, search in entry.search_space(s).items():
            for v in _search_values(search):
                add({**s, pname: v}, False)
    return found


def cases() -> list[Case]:
    """Every registered objective x each of its Hessian modes x :func:`_settings_of`, plus one
    case per mode with the row-index parameters (if it declares any) built from the data."""
    out = []
    for name in objectives.names():
        entry = objectives.get(name)
        for mode in entry.hessian_kinds:
            for settings, registered in _settings_of(name):
                out.append(Case(name, mode, tuple(sorted(settings.items())), registered=registered))
            if entry.row_params:
                out.append(Case(name, mode, rows=True))
    return out


CASES = cases()

#: The registry's configurations (defaults, methods) and the row-index parameters built from the data.
CONFIGURATIONS = [c for c in CASES if c.registered or c.rows]
