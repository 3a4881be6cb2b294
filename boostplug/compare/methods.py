"""The ranking methods ``boostplug compare`` can train, behind one small interface.

A :class:`Method` trains on a training part and returns a :class:`Trained`
model: validation and test scores after every round (so the round can be chosen
on validation data and curves can be drawn) and the training time.

Three families, each name selectable on the command line:

* LightGBM trees (no prefix): the built-ins ``lambdarank``, ``rank_xendcg``,
  ``regression`` and, for every objective of :mod:`boostplug.objectives`, each of its
  ``methods`` names (``entry.methods``: ``ndcg_boost``, ``mpboost-ldd``, ...);
* XGBoost trees (prefix ``xgb-``): ``xgb-rank:ndcg``, ``xgb-rank:pairwise``,
  ``xgb-reg:squarederror`` and ``xgb-`` + each registered objective's method names;
* the reference boosters of :mod:`boostplug.boosters` (framework ``"booster"``):
  ``rb-d``, ``rb-c``, ``rankboost+``, ``adarank-map``, ``adarank-ndcg``,
  ``mpboost-stumps``, ``ndcg_boost-stumps``.

The objectives' methods are read from the registry when :data:`METHODS` is read, so an
objective registered after import (``boostplug.objectives.register``) is listed, configurable
(its declared parameters, row-index ones excepted) and tuned over its declared search ranges.

Tree methods share one set of tree parameters (:data:`TREE_PARAMS`, overridable)
so that only the loss differs.
"""

from __future__ import annotations

import json
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping

import numpy as np
from numpy.typing import NDArray

from .._validation import FLOAT32_MAX, INT32_MAX, did_you_mean
from ..data import RankingData

__all__ = [
    "Method", "Trained", "METHODS", "DEFAULT_METHODS", "TREE_PARAMS", "TREE_PARAM_LIMITS", "FRAMEWORKS",
    "check_tree_params", "get_method", "method_names", "Dist", "TREE_SPACE", "parse_value", "format_value",
    "split_specs",
]

#: Tree parameters shared by every tree method (LightGBM names; mapped for XGBoost).
TREE_PARAMS: dict[str, Any] = {
    "learning_rate": 0.05,
    "num_leaves": 31,
    "min_data_in_leaf": 20,
    "min_sum_hessian_in_leaf": 1e-3,
    "lambda_l2": 0.0,
    "feature_fraction": 1.0,
    "max_bin": 255,
}

#: The values each shared tree parameter may take: LightGBM's limits, within what XGBoost reads
#: (its real parameters are C floats, up to 3.4e38) and what both read integers into (C ints,
#: up to 2^31 - 1; LightGBM silently wraps a larger max_bin or min_data_in_leaf around). A test
#: and what it says.
TREE_PARAM_LIMITS: dict[str, tuple[Callable[[float], bool], str]] = {
    "learning_rate": (lambda v: 0 < v <= FLOAT32_MAX, f"> 0 and at most {FLOAT32_MAX:.9g} (XGBoost's float)"),
    "num_leaves": (lambda v: 2 <= v <= 131072, "between 2 and 131072"),
    "min_data_in_leaf": (lambda v: 0 <= v <= INT32_MAX, f">= 0 and at most {INT32_MAX} (a 32-bit int)"),
    "min_sum_hessian_in_leaf": (lambda v: 0 <= v <= FLOAT32_MAX,
                                f">= 0 and at most {FLOAT32_MAX:.9g} (XGBoost's float)"),
    "lambda_l2": (lambda v: 0 <= v <= FLOAT32_MAX, f">= 0 and at most {FLOAT32_MAX:.9g} (XGBoost's float)"),
    "feature_fraction": (lambda v: 0 < v <= 1, "in (0, 1]"),
    "max_bin": (lambda v: 2 <= v <= INT32_MAX, f">= 2 and at most {INT32_MAX} (a 32-bit int)"),
}


