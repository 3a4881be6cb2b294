"""The click protocol: every method trained on the same click log, round chosen on held-out
judgments or clicks, test metrics on the true labels.

:func:`~.click_fold.prepare` makes one fold ready (the judged queries ``L``, the click log,
the round-selection data); :func:`run_click_method` trains one method of :data:`CLICK_METHODS`
on it, :func:`run_clicks` every method on the same clicks.

The methods (:data:`CLICK_METHODS`: ``lgb-clicks``, ``lgb-position``, ``xgb-unbiased``, ``lgb-ips``,
``labeled-only``, the QBRank methods on the click pairs ``P``, ``mpboost-P``, ``rankboost-P``, ...),
what each learns from and how the pairs are weighted: docs/compare.md, "Learning from clicks";
what each cannot train under: :meth:`ClickMethod.check_with`; its own tree defaults: :meth:`ClickMethod.base_method`.

Example:
    >>> from boostplug.compare import ClickSettings, run_clicks
    >>> from boostplug.data import make_ranking, train_test_split_by_query
    >>> data = make_ranking(n_queries=60, docs_per_query=10, seed=0)
    >>> rest, test = train_test_split_by_query(data, test_size=0.25, seed=0)
    >>> train, vali = train_test_split_by_query(rest, test_size=0.25, seed=0)
    >>> results = run_clicks(train, vali, test, ClickSettings(n_sessions=2000, labeled_fraction=0.2),
    ...                      methods=["lgb-clicks", "qbrank-P"], rounds=10)
    >>> [r.method for r in results]
    ['lgb-clicks', 'qbrank-P']
"""

from __future__ import annotations

import copy
import sys

import numpy as np
from dataclasses import dataclass, field, replace
from typing import Any, Mapping, Sequence, TextIO

from .._validation import check_real, did_you_mean, show
from ..data import RankingData
from ..clicks import ClickLog
from .click_fold import ClickFold, ClickSettings, prepare
from .conventions import Conventions
from .method_specs import format_spec, split_spec
from .methods import TREE_PARAMS, Method, get_method
from .protocol import Result, _select_round, run_method
from .training import Trained, TrainingPart

__all__ = ["ClickMethod", "CLICK_METHODS", "FixedRanker", "click_method", "can_train", "run_click_method",
           "run_clicks"]

# ---- the methods ----------------------------------------------------------------------------------

#: What each method trains on ("fixed": nothing, the fold's ranker of the method's name).
_TRAINS_ON = ("impressions", "impressions-ips", "labeled", "pairs", "pairs-ips", "pairs+labeled", "impressions+pairs",
              "fixed")
#: Parameters the protocol sets from the data (a user setting of them is refused).
_SET_BY_PROTOCOL = ("pairs", "pair_weights", "labeled", "labeled_rows")
#: The click methods' own framework parameters (``extra``) with a bound: whether 0 is left out.
_EXTRA_LOW_OPEN = {"lambdarank_position_bias_regularization": False, "lambdarank_bias_norm": True}


