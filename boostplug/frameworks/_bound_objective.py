"""One objective bound lazily to each training set a framework hands it: what the LightGBM and
XGBoost adapters share of the objective call (binding once per set, noticing a set whose labels
changed, the parameters it reads from the training's, one round's gradients on the framework's
threads); each adapter keeps only how its framework hands over the set and its parameters."""

from __future__ import annotations

import copy
import importlib
import pickle
import sys
import threading
import warnings
import weakref
from contextlib import suppress
from typing import Any, Callable, Mapping

import numpy as np
from numpy.typing import NDArray

from .. import objectives as _objectives
from .._core.threads import limit_threads
from .._validation import check_optional_count, show
from ..keyed_pairs import NO_KEYS, given_keyed_params, given_row_params, params_on_rows
from ..objectives import Loss
from ._query_info import set_arrays

__all__ = ["BoundObjective", "ShippedEntry", "FROM_FRAMEWORK", "from_training"]


class _FromFramework:
    def __repr__(self) -> str:
        return "FROM_FRAMEWORK"

    def __reduce__(self) -> str:
        return "FROM_FRAMEWORK"


#: An objective's default thread count: what the training hands it (:meth:`BoundObjective.round_threads`).
FROM_FRAMEWORK: Any = _FromFramework()


def _same_arrays(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    """Element-wise equality of two tuples of arrays (``None`` and empty alike: no such information)."""
    return len(a) == len(b) and all(
        (x is None or np.size(x) == 0) if (y is None or np.size(y) == 0)
        else (x is not None and np.array_equal(x, y))
        for x, y in zip(a, b)
    )


def _declared(objective: Any, framework: str) -> Mapping[str, Any]:
    """What ``objective``'s class reads of ``framework``'s training parameters (its
    ``framework_params``: ``{framework: {framework's name: parameter or (parameter, convert)}}``)."""
    return getattr(objective.loss_class, "framework_params", {}).get(framework, {})


def _built_in_names(framework: str) -> frozenset[str]:
    """The parameters of ``framework``'s built-in objectives that a registered objective reads as
    its own (derived ones, ``(parameter, convert)``, are the framework's general parameters)."""
    return frozenset(key for name in _objectives.names()
                     for key, target in _declared(_objectives.get(name), framework).items() if isinstance(target, str))


def _equal(a: Any, b: Any) -> bool:
    try:
        return bool(np.array_equal(np.asarray(a), np.asarray(b)))
    except Exception:  # values numpy cannot compare element-wise
        return bool(a == b)


def from_training(objective: Any, framework: str, training: Mapping[str, Any],
                  given: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """``(params, unused)``: the parameters ``objective`` (an entry) reads from ``training`` (the
    parameters ``framework``, e.g. ``"LightGBM"``, trains with; its class's ``framework_params``
    say which) and the built-in objectives' parameters in ``training`` it does not read.

    A plain entry (``name: parameter``) is the built-in's own parameter, any of its names (the
    first one given wins): taken unless ``given`` to the objective, and a ``ValueError`` naming
    both values when given both ways with values that differ. A derived entry (``name:
    (parameter, convert)``, from a parameter the framework also reads for itself: LightGBM's
    ``objective_seed`` from ``seed``) fills the parameter only when it is set nowhere else."""
    key = framework.lower()
    declared = _declared(objective, key)
    check = objective.loss_class.declared_params()
    params: dict[str, Any] = {}
    for name, target in declared.items():
        param, convert = (target, None) if isinstance(target, str) else target
        value = training.get(name)
        if value is None or param in params or (convert is not None and param in given):
            continue
        try:
            value = check[param].check(value, param, objective=objective.name) if convert is None else convert(value)
        except (TypeError, ValueError) as e:
            raise type(e)(f"{e} (from {name}={show(training[name])} in {framework}'s training parameters)") from None
        if convert is None and param in given \
                and not _equal(check[param].check(given[param], param, objective=objective.name), value):
            raise ValueError(
                f"{objective.name}: {param} is given twice, {show(given[param])} to the objective and "
                f"{name}={show(training[name])} in {framework}'s training parameters (which {framework}'s built-in "
                "reads): give it once, or the same value both ways")
        params[param] = value
    unused = sorted(k for k in training if k in _built_in_names(key) and k not in declared)
    return params, unused


def _cloudpickle() -> Any:
    """cloudpickle (Dask's), else the copy pyspark carries, else ``None``."""
    for name in ("cloudpickle", "pyspark.cloudpickle"):
        with suppress(ImportError):
            return importlib.import_module(name)
    return None


_BY_VALUE_LOCK = threading.Lock()


def _pickled_by_value(entry: Any, cp: Any) -> bytes | None:
    """``entry`` pickled with its loss class's module by value (the class's code itself, for a
    process that cannot import the module); ``None`` for boostplug's own classes, classes
    cloudpickle already ships by value (``__main__``, defined in a function) or a module that
    cannot be so pickled."""
    module = entry.loss_class.__module__
    if cp is None or module == "__main__" or module.split(".")[0] == __name__.split(".")[0] \
            or "<locals>" in entry.loss_class.__qualname__ or module not in sys.modules:
        return None
    with _BY_VALUE_LOCK:  # cloudpickle's by-value registry is per process
        mine = module not in cp.list_registry_pickle_by_value()
        try:
            if mine:
                cp.register_pickle_by_value(sys.modules[module])
            return cp.dumps(entry)
        except Exception:  # what the class refers to cannot be pickled by value: by reference only
            return None
        finally:
            if mine:
                cp.unregister_pickle_by_value(sys.modules[module])


class ShippedEntry:
    """An objective's registry entry as it travels to another process (a Dask worker, a Spark
    executor's Python worker), which did not run the code that registered it and may not be able
    to import the module of its class.

    Pickled, it carries the entry twice: by reference, as cloudpickle pickles it (the class's
    module and name; the class itself when it was defined in ``__main__`` or in a function), and
    by value (the class's module's code, for a process that cannot import that module). Unpickling
    never raises (Dask fails silently when a task's arguments cannot be unpickled on a worker, and
    the training then waits for it for ever): :meth:`entry` raises instead, naming the objective,
    its class and why it could not be loaded.
    """

    def __init__(self, entry: Any) -> None:
        self.name: str = entry.name
        self._entry: Any = entry
        self._error: BaseException | None = None
        self._class = f"{entry.loss_class.__module__}.{entry.loss_class.__qualname__}"

    @classmethod
    def of(cls, objective: Any) -> "ShippedEntry":
        """``objective``: a registered name, a ``Loss`` subclass or instance, or an entry."""
        return cls(_objectives.resolve(objective))

    def entry(self) -> "_objectives.Objective":
        """The entry in this process (not registered here: the adapters take it as it is);
        ``RuntimeError`` when it could not be unpickled here."""
        if self._error is not None:
            raise RuntimeError(f"objective {self.name!r}: its class {self._class} cannot be loaded in this process "
                               f"({type(self._error).__name__}: {self._error}); make the module that defines it "
                               "importable where training runs (installed, or on PYTHONPATH)") from self._error
        return self._entry

    def __getstate__(self) -> dict[str, Any]:
        if self._error is not None:  # copied where it could not be loaded: as it came
            return self._state
        cp = _cloudpickle()
        return {"name": self.name, "class": self._class,
                "reference": (cp or pickle).dumps(self._entry), "value": _pickled_by_value(self._entry, cp)}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.name, self._class, self._entry, self._error, self._state = state["name"], state["class"], None, None, state
        try:
            self._entry = pickle.loads(state["reference"])
        except Exception as e:  # the class's module is not importable here
            self._error = e
            if state["value"] is not None:
                with suppress(Exception):  # the first error says why: the module is missing
                    self._entry, self._error = pickle.loads(state["value"]), None


class BoundObjective:
    """One objective with fixed parameters, bound lazily to each training set.

    ``objective``: a registered name, a registry entry, or a :class:`~boostplug.objectives.Loss`
    subclass or instance, registered or not (:func:`boostplug.objectives.resolve`); an instance's
    settings come before ``params``.

    ``prepared(key, seen, derive)`` returns the objective prepared for that set,
    preparing it on first use. ``key`` is the framework's set object
    (held weakly: ``lgb.cv``/``xgb.cv`` hand one objective several fold sets and
    each gets its own preparation). A set whose labels or groups changed since it
    was prepared is an error rather than silently stale gradients.
    """

    def __init__(self, objective: Any, params: dict[str, Any], threads: int | None = FROM_FRAMEWORK,
                 training: Mapping[str, Any] | None = None) -> None:
        #: The numba threads of each round's kernels: a count, ``None`` (numba's own setting), or
        #: :data:`FROM_FRAMEWORK` (what the training hands the objective: :meth:`round_threads`).
        self.threads = threads if threads is FROM_FRAMEWORK else check_optional_count(threads, "threads")
        #: Why this objective, unpickled in another process, cannot run there (``None``: it can).
        self._unusable: BaseException | None = None
        self.objective = _objectives.resolve(objective)
        self.name = self.objective.name
        params = {**_objectives.settings_of(objective), **params}
        self.objective.check(params)  # fail now, not at the first boosting round
        self.params = dict(params)
        #: The row-index parameters given (:func:`given_row_params`), bound to one training set.
        self.rows_given = given_row_params(self.objective, self.params)
        #: The keyed tables given (:func:`given_keyed_params`), mapped onto each training set's rows.
        self.keyed_given = given_keyed_params(self.objective, self.params)
        self._by_set: "weakref.WeakKeyDictionary[Any, tuple[Loss, tuple[Any, ...]]]" = \
            weakref.WeakKeyDictionary()
        self._last: tuple[Loss, tuple[Any, ...]] | None = None  # for sets not weakly referenceable
        self._warned_unused = False
        #: The training's parameters, handed by the code that builds the objective for a training
        #: (:meth:`given_training`), for a framework that does not hand them with the round.
        self.training = None if training is None else dict(training)

    def _read(self, framework: str, training: Mapping[str, Any] | None) -> dict[str, Any]:
        """The parameters this objective reads from ``training`` (:func:`from_training`); the first
        time built-in parameters it does not read are there, one warning naming them."""
        if not training:
            return {}
        params, unused = from_training(self.objective, framework, training, {**self.objective.fixed, **self.params})
        if unused and not self._warned_unused:
            self._warned_unused = True
            warnings.warn(
                f"{self.name}: {', '.join(f'{k}={show(training[k])}' for k in unused)} in {framework}'s training "
                f"parameters {'is a parameter' if len(unused) == 1 else 'are parameters'} of {framework}'s built-in "
                f"ranking objectives, which {self.name} does not read: it trains as if "
                f"{'it were' if len(unused) == 1 else 'they were'} not given (its own parameters: "
                f"{', '.join(self.objective.defaults)})", UserWarning, stacklevel=2)
        return params

    def prepared(self, key: Any, seen: tuple[Any, ...],
                 derive: Callable[[], tuple[NDArray[np.floating], NDArray[np.int64], NDArray[np.float64] | None]], *,
                 strict: bool = True, check_new: Callable[[], None] | None = None,
                 keys: Callable[[], tuple[Any, Any] | None] | None = None, no_keys: str = "",
                 from_set: Callable[[], dict[str, Any]] | None = None, framework: str = "",
                 training: Callable[[], Mapping[str, Any] | None] | None = None) -> Loss:
        """The objective prepared for this set. ``seen`` is what the framework hands each round
        (raw labels, groups, weights), compared with what the set was prepared from;
        ``derive() -> (labels, group_ptr, query_weights)``, ``check_new()`` and ``keys() -> (qid, doc)``
        (each row's keys, for keyed tables; ``None``: the set has none, ``no_keys`` says how to
        give them), ``from_set() -> params`` (parameters the set carries, e.g. LightGBM's
        Dataset positions, under the given ones) and ``training() -> params`` (the parameters
        ``framework`` trains with, as it hands them with the set; else those given to the
        objective, :meth:`given_training`: what the objective reads of them,
        :func:`from_training`) run only when a set is first prepared (validation and conversion
        are not repeated every round)."""
        if self._unusable is not None:
            raise self._unusable
        try:
            entry = self._by_set.get(key) if key is not None else self._last
        except TypeError:
            entry = self._last
        if entry is not None:
            prep, was_seen = entry
            if _same_arrays(was_seen, seen):
                return prep
            if strict:
                raise ValueError(
                    f"{self.name}: the labels, query groups or weights of this training set changed "
                    "between boosting rounds; an objective is bound to one training set. "
                    "Build a new objective (or a new Dataset/DMatrix) for new labels or weights."
                )
        labels, group_ptr, weights = derive()
        for param, rows in self.rows_given.items():
            if entry is not None or len(self._by_set):
                raise ValueError(
                    f"{self.name}: explicit {param} are row indices of one training set, and this objective "
                    f"was handed a second one (lgb.cv/xgb.cv folds, or a refit on other data): the {param} "
                    f"would read other rows. Build one objective per training set, with its own {param}."
                )
            if np.size(rows) and int(np.max(rows)) >= len(labels):
                raise ValueError(
                    f"{self.name}: explicit {param} index row {int(np.max(rows))}, but this training set has "
                    f"{len(labels)} rows (an xgb.cv/lgb.cv fold? build the folds yourself, each with its own {param})"
                )
        if check_new is not None:
            check_new()
        params = self.params if from_set is None else {**from_set(), **self.params}
        params = {**self._read(framework, self.training if training is None else training()), **params}
        if self.keyed_given:
            row_keys = None if keys is None else keys()
            if row_keys is None:
                raise ValueError(NO_KEYS.format(who=self.name, param=next(iter(self.keyed_given)), how=no_keys))
            params = params_on_rows(self.objective, params, *row_keys)
        prep = self.objective.prepare(labels, group_ptr, weights=weights, **params)
        # Copies: a framework may hand the same array object back after changing it in place.
        entry = (prep, tuple(None if a is None else np.array(a, copy=True) for a in seen))
        if key is not None:
            with suppress(TypeError):  # a set that cannot be weakly referenced: self._last only
                self._by_set[key] = entry
        self._last = entry
        return prep

    def round_grad_hess(self, preds: Any, key: Any, labels: Any, groups: Any, weights: Any, *, framework: str,
                        to_group_ptr: Callable[[Any, int], NDArray[np.int64]], threads: int | None,
                        **options: Any) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """One boosting round: ``(grad, hess)`` at ``preds`` for the set ``key`` that holds
        ``labels``, ``groups`` (the framework's form, which ``to_group_ptr(groups, n_docs)``
        converts when the set is first prepared) and row or query ``weights``, computed on
        ``threads`` threads (``None``: numba's own setting). ``options`` (``strict``, ``check_new``,
        ``keys``, ``no_keys``, ``from_set``, ``training``): as in :meth:`prepared`."""
        prep = self.prepared(key, (labels, groups, weights),
                             lambda: set_arrays(labels, groups, weights, to_group_ptr, framework, self.name),
                             framework=framework, **options)
        with limit_threads(threads):
            return prep.grad_hess(np.asarray(preds, dtype=np.float64).reshape(-1))

    def round_threads(self, handed: int | None = None) -> int | None:
        """The thread count of a round: the one given to this objective (``threads=``, or by
        :meth:`given_threads`), else ``handed``, the count the framework hands the objective
        with the round (LightGBM's ``num_threads`` in the parameters of the Dataset ``lgb.train``
        passes it), else ``None``: numba's own setting (every core unless ``NUMBA_NUM_THREADS``
        or ``numba.set_num_threads`` say otherwise, as both frameworks' defaults).

        Nothing is looked up: ``xgb.train`` calls ``obj(predt, dtrain)`` and LightGBM's
        scikit-learn wrapper ``func(y, p, w, g)`` with no handle on the Booster or the parameters
        that hold the count, so the code that builds the objective for a training passes it
        (the rankers, ``boostplug.xgboost.cv``, ``compare``, the Dask and Spark workers)."""
        return handed if self.threads is FROM_FRAMEWORK else self.threads

    def given_threads(self, threads: int | None) -> "BoundObjective":
        """This objective with ``threads`` (a count, ``None``: numba's own setting) as its thread
        count, for a training whose parameters the caller knows: a copy when the count was left to
        :data:`FROM_FRAMEWORK` (the caller's object is not changed), else itself (a count given
        to the objective wins)."""
        if self.threads is not FROM_FRAMEWORK:
            return self
        return type(self)(self.objective, self.params, threads, self.training)

    def given_training(self, params: Mapping[str, Any] | Any) -> "BoundObjective":
        """A copy of this objective (the caller's object is not changed) that reads the parameters
        of its class's framework's built-in from ``params`` (a dict, or XGBoost's list of pairs),
        the parameters of the training it is built for (:func:`from_training`): for a framework
        that does not hand them with the round (``xgb.train``, ``xgb.cv``, LightGBM's
        scikit-learn ranker). A value also given to the objective must agree (``ValueError``)."""
        return type(self)(self.objective, self.params, self.threads, dict(params))

    def reads(self, framework: str) -> frozenset[str]:
        """The names of ``framework``'s parameters (``"XGBoost"``...) this objective reads."""
        return frozenset(_declared(self.objective, framework.lower()))

    def __deepcopy__(self, memo: dict[int, Any]) -> "BoundObjective":  # lgb.train copies its parameters: the class
        # itself, not a copy pickled by value (cloudpickle rebuilds a script's class once, with the values read then)
        return self if self._unusable else type(self)(self.objective, copy.deepcopy(self.params, memo), self.threads,
                                                      self.training)

    def __getstate__(self) -> dict[str, Any]:
        # Bindings are per process (Dask ships objectives to workers, which bind their own sets).
        # The entry travels with its class (ShippedEntry), registered or not: the workers did not
        # run the code that registered it, and may not import the class's module.
        if self._unusable is not None:  # (copied here: lgb.train copies its parameters) as it came
            return self._state
        state: dict[str, Any] = {"name": self.name, "params": self.params, "shipped": ShippedEntry(self.objective)}
        if self.threads is not FROM_FRAMEWORK:
            state["threads"] = self.threads
        if self.training is not None:
            state["training"] = self.training
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        # Never raises (a Dask worker that cannot unpickle a task's arguments leaves the training
        # waiting for ever): an objective that cannot be rebuilt here raises when it is first used.
        threads = state.get("threads", FROM_FRAMEWORK)
        try:
            self.__init__(state["shipped"].entry(), state["params"], threads, state.get("training"))
        except Exception as e:
            self.threads, self._unusable, self._state = threads, e, state
            self.objective, self.name, self.params = None, state["name"], dict(state["params"])
            self.rows_given, self.keyed_given, self._last, self._warned_unused = {}, {}, None, False
            self.training = state.get("training")
            self._by_set = weakref.WeakKeyDictionary()

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"{type(self).__name__}({self.name!r}{', ' if args else ''}{args})"

