"""How a method trains: one trainer per framework (:data:`TRAINERS`, which
:meth:`boostplug.compare.methods.Method.train` calls), each returning a :class:`Trained` (validation
and test scores after every round, the time); while it trains, it reports its rounds to ``progress``
and shows the validation scores to a :data:`Checkpoint`.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

import numpy as np
from numpy.typing import NDArray

from ..data import RankingData
from ..groups import qid_from_group_ptr
from . import fold_cache

__all__ = ["TrainingPart", "Trained", "Progress", "Checkpoint", "CHECKPOINTS", "checkpoint_rounds",
           "lightgbm_staged_scores", "xgboost_staged_scores", "catboost_params", "ranksvm_pairs", "TRAINERS",
           "XGBOOST_NAMES", "CATBOOST_NAMES"]

@dataclass(eq=False)
class TrainingPart(RankingData):
    """What a method trains on: features, labels and query groups, and what some learners take
    beside them.

    Attributes:
        position: ``None`` or the 0-based shown position of every row (clicks as labels): LightGBM
            trains with it as its Dataset ``position`` (position debiasing); the other trainers
            ignore it.
        pairs: ``None`` or explicit preference pairs, ``(P, 2)`` row indices, preferred row first:
            a reference booster's ``fit(pairs=...)``; the tree trainers ignore it (a tree
            objective takes its pairs as a parameter).
        weight: ``None`` or a weight per row (inverse-propensity weights of clicks as labels):
            LightGBM trains with it as its Dataset ``weight``; the other trainers refuse it.
        init_score: ``None`` or a score per row that LightGBM boosts on from (its Dataset
            ``init_score``; the staged scores are the new trees' alone); the other trainers refuse it.
    """

    position: NDArray[np.int64] | None = None
    pairs: NDArray[np.int64] | None = None
    weight: NDArray[np.float64] | None = None
    init_score: NDArray[np.float64] | None = None

    @classmethod
    def of(cls, data: RankingData) -> "TrainingPart":
        """``data`` as a training part (itself when it is one; no copy of the arrays)."""
        if isinstance(data, TrainingPart):
            return data
        return cls(data.X, data.y, data.qid, data.group_ptr, data.comments)


Progress = Callable[[int, int], None]
#: ``checkpoint(round, vali_scores)`` during training, at :func:`checkpoint_rounds`; it may raise to stop
#: the training (a pruned ``--tune`` trial).
Checkpoint = Callable[[int, NDArray[np.float64]], None]
#: How many times a training run shows its validation scores to a ``checkpoint``.
CHECKPOINTS = 10


class Settings(Protocol):
    """What a trainer reads of a method (:class:`~.methods.Method` is one): its loss (a built-in
    name, ``"boostplug:<objective>"`` or a booster's class name), the loss's parameters and the
    method's own tree parameters."""

    @property
    def loss(self) -> str: ...

    @property
    def loss_params(self) -> dict[str, Any]: ...

    @property
    def tree_params(self) -> dict[str, Any]: ...


def checkpoint_rounds(rounds: int) -> range:
    """The rounds (1-based) at which training calls its ``checkpoint``: every tenth of ``rounds``,
    short of the last (a finished run is scored whole)."""
    every = max(1, rounds // CHECKPOINTS)
    return range(every, rounds, every)


def _each_round(rounds: int, progress: Progress | None,
                checkpoint: Checkpoint | None) -> Callable[[int, Callable[[], Any]], None]:
    """``step(t, vali_scores)`` for a trainer to call after round ``t``: reports it to ``progress``
    and, at :func:`checkpoint_rounds`, shows ``vali_scores()`` to ``checkpoint``."""
    at = set(checkpoint_rounds(rounds))

    def step(t: int, vali_scores: Callable[[], Any]) -> None:
        if progress is not None:
            progress(t, rounds)
        if checkpoint is not None and t in at:
            checkpoint(t, np.asarray(vali_scores(), dtype=np.float64))

    return step


@dataclass
class Trained:
    """Scores after every round on the validation and test parts, and the training time."""

    vali_scores: list[NDArray[np.float64]]
    test_scores: list[NDArray[np.float64]]
    seconds: float
    info: dict[str, Any] = field(default_factory=dict)


def _staged(predict: Callable[[int], NDArray], n: int) -> list[NDArray[np.float64]]:
    return [np.asarray(predict(t), dtype=np.float64) for t in range(1, n + 1)]


def lightgbm_staged_scores(booster: Any, X: Any, n: int) -> list[NDArray[np.float64]]:
    """Raw scores after each of the first ``n`` trees, equal bit for bit to
    ``booster.predict(X, num_iteration=t, raw_score=True)`` for ``t = 1..n``.

    One leaf-index prediction and a running sum of the leaves' outputs, in tree order and
    in float64 as LightGBM sums them: ``n`` separate predictions each walk ``t`` trees, which
    made the staged scores cost many times the training itself. LightGBM predicts with every core
    unless told, whatever the training's ``num_threads``: a run's limit (:func:`.._core.threads.run_limit`)
    bounds it.
    """
    rows = int(X.shape[0])
    if n == 0 or rows == 0:
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


def _lightgbm_seeded(m: Settings, seed: int) -> dict[str, Any]:
    """The method's objective parameters, with LightGBM's ``objective_seed`` derived from the run's
    ``seed`` as LightGBM derives its own (for an objective that declares it and a method that does
    not set it): a copy of a built-in then draws what the built-in draws."""
    from ..objectives import get
    from ..objectives.xendcg import objective_seed_from_seed

    declared = get(m.loss.split(":", 1)[1]).defaults
    if "objective_seed" not in declared or "objective_seed" in m.loss_params:
        return dict(m.loss_params)
    return {**m.loss_params, "objective_seed": objective_seed_from_seed(seed)}


def _train_lightgbm(m: Settings, train: TrainingPart, vali: RankingData, test: RankingData, rounds: int,
                    tree_params: dict[str, Any], seed: int, threads: int, progress: Progress | None,
                    checkpoint: Checkpoint | None = None) -> Trained:
    import lightgbm as lgb

    from .. import lightgbm as bpl

    params = {**tree_params, **m.tree_params}
    params.update({"verbose": -1, "seed": seed, "deterministic": True, "num_threads": threads})
    if m.loss.startswith("boostplug:"):
        params["objective"] = bpl.objective(m.loss.split(":", 1)[1], threads=threads or None,
                                            **_lightgbm_seeded(m, seed))
    else:
        params["objective"] = m.loss
        params.update(m.loss_params)
    step = _each_round(rounds, progress, checkpoint)

    def cb(env: Any) -> None:
        step(env.iteration + 1, lambda: env.model.predict(vali.X, raw_score=True))

    def build() -> Any:
        return bpl.dataset(train.X, train.y, group_ptr=train.group_ptr, position=train.position, weight=train.weight,
                           init_score=train.init_score)

    timed: list[float] = []

    def fit(dtrain: Any) -> Any:
        t0 = time.perf_counter()
        booster = lgb.train(params, dtrain, num_boost_round=rounds, callbacks=[cb])
        timed.append(time.perf_counter() - t0)
        return booster

    booster = fold_cache.lightgbm_train(params, train, build, fit)
    n = booster.current_iteration()
    return Trained(*(lightgbm_staged_scores(booster, d.X, n) for d in (vali, test)), timed[0])


def xgboost_staged_scores(booster: Any, dmat: Any, n: int) -> list[NDArray[np.float64]]:
    """Margins after each of the first ``n`` trees, equal bit for bit to
    ``booster.predict(dmat, iteration_range=(0, t), output_margin=True)`` for ``t = 1..n``.

    The first tree's prediction, then the leaves' values (float32, the model's) added in tree
    order in float32 as XGBoost sums them: ``n`` separate predictions each walk ``t`` trees.
    """
    rows = int(dmat.num_row())
    if n == 0 or rows == 0:
        return [np.zeros(0) for _ in range(n)]
    # the plain prediction first: it raises XGBoost's error for data the model cannot read
    # (after a leaf-index prediction of such data, reading the model aborted the process)
    first = booster.predict(dmat, iteration_range=(0, 1), output_margin=True)
    leaves = np.asarray(booster.predict(dmat, pred_leaf=True, iteration_range=(0, n))).reshape(rows, -1)
    trees = json.loads(booster.save_raw(raw_format="json"))["learner"]["gradient_booster"]["model"]["trees"]
    if leaves.shape[1] != n or len(trees) != n:  # one tree per round is what this sum assumes (no dart, multi-class)
        return _staged(lambda t: booster.predict(dmat, iteration_range=(0, t), output_margin=True), n)
    out = np.empty((rows, n), dtype=np.float32)
    out[:, 0] = first
    for t in range(1, n):
        values = np.asarray(trees[t]["split_conditions"], dtype=np.float32)  # a leaf's value, at a leaf
        out[:, t] = out[:, t - 1] + values[leaves[:, t].astype(np.int64)]
    return [out[:, t].astype(np.float64) for t in range(n)]


#: LightGBM tree parameter -> XGBoost parameter (same meaning).
XGBOOST_NAMES = {
    "learning_rate": "eta", "num_leaves": "max_leaves", "min_sum_hessian_in_leaf": "min_child_weight",
    "lambda_l2": "lambda", "feature_fraction": "colsample_bytree", "max_bin": "max_bin",
}


def _xgb_params(tree_params: dict[str, Any], seed: int, threads: int) -> dict[str, Any]:
    """XGBoost's names for the shared tree parameters (``min_data_in_leaf`` has no
    XGBoost counterpart: XGBoost bounds leaves by hessian only)."""
    p: dict[str, Any] = {"grow_policy": "lossguide", "max_depth": 0, "tree_method": "hist", "seed": seed}
    p.update({XGBOOST_NAMES[k]: v for k, v in tree_params.items() if k in XGBOOST_NAMES})
    if threads > 0:
        p["nthread"] = threads
    return p


def _train_xgboost(m: Settings, train: TrainingPart, vali: RankingData, test: RankingData, rounds: int,
                   tree_params: dict[str, Any], seed: int, threads: int, progress: Progress | None,
                   checkpoint: Checkpoint | None = None) -> Trained:
    import xgboost as xgb

    from .. import xgboost as bpx

    params = _xgb_params({**tree_params, **m.tree_params}, seed, threads)
    obj = None
    if m.loss.startswith("boostplug:"):
        obj = bpx.objective(m.loss.split(":", 1)[1], threads=threads or None, **m.loss_params)
        params = bpx.params(**params)
    else:
        params["objective"] = m.loss
        params.update(m.loss_params)
    dtrain = fold_cache.cached("xgboost-train", train, lambda: bpx.dmatrix(train.X, train.y, group_ptr=train.group_ptr))
    dvali, dtest = (fold_cache.cached("xgboost-features", d, lambda d=d: xgb.DMatrix(d.X)) for d in (vali, test))

    step = _each_round(rounds, progress, checkpoint)

    class _Progress(xgb.callback.TrainingCallback):
        def after_iteration(self, model: Any, epoch: int, evals_log: Any) -> bool:
            step(epoch + 1, lambda: model.predict(dvali, output_margin=True))
            return False

    t0 = time.perf_counter()
    booster = xgb.train(params, dtrain, num_boost_round=rounds, obj=obj, callbacks=[_Progress()])
    seconds = time.perf_counter() - t0
    n = booster.num_boosted_rounds()
    return Trained(*(xgboost_staged_scores(booster, d, n) for d in (dvali, dtest)), seconds)


#: LightGBM tree parameter -> CatBoost parameter (``num_leaves`` becomes a depth; ``min_data_in_leaf`` and
#: ``min_sum_hessian_in_leaf`` bound leaves of CatBoost's other tree shapes only, not its symmetric trees).
CATBOOST_NAMES = {"learning_rate": "learning_rate", "lambda_l2": "l2_leaf_reg", "feature_fraction": "rsm",
                  "max_bin": "border_count"}


def catboost_params(tree_params: dict[str, Any], depth: int | None, seed: int, threads: int) -> dict[str, Any]:
    """CatBoost's parameters of a method: the shared tree parameters in CatBoost's names, the depth
    (``depth``, else the one whose leaves are nearest ``num_leaves``), the seed, the threads (0:
    CatBoost's default) and nothing written to disk."""
    p: dict[str, Any] = {CATBOOST_NAMES[k]: v for k, v in tree_params.items() if k in CATBOOST_NAMES}
    p.update({"depth": depth or max(1, min(16, round(math.log2(tree_params["num_leaves"])))), "random_seed": seed,
              "verbose": False, "allow_writing_files": False, "thread_count": threads if threads > 0 else -1})
    return p


def _catboost_loss(m: Settings) -> str:
    """CatBoost's loss with the method's own settings: ``YetiRank:permutations=10;decay=0.85``."""
    own = {k: v for k, v in m.loss_params.items() if k != "depth"}
    text = ";".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in own.items())
    return m.loss + ((";" if ":" in m.loss else ":") + text if text else "")


def _train_catboost(m: Settings, train: TrainingPart, vali: RankingData, test: RankingData, rounds: int,
                    tree_params: dict[str, Any], seed: int, threads: int, progress: Progress | None,
                    checkpoint: Checkpoint | None = None) -> Trained:
    """CatBoost trees, ``rounds`` of them, scored after every tree (``staged_predict``, equal to
    ``predict(ntree_end=t)``): CatBoost's own loss in one fit, or a boostplug objective one tree per
    round (:func:`boostplug.catboost.train`). CatBoost shows no scores while it fits, so only a
    boostplug objective's run reaches its checkpoints (a ``--tune`` trial of CatBoost's own loss is
    never pruned)."""
    from catboost import CatBoost, CatBoostError, Pool

    plugin = m.loss.startswith("boostplug:")
    params = catboost_params({**tree_params, **m.tree_params}, None if plugin else m.loss_params.get("depth"), seed,
                             threads)
    t0 = time.perf_counter()
    if plugin:
        from .. import catboost as bpc

        step = _each_round(rounds, progress, checkpoint)

        def after(t: int, model: Any) -> None:
            step(t, lambda: model.predict(vali.X, prediction_type="RawFormulaVal", thread_count=params["thread_count"]))

        pool = bpc.pool(train.X, train.y, group_ptr=train.group_ptr)
        model = bpc.train(params, pool, bpc.objective(m.loss.split(":", 1)[1], **m.loss_params), rounds,
                          callback=after)
    else:
        pool = fold_cache.cached("catboost-train", train,
                                 lambda: Pool(train.X, label=train.y, group_id=qid_from_group_ptr(train.group_ptr)))

        class _Progress:
            def after_iteration(self, info: Any) -> bool:
                if progress is not None:
                    progress(info.iteration, rounds)
                return True

        model = CatBoost({**params, "loss_function": _catboost_loss(m), "iterations": rounds})
        try:
            model.fit(pool, callbacks=[_Progress()])
        except CatBoostError as e:  # "JSON writer: invalid float value: inf", as it writes a value of training
            if "invalid float value" in str(e):
                raise ValueError(f"CatBoost's {_catboost_loss(m)} overflowed to infinity in training: lower its "
                                 "parameters (another loss) or the learning rate (more rounds to fit as far)") from e
            raise
    seconds = time.perf_counter() - t0

    def staged(d: RankingData) -> list[NDArray[np.float64]]:
        n = model.tree_count_
        if n == 0 or d.n_docs == 0:
            return [np.zeros(d.n_docs) for _ in range(n)]
        return [np.asarray(s, dtype=np.float64) for s in
                model.staged_predict(d.X, prediction_type="RawFormulaVal", thread_count=params["thread_count"])]

    return Trained(staged(vali), staged(test), seconds)


def _train_booster(m: Settings, train: TrainingPart, vali: RankingData, test: RankingData, rounds: int,
                   tree_params: dict[str, Any], seed: int, threads: int, progress: Progress | None,
                   checkpoint: Checkpoint | None = None) -> Trained:
    """A reference booster: at most ``rounds`` rounds (fewer when its own stop rule ends it)."""
    from .. import boosters
    from ..boosters._fit_data import check_X
    from ..boosters._weak_rankers import evaluate_rankers

    params = dict(m.loss_params)
    rounds = params.pop("n_rounds", rounds)  # the method's own round budget (``ndcg_boost-stumps[n_rounds=500]``)
    est = getattr(boosters, m.loss)(n_rounds=rounds, random_state=seed, **params)

    X_train, X_vali, X_test = (fold_cache.cached("dense-features", d, lambda d=d: check_X(d.to_dense().X))
                               for d in (train, vali, test))
    for X in (X_vali, X_test):  # the column check predict() makes, before training (scores are summed while it trains)
        if X.shape[1] != X_train.shape[1]:
            check_X(X, X_train.shape[1])
    # each round's scores as staged_predict sums them, one weak ranker at a time, while training
    staged: tuple[list[NDArray[np.float64]], list[NDArray[np.float64]]] = ([], [])
    step = _each_round(rounds, progress, checkpoint)

    def cb(t: int, record: dict[str, Any]) -> None:
        for X, out in zip((X_vali, X_test), staged):
            last = out[-1] if out else np.zeros(X.shape[0])
            out.append(last + record["weight"] * evaluate_rankers(X, [record["ranker"]])[:, 0])
        step(t, lambda: staged[0][-1])

    t0 = time.perf_counter()
    est.fit(X_train, train.y, group=np.diff(train.group_ptr), pairs=train.pairs, callback=cb)  # in the run's limit
    seconds = time.perf_counter() - t0
    if est.stop_reason_ == "interrupted":
        raise KeyboardInterrupt  # the booster kept its rounds; the comparison drops the unfinished method
    if progress is not None:
        progress(rounds, rounds)
    n = len(est.rankers_)
    if len(staged[0]) != n:  # rounds dropped after their callback: read the model instead
        staged = (list(est.staged_predict(X_vali)), list(est.staged_predict(X_test)))
    return Trained(staged[0][:n], staged[1][:n], seconds, {"stop_reason": est.stop_reason_})


def ranksvm_pairs(y: NDArray[np.float64], group_ptr: NDArray[np.int64], max_pairs: int, seed: int) -> NDArray[np.int64]:
    """The critical pairs ``(i, j)``, ``y[i] > y[j]`` within a query (:func:`boostplug.pairs.critical_pairs`, listed
    one query at a time), at most ``max_pairs`` per query: a uniform sample without replacement (seeded) where more."""
    from ..pairs import critical_pairs

    rng, out = np.random.default_rng(seed), [np.zeros((0, 2), dtype=np.int64)]
    for a, b in zip(group_ptr[:-1], group_ptr[1:]):
        p = critical_pairs(y[a:b], [0, b - a])
        out.append(a + (p[np.sort(rng.choice(len(p), max_pairs, replace=False))] if len(p) > max_pairs else p))
    return np.concatenate(out)


def _train_linear(m: Settings, train: TrainingPart, vali: RankingData, test: RankingData, rounds: int,
                  tree_params: dict[str, Any], seed: int, threads: int, progress: Progress | None,
                  checkpoint: Checkpoint | None = None) -> Trained:
    """A linear model on features standardised on the training part (missing: the mean), one "round": ``ridge``
    (scikit-learn's ``Ridge`` on the grades) or ``ranksvm`` (``LinearSVC``, squared hinge, no intercept, on the
    differences of :func:`ranksvm_pairs` and their negations: Herbrich et al. 2000, Joachims 2002)."""
    from sklearn.linear_model import Ridge
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import LinearSVC

    from ..boosters._fit_data import check_X

    X_train, X_vali, X_test = (fold_cache.cached("dense-features", d, lambda d=d: check_X(d.to_dense().X))
                               for d in (train, vali, test))
    t0 = time.perf_counter()
    scale = StandardScaler().fit(X_train)  # BLAS within the run's limit (_core.threads.run_limit)
    bad = np.flatnonzero(~np.isfinite(scale.mean_ + scale.var_))  # liblinear spins on what is left of them
    if bad.size:
        raise ValueError(f"feature {bad[0] + 1} (column {bad[0]}) of the training part cannot be standardised: its "
                         f"values ({np.nanmin(X_train[:, bad[0]]):g} to {np.nanmax(X_train[:, bad[0]]):g}) "
                         "overflow float64 in its variance; rescale or drop it")
    Z = np.nan_to_num(scale.transform(X_train))
    if m.loss == "ridge":
        w = Ridge(alpha=m.loss_params["alpha"]).fit(Z, train.y).coef_
    else:
        d = np.diff(Z[ranksvm_pairs(train.y, train.group_ptr, m.loss_params["max_pairs"], seed)], axis=1)[:, 0]
        w = (LinearSVC(C=m.loss_params["C"], fit_intercept=False, dual=False).fit(np.vstack([d, -d]), np.repeat(
            [-1, 1], len(d))).coef_[0] if len(d) else np.zeros(Z.shape[1]))
    seconds = time.perf_counter() - t0
    if progress is not None:
        progress(1, 1)
    vali_scores, test_scores = ([np.nan_to_num(scale.transform(X)) @ w] for X in (X_vali, X_test))
    return Trained(vali_scores, test_scores, seconds)


#: The trainer of each framework: ``(method, train, vali, test, rounds, tree_params, seed, threads,
#: progress, checkpoint) -> Trained``.
TRAINERS: dict[str, Callable[..., Trained]] = {
    "lightgbm": _train_lightgbm, "xgboost": _train_xgboost, "catboost": _train_catboost, "booster": _train_booster,
    "linear": _train_linear,
}