@dataclass(frozen=True)
class ClickMethod:
    """A click-protocol method: ``base`` is the :mod:`boostplug.compare` method it trains as (its
    tree parameters, objective or booster settings apply, checked by it), ``extra`` the method's
    own framework parameters with their defaults (``None``: the framework's default), ``settings``
    the values set (``name[key=value,...]``)."""

    name: str
    base: str
    trains_on: str
    summary: str
    extra: Mapping[str, Any] = field(default_factory=dict)
    fixed: Mapping[str, Any] = field(default_factory=dict)
    settings: Mapping[str, Any] = field(default_factory=dict)
    #: the shown positions go to the learner (LightGBM's position debiasing)
    positions: bool = False
    #: tree parameters the method trains with unless they are set on it or for the whole run
    trees: Mapping[str, Any] = field(default_factory=dict)
    #: the method whose model this one reproduces through boostplug's copy of its objective (the
    #: same trees): a check, left out of ``--methods default``
    reproduces: str = ""

    def __post_init__(self) -> None:
        if self.trains_on not in _TRAINS_ON:
            raise ValueError(f"click method {self.name!r}: trains_on must be one of {', '.join(_TRAINS_ON)}, got "
                             f"{self.trains_on!r}")

    @property
    def registry_name(self) -> str:
        return self.name.split("[", 1)[0]

    @property
    def framework(self) -> str:
        return get_method(self.base).framework

    @property
    def ips(self) -> bool:
        """Whether the method weights clicks or pairs by inverse propensities estimated from the log."""
        return self.trains_on.endswith("-ips")

    def check_with(self, settings: ClickSettings, simulated: bool = True) -> None:
        """``ValueError`` naming the setting when this method cannot train under ``settings``
        (on a real log when ``simulated`` is false)."""
        if self.registry_name == "production" and not simulated:
            raise ValueError("production is the ranker that showed a simulated log's results; a real log's is not "
                             "known")
        if self.ips and simulated and settings.presentation == "fixed":
            raise ValueError(f"{self.name} estimates position bias from the log, but a simulated fixed presentation "
                             "shows every query in one order, which cannot tell position from relevance; use "
                             "presentation 'shuffle' or 'swap'")
        if self.ips and settings.weight == "wilson":
            raise ValueError(f"{self.name}: inverse-propensity counts are not whole, and weight 'wilson' needs whole "
                             "counts; use 'net', 'count' or 'unit'")
        if "labeled" in self.trains_on and settings.labeled_fraction == 0.0:
            raise ValueError(f"{self.name} trains on labeled queries, but labeled_fraction is 0")
        if self.framework == "booster" and settings.weight not in ("unit", "count", "net"):
            raise ValueError(f"{self.name}: the reference boosters take no per-pair weights and train on each pair "
                             f"repeated by its weight, a whole number: weight must be 'unit', 'count' or 'net', got "
                             f"{settings.weight!r}")

    def configure(self, params: Mapping[str, Any]) -> "ClickMethod":
        """This method with ``params`` set; unknown names and bad values are refused now."""
        if self.trains_on == "fixed" and params:
            raise ValueError(f"method {self.registry_name!r} is a fixed ranker and takes no parameters, got "
                             f"{', '.join(params)}")
        base = get_method(self.base)
        known = [k for k in base.parameters() if k not in _SET_BY_PROTOCOL and k not in self.fixed]
        for key, value in params.items():
            if key in _SET_BY_PROTOCOL or key in self.fixed:
                raise ValueError(f"method {self.registry_name!r}: {key} is set by the click protocol")
            if key not in known and key not in self.extra:
                hint = did_you_mean(key, [*known, *self.extra])
                raise ValueError(f"method {self.registry_name!r} has no parameter {key!r}; {hint}{' ' if hint else ''}"
                                 f"its parameters are {', '.join([*known, *self.extra])}")
        for key in self.extra:  # the framework's own bounds, in (0, 1e6] or [0, 1e6]; None: its default
            if params.get(key) is not None and key in _EXTRA_LOW_OPEN:
                check_real(f"method {self.registry_name!r}: {key}", params[key], 0.0, 1e6, lo_open=_EXTRA_LOW_OPEN[key])
        base_params = {k: v for k, v in params.items() if k not in self.extra}
        try:
            base.configure(base_params, rename=False)
        except (ValueError, TypeError) as e:
            raise type(e)(str(e).replace(f"method {self.base!r}", f"method {self.registry_name!r}")) from None
        settings = {**self.settings, **params}
        return replace(self, name=format_spec(self.registry_name, settings), settings=settings)

    def base_method(self, run_tree_params: Mapping[str, Any] | None = None) -> Method:
        """The :class:`boostplug.compare.methods.Method` this method trains as, named after it,
        with its settings and fixed parameters but without the data's (pairs, labeled rows); its
        own tree defaults (``trees``) where neither its settings nor ``run_tree_params`` set them
        (a run's value equal to the shared :data:`~.methods.TREE_PARAMS` default sets nothing, so a
        caller may pass the whole shared set; hence ``--param num_leaves=31`` leaves these methods'
        trees as they are: name the method ``qbrank-P[num_leaves=31]`` instead)."""
        extra = {**self.extra, **{k: v for k, v in self.settings.items() if k in self.extra}}
        run = run_tree_params or {}
        trees = {k: v for k, v in self.trees.items() if k not in run or run[k] == TREE_PARAMS.get(k)}
        base = get_method(self.base).configure(
            {**trees, **{k: v for k, v in self.settings.items() if k not in self.extra}}, rename=False)
        loss = {**base.loss_params, **self.fixed, **{k: v for k, v in extra.items() if v is not None}}
        # QBRank's settings that change nothing here are not searched (--tune): w without labeled
        # rows (it scales every term alike), tau without label pairs
        idle = [k for k, on in (("w", self.trains_on in ("pairs", "pairs-ips", "impressions+pairs")), ("tau", not loss.get("label_pairs", False)))
                if on and base.loss == "boostplug:qbrank"]
        return ClickProtocolMethod(self.name, base.framework, base.loss, loss, self.summary, base.select_metric,
                                   base.tree_params, base.base, unsearched=tuple(idle))

    def build(self, fold: ClickFold, metric: str = "ndcg@10", conventions: Conventions | None = None,
              tree_params: Mapping[str, Any] | None = None) -> tuple[Method, RankingData]:
        """The :class:`boostplug.compare.methods.Method` this method trains as on ``fold``, and
        its training data (``metric`` and ``conventions`` choose a first stage's round;
        ``tree_params``: the run's, which take the place of the method's tree defaults)."""
        base = self.base_method(tree_params)
        loss = dict(base.loss_params)
        data: RankingData
        if self.trains_on == "fixed":
            if self.registry_name not in fold.fixed_scores:
                raise ValueError(f"{self.registry_name}: this fold has no such ranker (a real log's production "
                                 "ranker is not known)")
            scores = fold.fixed_scores[self.registry_name]
            return FixedRanker(self.name, base.framework, "", {}, self.summary, vali_scores=scores["selection"],
                               test_scores=scores["test"]), fold.train
        if self.trains_on in ("impressions", "impressions-ips"):
            data = _impressions(fold, self.ips, self.positions)
        elif self.trains_on == "labeled":
            if fold.labeled is None:
                raise ValueError(f"{self.registry_name} trains on labeled queries, but labeled_fraction is 0")
            data = fold.labeled
        elif base.framework == "booster":
            ts = fold.pairs(labeled=False, normalised=False)
            try:
                repeated = ts.repeated()
            except ValueError as e:
                raise ValueError(f"{self.registry_name}: the reference boosters take no per-pair weights and train on "
                                 f"each pair repeated by its weight: {e}") from None
            data = TrainingPart(ts.X, ts.y, None, ts.group_ptr, pairs=repeated)
        else:
            ts = fold.pairs(labeled=self.trains_on == "pairs+labeled", normalised=True, ips=self.ips)
            qb = ts.qbrank_params(w=loss.get("w", 0.5), pair_tau=loss.get("pair_tau", 1.0),
                                  label_pairs=loss.get("label_pairs", False))
            loss.update(qb)
            data = RankingData(ts.X, ts.y, None, ts.group_ptr)
            if self.trains_on == "impressions+pairs":
                first = get_method("lambdarank")
                stacked = StackedMethod(base.name, base.framework, base.loss, loss, base.summary, base.select_metric,
                                        base.tree_params, base.base, first=first, first_data=_impressions(fold, False, False),
                                        first_metric=metric, conventions=conventions or Conventions())
                return stacked, data
        return replace(base, loss_params=loss), data


