"""What the contract checks run on: the objective to check (by name, class or registry entry),
its cases (Hessian modes x settings from the registry), the data they use and finite differences."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping, NamedTuple, Sequence

import numpy as np

from .. import objectives
from .._validation import show
from ..objectives import Hessian, Loss, Objective

__all__ = ["Case", "ContractData", "cases", "contract_data", "extreme_inputs", "fd_gradient", "fd_jacobian",
           "five_point", "multi_label_queries", "query_pairs", "registered", "resolve"]


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


# ---- data -------------------------------------------------------------------------------------------------
class ContractData(NamedTuple):
    """Scores, labels, ``group_ptr``, per-query weights and a few features of one small data set."""

    scores: np.ndarray
    labels: np.ndarray
    group_ptr: np.ndarray
    weights: np.ndarray
    X: np.ndarray


#: The author's data set (``check_objective(data=...)``), used in place of the default contract data.
GIVEN: list[ContractData] = []


def given_data(labels: Any, group_ptr: Any, weights: Any = None) -> ContractData:
    """The author's labels and queries as contract data: random scores (seed 3), weights (default 1)
    and three random features."""
    labels = np.asarray(labels, dtype=np.float64)
    rng = np.random.default_rng(3)
    weights = np.ones(len(group_ptr) - 1) if weights is None else np.asarray(weights, dtype=np.float64)
    return ContractData(rng.normal(size=labels.shape[0]), labels, np.asarray(group_ptr, dtype=np.int64), weights,
                        rng.normal(size=(labels.shape[0], 3)))


@contextlib.contextmanager
def given(data: Any) -> Iterator[None]:
    """Within: :func:`contract_data` (with its defaults) returns ``given_data(*data)`` (``None``: as usual)."""
    GIVEN[:] = [] if data is None else [given_data(*data)]
    try:
        yield
    finally:
        GIVEN[:] = []


def contract_data(seed: int = 3, n_queries: int = 6, max_docs: int = 7, *, ties: bool = False) -> ContractData:
    """Grades 0-4 in ``n_queries`` queries: query 0 has one document, query 1 one label for all its
    documents, the others at least two grades; continuous scores (no ties, no hinge at its kink;
    ``ties=True``: scores rounded to one decimal, about a third of them 0); per-query weights that
    float32 holds exactly (LightGBM stores weights as float32). With the defaults, inside
    ``check_objective(data=...)``: the author's data instead (:data:`GIVEN`)."""
    if GIVEN and (seed, n_queries, max_docs, ties) == (3, 6, 7, False):
        return GIVEN[-1]
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
    if ties:
        scores = np.where(rng.random(scores.shape[0]) < 0.3, 0.0, np.round(scores, 1))
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


def extreme_inputs() -> Iterator[tuple[str, np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]]:
    """``(what, scores, labels, group_ptr, weights)``: scores up to +-1.7e308 (whose differences
    overflow float64), huge gaps, all-equal scores, one-document queries, every label equal, and
    huge scores in queries of weight 0."""
    d = contract_data()
    signs = np.random.default_rng(5).choice([-1.0, 1.0], size=d.scores.shape[0])
    n = d.scores.shape[0]
    one_each = np.arange(n + 1, dtype=np.int64)
    yield "+-1e300", 1e300 * signs, d.labels, d.group_ptr, None
    yield "+-1.7e308", 1.7e308 * signs, d.labels, d.group_ptr, None
    yield "+-1.7e308, every other query of weight 0", 1.7e308 * signs, d.labels, d.group_ptr, \
        np.arange(d.group_ptr.shape[0] - 1) % 2.0
    for gap in (1e8, 1e15, 1e150):
        yield f"gaps of {gap:g}", d.scores * gap, d.labels, d.group_ptr, None
    for c in (0.0, 1e17, 1e300, -1e300):
        yield f"all equal to {c:g}", np.full(n, c), d.labels, d.group_ptr, None
    yield "one-document queries", d.scores, d.labels, one_each, None
    yield "one-document queries at +-1e300", 1e300 * signs, d.labels, one_each, None
    for grade in (0.0, 3.0):
        yield f"every label {grade:g}", d.scores, np.full(n, grade), d.group_ptr, None
        yield f"every label {grade:g} at +-1e300", 1e300 * signs, np.full(n, grade), d.group_ptr, None


