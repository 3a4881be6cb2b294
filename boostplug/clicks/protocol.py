"""The click protocol: every method trained on the same click log, round chosen on held-out
judgments or clicks, test metrics on the true labels.

One fold (``train``, ``vali``, ``test`` :class:`~boostplug.data.RankingData` with true labels)
becomes a :class:`ClickFold` (:func:`prepare`):

* **Labeled queries** ``L``: a ``labeled_fraction`` of the training queries, drawn at random
  (seeded); their labels are all the judgments the learners see of the training part.
* **The click log**: either given (a real log, :func:`prepare`'s ``log=``), or simulated
  (Joachims, Swaminathan and Schnabel, WSDM 2017): a *production ranker*, LightGBM lambdarank
  trained on ``L`` for ``production_rounds`` rounds (one thread, so that every process draws
  the same log), shows the ``top_k`` documents of each training query, and
  :func:`boostplug.clicks.simulate` draws ``n_sessions`` sessions of the click model on them.
  The log is a function of the fold, the settings and the seed only: every method, in any
  process, trains on the same clicks (the results record the log's SHA-256 to show it).
* **Round selection** (``select``): ``"labels"`` (default), the judged validation queries (a
  ``vali_fraction`` of the validation part, by default the same share as ``labeled_fraction``),
  by the comparison's metric on their true labels; or ``"clicks"``, held-out click impressions
  on the validation queries (simulated with the same production ranker and the same number of
  sessions per query, or the real log's impressions of those queries), by the metric with
  clicks as labels, each impression with a click a query group.
* **Test**: the fold's test part, true labels, the comparison's metrics per query
  (:data:`boostplug.compare.REPORT_METRICS`), so that its paired tests and bootstrap apply.

The methods (:data:`CLICK_METHODS`), each trained by :mod:`boostplug.compare`'s trainers:

==================  =======================================================================
``lgb-clicks``      LightGBM lambdarank, clicks as labels, each impression with a click a group
``lgb-position``    the same with LightGBM's position debiasing (``position`` in the Dataset,
                    ``lambdarank_position_bias_regularization``)
``xgb-unbiased``    XGBoost ``rank:ndcg`` with ``lambdarank_unbiased`` (XGBoost reads the
                    position from the order of the documents within a group: the shown order)
``labeled-only``    LightGBM lambdarank on ``L`` alone
``qbrank-P``        QBRank on the click preference pairs ``P`` (LightGBM trees)
``qbrank-PL``       QBRank on ``P ∪ L``: the pairs and ``L``'s squared error, weight ``w``
``mpboost-P``       stump MPBoost (reference booster) on the click pairs
``rankboost-P``     RankBoost Rb-c (reference booster) on the click pairs
==================  =======================================================================

Impressions without a click are left out of the clicks-as-labels training sets: all their
labels are equal, so LambdaMART takes no gradient from them. QBRank's pair weights (the
preference table's ``weight``) are scaled to mean 1, so that ``w`` weighs an average pair
against a labeled document whatever the number of sessions. The boosters take no per-pair
weights: they train on each pair repeated by its weight (exactly a weighted sum; whole-number
weights, ``weight="unit"``, ``"count"`` or ``"net"``). The MPBoost and RankBoost tree objectives
build their pairs from labels, hence the boosters.

Example:
    >>> from boostplug.clicks.protocol import ClickSettings, run_clicks
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
import hashlib
import sys
from dataclasses import asdict, dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any, Mapping, Sequence, TextIO

import numpy as np
from numpy.typing import NDArray

from .._validation import check_choice, check_real, did_you_mean, show
from ..compare.methods import Method
from ..data import RankingData
from . import strategies as _strategies
from .aggregate import check_min_support, check_weight
from .extract import preferences
from .log import ClickLog
from .pairs import PairRows, TrainingSet, log_rows, to_rows, training_set
from .simulation import CLICK_MODELS, PRESENTATIONS, _positive_int, simulate

if TYPE_CHECKING:
    from ..compare.conventions import Conventions
    from ..compare.protocol import Result

__all__ = ["SELECT", "ClickSettings", "ClickData", "ClickFold", "ClickMethod", "CLICK_METHODS",
           "click_method", "prepare", "run_click_method", "run_clicks"]

#: Round selection: the judged validation queries, or held-out clicks on the validation queries.
SELECT = ("labels", "clicks")


@dataclass(frozen=True)
class ClickSettings:
    """The click protocol's settings (module docstring); every value is checked on construction
    (``TypeError``/``ValueError`` naming it).

    Attributes:
        n_sessions: simulated sessions on the training queries.
        model, top_k, eta, eps_plus, eps_minus, continue_prob, presentation: the click model and
            how each session orders the shown list (:func:`boostplug.clicks.simulate`).
        labeled_fraction: share of the training queries that are judged (``L``; the production
            ranker's training data), in [0, 1]; a simulation needs it above 0.
        vali_fraction: share of the validation queries that are judged (round selection on
            labels); ``None``: ``labeled_fraction``.
        select: ``"labels"`` or ``"clicks"`` (module docstring).
        strategies, weight, min_support, confidence: how preferences are read and aggregated
            (:func:`boostplug.clicks.preferences`).
        production_rounds: boosting rounds of the production ranker.
    """

    n_sessions: int = 10_000
    model: str = "pbm"
    top_k: int = 10
    eta: float = 1.0
    eps_plus: float = 1.0
    eps_minus: float = 0.1
    continue_prob: float = 0.5
    presentation: str = "fixed"
    labeled_fraction: float = 0.05
    vali_fraction: float | None = None
    select: str = "labels"
    strategies: tuple[str, ...] = _strategies.DEFAULT
    weight: str = "net"
    min_support: int = 1
    confidence: float = 0.95
    production_rounds: int = 100

    def __post_init__(self) -> None:
        def put(name: str, value: Any) -> None:
            object.__setattr__(self, name, value)

        put("n_sessions", _positive_int(self.n_sessions, "n_sessions"))
        put("model", check_choice("model", self.model, CLICK_MODELS))
        put("presentation", check_choice("presentation", self.presentation, PRESENTATIONS))
        put("top_k", _positive_int(self.top_k, "top_k"))
        put("eta", check_real("eta", self.eta, 0.0, 1e3, lo_open=False))
        for name in ("eps_plus", "eps_minus", "continue_prob", "labeled_fraction"):
            put(name, check_real(name, getattr(self, name), 0.0, 1.0, lo_open=False))
        if self.vali_fraction is not None:
            put("vali_fraction", check_real("vali_fraction", self.vali_fraction, 0.0, 1.0))
        put("select", check_choice("select", self.select, SELECT))
        put("strategies", _strategies.names(self.strategies))
        weight, confidence = check_weight(self.weight, self.confidence)
        put("weight", weight)
        put("confidence", confidence)
        put("min_support", check_min_support(self.min_support))
        put("production_rounds", _positive_int(self.production_rounds, "production_rounds"))

    def check_usable(self, simulated: bool) -> None:
        """``ValueError`` (naming the setting) unless a fold can be prepared with these settings:
        a simulation needs judged training queries (its production ranker trains on them), a
        selection on labels judged validation queries."""
        if simulated and self.labeled_fraction == 0.0:
            raise ValueError("labeled_fraction must be above 0 for a click simulation (its production ranker trains "
                             "on the judged queries), got 0")
        if self.select == "labels" and self.judged_vali_fraction == 0.0:
            raise ValueError("vali_fraction (or labeled_fraction) must be above 0 to choose the round on judged "
                             "validation queries (or select on clicks), got 0")

    @property
    def judged_vali_fraction(self) -> float:
        """The share of validation queries judged: ``vali_fraction``, else ``labeled_fraction``."""
        return self.labeled_fraction if self.vali_fraction is None else self.vali_fraction

    def to_dict(self, simulated: bool = True) -> dict[str, Any]:
        """The settings as plain values (results.json); without the click model's when the log is real."""
        d = asdict(self)
        d["strategies"] = list(self.strategies)
        if not simulated:
            for k in ("n_sessions", "model", "top_k", "eta", "eps_plus", "eps_minus", "continue_prob",
                      "presentation", "production_rounds"):
                d.pop(k)
        return d


@dataclass(eq=False)
class ClickData(RankingData):
    """A training part with what some learners need beside features, labels and groups:
    ``position`` (0-based shown position of every row: LightGBM's Dataset ``position``) and
    ``pairs`` (explicit preference pairs of row indices, preferred first: a booster's
    ``fit(pairs=...)``). :meth:`boostplug.compare.methods.Method.train` passes them on."""

    position: NDArray[np.int64] | None = None
    pairs: NDArray[np.int64] | None = None


# ---- one fold: labeled queries, the click log, the selection data --------------------------------

def _rng(seed: int, fold: int, stream: int) -> np.random.Generator:
    """An independent seeded stream per purpose (labeled queries, judged validation queries,
    training sessions, validation sessions), the same in every process."""
    return np.random.default_rng(np.random.SeedSequence([int(seed), int(fold), stream]))


def _some_queries(data: RankingData, fraction: float, rng: np.random.Generator) -> RankingData | None:
    """``fraction`` of ``data``'s queries (at least one when ``fraction > 0``), drawn without
    replacement, in data order; ``None`` for ``fraction == 0``."""
    if fraction == 0.0:
        return None
    n = min(data.n_queries, max(1, int(round(fraction * data.n_queries))))
    return data.subset(np.sort(rng.choice(data.n_queries, size=n, replace=False)))


def index_within_query(data: RankingData) -> NDArray[np.int64]:
    """The 0-based index of every row within its query (a real log's document keys)."""
    sizes = np.diff(data.group_ptr)
    return np.arange(data.n_docs, dtype=np.int64) - np.repeat(data.group_ptr[:-1], sizes)


def _on_rows(log: ClickLog, data: RankingData) -> tuple[ClickLog, int]:
    """The impressions of a real ``log`` whose query is one of ``data``'s, each document key (its
    index within the query) replaced by its row in ``data``, and how many impressions were of
    other queries. A key without a row is a ``ValueError`` naming its session, query and position."""
    starts = log.impression_ptr[:-1]
    try:
        ours = np.isin(log.query[starts], np.unique(data.qid)) if log.n_impressions else np.zeros(0, bool)
    except TypeError:
        raise TypeError(f"the click log's query ids ({log.query.dtype}) cannot be compared with the data's "
                        f"({data.qid.dtype}); give both the same type of id") from None
    other = int(log.n_impressions - ours.sum())
    if other:
        log = log.select(ours)
    log, rows = log_rows(log, data.qid, index_within_query(data))
    return ClickLog(log.session, log.query, rows, log.position, log.clicked, log.order, log.dwell,
                    log.impression_ptr, log.dropped), other


def _with_clicks(log: ClickLog) -> ClickLog:
    """The impressions that hold at least one click."""
    if not log.n_impressions:
        return log
    clicked = np.add.reduceat(log.clicked.astype(np.int64), log.impression_ptr[:-1]) > 0
    clicked &= np.diff(log.impression_ptr) > 0
    return log if clicked.all() else log.select(clicked)


def _impression_data(log: ClickLog, data: RankingData) -> ClickData:
    """Clicks as labels: every impression with a click a query group of its shown documents (in
    shown order), label 1 on the clicked ones, ``position`` 0-based. ``log``'s keys are rows of ``data``."""
    log = _with_clicks(log)
    if not log.n_impressions:
        raise ValueError("no impression of the click log has a click: nothing to learn from clicks as labels")
    return ClickData(data.X[log.doc], log.clicked.astype(np.float64), None, log.impression_ptr,
                     position=log.position - 1)


def _log_summary(log: ClickLog) -> dict[str, Any]:
    h = hashlib.sha256()
    for a in (log.impression_ptr, np.asarray(log.doc, dtype=np.int64), log.clicked):
        h.update(np.ascontiguousarray(a).tobytes())
    clicked = _with_clicks(log).n_impressions if log.n_impressions else 0
    return {"impressions": log.n_impressions, "rows": len(log), "clicks": int(log.clicked.sum()),
            "impressions_with_click": int(clicked), "sha256": h.hexdigest()}


@dataclass(eq=False)
class ClickFold:
    """One fold prepared for the click protocol (:func:`prepare`): the methods' training sets are
    built from it on first use and kept.

    Attributes:
        train, vali, test: the fold (true labels; the learners see ``train``'s only on ``labeled``).
        settings: the :class:`ClickSettings`.
        log: the training clicks; document keys are rows of ``train``.
        labeled: the judged training queries ``L`` (``None`` when ``labeled_fraction`` is 0).
        selection: what chooses the round (the judged validation queries, or validation click
            impressions with clicks as labels).
        info: what the results record (``Result.info["clicks"]``).
    """

    train: RankingData
    vali: RankingData
    test: RankingData
    settings: ClickSettings
    log: ClickLog
    labeled: RankingData | None
    selection: RankingData
    info: dict[str, Any] = field(default_factory=dict)

    @cached_property
    def impressions(self) -> ClickData:
        """Clicks as labels (:func:`_impression_data`), shared by the clicks-as-labels methods."""
        return _impression_data(self.log, self.train)

    @cached_property
    def pair_rows(self) -> PairRows:
        """The click preferences as row pairs of ``train``, weights as aggregated."""
        s = self.settings
        prefs = preferences(self.log, s.strategies, min_support=s.min_support, weight=s.weight,
                            confidence=s.confidence)
        rows = to_rows(prefs, self.train.qid)
        if not len(rows):
            raise ValueError(f"the click log gives no preference pair (strategies {list(s.strategies)}, min_support "
                             f"{s.min_support}, weight {s.weight!r}); more sessions or other strategies may")
        return rows

    def pairs(self, *, labeled: bool, normalised: bool) -> TrainingSet:
        """The click pairs as a training set (with ``L`` when ``labeled``); ``normalised``: pair
        weights scaled to mean 1 (module docstring)."""
        rows = self.pair_rows
        if normalised:
            rows = PairRows(rows.pairs, rows.weights / rows.weights.mean(), rows.n_missing)
        if labeled and self.labeled is None:
            raise ValueError("P ∪ L needs labeled queries, but labeled_fraction is 0")
        return training_set(rows, self.train.X, self.train.group_ptr, self.labeled if labeled else None)


def _production_ranker(labeled: RankingData, settings: ClickSettings, seed: int) -> Any:
    """LightGBM lambdarank on the labeled queries with the comparison's shared tree parameters, one
    thread (the same model in every process)."""
    import lightgbm as lgb

    from .. import lightgbm as bpl
    from ..compare.methods import TREE_PARAMS

    params = {**TREE_PARAMS, "objective": "lambdarank", "verbose": -1, "seed": seed, "deterministic": True,
              "num_threads": 1}
    return lgb.train(params, bpl.dataset(labeled.X, labeled.y, group_ptr=labeled.group_ptr),
                     num_boost_round=settings.production_rounds)


def _simulate(data: RankingData, scores: NDArray[np.float64], n_sessions: int, settings: ClickSettings,
              rng: np.random.Generator) -> ClickLog:
    s = settings
    return simulate(data, scores, n_sessions, model=s.model, top_k=s.top_k, eta=s.eta, eps_plus=s.eps_plus,
                    eps_minus=s.eps_minus, continue_prob=s.continue_prob, presentation=s.presentation, seed=rng)


def prepare(train: RankingData, vali: RankingData, test: RankingData, settings: ClickSettings | None = None, *,
            log: ClickLog | None = None, fold: int = 0, seed: int = 0) -> ClickFold:
    """One fold of the click protocol (module docstring).

    Args:
        train, vali, test: the fold, with true labels.
        settings: :class:`ClickSettings` (default: its defaults).
        log: a real click log (:func:`boostplug.clicks.read_log`) instead of a simulation: its
            query ids are the data's, its document keys the 0-based index of each document
            within its query (in the data's row order). Impressions of queries outside ``train``
            are left out (those of ``vali``'s queries choose the round with ``select="clicks"``);
            the results count them.
        fold, seed: the fold's index and the seed; together they seed every random draw.
    """
    s = ClickSettings() if settings is None else settings
    if not isinstance(s, ClickSettings):
        raise TypeError(f"settings must be a boostplug.clicks.protocol.ClickSettings, got {type(s).__name__}")
    for name, part in (("train", train), ("vali", vali), ("test", test)):
        if not isinstance(part, RankingData):
            raise TypeError(f"{name} must be a boostplug.data.RankingData, got {type(part).__name__}")
    if log is not None and not isinstance(log, ClickLog):
        raise TypeError(f"log must be a boostplug.clicks.ClickLog (read_log), got {type(log).__name__}")
    s.check_usable(simulated=log is None)
    labeled = _some_queries(train, s.labeled_fraction, _rng(seed, fold, 0))
    info: dict[str, Any] = {"settings": s.to_dict(simulated=log is None), "seed": seed,
                            "labeled_queries": 0 if labeled is None else labeled.n_queries,
                            "labeled_docs": 0 if labeled is None else labeled.n_docs}
    vali_log: ClickLog | None = None
    if log is None:
        assert labeled is not None  # check_usable
        production = _production_ranker(labeled, s, seed)
        train_log = _simulate(train, production.predict(train.X), s.n_sessions, s, _rng(seed, fold, 2))
        if s.select == "clicks":
            n_vali = max(1, int(round(s.n_sessions * vali.n_queries / train.n_queries)))
            vali_log = _simulate(vali, production.predict(vali.X), n_vali, s, _rng(seed, fold, 3))
        from ..metrics import ndcg

        info["log_source"] = "simulated"
        info["production"] = {"rounds": s.production_rounds, "trained_on_queries": labeled.n_queries,
                              "test_ndcg@10": float(ndcg(production.predict(test.X), test.y, test.group_ptr, k=10))}
    else:
        train_log, other = _on_rows(log, train)
        if not train_log.n_impressions:
            raise ValueError(f"no impression of the click log is of a training query (the log's {log.n_impressions} "
                             f"impressions have queries like {show(log.query[0]) if len(log) else None}; the "
                             f"training part's qids are like {show(train.qid[0])})")
        info["log_source"] = "given"
        info["impressions_of_other_queries"] = other
        if log.dropped:
            info["dropped"] = str(log.dropped)
        if s.select == "clicks":
            vali_log, _ = _on_rows(log, vali)
    info["log"] = _log_summary(train_log)
    if s.select == "labels":
        selection = _some_queries(vali, s.judged_vali_fraction, _rng(seed, fold, 1))
        assert selection is not None  # check_usable
        info["selection"] = {"on": "labels", "queries": selection.n_queries}
    else:
        assert vali_log is not None
        try:
            selection = _impression_data(vali_log, vali)
        except ValueError:
            raise ValueError(f"select='clicks': none of the {vali_log.n_impressions} validation impressions has a "
                             "click; more sessions, or select on labels") from None
        info["selection"] = {"on": "clicks", "impressions": selection.n_queries, "log": _log_summary(vali_log)}
    return ClickFold(train, vali, test, s, train_log, labeled, selection, info)


# ---- the methods ----------------------------------------------------------------------------------

#: What each method trains on.
_TRAINS_ON = ("impressions", "labeled", "pairs", "pairs+labeled")
#: Parameters the protocol sets from the data (a user setting of them is refused).
_SET_BY_PROTOCOL = ("pairs", "pair_weights", "labeled", "labeled_rows")


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

    @property
    def registry_name(self) -> str:
        return self.name.split("[", 1)[0]

    @property
    def framework(self) -> str:
        from ..compare.methods import get_method

        return get_method(self.base).framework

    @property
    def needs_labeled(self) -> bool:
        return "labeled" in self.trains_on

    def check_with(self, settings: ClickSettings) -> None:
        """``ValueError`` naming the setting when this method cannot train under ``settings``."""
        if self.needs_labeled and settings.labeled_fraction == 0.0:
            raise ValueError(f"{self.name} trains on labeled queries, but labeled_fraction is 0")
        if self.framework == "booster" and settings.weight not in ("unit", "count", "net"):
            raise ValueError(f"{self.name}: the reference boosters take no per-pair weights and train on each pair "
                             f"repeated by its weight, a whole number: weight must be 'unit', 'count' or 'net', got "
                             f"{settings.weight!r}")

    def configure(self, params: Mapping[str, Any]) -> "ClickMethod":
        """This method with ``params`` set; unknown names and bad values are refused now."""
        from ..compare.method_specs import format_value
        from ..compare.methods import get_method

        base = get_method(self.base)
        known = [k for k in base.parameters() if k not in _SET_BY_PROTOCOL and k not in self.fixed]
        for key, value in params.items():
            if key in _SET_BY_PROTOCOL or key in self.fixed:
                raise ValueError(f"method {self.registry_name!r}: {key} is set by the click protocol")
            if key not in known and key not in self.extra:
                hint = did_you_mean(key, [*known, *self.extra])
                hint = f"{hint} " if hint else ""
                raise ValueError(f"method {self.registry_name!r} has no parameter {key!r}; {hint}its parameters are "
                                 f"{', '.join([*known, *self.extra])}")
        for key in self.extra:
            if key in params:
                _check_extra(self.registry_name, key, params[key])
        base_params = {k: v for k, v in params.items() if k not in self.extra}
        try:
            base.configure(base_params, rename=False)
        except (ValueError, TypeError) as e:
            raise type(e)(str(e).replace(f"method {self.base!r}", f"method {self.registry_name!r}")) from None
        settings = {**self.settings, **params}
        name = self.registry_name
        if settings:
            name += "[" + ",".join(f"{k}={format_value(v)}" for k, v in settings.items()) + "]"
        return replace(self, name=name, settings=settings)

    def base_method(self) -> Method:
        """The :class:`boostplug.compare.methods.Method` this method trains as, named after it,
        with its settings and fixed parameters but without the data's (pairs, labeled rows)."""
        from ..compare.methods import get_method

        extra = {**self.extra, **{k: v for k, v in self.settings.items() if k in self.extra}}
        base = get_method(self.base).configure({k: v for k, v in self.settings.items() if k not in self.extra},
                                               rename=False)
        loss = {**base.loss_params, **self.fixed, **{k: v for k, v in extra.items() if v is not None}}
        # QBRank's settings that change nothing here are not searched (--tune): w without labeled
        # rows (it scales every term alike), tau without label pairs
        idle = [k for k, on in (("w", self.trains_on == "pairs"), ("tau", not loss.get("label_pairs", False)))
                if on and base.loss == "boostplug:qbrank"]
        return ClickProtocolMethod(self.name, base.framework, base.loss, loss, self.summary, base.select_metric,
                                   base.tree_params, base.base, unsearched=tuple(idle))

    def build(self, fold: ClickFold) -> tuple[Method, RankingData]:
        """The :class:`boostplug.compare.methods.Method` this method trains as on ``fold``, and
        its training data."""
        base = self.base_method()
        loss = dict(base.loss_params)
        data: RankingData
        if self.trains_on == "impressions":
            data = fold.impressions
            if not self.positions:  # the same rows, without positions (no copy of the features)
                data = copy.copy(data)
                data.position = None
        elif self.trains_on == "labeled":
            if fold.labeled is None:
                raise ValueError(f"{self.registry_name} trains on labeled queries, but labeled_fraction is 0")
            data = fold.labeled
        elif base.framework == "booster":
            ts = fold.pairs(labeled=False, normalised=False)
            try:
                repeated = ts.repeated_pairs()
            except ValueError as e:
                raise ValueError(f"{self.registry_name}: the reference boosters take no per-pair weights and train on "
                                 f"each pair repeated by its weight: {e}") from None
            data = ClickData(ts.X, ts.y, None, ts.group_ptr, pairs=repeated)
        else:
            ts = fold.pairs(labeled=self.trains_on == "pairs+labeled", normalised=True)
            qb = ts.qbrank_params(w=loss.get("w", 0.5), pair_tau=loss.get("pair_tau", 1.0),
                                  label_pairs=loss.get("label_pairs", False))
            loss.update(qb)
            data = RankingData(ts.X, ts.y, None, ts.group_ptr)
        return replace(base, loss_params=loss), data


@dataclass(frozen=True)
class ClickProtocolMethod(Method):
    """A :class:`boostplug.compare.methods.Method` that leaves its ``unsearched`` settings out of
    its search space (``--tune``)."""

    unsearched: tuple[str, ...] = ()

    def search_space(self) -> dict[str, Any]:
        return {k: d for k, d in super().search_space().items() if k not in self.unsearched}


def _check_extra(method: str, key: str, value: Any) -> None:
    if value is None:
        return
    if key == "lambdarank_position_bias_regularization":
        check_real(f"method {method!r}: {key}", value, 0.0, 1e6, lo_open=False)
    elif key == "lambdarank_bias_norm":
        check_real(f"method {method!r}: {key}", value, 0.0, 1e6)


def _cm(name: str, base: str, trains_on: str, summary: str, extra: Mapping[str, Any] | None = None,
        fixed: Mapping[str, Any] | None = None, positions: bool = False) -> ClickMethod:
    assert trains_on in _TRAINS_ON
    return ClickMethod(name, base, trains_on, summary, dict(extra or {}), dict(fixed or {}), positions=positions)


#: The click protocol's methods, by name (module docstring).
CLICK_METHODS: dict[str, ClickMethod] = {m.name: m for m in (
    _cm("lgb-clicks", "lambdarank", "impressions",
        "LightGBM lambdarank, clicks as labels (each impression with a click a query group)"),
    _cm("lgb-position", "lambdarank", "impressions",
        "LightGBM lambdarank, clicks as labels, with its position debiasing (Dataset position)",
        extra={"lambdarank_position_bias_regularization": 0.0}, positions=True),
    _cm("xgb-unbiased", "xgb-rank:ndcg", "impressions",
        "XGBoost rank:ndcg, clicks as labels, lambdarank_unbiased (position = shown order)",
        extra={"lambdarank_bias_norm": None}, fixed={"lambdarank_unbiased": True}),
    _cm("labeled-only", "lambdarank", "labeled", "LightGBM lambdarank on the labeled queries L alone"),
    _cm("qbrank-P", "qbrank", "pairs", "QBRank on the click preference pairs P (LightGBM trees)"),
    _cm("qbrank-PL", "qbrank", "pairs+labeled",
        "QBRank on P ∪ L: click pairs and the labeled queries' squared error, weight w (LightGBM trees)"),
    _cm("mpboost-P", "mpboost-stumps", "pairs",
        "stump MPBoost (reference booster) on the click pairs, each repeated by its weight (the MPBoost "
        "tree objective takes label pairs only)"),
    _cm("rankboost-P", "rb-c", "pairs",
        "RankBoost Rb-c (reference booster) on the click pairs, each repeated by its weight (the RankBoost "
        "tree objective takes label pairs only)"),
)}


def click_method(spec: str | ClickMethod) -> ClickMethod:
    """The click method ``spec`` names: a name of :data:`CLICK_METHODS`, or one with settings,
    ``name[key=value,...]`` (tree parameters, the objective's or booster's, the method's own)."""
    from ..compare.method_specs import _split_top, parse_value

    if isinstance(spec, ClickMethod):
        return spec
    if not isinstance(spec, str):
        raise TypeError(f"a click method is a name, got {show(spec)}")
    text = spec.strip()
    name, params = text, {}
    if "[" in text:
        if not text.endswith("]"):
            raise ValueError(f"click method {text!r}: expected name[key=value,...]")
        name, body = text[:-1].split("[", 1)
        for item in _split_top(body):
            key, sep, value = item.partition("=")
            if not sep or not key.strip():
                raise ValueError(f"click method {text!r}: {item!r} is not key=value")
            params[key.strip()] = parse_value(value)
    name = name.strip()
    if name not in CLICK_METHODS:
        hint = did_you_mean(name, CLICK_METHODS)
        hint = f" ({hint})" if hint else ""
        raise ValueError(f"unknown click method {name!r}{hint}; the click protocol's methods are "
                         f"{', '.join(CLICK_METHODS)}")
    return CLICK_METHODS[name].configure(params) if params else CLICK_METHODS[name]


# ---- running ----------------------------------------------------------------------------------------

def run_click_method(spec: str | ClickMethod, fold: ClickFold, *, rounds: int, metric: str = "ndcg@10",
                     tree_params: dict[str, Any] | None = None, seed: int = 0, fold_index: int = 0,
                     threads: int = 0, progress: bool = False, stream: TextIO = sys.stderr, tune: int = 0,
                     conventions: "Conventions | None" = None) -> "Result":
    """One method on a prepared fold: trained on its data, round chosen on ``fold.selection`` by
    ``metric``, that round evaluated on ``fold.test`` (:func:`boostplug.compare.run_method`, whose
    ``tune`` and ``conventions`` apply). ``Result.info["clicks"]`` records the protocol."""
    from ..compare.protocol import run_method

    cm = click_method(spec)
    method, data = cm.build(fold)
    result = run_method(cm.name, data, fold.selection, fold.test, rounds=rounds, metric=metric,
                        tree_params=tree_params, seed=seed, fold=fold_index, threads=threads, progress=progress,
                        stream=stream, tune=tune, conventions=conventions, method=method)
    trained_on: dict[str, Any] = {"data": cm.trains_on, "rows": data.n_docs, "groups": data.n_queries}
    if "pairs" in cm.trains_on:
        trained_on["pairs"] = len(fold.pair_rows)
        if isinstance(data, ClickData) and data.pairs is not None:
            trained_on["pairs_repeated"] = int(data.pairs.shape[0])
    result.info = {**result.info, "clicks": {**fold.info, "method": cm.summary, "trained_on": trained_on}}
    return result


def run_clicks(train: RankingData, vali: RankingData, test: RankingData, settings: ClickSettings | None = None, *,
               methods: Sequence[str | ClickMethod] = tuple(CLICK_METHODS), log: ClickLog | None = None,
               fold: int = 0, seed: int = 0, rounds: int = 300, metric: str = "ndcg@10",
               tree_params: dict[str, Any] | None = None, threads: int = 0, progress: bool = False,
               stream: TextIO = sys.stderr, tune: int = 0, conventions: "Conventions | None" = None) -> list["Result"]:
    """Every method on one fold, all on the same clicks: :func:`prepare` once, then
    :func:`run_click_method` per method (a :class:`boostplug.compare.Result` each, ready for
    :mod:`boostplug.compare.report`'s table, paired tests and bootstrap intervals)."""
    chosen = [click_method(m) for m in methods]
    if not chosen:
        raise ValueError("methods is empty; choose from " + ", ".join(CLICK_METHODS))
    for m in chosen:
        m.check_with(ClickSettings() if settings is None else settings)
    prepared = prepare(train, vali, test, settings, log=log, fold=fold, seed=seed)
    return [run_click_method(m, prepared, rounds=rounds, metric=metric, tree_params=tree_params, seed=seed,
                             fold_index=fold, threads=threads, progress=progress, stream=stream, tune=tune,
                             conventions=conventions) for m in chosen]
