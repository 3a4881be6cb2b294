"""One fold of the click protocol: the judged queries, the click log, the round-selection data.

:func:`prepare` makes one fold (``train``, ``vali``, ``test`` :class:`~boostplug.data.RankingData`
with true labels) a :class:`ClickFold`: the labeled queries ``L`` (a seeded ``labeled_fraction`` of
the training queries), the click log (given, or simulated on a production ranker's ``top_k``:
LightGBM lambdarank on ``L``, one thread so that every process draws the same log), the round-selection
data (``select``: judged validation queries, or held-out click impressions) and the test part.
The protocol step by step: docs/compare.md, "Learning from clicks".
"""

from __future__ import annotations

import copy
import hashlib
from dataclasses import asdict, dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._validation import check_choice, check_count, check_real, show
from ..clicks import ClickLog, PairRows, Propensity, TrainingSet, estimate_propensity, ips_weights, log_rows, \
    preferences, simulate, strategies as _strategies, to_rows, training_set
from ..clicks.aggregate import check_weight
from ..clicks.simulation import CLICK_MODELS, PRESENTATIONS, grade_click_prob, preset
from ..data import RankingData
from ..groups import index_within_query
from ..metrics import ndcg
from .methods import TREE_PARAMS
from .training import TrainingPart

__all__ = ["SELECT", "ClickSettings", "ClickFold", "prepare"]

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
        examination: ``None`` or the PBM's examination probability of each position (instead of
            ``(1/r)^eta``).
        click_prob: ``None`` or the click probability of an examined document by grade (instead of
            ``eps_plus``/``eps_minus``), on a scale ``0..len-1`` that a set with a lower top grade
            reads proportionally (:func:`boostplug.clicks.simulation.grade_click_prob`).
        labeled_fraction: share of the training queries that are judged (``L``; the production
            ranker's training data), in [0, 1]; a simulation needs it above 0.
        vali_fraction: share of the validation queries that are judged (round selection on
            labels); ``None``: ``labeled_fraction``.
        min_vali_queries: round selection on labels uses at least this many judged validation
            queries (all of them when the validation part has fewer): a round chosen on a
            handful of queries is chosen by noise.
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
    examination: tuple[float, ...] | None = None
    click_prob: tuple[float, ...] | None = None
    labeled_fraction: float = 0.05
    vali_fraction: float | None = None
    min_vali_queries: int = 30
    select: str = "labels"
    strategies: tuple[str, ...] = _strategies.DEFAULT
    weight: str = "net"
    min_support: int = 1
    confidence: float = 0.95
    production_rounds: int = 100

    def __post_init__(self) -> None:
        def put(name: str, value: Any) -> None:
            object.__setattr__(self, name, value)

        for name in ("n_sessions", "top_k", "min_vali_queries", "production_rounds"):
            put(name, check_count(getattr(self, name), name))
        for name, choices in (("model", CLICK_MODELS), ("presentation", PRESENTATIONS), ("select", SELECT)):
            put(name, check_choice(name, getattr(self, name), choices))
        put("eta", check_real("eta", self.eta, 0.0, 1e3, lo_open=False))
        for name in ("eps_plus", "eps_minus", "continue_prob", "labeled_fraction"):
            put(name, check_real(name, getattr(self, name), 0.0, 1.0, lo_open=False))
        if self.vali_fraction is not None:
            put("vali_fraction", check_real("vali_fraction", self.vali_fraction, 0.0, 1.0))
        for name in ("examination", "click_prob"):
            put(name, _probabilities(name, getattr(self, name)))
        if self.examination is not None:
            if self.model != "pbm":
                raise ValueError(f"examination is the position-based model's; model {self.model!r} examines "
                                 "top-down")
            if len(self.examination) < self.top_k:
                raise ValueError(f"examination has {len(self.examination)} probabilities but top_k is {self.top_k}: "
                                 "give one per shown position")
        put("strategies", _strategies.names(self.strategies))
        for name, value in zip(("weight", "confidence"), check_weight(self.weight, self.confidence)):
            put(name, value)
        put("min_support", check_count(self.min_support, "min_support"))

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

    @classmethod
    def from_preset(cls, name: str, **settings: Any) -> "ClickSettings":
        """The settings of the click model ``name`` of :data:`boostplug.clicks.CLICK_PRESETS`
        (``"pbm-eta1"``, ``"ultra-pbm"``, ...), the other ``settings`` as given."""
        model = preset(name)
        clash = sorted(set(model) & set(settings))
        if clash:
            raise ValueError(f"preset {name!r} sets {', '.join(clash)}; give either the preset or them")
        return cls(**model, **settings)

    @property
    def judged_vali_fraction(self) -> float:
        """The share of validation queries judged: ``vali_fraction``, else ``labeled_fraction``."""
        return self.labeled_fraction if self.vali_fraction is None else self.vali_fraction

    def to_dict(self, simulated: bool = True) -> dict[str, Any]:
        """The settings as plain values (results.json); without the click model's when the log is real."""
        d = asdict(self)
        d["strategies"] = list(self.strategies)
        for k in ("examination", "click_prob"):
            d[k] = None if d[k] is None else list(d[k])
        if not simulated:
            for k in ("n_sessions", "model", "top_k", "eta", "eps_plus", "eps_minus", "continue_prob",
                      "presentation", "examination", "click_prob", "production_rounds"):
                d.pop(k)
        return d


def _probabilities(name: str, values: Any) -> tuple[float, ...] | None:
    """``None``, or a non-empty sequence of probabilities as a tuple of floats."""
    if values is None:
        return None
    if isinstance(values, (str, bytes)) or np.ndim(values) != 1 or len(values) == 0:
        raise TypeError(f"{name} must be None or a non-empty sequence of probabilities, got {show(values)}")
    return tuple(check_real(f"{name}[{i}]", v, 0.0, 1.0, lo_open=False) for i, v in enumerate(values))


# ---- one fold: labeled queries, the click log, the selection data --------------------------------

def _rng(seed: int, fold: int, stream: int) -> np.random.Generator:
    """An independent seeded stream per purpose (labeled queries, judged validation queries,
    training sessions, validation sessions), the same in every process."""
    return np.random.default_rng(np.random.SeedSequence([int(seed), int(fold), stream]))


def _some_queries(data: RankingData, fraction: float, rng: np.random.Generator,
                  minimum: int = 1) -> RankingData | None:
    """``fraction`` of ``data``'s queries (at least ``minimum`` when ``fraction > 0``, all when there
    are fewer), drawn without replacement, in data order; ``None`` for ``fraction == 0``."""
    if fraction == 0.0:
        return None
    n = min(data.n_queries, max(minimum, int(round(fraction * data.n_queries))))
    return data.subset(np.sort(rng.choice(data.n_queries, size=n, replace=False)))


def _on_rows(log: ClickLog, data: RankingData, on_missing: str = "raise") -> tuple[ClickLog, int]:
    """The impressions of a real ``log`` whose query is one of ``data``'s, each document key (its
    index within the query) replaced by its row in ``data``, and how many impressions were of
    other queries. A key without a row is a ``ValueError`` naming its session, query and position
    (``on_missing="skip"``: its impressions are left out, with a warning)."""
    starts = log.group_ptr[:-1]
    try:
        ours = np.isin(log.query[starts], np.unique(data.qid)) if log.n_impressions else np.zeros(0, bool)
    except TypeError:
        raise TypeError(f"the click log's query ids ({log.query.dtype}) cannot be compared with the data's "
                        f"({data.qid.dtype}); give both the same type of id") from None
    other = int(log.n_impressions - ours.sum())
    if other:
        log = log.select(ours)
    log, rows = log_rows(log, data.qid, index_within_query(data.group_ptr), on_missing=on_missing)
    return ClickLog(log.session, log.query, rows, log.position, log.clicked, log.order, log.dwell,
                    log.group_ptr, log.dropped), other


def _with_clicks(log: ClickLog) -> ClickLog:
    """The impressions that hold at least one click."""
    if not log.n_impressions:
        return log
    clicked = np.add.reduceat(log.clicked.astype(np.int64), log.group_ptr[:-1]) > 0
    clicked &= np.diff(log.group_ptr) > 0
    return log if clicked.all() else log.select(clicked)


def _impression_data(log: ClickLog, data: RankingData) -> TrainingPart:
    """Clicks as labels: every impression with a click a query group of its shown documents (in
    shown order), label 1 on the clicked ones, ``position`` 0-based. ``log``'s keys are rows of ``data``."""
    log = _with_clicks(log)
    if not log.n_impressions:
        raise ValueError("no impression of the click log has a click: nothing to learn from clicks as labels")
    return TrainingPart(data.X[log.doc], log.clicked.astype(np.float64), None, log.group_ptr,
                     position=log.position - 1)


def _log_summary(log: ClickLog) -> dict[str, Any]:
    h = hashlib.sha256()
    for a in (log.group_ptr, np.asarray(log.doc, dtype=np.int64), log.clicked):
        h.update(np.ascontiguousarray(a).tobytes())
    clicked = _with_clicks(log).n_impressions
    return {"impressions": log.n_impressions, "rows": len(log), "clicks": int(log.clicked.sum()),
            "impressions_with_click": int(clicked), "sha256": h.hexdigest()}


@dataclass(eq=False)
class ClickFold:
    """One fold prepared for the click protocol (:func:`prepare`): the methods' training parts
    (:class:`~.training.TrainingPart`: clicks as labels, the click pairs as rows of ``train``) are
    built from it on first use and kept.

    Attributes:
        train, vali, test: the fold (true labels; the learners see ``train``'s only on ``labeled``).
        settings: the :class:`ClickSettings`.
        log: the training clicks; document keys are rows of ``train``.
        labeled: the judged training queries ``L`` (``None`` when ``labeled_fraction`` is 0).
        selection: what chooses the round (the judged validation queries, or validation click
            impressions with clicks as labels).
        info: what the results record (``Result.info["clicks"]``).
        fixed_scores: the fixed rankers' scores on ``selection`` and ``test``, by name:
            ``"random"`` (a seeded uniform draw: the order nothing was learned from) and, for a
            simulated log, ``"production"`` (the ranker that showed the results; a real log's is
            not known).
    """

    train: RankingData
    vali: RankingData
    test: RankingData
    settings: ClickSettings
    log: ClickLog
    labeled: RankingData | None
    selection: RankingData
    info: dict[str, Any] = field(default_factory=dict)
    fixed_scores: dict[str, dict[str, NDArray[np.float64]]] = field(default_factory=dict)

    @cached_property
    def impressions(self) -> TrainingPart:
        """Clicks as labels (:func:`_impression_data`), shared by the clicks-as-labels methods."""
        return _impression_data(self.log, self.train)

    @cached_property
    def propensity(self) -> Propensity:
        """The examination propensities estimated from the training log itself
        (:func:`boostplug.clicks.estimate_propensity`, ``"auto"``); a ``ValueError`` saying why
        when the log cannot tell position from relevance (one order per query: a fixed presentation)."""
        try:
            return estimate_propensity(self.log, n_bootstrap=0)
        except ValueError as e:
            raise ValueError(f"the inverse-propensity methods need propensities estimated from the click log: {e}") \
                from None

    @cached_property
    def ips_impressions(self) -> TrainingPart:
        """Clicks as labels with every click weighted by the inverse of its position's estimated
        propensity (:func:`boostplug.clicks.ips_weights`, clipped at 10), the other rows 1."""
        part = copy.copy(self.impressions)
        part.weight = ips_weights(part.position + 1, self.propensity, clicked=part.y > 0)
        return part

    @cached_property
    def pair_rows(self) -> PairRows:
        """The click preferences as row pairs of ``train``, weights as aggregated."""
        return self._pair_rows(None)

    @cached_property
    def ips_pair_rows(self) -> PairRows:
        """The click preferences counted by the inverse propensity of each clicked position."""
        return self._pair_rows(self.propensity)

    def _pair_rows(self, propensity: Propensity | None) -> PairRows:
        s = self.settings
        prefs = preferences(self.log, s.strategies, min_support=s.min_support, weight=s.weight,
                            confidence=s.confidence, propensity=propensity)
        rows = to_rows(prefs, self.train.qid)
        if not len(rows):
            raise ValueError(f"the click log gives no preference pair (strategies {list(s.strategies)}, min_support "
                             f"{s.min_support}, weight {s.weight!r}); more sessions or other strategies may")
        return rows

    def pairs(self, *, labeled: bool, normalised: bool, ips: bool = False) -> TrainingSet:
        """The click pairs as a training set (with ``L`` when ``labeled``); ``normalised``: pair
        weights scaled to mean 1 (module docstring); ``ips``: counted by inverse propensity."""
        rows = self.ips_pair_rows if ips else self.pair_rows
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

    params = {**TREE_PARAMS, "objective": "lambdarank", "verbose": -1, "seed": seed, "deterministic": True,
              "num_threads": 1}
    return lgb.train(params, bpl.dataset(labeled.X, labeled.y, group_ptr=labeled.group_ptr),
                     num_boost_round=settings.production_rounds)


def _simulate(data: RankingData, scores: NDArray[np.float64], n_sessions: int, s: ClickSettings,
              rng: np.random.Generator, top_grade: float) -> ClickLog:
    click_prob = None if s.click_prob is None else grade_click_prob(s.click_prob, top_grade)
    return simulate(data, scores, n_sessions, model=s.model, top_k=s.top_k, eta=s.eta, eps_plus=s.eps_plus,
                    eps_minus=s.eps_minus, continue_prob=s.continue_prob, presentation=s.presentation,
                    examination=s.examination, click_prob=click_prob, max_grade=top_grade, seed=rng)


def prepare(train: RankingData, vali: RankingData, test: RankingData, settings: ClickSettings | None = None, *,
            log: ClickLog | None = None, fold: int = 0, seed: int = 0, on_missing: str = "raise") -> ClickFold:
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
        on_missing: a real log's document key without a feature row: ``"raise"`` (a
            ``ValueError`` naming it) or ``"skip"`` its impressions (:func:`boostplug.clicks.log_rows`).
    """
    s = ClickSettings() if settings is None else settings
    if not isinstance(s, ClickSettings):
        raise TypeError(f"settings must be a boostplug.compare.ClickSettings, got {type(s).__name__}")
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
    production: Any = None
    if log is None:
        assert labeled is not None  # check_usable
        production = _production_ranker(labeled, s, seed)
        top_grade = float(max(train.y.max(initial=0.0), vali.y.max(initial=0.0)))
        train_log = _simulate(train, production.predict(train.X), s.n_sessions, s, _rng(seed, fold, 2), top_grade)
        if s.select == "clicks":
            n_vali = max(1, int(round(s.n_sessions * vali.n_queries / train.n_queries)))
            vali_log = _simulate(vali, production.predict(vali.X), n_vali, s, _rng(seed, fold, 3), top_grade)
        info["log_source"] = "simulated"
        info["production"] = {"rounds": s.production_rounds, "trained_on_queries": labeled.n_queries,
                              "test_ndcg@10": float(ndcg(production.predict(test.X), test.y, test.group_ptr, k=10))}
    else:
        train_log, other = _on_rows(log, train, on_missing)
        if not train_log.n_impressions:
            raise ValueError(f"no impression of the click log is of a training query (the log's {log.n_impressions} "
                             f"impressions have queries like {show(log.query[0]) if len(log) else None}; the "
                             f"training part's qids are like {show(train.qid[0])})")
        info["log_source"] = "given"
        info["impressions_of_other_queries"] = other
        if log.dropped:
            info["dropped"] = str(log.dropped)
        if s.select == "clicks":
            vali_log, _ = _on_rows(log, vali, on_missing)
    info["log"] = _log_summary(train_log)
    if s.select == "labels":
        selection = _some_queries(vali, s.judged_vali_fraction, _rng(seed, fold, 1), s.min_vali_queries)
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
    rng = _rng(seed, fold, 4)
    fixed = {"random": {"selection": rng.random(selection.n_docs), "test": rng.random(test.n_docs)}}
    if production is not None:
        fixed["production"] = {"selection": production.predict(selection.X), "test": production.predict(test.X)}
    return ClickFold(train, vali, test, s, train_log, labeled, selection, info, fixed)