def _impressions(fold: ClickFold, ips: bool, positions: bool) -> TrainingPart:
    """Clicks as labels (inverse-propensity weighted when ``ips``), the shown positions only when
    ``positions`` (the same rows: no copy of the features)."""
    data = fold.ips_impressions if ips else fold.impressions
    if not positions:
        data = copy.copy(data)
        data.position = None
    return data


@dataclass(frozen=True)
class ClickProtocolMethod(Method):
    """A :class:`boostplug.compare.methods.Method` that leaves its ``unsearched`` settings out of
    its search space (``--tune``)."""

    unsearched: tuple[str, ...] = ()

    def search_space(self) -> dict[str, Any]:
        return {k: d for k, d in super().search_space().items() if k not in self.unsearched}


@dataclass(frozen=True, eq=False)
class StackedMethod(Method):
    """Two stages: ``first`` trains on ``first_data`` (clicks as labels), its round chosen on the
    validation part by ``first_metric``; this method's loss then boosts on from that model's
    scores (LightGBM ``init_score``) on its own training data (the click pairs). Its staged
    scores are the first model's plus the new trees'."""

    first: Any = None
    first_data: Any = None
    first_metric: str = "ndcg@10"
    conventions: Any = None

    def search_space(self) -> dict[str, Any]:
        return {}

    def train(self, train: RankingData, vali: RankingData, test: RankingData, *, rounds: int,
              tree_params: dict[str, Any], seed: int, threads: int = 0, progress: Any = None,
              checkpoint: Any = None) -> Trained:
        both = RankingData.concat(test, train)  # the first model scores the test part and this training data at once
        one = self.first.train(self.first_data, vali, both, rounds=rounds, tree_params=tree_params, seed=seed,
                               threads=threads)
        _, k = _select_round(one.vali_scores, vali, self.first_metric, self.conventions)
        base_test, base_train = np.split(one.test_scores[k], [test.n_docs])
        part = copy.copy(TrainingPart.of(train))
        part.init_score = base_train
        two = super().train(part, vali, test, rounds=rounds, tree_params=tree_params, seed=seed, threads=threads,
                            progress=progress, checkpoint=None if checkpoint is None else
                            (lambda r, s: checkpoint(r, s + one.vali_scores[k])))
        return Trained([s + one.vali_scores[k] for s in two.vali_scores], [s + base_test for s in two.test_scores],
                       one.seconds + two.seconds, {"first_stage_round": k + 1})