def check_tree_params(params: dict[str, Any]) -> None:
    """``ValueError`` naming the first parameter that is not a shared tree parameter
    (:data:`TREE_PARAMS`), not a finite number (an integer for the integer ones) or
    outside :data:`TREE_PARAM_LIMITS`; the frameworks would fail only once training starts."""
    import math

    for key, value in params.items():
        if key not in TREE_PARAMS:
            raise ValueError(f"unknown tree parameter {key!r}; the shared ones are {', '.join(TREE_PARAMS)}")
        integer = isinstance(TREE_PARAMS[key], int)
        kind = "an integer" if integer else "a number"
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise ValueError(f"{key}={value!r}: must be {kind}")
        if not math.isfinite(value):
            raise ValueError(f"{key}={value!r}: must be finite")
        if integer and value != int(value):
            raise ValueError(f"{key}={value!r}: must be an integer")
        test, text = TREE_PARAM_LIMITS[key]
        if not test(value):
            raise ValueError(f"{key}={value!r}: must be {text}")


#: The frameworks ``--frameworks`` selects from.
FRAMEWORKS = ("lightgbm", "xgboost", "booster")

#: AdaRank settings of the comparison: RankLib's update and stop rule (the paper's
#: rule, tolerance 0.002 on the training measure, stops after one round on MQ2008).
ADARANK_PARAMS: dict[str, Any] = {"update": "multiplicative", "enqueue": True, "max_consecutive": 5, "tolerance": -0.002}

Progress = Callable[[int, int], None]
#: ``checkpoint(round, vali_scores)`` during training, at :func:`checkpoint_rounds`; it may raise to stop
#: the training (a pruned ``--tune`` trial).
Checkpoint = Callable[[int, NDArray[np.float64]], None]
#: How many times a training run shows its validation scores to a ``checkpoint``.
CHECKPOINTS = 10