# ---- the objective to check -------------------------------------------------------------------------------
def resolve(objective: str | type[Loss] | Loss | Objective) -> Objective:
    """The registry entry of ``objective``: a registered name, an entry, or a :class:`Loss`
    subclass or instance (its class's registered entry of its own name, else of any name; an
    unregistered class is registered and unregistered again, to get the entry
    :func:`registered` restores)."""
    if isinstance(objective, Objective):
        return objective
    if isinstance(objective, str):
        return objectives.get(objective)
    if isinstance(objective, Loss):
        entry = objectives.resolve(objective)  # a registered class's, also for the subclass its settings made
        if objectives.is_registered(entry):
            return entry
        objective = type(objective)
    if isinstance(objective, type) and issubclass(objective, Loss):
        mine = [objectives.get(n) for n in objectives.names() if objectives.get(n).loss_class is objective]
        if mine:
            return next((e for e in mine if e.name == objective.name), mine[0])
        taken = objective.name if isinstance(objective.name, str) and objective.name in objectives.names() else None
        if taken is not None:
            raise ValueError(f"cannot check {objective.__name__}: its name {taken!r} is registered to "
                             f"{objectives.get(taken).loss_class.__name__}; unregister that one first")
        entry = objectives.register(objective)
        objectives.unregister(entry.name)
        return entry
    raise TypeError(f"an objective to check is a registered name, a boostplug.objectives.Loss subclass or instance, "
                    f"or a registry entry, got {show(objective)}")


@contextlib.contextmanager
def registered(entry: Objective) -> Iterator[Objective]:
    """``entry`` in the registry for the duration (the adapters look objectives up by name):
    nothing to do when it is there already, else registered and unregistered after."""
    current = objectives.get(entry.name) if entry.name in objectives.names() else None
    if current is not None:
        if current != entry:
            raise ValueError(f"cannot check objective {entry.name!r} ({entry.loss_class.__name__}): that name is "
                             f"registered to another entry ({current.loss_class.__name__}, "
                             f"fixed {dict(current.fixed)})")
        yield current
        return
    objectives.register(entry.loss_class, name=entry.name, summary=entry.summary, fixed=dict(entry.fixed),
                        methods={k: dict(v) for k, v in entry.methods.items()})
    try:
        yield entry
    finally:
        objectives.unregister(entry.name)


# ---- the cases -------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Case:
    """One objective (a registry entry) in one Hessian mode with some settings.

    ``rows``: the objective's row-index parameters are set to :func:`query_pairs` of the data.
    ``registered``: the settings are a configuration the registry lists (the defaults or one of
    the entry's ``methods``) or that the caller chose, not a variation of one parameter.
    """

    entry: Objective
    mode: str
    settings: tuple[tuple[str, Any], ...] = ()
    rows: bool = False
    registered: bool = False

    @property
    def name(self) -> str:
        return self.entry.name

    @property
    def configuration(self) -> bool:
        """A configuration the registry lists (or the caller chose), or the row-index parameters
        built from the data: where shift invariance and the framework adapters are checked."""
        return self.registered or self.rows

    @property
    def declared(self) -> Hessian:
        """The mode as the objective's class declares it."""
        return self.entry.loss_class.hessians[self.mode]

    @property
    def kind(self) -> str:
        """The Hessian mode's kind: ``"exact"``, ``"bound"`` or ``"fitting"``."""
        return self.declared.kind

    @property
    def gradient(self) -> str:
        """What the mode declares its gradient to be: ``"exact"``, ``"scaled"``, ``"lambda"`` or ``"newton"``."""
        return self.declared.gradient

    @property
    def tolerance(self) -> float:
        """How closely the mode declares its gradient and Hessian follow the derivatives (0: to rounding)."""
        return self.declared.tolerance

    @property
    def id(self) -> str:
        parts = [self.name, self.mode] + [f"{k}={v}" for k, v in self.settings]
        return "-".join(parts + (["rows"] if self.rows else []))

    def describe(self) -> str:
        """The objective, the Hessian mode and the settings, for messages."""
        settings = ", ".join(f"{k}={v!r}" for k, v in self.settings) or "defaults"
        return (f"objective {self.name!r}, Hessian mode {self.mode!r} ({self.kind}), settings: {settings}"
                + (", row-index parameters from the data" if self.rows else ""))

    def params(self, labels: np.ndarray, group_ptr: np.ndarray) -> dict[str, Any]:
        """The parameters for data with these labels and groups."""
        p = dict(self.settings)
        if "hessian" in self.entry.loss_class.declared_params():
            p["hessian"] = self.mode
        if self.rows:
            pairs = query_pairs(labels, group_ptr)
            declared = self.entry.loss_class.declared_params()
            # a set of rows (row_index kind): those of the queries with one grade, which anchor no ranking
            ranked = np.zeros(len(group_ptr) - 1, dtype=bool)
            ranked[multi_label_queries(labels, group_ptr)] = True
            unranked = np.flatnonzero(~np.repeat(ranked, np.diff(group_ptr))).astype(np.int64)
            p.update({k: pairs if declared[k].kind == "rows" else unranked for k in self.entry.row_params})
        return p

    def prepare(self, labels: np.ndarray, group_ptr: np.ndarray, weights: np.ndarray | None = None) -> Loss:
        return self.entry.prepare(labels, group_ptr, weights=weights, **self.params(labels, group_ptr))


