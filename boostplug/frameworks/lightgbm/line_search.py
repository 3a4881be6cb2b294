"""QBRank's Algorithm 2 on LightGBM trees, with the exact line search of step 2.

Zheng et al. (NIPS 2007), Algorithm 2: each round fits a regression tree g_m to
the QBRank targets, then ``h_m = h_{m-1} + eta * s_m * g_m`` where ``s_m``
minimises the risk R along g_m and ``eta`` is the shrinkage. LightGBM builds
the tree (``Booster.update`` with the QBRank gradient at the *true* current
scores); :func:`boostplug.objectives.qbrank.line_search` gives ``s_m`` exactly
(R is piecewise quadratic along the tree); the tree's leaves are then scaled by
``eta * s_m`` (``Booster.set_leaf_output``), so the saved model is the true model.

Roles of the step parameters: LightGBM's ``learning_rate`` is forced to 1 (the
tree is the raw step g_m) and ``eta`` is the paper's shrinkage. ``eta`` defaults
to the ``learning_rate`` (or alias) in ``params`` if there is one, else to the
paper's 0.05; giving both ``eta=`` and a ``learning_rate`` other than 1 is an error.

Bookkeeping: LightGBM's internal score caches (training and validation) do not
know about the scaling (``set_leaf_output`` leaves them alone): they hold
``init_score + sum_m g_m``. The unscaled tree's predictions on a set are read
as the change of that cache (``Booster.eval_train`` / ``eval_valid`` with a
capturing ``feval``), and the true scores ``init_score + sum_m eta s_m g_m`` are
kept here. Gradients, the line search, ``feval`` metrics and callbacks all use
the true scores. LightGBM's built-in metrics would see the stale cache, so
``params["metric"]`` must be left unset/"None": pass ``feval`` instead (e.g.
``boostplug.lightgbm.metric("ndcg@10")``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np
from numpy.typing import NDArray

from ...objectives import qbrank
from ..._validation import check_rounds
from .._builders import builder_init_score
from .._query_info import set_arrays
from .adapters import aliases, group_ptr_from_lgb_sizes, initial_scores

__all__ = ["LineSearchRecord", "LineSearchResult", "train_line_search"]

_PAPER_ETA = 0.05
_NONE_METRICS = (None, "", "None", "none", "null", "na", [], ())


@dataclass
class LineSearchRecord:
    """What training saw, returned beside the booster by :func:`train_line_search`.

    Attributes:
        eta: the shrinkage used.
        steps: ``s_m`` per round (the exact line-search minimisers).
        risk: QBRank risk R on the training set after each round (``risk[0]``:
            at the initial scores).
        train_scores: the true training scores after the last round (including
            the Dataset's ``init_score``).
        valid_scores: the same for each validation set, by name.
    """

    eta: float
    steps: list[float] = field(default_factory=list)
    risk: list[float] = field(default_factory=list)
    train_scores: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))
    valid_scores: dict[str, NDArray[np.float64]] = field(default_factory=dict)


class LineSearchResult(NamedTuple):
    """``(booster, record)``, what :func:`train_line_search` returns."""

    booster: Any
    record: LineSearchRecord


def _pop_aliases(params: dict[str, Any], name: str) -> list[tuple[str, Any]]:
    """LightGBM's parameter ``name`` taken out of ``params`` under each of its names given."""
    return [(k, params.pop(k)) for k in aliases(name) if k in params]


def _resolve_params(params: dict[str, Any] | None, eta: float | None) -> tuple[dict[str, Any], float]:
    """LightGBM params for the raw tree (learning rate 1, no objective/metric) and eta."""
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise TypeError(f"params must be a dict, got {type(params).__name__}")
    p = dict(params)
    lrs = _pop_aliases(p, "learning_rate")
    if eta is None:
        eta = float(lrs[0][1]) if lrs else _PAPER_ETA
    elif any(float(v) != 1.0 for _, v in lrs):
        raise ValueError(
            f"give the shrinkage once: eta={eta!r} and params {dict(lrs)}; the line search needs "
            "LightGBM's learning_rate at 1 (eta is the paper's shrinkage)"
        )
    if isinstance(eta, bool) or not isinstance(eta, (int, float)) or not (0.0 < float(eta) <= 1.0):
        raise ValueError(f"eta (the shrinkage) must be in (0, 1], got {eta!r}")
    for k, v in _pop_aliases(p, "objective"):
        if v not in (None, "none", "custom"):
            raise ValueError(
                f"params[{k!r}] = {v!r}: train_line_search always trains QBRank; "
                "pass its parameters as objective_params"
            )
    for k, v in _pop_aliases(p, "metric"):
        if v not in _NONE_METRICS:
            raise ValueError(
                f"params[{k!r}] = {v!r}: LightGBM's built-in metrics would see unscaled trees; "
                "pass feval=... (e.g. boostplug.lightgbm.metric('ndcg@10')) instead"
            )
    for k, v in _pop_aliases(p, "boosting"):
        if v not in ("gbdt", "gbrt"):
            raise ValueError(f"params[{k!r}] = {v!r}: the line search needs boosting='gbdt'")
        p["boosting"] = "gbdt"
    if any(p.get(k) for k in aliases("linear_tree")):
        raise ValueError("linear_tree=True is not supported: scaling leaf constants would not scale the linear part")
    for k in aliases("num_class"):
        if k in p and int(p[k]) != 1:
            raise ValueError(f"params[{k!r}] = {p[k]!r}: ranking trains one tree per round")
    p.update({"objective": "none", "metric": "None", "learning_rate": 1.0})
    p.setdefault("verbose", -1)
    return p, float(eta)


def _capture(booster: Any, valid: bool) -> list[NDArray[np.float64]]:
    """LightGBM's internal raw-score caches (copies), via the public eval hooks."""
    out: list[NDArray[np.float64]] = []

    def grab(preds: NDArray, data: Any) -> list[Any]:
        out.append(np.array(preds, dtype=np.float64, copy=True).reshape(-1))
        return []

    (booster.eval_valid if valid else booster.eval_train)(feval=grab)
    return out


def _scale_last_tree(booster: Any, factor: float) -> None:
    tree_id = booster.current_iteration() - 1
    info = booster.dump_model(num_iteration=1, start_iteration=tree_id)["tree_info"][0]
    for leaf in range(int(info["num_leaves"])):
        booster.set_leaf_output(tree_id, leaf, booster.get_leaf_output(tree_id, leaf) * factor)


def _prepare(dataset: Any, objective_params: dict[str, Any]) -> qbrank.QBRankObjective:
    labels, gp, w = set_arrays(np.asarray(dataset.get_label(), dtype=np.float64), dataset.get_group(),
                               dataset.get_weight(), group_ptr_from_lgb_sizes, "LightGBM")
    return qbrank.QBRankObjective(labels, gp, weights=w, **objective_params)


def _evaluate(fevals: list[Callable[..., Any]], scores: NDArray[np.float64], dataset: Any, name: str,
              risk: float | None) -> list[Any]:
    import lightgbm as lgb

    res = [] if risk is None else [lgb.EvalResult(name, "qbrank_risk", risk, False)]
    for f in fevals:
        ret = f(scores, dataset)
        res += [lgb.EvalResult(name, t[0], t[1], t[2]) for t in (ret if isinstance(ret, list) else [ret])]
    return res


def train_line_search(params: dict[str, Any] | None, train_set: Any, num_boost_round: int = 100, *,
                      objective_params: dict[str, Any] | None = None, eta: float | None = None,
                      valid_sets: Sequence[Any] | None = None, valid_names: Sequence[str] | None = None,
                      feval: Callable[..., Any] | Sequence[Callable[..., Any]] | None = None,
                      callbacks: Sequence[Callable[..., Any]] | None = None) -> LineSearchResult:
    """Train LightGBM trees with QBRank and Algorithm 2's exact line search.

    Example:
        >>> import lightgbm as lgb
        >>> from boostplug import lightgbm as bpl
        >>> train = bpl.dataset(X, y, qid=qid)
        >>> vali = bpl.dataset(Xv, yv, qid=qid_v, reference=train)
        >>> params = {"num_leaves": 7, "num_threads": 1, "verbose": -1}
        >>> bst, record = bpl.train_line_search(params, train, 30, eta=0.05,
        ...                                     valid_sets=[vali], valid_names=["vali"],
        ...                                     feval=bpl.metric("ndcg@10"),
        ...                                     callbacks=[lgb.early_stopping(10, verbose=False)])
        >>> len(record.steps) == len(record.risk) - 1   # one exact step s_m per round
        True
        >>> record.risk[-1] < record.risk[0]            # each step minimises the risk along its tree
        True

    Args:
        params: LightGBM parameters for the trees (``num_leaves``,
            ``min_data_in_leaf``, ...). ``learning_rate`` (or an alias) is taken
            as ``eta`` when ``eta`` is not given; objective and metric must not
            be set (see the module docstring); ``boosting`` must be ``"gbdt"``.
        train_set: ``lgb.Dataset`` with query groups (``group=``); its
            ``init_score`` is the initial model h_0 (not saved in the model, as
            in LightGBM) and row weights must be constant within each query.
        num_boost_round: number of rounds (trees).
        objective_params: QBRank parameters (``w``, ``tau``, ``pairs``,
            ``labeled``, ``hessian``, ...), see :mod:`boostplug.objectives.qbrank`.
        eta: the shrinkage of Algorithm 2 (default: see above; paper: 0.05).
        valid_sets, valid_names: as in ``lgb.train``; the training set may be
            among them. Each set with query groups also reports its QBRank risk.
        feval: ``feval(preds, dataset) -> (name, value, higher_is_better)`` (or a
            list of such), called with the true scores.
        callbacks: LightGBM callbacks (``lgb.early_stopping``,
            ``lgb.record_evaluation``, ``lgb.log_evaluation``), called after each
            round with the results computed from the true scores.

    Returns:
        :class:`LineSearchResult` ``(booster, record)``: the ``lgb.Booster`` (its saved
        model predicts the true scores minus ``init_score``; after early stopping it has
        ``best_iteration`` and ``best_score``) and the :class:`LineSearchRecord`.
    """
    import lightgbm as lgb

    if not isinstance(train_set, lgb.Dataset):
        raise TypeError(f"train_set must be a lightgbm.Dataset, got {type(train_set).__name__}")
    if isinstance(num_boost_round, bool) or not isinstance(num_boost_round, (int, np.integer)) or num_boost_round < 0:
        raise ValueError(f"num_boost_round must be a non-negative integer, got {num_boost_round!r}")
    if num_boost_round:
        check_rounds(num_boost_round, "num_boost_round")
    lgb_params, eta_value = _resolve_params(params, eta)
    objective_params = dict(objective_params or {})
    fevals = [] if feval is None else ([feval] if callable(feval) else list(feval))
    valid_sets = list(valid_sets or [])
    if valid_names is not None and len(valid_names) != len(valid_sets):
        raise ValueError(f"got {len(valid_names)} valid_names for {len(valid_sets)} valid_sets")
    names = list(valid_names) if valid_names is not None else [f"valid_{i}" for i in range(len(valid_sets))]

    # before the Datasets are constructed: LightGBM then stores NaN as 0 and +-inf as +-1e300
    builder_init_score(train_set.init_score, "init_score of the training set")
    for name, ds in zip(names, valid_sets):
        builder_init_score(ds.init_score, f"init_score of valid set {name!r}")
    booster = lgb.Booster(params=lgb_params, train_set=train_set)
    prepared = _prepare(train_set, objective_params)
    scores = initial_scores(train_set)
    inner = _capture(booster, valid=False)[0]
    record = LineSearchRecord(eta=eta_value, risk=[prepared.loss(scores)])

    as_train = [name for name, ds in zip(names, valid_sets) if ds is train_set]  # its last name names it
    others = [(name, ds) for name, ds in zip(names, valid_sets) if ds is not train_set]
    train_name, report_train = (as_train or ["training"])[-1], bool(as_train)
    booster.set_train_data_name(train_name)
    for name, ds in others:
        booster.add_valid(ds.set_reference(train_set), name)
    v_scores = [initial_scores(ds) for _, ds in others]
    v_prep = [_prepare(ds, objective_params) if ds.get_group() is not None else None for _, ds in others]
    v_inner = _capture(booster, valid=True) if others else []

    callbacks = list(callbacks or [])
    before = [cb for cb in callbacks if getattr(cb, "before_iteration", False)]
    after = sorted((cb for cb in callbacks if not getattr(cb, "before_iteration", False)),
                   key=lambda cb: getattr(cb, "order", 0))
    for i in range(num_boost_round):
        env = lgb.callback.CallbackEnv(booster, lgb_params, i, 0, num_boost_round, None)
        for cb in before:
            cb(env)
        grad, hess = prepared.grad_hess(scores)
        empty = booster.update(fobj=lambda preds, data: (grad, hess))
        if empty and booster.current_iteration() <= i:
            break  # LightGBM dropped the split-less tree: nothing more to learn
        new_inner = _capture(booster, valid=False)[0]
        direction = new_inner - inner
        inner = new_inner
        s = qbrank.line_search(prepared, scores, direction)
        step = eta_value * s
        _scale_last_tree(booster, step)
        scores = scores + step * direction
        record.steps.append(s)
        record.risk.append(prepared.loss(scores))
        if others:
            new_v = _capture(booster, valid=True)
            v_scores = [v + step * (new - old) for v, new, old in zip(v_scores, new_v, v_inner)]
            v_inner = new_v
        results: list[Any] = []
        if report_train:
            results += _evaluate(fevals, scores, train_set, train_name, record.risk[-1])
        for k, (name, ds) in enumerate(others):
            risk = v_prep[k].loss(v_scores[k]) if v_prep[k] is not None else None
            results += _evaluate(fevals, v_scores[k], ds, name, risk)
        env = lgb.callback.CallbackEnv(booster, lgb_params, i, 0, num_boost_round, results)
        try:
            for cb in after:
                cb(env)
        except lgb.callback.EarlyStopException as stop:
            booster.best_iteration = stop.best_iteration + 1
            booster.best_score = _best_score(stop.best_score)
            break
        if empty:
            break
    record.train_scores = scores
    record.valid_scores = {name: v for (name, _), v in zip(others, v_scores)}
    return LineSearchResult(booster, record)


def _best_score(results: Sequence[Any]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for r in results:
        out.setdefault(r[0], {})[r[1]] = r[2]
    return out