def checkpoint_rounds(rounds: int) -> range:
    """The rounds (1-based) at which training calls its ``checkpoint``: every tenth of ``rounds``,
    short of the last (a finished run is scored whole)."""
    every = max(1, rounds // CHECKPOINTS)
    return range(every, rounds, every)


@dataclass
class Trained:
    """Scores after every round on the validation and test parts, and the training time."""

    vali_scores: list[NDArray[np.float64]]
    test_scores: list[NDArray[np.float64]]
    seconds: float
    info: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Method:
    """A named way to train a ranker.

    ``framework`` is ``"lightgbm"``, ``"xgboost"`` or ``"booster"``; ``loss`` is a
    built-in objective name, ``"boostplug:<objective>"`` or, for boosters, the
    class name in :mod:`boostplug.boosters`. ``select_metric`` (boosters only)
    overrides the metric that chooses the round (AdaRank.MAP: ``"map"``).
    """

    name: str
    framework: str
    loss: str
    loss_params: dict[str, Any] = field(default_factory=dict)
    summary: str = ""
    select_metric: str | None = None
    #: this method's own tree parameters, over the shared ones (``lambdarank[num_leaves=15]``)
    tree_params: dict[str, Any] = field(default_factory=dict)
    #: the registry name this method was configured from ("" for a registry entry itself)
    base: str = ""

    @property
    def registry_name(self) -> str:
        return self.base or self.name

    def parameters(self) -> dict[str, Any]:
        """The parameters this method takes (``name[key=value]``, ``--tune``) with their values."""
        return _parameters(self)

    def configure(self, params: dict[str, Any], *, rename: bool = True) -> "Method":
        """This method with ``params`` set (unknown names: a "did you mean" ``ValueError``; values
        checked as the objective, the booster or :func:`check_tree_params` would, without training).
        ``rename``: the name shows the settings (``mpboost-ldd[alpha=0.3]``)."""
        return _configure(self, params, rename)

    def search_space(self) -> dict[str, "Dist"]:
        """What ``--tune`` searches: :data:`TREE_SPACE` for tree methods plus the method's own knobs."""
        return _search_space(self)

    def train(self, train: RankingData, vali: RankingData, test: RankingData, *, rounds: int,
              tree_params: dict[str, Any], seed: int, threads: int = 0,
              progress: Progress | None = None, checkpoint: Checkpoint | None = None) -> Trained:
        """Train for at most ``rounds`` rounds; ``threads=0``: the framework's default.
        ``checkpoint``: called with the validation scores at :func:`checkpoint_rounds`.
        ``train`` may carry ``position`` (LightGBM's Dataset positions) and ``pairs`` (a booster's
        explicit pairs), as :class:`boostplug.clicks.protocol.ClickData` does."""
        trainers = {"lightgbm": _train_lightgbm, "xgboost": _train_xgboost, "booster": _train_booster}
        if self.framework not in trainers:
            raise ValueError(f"unknown framework {self.framework!r}; expected one of {FRAMEWORKS}")
        return trainers[self.framework](self, train, vali, test, rounds, tree_params, seed, threads, progress,
                                        checkpoint)


def _staged(predict: Callable[[int], NDArray], n: int) -> list[NDArray[np.float64]]:
    return [np.asarray(predict(t), dtype=np.float64) for t in range(1, n + 1)]


def lightgbm_staged_scores(booster: Any, X: Any, n: int) -> list[NDArray[np.float64]]:
    """Raw scores after each of the first ``n`` trees, equal bit for bit to
    ``booster.predict(X, num_iteration=t, raw_score=True)`` for ``t = 1..n``.

    One leaf-index prediction and a running sum of the leaves' outputs, in tree order and
    in float64 as LightGBM sums them: ``n`` separate predictions each walk ``t`` trees, which
    made the staged scores cost many times the training itself.
    """
    rows = int(X.shape[0])
    if n == 0:
        return []
    if rows == 0:
        return [np.zeros(0) for _ in range(n)]
    leaves = np.asarray(booster.predict(X, pred_leaf=True, num_iteration=n)).reshape(rows, -1)
    if leaves.shape[1] != n:  # one tree per iteration is what this sum assumes (no multi-class)
        return _staged(lambda t: booster.predict(X, num_iteration=t, raw_score=True), n)
    out = np.empty((rows, n))
    for t in range(n):
        col = leaves[:, t]
        values = np.array([booster.get_leaf_output(t, j) for j in range(int(col.max()) + 1)])
        out[:, t] = values[col]
    np.cumsum(out, axis=1, out=out)
    return [out[:, t].copy() for t in range(n)]


def _train_lightgbm(m: Method, train: RankingData, vali: RankingData, test: RankingData, rounds: int,
                    tree_params: dict[str, Any], seed: int, threads: int, progress: Progress | None,
                    checkpoint: Checkpoint | None = None) -> Trained:
    import lightgbm as lgb

    from .. import lightgbm as bpl

    params = {**tree_params, **m.tree_params}
    params.update({"verbose": -1, "seed": seed, "deterministic": True, "num_threads": threads})
    if m.loss.startswith("boostplug:"):
        params["objective"] = bpl.objective(m.loss.split(":", 1)[1], **m.loss_params)
    else:
        params["objective"] = m.loss
        params.update(m.loss_params)
    # a training part may carry shown positions (boostplug.clicks.protocol.ClickData): position debiasing
    dtrain = bpl.dataset(train.X, train.y, group_ptr=train.group_ptr, position=getattr(train, "position", None))
    at = set(checkpoint_rounds(rounds))

    def cb(env: Any) -> None:
        if progress is not None:
            progress(env.iteration + 1, rounds)
        if checkpoint is not None and env.iteration + 1 in at:
            checkpoint(env.iteration + 1, np.asarray(env.model.predict(vali.X, raw_score=True), dtype=np.float64))

    t0 = time.perf_counter()
    booster = lgb.train(params, dtrain, num_boost_round=rounds, callbacks=[cb])
    seconds = time.perf_counter() - t0
    n = booster.current_iteration()
    return Trained(
        lightgbm_staged_scores(booster, vali.X, n),
        lightgbm_staged_scores(booster, test.X, n),
        seconds,
    )


#: LightGBM tree parameter -> XGBoost parameter (same meaning).
_XGB_NAMES = {
    "learning_rate": "eta", "num_leaves": "max_leaves", "min_sum_hessian_in_leaf": "min_child_weight",
    "lambda_l2": "lambda", "feature_fraction": "colsample_bytree", "max_bin": "max_bin",
}


def _xgb_params(tree_params: dict[str, Any], seed: int, threads: int) -> dict[str, Any]:
    """XGBoost's names for the shared tree parameters (``min_data_in_leaf`` has no
    XGBoost counterpart: XGBoost bounds leaves by hessian only)."""
    p: dict[str, Any] = {"grow_policy": "lossguide", "max_depth": 0, "tree_method": "hist", "seed": seed}
    for k, v in tree_params.items():
        if k in _XGB_NAMES:
            p[_XGB_NAMES[k]] = v
    if threads > 0:
        p["nthread"] = threads
    return p


def _train_xgboost(m: Method, train: RankingData, vali: RankingData, test: RankingData, rounds: int,
                   tree_params: dict[str, Any], seed: int, threads: int, progress: Progress | None,
                   checkpoint: Checkpoint | None = None) -> Trained:
    import xgboost as xgb

    from .. import xgboost as bpx

    params = _xgb_params({**tree_params, **m.tree_params}, seed, threads)
    obj = None
    if m.loss.startswith("boostplug:"):
        obj = bpx.objective(m.loss.split(":", 1)[1], **m.loss_params)
        params = bpx.params(**params)
    else:
        params["objective"] = m.loss
        params.update(m.loss_params)
    dtrain = bpx.dmatrix(train.X, train.y, group_ptr=train.group_ptr)
    dvali = xgb.DMatrix(vali.X)
    dtest = xgb.DMatrix(test.X)

    at = set(checkpoint_rounds(rounds))

    class _Progress(xgb.callback.TrainingCallback):
        def after_iteration(self, model: Any, epoch: int, evals_log: Any) -> bool:
            if progress is not None:
                progress(epoch + 1, rounds)
            if checkpoint is not None and epoch + 1 in at:
                checkpoint(epoch + 1, np.asarray(model.predict(dvali, output_margin=True), dtype=np.float64))
            return False

    t0 = time.perf_counter()
    booster = xgb.train(params, dtrain, num_boost_round=rounds, obj=obj, callbacks=[_Progress()])
    seconds = time.perf_counter() - t0
    n = booster.num_boosted_rounds()
    return Trained(
        _staged(lambda t: booster.predict(dvali, iteration_range=(0, t), output_margin=True), n),
        _staged(lambda t: booster.predict(dtest, iteration_range=(0, t), output_margin=True), n),
        seconds,
    )


def _train_booster(m: Method, train: RankingData, vali: RankingData, test: RankingData, rounds: int,
                   tree_params: dict[str, Any], seed: int, threads: int, progress: Progress | None,
                   checkpoint: Checkpoint | None = None) -> Trained:
    """A reference booster: at most ``rounds`` rounds (fewer when its own stop rule ends it)."""
    from .. import boosters
    from .._core.threads import limit_threads
    from ..boosters._fit_data import check_X
    from ..boosters._weak_rankers import evaluate_rankers

    params = dict(m.loss_params)
    rounds = params.pop("n_rounds", rounds)  # the method's own round budget (``ndcg_boost-stumps[n_rounds=500]``)
    est = getattr(boosters, m.loss)(n_rounds=rounds, random_state=seed, **params)

    X_train = check_X(train.to_dense().X)
    # the checks predict() makes, before training (the scores are summed while it trains)
    X_vali, X_test = (check_X(d.to_dense().X, X_train.shape[1]) for d in (vali, test))
    # each round's scores as staged_predict sums them, one weak ranker at a time, while training
    staged: tuple[list[NDArray[np.float64]], list[NDArray[np.float64]]] = ([], [])
    at = set(checkpoint_rounds(rounds))

    def cb(t: int, record: dict[str, Any]) -> None:
        for X, out in zip((X_vali, X_test), staged):
            last = out[-1] if out else np.zeros(X.shape[0])
            out.append(last + record["weight"] * evaluate_rankers(X, [record["ranker"]])[:, 0])
        if progress is not None:
            progress(t, rounds)
        if checkpoint is not None and t in at:
            checkpoint(t, staged[0][-1])

    t0 = time.perf_counter()
    # a training part may carry explicit preference pairs (boostplug.clicks.protocol.ClickData)
    with limit_threads(threads if threads > 0 else None):  # restored after the fit, like the frameworks' count
        est.fit(X_train, train.y, group=np.diff(train.group_ptr), pairs=getattr(train, "pairs", None), callback=cb)
    seconds = time.perf_counter() - t0
    if est.stop_reason_ == "interrupted":
        raise KeyboardInterrupt  # the booster kept its rounds; the comparison drops the unfinished method
    if progress is not None:
        progress(rounds, rounds)
    n = len(est.rankers_)
    if len(staged[0]) != n:  # rounds dropped after their callback: read the model instead
        staged = (list(est.staged_predict(X_vali)), list(est.staged_predict(X_test)))
    return Trained(staged[0][:n], staged[1][:n], seconds, {"stop_reason": est.stop_reason_})


def _m(name: str, framework: str, loss: str, summary: str, select_metric: str | None = None,
       **loss_params: Any) -> Method:
    return Method(name, framework, loss, loss_params, summary, select_metric)


def _objective_methods(entries: tuple[Any, ...], prefix: str, framework: str, label: str) -> list[Method]:
    """A tree method for every ``methods`` name of every registered objective, in registry order."""
    out = []
    for entry in entries:
        for method, settings in entry.methods.items():
            shown = ", ".join(f"{k}={format_value(v)}" for k, v in settings.items())
            out.append(Method(f"{prefix}{method}", framework, f"boostplug:{entry.name}", dict(settings),
                              f"{entry.summary}{f' [{shown}]' if shown else ''}, on {label} trees"))
    return out


_BUILTIN_LIGHTGBM = (
    _m("lambdarank", "lightgbm", "lambdarank", "LightGBM's built-in LambdaRank (LambdaMART)"),
    _m("rank_xendcg", "lightgbm", "rank_xendcg", "LightGBM's built-in XE-NDCG"),
    _m("regression", "lightgbm", "regression", "LightGBM's squared error on the grades (GBT)"),
)
_BUILTIN_XGBOOST = (
    _m("xgb-rank:ndcg", "xgboost", "rank:ndcg", "XGBoost's built-in LambdaMART (NDCG)"),
    _m("xgb-rank:pairwise", "xgboost", "rank:pairwise", "XGBoost's built-in pairwise logistic loss"),
    _m("xgb-reg:squarederror", "xgboost", "reg:squarederror", "XGBoost's squared error on the grades (GBT)"),
)
_BOOSTERS = (
    _m("rb-d", "booster", "RankBoost", "RankBoost Rb-d, discrete stumps (Connamacher et al. 2020)",
       variant="rb-d"),
    _m("rb-c", "booster", "RankBoost", "RankBoost Rb-c, continuous-weight stumps", variant="rb-c"),
    _m("rankboost+", "booster", "RankBoost", "RankBoost+ (efficient, Algorithm 2)", variant="rankboost+"),
    _m("adarank-map", "booster", "AdaRank", "AdaRank.MAP (RankLib update/stop rule; round chosen by MAP)",
       "map", measure="map", **ADARANK_PARAMS),
    _m("adarank-ndcg", "booster", "AdaRank", "AdaRank.NDCG@5 (RankLib update/stop rule)",
       None, measure="ndcg@5", **ADARANK_PARAMS),
    _m("mpboost-stumps", "booster", "MPBoost", "stump MPBoost.LOGDD (the booster's default DDF)"),
    _m("ndcg_boost-stumps", "booster", "NDCGBoost", "stump NDCG_Boost"),
)


def _build_methods(entries: tuple[Any, ...]) -> dict[str, Method]:
    """The built-in methods with the registered objectives' tree methods after each framework's
    built-ins; a registered name that a built-in method already has is left out, with a warning."""
    builtin = {m.name for m in (*_BUILTIN_LIGHTGBM, *_BUILTIN_XGBOOST, *_BOOSTERS)}
    table: dict[str, Method] = {}
    for m in (*_BUILTIN_LIGHTGBM, *_objective_methods(entries, "", "lightgbm", "LightGBM"),
              *_BUILTIN_XGBOOST, *_objective_methods(entries, "xgb-", "xgboost", "XGBoost"), *_BOOSTERS):
        if m.name in table or (m.name in builtin and m.loss.startswith("boostplug:")):
            warnings.warn(f"objective {m.loss.split(':', 1)[1]!r}: the compare method name {m.name!r} is taken by "
                          "another method and is not listed; register the objective with other methods= names",
                          stacklevel=4)
            continue
        table[m.name] = m
    return table


class MethodTable(Mapping[str, Method]):
    """:data:`METHODS`: method name -> :class:`Method`, read from the objective registry on
    access (rebuilt only when the registry changed), so that objectives registered or
    unregistered after import are listed as they stand."""

    def __init__(self) -> None:
        self._entries: tuple[Any, ...] | None = None
        self._table: dict[str, Method] = {}

    def _current(self) -> dict[str, Method]:
        from .. import objectives

        entries = tuple(objectives.get(n) for n in objectives.names())
        if self._entries is None or len(entries) != len(self._entries) or any(
                a is not b for a, b in zip(entries, self._entries)):
            self._table = _build_methods(entries)
            self._entries = entries
        return self._table

    def __getitem__(self, name: str) -> Method:
        return self._current()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._current()))

    def __len__(self) -> int:
        return len(self._current())

    def __contains__(self, name: object) -> bool:
        return name in self._current()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({list(self._current())})"