@dataclass(frozen=True, eq=False)
class FixedRanker(Method):
    """A ranker the protocol does not train (the production ranker, a random order): its one
    "round" is its scores, so that it stands in the table, the paired tests and the plots beside
    the methods that learn."""

    vali_scores: Any = None
    test_scores: Any = None

    def search_space(self) -> dict[str, Any]:
        return {}

    def train(self, train: RankingData, vali: RankingData, test: RankingData, **_: Any) -> Trained:
        return Trained([np.asarray(self.vali_scores)], [np.asarray(self.test_scores)], 0.0)


#: QBRank's trees on the click pairs alone: a few thousand pairs on the rows they touch are
#: fitted to their noise by the comparison's 31-leaf trees (docs/studies/clicks.md, "Why QBRank trailed").
PAIR_TREES = {"num_leaves": 3}


#: The click protocol's methods, by name (module docstring).
CLICK_METHODS: dict[str, ClickMethod] = {m.name: m for m in (
    ClickMethod("production", "lambdarank", "fixed",
        "the production ranker that showed the simulated results (LightGBM lambdarank on L, fixed rounds): the "
        "ranker the clicks came from"),
    ClickMethod("random", "lambdarank", "fixed", "a random order (seeded): what nothing learned scores"),
    ClickMethod("lgb-clicks", "lambdarank", "impressions",
        "LightGBM lambdarank, clicks as labels (each impression with a click a query group)"),
    ClickMethod("lgb-position", "lambdarank", "impressions",
        "LightGBM lambdarank, clicks as labels, with its position debiasing (Dataset position)",
        extra={"lambdarank_position_bias_regularization": 0.0}, positions=True),
    ClickMethod("lgb-position-plugin", "lambdarank-plugin", "impressions",
        "lgb-position through boostplug's copy of LightGBM lambdarank, a custom objective reading the Dataset's "
        "positions: the built-in's trees", extra={"lambdarank_position_bias_regularization": 0.0}, positions=True,
        reproduces="lgb-position"),
    ClickMethod("xgb-unbiased", "xgb-rank:ndcg", "impressions",
        "XGBoost rank:ndcg, clicks as labels, lambdarank_unbiased (position = shown order)",
        extra={"lambdarank_bias_norm": None}, fixed={"lambdarank_unbiased": True}),
    ClickMethod("xgb-unbiased-plugin", "xgb-rank_ndcg-plugin", "impressions",
        "xgb-unbiased through boostplug's copy of rank:ndcg (a custom objective on XGBoost): the built-in's trees",
        extra={"lambdarank_bias_norm": None}, fixed={"lambdarank_unbiased": True}, reproduces="xgb-unbiased"),
    ClickMethod("lgb-ips", "lambdarank", "impressions-ips",
        "LightGBM lambdarank, clicks as labels, each click weighted by the inverse of its position's examination "
        "propensity, estimated from the log (a log that shows documents at several positions)"),
    ClickMethod("labeled-only", "lambdarank", "labeled", "LightGBM lambdarank on the labeled queries L alone"),
    ClickMethod("qbrank-P", "qbrank", "pairs", "QBRank on the click preference pairs P (LightGBM trees of 3 leaves)",
        trees=PAIR_TREES),
    ClickMethod("qbrank-P-ips", "qbrank", "pairs-ips",
        "QBRank on the click pairs, each counted by the inverse examination propensity of its clicked position, "
        "estimated from the log (a log that shows documents at several positions; trees of 3 leaves)",
        trees=PAIR_TREES),
    ClickMethod("lgb-clicks+qbrank-P", "qbrank", "impressions+pairs",
        "LightGBM lambdarank on the clicks as labels (its round chosen as the others'), then QBRank on the click "
        "pairs boosting on from its scores"),
    ClickMethod("qbrank-PL", "qbrank", "pairs+labeled",
        "QBRank on P ∪ L: click pairs and the labeled queries' squared error, weight w (LightGBM trees)"),
    ClickMethod("mpboost-P", "mpboost-stumps", "pairs",
        "stump MPBoost (reference booster) on the click pairs, each repeated by its weight (the MPBoost "
        "tree objective takes label pairs only)"),
    ClickMethod("rankboost-P", "rb-c", "pairs",
        "RankBoost Rb-c (reference booster) on the click pairs, each repeated by its weight (the RankBoost "
        "tree objective takes label pairs only)"),
)}