def _settings_of(entry: Objective) -> list[tuple[dict[str, Any], bool]]:
    """(settings, registered) for one objective: the defaults, each of its ``methods``, each other
    value of a choice or bool parameter, and both ends (or every choice) of each parameter that
    ``search_space`` offers at the defaults and at each method."""
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
        # the Hessian modes are cases of their own; the floor is one pass after any objective
        # (tests/objectives/test_hessian_floor.py checks it either way)
        if pname in ("hessian", "hessian_floor") or pname in entry.fixed:
            continue
        alternatives = p.choices if p.kind == "choice" else (True, False) if p.kind == "bool" else ()
        for v in alternatives:
            add({pname: v}, False)
    for s in starts:
        for pname, search in entry.search_space(s).items():
            for v in search.choices or (search.low, search.high):
                add({**s, pname: v}, False)
    return found


def _chosen_settings(entry: Objective, params: Mapping[str, Any] | Sequence[Mapping[str, Any]]
                     ) -> list[tuple[dict[str, Any], bool]]:
    """The settings a caller chose, checked by the objective (row-index parameters are refused:
    the checks build them from their own data)."""
    chosen = [params] if isinstance(params, Mapping) else list(params)
    out = []
    for settings in chosen:
        if not isinstance(settings, Mapping):
            raise TypeError(f"params must be a dict of parameter -> value or a list of such dicts, "
                            f"got {show(settings)}")
        rows = sorted(set(settings) & set(entry.row_params))
        if rows:
            raise ValueError(f"params cannot set {rows} of objective {entry.name!r}: row-index parameters are built "
                             "from the checks' own data (the cases with rows=True)")
        entry.check(settings)
        out.append((dict(settings), True))
    return out


def cases(objective: str | type[Loss] | Objective | None = None, *,
          params: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None = None) -> list[Case]:
    """The cases of ``objective`` (``None``: of every registered objective): each of its Hessian
    modes x the settings the registry lists (:func:`_settings_of`: defaults, ``methods``, the other
    values of each choice or bool parameter, both ends of each search range), plus one case per
    mode with the row-index parameters (if it declares any) built from the data.

    ``params``: check these settings instead (a dict, or a list of dicts); a ``hessian`` among
    them picks the mode, else every mode is checked with them.
    """
    entries = [objectives.get(n) for n in objectives.names()] if objective is None else [resolve(objective)]
    out = []
    for entry in entries:
        settings_list = _settings_of(entry) if params is None else _chosen_settings(entry, params)
        for mode in entry.hessian_kinds:
            for settings, listed in settings_list:
                if "hessian" in settings:
                    if settings["hessian"] != mode:
                        continue
                    settings = {k: v for k, v in settings.items() if k != "hessian"}
                out.append(Case(entry, mode, tuple(sorted(settings.items())), registered=listed))
            if entry.row_params and params is None:
                out.append(Case(entry, mode, rows=True))
    return out