#: Every method by name, in the order ``--methods list`` shows them (built-ins first within each
#: framework, then the registered objectives' methods, then the reference boosters).
METHODS: Mapping[str, Method] = MethodTable()

#: What ``boostplug compare`` runs when no ``--methods`` is given (finishes on the
#: embedded data in well under two minutes on 2 cores; docs/compare.md has the time).
DEFAULT_METHODS = ("lambdarank", "regression", "qbrank", "mpboost-logitdd", "ndcg_boost", "rankboost-loss",
                   "xgb-rank:ndcg", "rb-c", "ndcg_boost-stumps")


def method_names(frameworks: tuple[str, ...] | list[str] | None = None) -> list[str]:
    """All method names, or those of the given frameworks, in registry order."""
    return [n for n, m in METHODS.items() if frameworks is None or m.framework in frameworks]


def get_method(name: str) -> Method:
    """The method called ``name``: a registry name, or one with settings, ``name[key=value,...]``
    (the configured method's own name) or ``name:key=value,...``; values as :func:`parse_value`."""
    if not isinstance(name, str):
        raise TypeError(f"a method name must be a string, got {name!r}")
    if name in METHODS:
        return METHODS[name]
    base, params = _split_spec(name)
    if base not in METHODS:
        hint = did_you_mean(base, METHODS)
        raise ValueError(f"unknown method {base!r}{f' ({hint})' if hint else ''}; "
                         "run 'boostplug compare --methods list' for the names")
    return METHODS[base].configure(params)