def click_method(spec: str | ClickMethod) -> ClickMethod:
    """The click method ``spec`` names: a name of :data:`CLICK_METHODS`, or one with settings,
    ``name[key=value,...]`` (tree parameters, the objective's or booster's, the method's own)."""
    if isinstance(spec, ClickMethod):
        return spec
    if not isinstance(spec, str):
        raise TypeError(f"a click method is a name, got {show(spec)}")
    name, params = split_spec(spec, (), "click method") if "[" in spec else (spec.strip(), {})
    if name not in CLICK_METHODS:
        hint = did_you_mean(name, CLICK_METHODS)
        raise ValueError(f"unknown click method {name!r}{f' ({hint})' if hint else ''}; the click protocol's methods "
                         f"are {', '.join(CLICK_METHODS)}")
    return CLICK_METHODS[name].configure(params) if params else CLICK_METHODS[name]


def can_train(method: ClickMethod, settings: ClickSettings, simulated: bool) -> bool:
    """Whether ``method`` can train under ``settings`` (on a simulated log or a real one): what
    the default method lists hold. The inverse-propensity methods are left out on a real log,
    where whether it allows an estimate shows only once it is read: ask for them by name."""
    if method.ips and not simulated:
        return False
    try:
        method.check_with(settings, simulated)
    except ValueError:
        return False
    return True