# ---- method settings: name[key=value,...] ---------------------------------------------------
#: Booster constructor arguments the comparison sets itself (seed, no printing, full curves).
_BOOSTER_FIXED = ("random_state", "verbose", "early_stopping_rounds", "eval_metric")


def parse_value(text: str) -> Any:
    """A setting's value from text: ``true``/``false``, ``none``, an integer, a number, a JSON
    list (``[0,1,3,7]``), else the text itself (``ldd``, ``ndcg@5``)."""
    t = text.strip()
    low = t.lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("none", "null"):
        return None
    if t.startswith("["):
        try:
            return json.loads(t)
        except json.JSONDecodeError:
            raise ValueError(f"{t!r} is not a JSON list") from None
    for kind in (int, float):
        try:
            return kind(t)
        except ValueError:
            pass
    return t


def format_value(value: Any) -> str:
    """The text :func:`parse_value` reads back as ``value`` (numpy scalars as plain numbers)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "none"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return json.dumps(list(value), separators=(",", ":"))
    return str(value)


def split_specs(text: str) -> list[str]:
    """Method specs from a comma-separated list: commas inside ``[...]`` and a ``key=value``
    after ``name:key=value`` belong to that method (``mpboost-ldd:alpha=0.3,lam=2,lambdarank``
    is two methods); ``;`` also separates."""
    parts: list[str] = []
    depth, cur = 0, ""
    for ch in text.replace(";", ","):
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == "," and depth <= 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    out: list[str] = []
    for p in (p.strip() for p in parts):
        if not p:
            continue
        head = p.split("=", 1)[0]
        if out and "=" in p and ":" not in head and "[" not in head and "[" not in out[-1]:
            out[-1] += "," + p  # a further key=value of the method before
        else:
            out.append(p)
    return out


def _split_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """``name[k=v,...]`` or ``name:k=v,...`` -> ``(name, {k: v})``; a name may itself hold ``:``
    (``xgb-rank:ndcg``), so the name is the first prefix that is a registered method."""
    spec = spec.strip()
    if "[" in spec:
        if not spec.endswith("]"):
            raise ValueError(f"method {spec!r}: expected name[key=value,...]")
        base, body = spec[:-1].split("[", 1)
    else:
        cut = next((i for i, ch in enumerate(spec) if ch == ":" and spec[:i] in METHODS), None)
        if cut is None:
            head = spec.split("=", 1)[0]
            if "=" not in spec or ":" not in head:
                return spec, {}
            cut = head.rindex(":")  # an unknown name with settings: the name is what comes before them
        base, body = spec[:cut], spec[cut + 1:]
    params: dict[str, Any] = {}
    for item in _split_top(body):
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"method {spec!r}: {item!r} is not key=value")
        params[key.strip()] = parse_value(value)
    return base.strip(), params


def _split_top(body: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in body:
        depth += (ch == "[") - (ch == "]")
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    return [o.strip() for o in out if o.strip()]


def _objective(m: Method) -> Any:
    from .. import objectives

    return objectives.get(m.loss.split(":", 1)[1]) if m.loss.startswith("boostplug:") else None


def _parameters(m: Method) -> dict[str, Any]:
    if m.framework == "booster":
        import inspect

        from .. import boosters

        sig = inspect.signature(getattr(boosters, m.loss).__init__).parameters
        out = {k: p.default for k, p in sig.items() if k != "self" and k not in _BOOSTER_FIXED}
        out.update(m.loss_params)
        return out
    out = {}
    obj = _objective(m)
    if obj is not None:
        # row-index parameters belong to one data set, and a fixed parameter is not a setting
        out.update({k: v for k, v in obj.defaults.items() if k not in obj.row_params and k not in obj.fixed})
        out.update(m.loss_params)
    out.update(TREE_PARAMS)
    out.update(m.tree_params)
    return out


def _configure(m: Method, params: dict[str, Any], rename: bool) -> Method:
    known = _parameters(m)
    for key in params:
        if key not in known:
            hint = did_you_mean(key, known)
            raise ValueError(f"method {m.registry_name!r} has no parameter {key!r}; {hint}{' ' if hint else ''}"
                             f"its parameters are {', '.join(known)}")
    tree = {k: v for k, v in params.items() if m.framework != "booster" and k in TREE_PARAMS}
    loss = {k: v for k, v in params.items() if k not in tree}
    new = Method(m.name, m.framework, m.loss, {**m.loss_params, **loss}, m.summary, m.select_metric,
                 {**m.tree_params, **tree}, m.registry_name)
    try:
        _check(new, loss, tree)
    except (ValueError, TypeError) as e:
        raise type(e)(f"method {m.registry_name!r}: {e}") from None
    if rename and params:
        shown = {**_shown(m), **params}
        new = Method(f"{m.registry_name}[{','.join(f'{k}={format_value(v)}' for k, v in shown.items())}]",
                     new.framework, new.loss, new.loss_params, new.summary, new.select_metric, new.tree_params,
                     new.base)
    return new


def _shown(m: Method) -> dict[str, Any]:
    """The settings a configured method's name already shows."""
    return _split_spec(m.name)[1] if m.base else {}