# ---- running ----------------------------------------------------------------------------------------

def run_click_method(spec: str | ClickMethod, fold: ClickFold, *, rounds: int, metric: str = "ndcg@10",
                     tree_params: dict[str, Any] | None = None, seed: int = 0, fold_index: int = 0,
                     threads: int = 0, progress: bool = False, stream: TextIO = sys.stderr, tune: int = 0,
                     conventions: Conventions | None = None) -> Result:
    """One method on a prepared fold: trained on its data, round chosen on ``fold.selection`` by
    ``metric``, that round evaluated on ``fold.test`` (:func:`boostplug.compare.run_method`, whose
    ``tune`` and ``conventions`` apply). ``Result.info["clicks"]`` records the protocol."""
    cm = click_method(spec)
    method, data = cm.build(fold, metric, conventions, tree_params)
    result = run_method(cm.name, data, fold.selection, fold.test, rounds=rounds, metric=metric,
                        tree_params=tree_params, seed=seed, fold=fold_index, threads=threads, progress=progress,
                        stream=stream, tune=0 if cm.trains_on == "fixed" else tune, conventions=conventions,
                        method=method)
    trained_on: dict[str, Any] = {"data": cm.trains_on, "rows": data.n_docs, "groups": data.n_queries}
    if cm.ips:
        trained_on["propensity"] = [float(v) for v in fold.propensity.propensity]
    if "pairs" in cm.trains_on:
        trained_on["pairs"] = len(fold.ips_pair_rows if cm.ips else fold.pair_rows)
        if isinstance(data, TrainingPart) and data.pairs is not None:
            trained_on["pairs_repeated"] = int(data.pairs.shape[0])
    result.info = {**result.info, "clicks": {**fold.info, "method": cm.summary, "trained_on": trained_on}}
    return result


def run_clicks(train: RankingData, vali: RankingData, test: RankingData, settings: ClickSettings | None = None, *,
               methods: Sequence[str | ClickMethod] | None = None, log: ClickLog | None = None,
               fold: int = 0, seed: int = 0, rounds: int = 300, metric: str = "ndcg@10",
               tree_params: dict[str, Any] | None = None, threads: int = 0, progress: bool = False,
               stream: TextIO = sys.stderr, tune: int = 0, conventions: Conventions | None = None) -> list[Result]:
    """Every method on one fold, all on the same clicks: :func:`prepare` once, then
    :func:`run_click_method` per method (a :class:`boostplug.compare.Result` each, ready for
    :mod:`boostplug.compare.report`'s table, paired tests and bootstrap intervals). ``methods``:
    default every method of :data:`CLICK_METHODS` that can train on this log."""
    s = ClickSettings() if settings is None else settings
    if methods is None:
        chosen = [m for m in CLICK_METHODS.values() if can_train(m, s, log is None)]
    else:
        chosen = [click_method(m) for m in methods]
    if not chosen:
        raise ValueError("methods is empty; choose from " + ", ".join(CLICK_METHODS))
    for m in chosen:
        m.check_with(s, simulated=log is None)
    prepared = prepare(train, vali, test, settings, log=log, fold=fold, seed=seed)
    return [run_click_method(m, prepared, rounds=rounds, metric=metric, tree_params=tree_params, seed=seed,
                             fold_index=fold, threads=threads, progress=progress, stream=stream, tune=tune,
                             conventions=conventions) for m in chosen]