def _check(m: Method, loss: dict[str, Any], tree: dict[str, Any]) -> None:
    """The checks training would make, now: tree parameters, the objective's own check, or the
    booster's (a one-round fit on a four-document stand-in query, where its checks run)."""
    check_tree_params(tree)
    if m.framework != "booster":
        obj = _objective(m)
        if obj is not None:
            obj.check(m.loss_params)
        return
    from .. import boosters

    params = dict(m.loss_params)
    n_rounds = params.pop("n_rounds", 1)
    est = getattr(boosters, m.loss)(n_rounds=n_rounds, **params)
    est._check_n_rounds()
    est.n_rounds = 1
    X = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 1.0], [0.5, 0.2]])
    est.fit(X, np.array([0.0, 1.0, 2.0, 0.0]), group=[4])


# ---- what --tune searches -------------------------------------------------------------------
@dataclass(frozen=True)
class Dist:
    """One dimension of a search space: ``kind`` ``"float"``, ``"int"`` (``low``..``high``,
    ``log``-uniform or uniform) or ``"categorical"`` (``choices``)."""

    kind: str
    low: float = 0.0
    high: float = 1.0
    log: bool = False
    choices: tuple[Any, ...] = ()

    def suggest(self, trial: Any, name: str) -> Any:
        if self.kind == "categorical":
            return trial.suggest_categorical(name, list(self.choices))
        if self.kind == "int":
            return trial.suggest_int(name, int(self.low), int(self.high), log=self.log)
        return trial.suggest_float(name, self.low, self.high, log=self.log)

    def describe(self) -> str:
        if self.kind == "categorical":
            return "{" + ", ".join(format_value(c) for c in self.choices) + "}"
        return f"{format_value(self.low)}..{format_value(self.high)}{' (log)' if self.log else ''}"


#: The tree parameters every tree method searches (LightGBM, XGBoost and the built-ins alike, so
#: that each gets the same budget over the same space; ``min_data_in_leaf`` has no XGBoost
#: counterpart and changes nothing there). ``lambda_l2=0``, the default, is trial 0's.
TREE_SPACE: dict[str, Dist] = {
    "learning_rate": Dist("float", 0.01, 0.3, log=True),
    "num_leaves": Dist("int", 7, 127),
    "min_data_in_leaf": Dist("int", 5, 100),
    "lambda_l2": Dist("float", 1e-3, 10.0, log=True),
    "feature_fraction": Dist("float", 0.5, 1.0),
}

def _dists(space: Mapping[str, Any]) -> dict[str, Dist]:
    """An objective's declared search ranges (:class:`boostplug.objectives.Search`) as :class:`Dist`."""
    out = {}
    for name, search in space.items():
        if search.choices:
            out[name] = Dist("categorical", choices=tuple(search.choices))
        else:
            out[name] = Dist("int" if search.integer else "float", search.low, search.high, log=search.log)
    return out


def _mpboost_booster_space(p: dict[str, Any]) -> dict[str, Dist]:
    from ..objectives import ddf

    return _dists(ddf.search_space(p["ddf"]))


def _ndcg_boost_booster_space(p: dict[str, Any]) -> dict[str, Dist]:
    from ..objectives.ndcg_boost import NDCGBoostObjective

    return _dists({"sigma": NDCGBoostObjective.params["sigma"].search})


#: The boosters' knobs: RankBoost's stump threshold budget, the objectives' own ranges for the
#: stump MPBoost (its DDF's parameter) and NDCG_Boost (sigma); AdaRank none (its rounds are
#: chosen on validation like everyone's). Each gets the booster's parameters, defaults filled in.
_BOOSTER_SPACE: dict[str, Callable[[dict[str, Any]], dict[str, Dist]]] = {
    "RankBoost": lambda p: {"max_thresholds": Dist("int", 8, 255, log=True)},
    "MPBoost": _mpboost_booster_space,
    "NDCGBoost": _ndcg_boost_booster_space,
    "AdaRank": lambda p: {},
}


def _search_space(m: Method) -> dict[str, Dist]:
    """A setting the user fixed (``name[key=value]``) is not searched."""
    fixed = set(_shown(m))
    if m.framework == "booster":
        space = _BOOSTER_SPACE.get(m.loss, lambda p: {})(_parameters(m))
    else:
        space = dict(TREE_SPACE)
        obj = _objective(m)
        if obj is not None:
            declared = obj.search_space(m.loss_params)
            space.update(_dists({k: v for k, v in declared.items() if k not in obj.row_params}))
    return {k: d for k, d in space.items() if k not in fixed}
