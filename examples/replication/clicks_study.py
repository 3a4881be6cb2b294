"""Learning from clicks (docs/studies/clicks.md): the recommended route chosen on some data folds and
click models and held out on others, why QBRank trailed RankBoost, the strategy and weight
settings, and the figure and claims.

Five commands:

``choose``
    The settings grid the page's recommended default comes from, on ``--data`` (the page uses
    the embedded LightGBM example, data that its figure does not use). For every seed, session
    count and presentation (fixed list or shuffled), one click fold is simulated
    (:func:`boostplug.compare.click_fold.prepare`, defaults otherwise: PBM, eta 1, noise 1.0/0.1,
    top 10, 5% of the training queries judged, round chosen on the judged validation queries,
    all of them by default: ``--vali-fraction``),
    and on it QBRank on the pairs (``qbrank-P``) and on the pairs with the labeled queries
    (``qbrank-PL``) train for every strategy set and pair weight of the grid, beside the
    model of the judged queries alone (``labeled-only``). Prints, per setting, the mean test NDCG@10
    over seeds in each condition and its mean rank over the conditions; writes ``choose.json``.

``figure``
    Reads the ``--out`` folders of ``boostplug compare --clicks simulate`` runs named
    ``<DATA>_<SESSIONS>`` under one folder per presentation (and, labeled, runs of another
    setting on the same folds, e.g. other strategies), and draws test NDCG@10 against the
    number of sessions for every method, with the comparison's 95% bootstrap intervals (one
    panel per data set and presentation). Prints the paired tests of QBRank's two claims at
    every size: ``qbrank-P`` against ``lgb-clicks`` (preferences against GBT on the clicks
    they came from) and ``qbrank-PL`` against ``qbrank-P``; writes ``claims.json``.

``pairs``
    What the click pairs say, per strategy set, on one simulated log of ``--data``'s first fold
    (the protocol's defaults, ``--sessions``, fixed and shuffled presentation): how many pairs,
    the share preferring the lower-shown document, and the shares the true labels agree with
    and contradict (the rest tie); and a random ranker's test NDCG@10 (its expectation over
    orders), the level below which a learner has turned the ranking round.

``diagnose``
    QBRank on the click pairs varied one setting at a time (margin, Hessian mode, learning rate,
    tree size, leaf size, pair weights) on one click fold per seed, beside RankBoost and MPBoost
    on the same pairs, clicks as labels and the production ranker, with paired tests against the
    first variant and RankBoost: why QBRank trailed RankBoost (docs/studies/clicks.md).

``routes``
    Every route from clicks to a ranker (:data:`ROUTES`) on a grid of data folds, click models,
    session counts and presentations, in two halves: the route with the best mean rank on CHOOSE
    is the recommended default, and is held against the production ranker and LambdaMART on the
    clicks (plain, LightGBM's ``position``, XGBoost's ``lambdarank_unbiased``) on HELD_OUT, whose
    data folds and click models the choice never sees, with paired tests; every
    inverse-propensity route is tested against itself unweighted. Finished conditions are kept
    under ``--out`` (``--shard`` splits the grid among processes). ``--grid more`` holds the
    choice against a further held-out half (:data:`HELD_OUT_MORE`: the cascade and the DCM on the
    held-out data, more seeds, 10^6 sessions). ``--reuse`` reads the conditions of earlier
    reports and trains only the routes they lack, on the same log (its SHA-256 checked), so a
    route can be added to a finished grid, or a report rebuilt training nothing.

Usage::

    python examples/replication/clicks_study.py choose --data example --out docs/results/clicks_default
    python examples/replication/clicks_study.py figure --runs fixed=RUNS/fixed shuffle=RUNS/shuffle \\
        --out docs/results/clicks_figure --png docs/img/clicks_sessions.png
    python examples/replication/clicks_study.py pairs --data PATH/TO/MQ2008 --sessions 100000
    python examples/replication/clicks_study.py diagnose --data example --out docs/results/clicks_routes
    python examples/replication/clicks_study.py routes --out OUT   # then copy OUT/routes.{txt,json}
    python examples/replication/clicks_study.py routes --reuse docs/results/clicks_routes/routes.json.gz \\
        --out OUT   # trains only the routes those conditions lack
    python examples/replication/clicks_study.py routes --grid more --half held-out \\
        --reuse docs/results/clicks_routes/routes.json.gz --out OUT
    python examples/replication/clicks_study.py choose --tiny     # the test's small run
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import json
import re
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Sequence

import numpy as np
from scipy.stats import rankdata

import _common as C
from boostplug.compare import ClickSettings, prepare, run_click_method
from boostplug.compare.stats import bootstrap_ci, paired_tests

#: The grid of ``choose``: strategy sets and pair weights for QBRank.
STRATEGY_SETS = {
    "skip-above+no-click-next": ("click>skip-above", "click>no-click-next"),
    "skip-above": ("click>skip-above",),
    "adjacent": ("click>skip-previous", "click>no-click-next"),
    "all": ("all",),
}
WEIGHTS = ("net", "wilson", "unit")
PAIR_METHODS = ("qbrank-P", "qbrank-PL")
#: Beside the grid: the model of the judged queries alone (the clicks-as-labels methods are in the figure).
BASELINES = ("labeled-only",)
PRESENTATIONS = ("fixed", "shuffle")
METRIC = "ndcg@10"


def _fold(args: argparse.Namespace) -> tuple[Any, Any, Any]:
    args.folds = [1]
    _, folds, _ = C.load_folds(args)
    return folds[0]


def choose(args: argparse.Namespace) -> dict[str, Any]:
    train, vali, test = _fold(args)
    runs: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    for seed, n, presentation in itertools.product(args.seeds, args.sessions, PRESENTATIONS):
        base = ClickSettings(n_sessions=n, presentation=presentation, labeled_fraction=args.labeled_fraction,
                             vali_fraction=args.vali_fraction)
        fold = prepare(train, vali, test, base, seed=seed)
        condition = {"seed": seed, "sessions": n, "presentation": presentation}

        def run(method: str, settings: dict[str, str], on: Any) -> None:
            r = run_click_method(method, on, rounds=args.rounds, metric=METRIC, seed=seed, threads=1)
            runs.append({**condition, **settings, "method": method, "best_round": r.best_round,
                         METRIC: r.test[METRIC], "per_query": r.test_per_query[METRIC]})

        for method in BASELINES:
            run(method, {"strategies": "-", "weight": "-"}, fold)
        for (label, strategies), weight in itertools.product(STRATEGY_SETS.items(), WEIGHTS):
            variant = replace(fold, settings=replace(base, strategies=strategies, weight=weight))
            for method in PAIR_METHODS:
                run(method, {"strategies": label, "weight": weight}, variant)
        print(f"seed {seed}, {n} sessions, {presentation}: done ({time.perf_counter() - t0:.0f} s)", file=sys.stderr)
    table = _choose_table(runs)
    print(_format_choose(table, args))
    out = {"data": str(args.data) if not args.tiny else "tiny", "rounds": args.rounds, "seeds": list(args.seeds),
           "sessions": list(args.sessions), "labeled_fraction": args.labeled_fraction,
           "vali_fraction": args.vali_fraction, "table": table,
           "runs": runs}
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "choose.json").write_text(json.dumps(out, indent=1))
    return out


def _choose_table(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per setting (method, strategies, weight): mean NDCG@10 over seeds in each condition
    (sessions x presentation), and the mean over conditions of its rank among all settings."""
    conditions = sorted({(r["sessions"], r["presentation"]) for r in runs})
    settings = list(dict.fromkeys((r["method"], r["strategies"], r["weight"]) for r in runs))
    means = {s: {c: float(np.mean([r[METRIC] for r in runs if (r["method"], r["strategies"], r["weight"]) == s
                                   and (r["sessions"], r["presentation"]) == c])) for c in conditions}
             for s in settings}
    ranks: dict[tuple, list[float]] = {s: [] for s in settings}
    for c in conditions:
        order = sorted(settings, key=lambda s: -means[s][c])
        for k, s in enumerate(order):
            ranks[s].append(k + 1.0)
    return [{"method": s[0], "strategies": s[1], "weight": s[2], "mean_rank": float(np.mean(ranks[s])),
             "by_condition": {f"{n}/{p}": means[s][(n, p)] for n, p in conditions}}
            for s in sorted(settings, key=lambda s: np.mean(ranks[s]))]


def _format_choose(table: list[dict[str, Any]], args: argparse.Namespace) -> str:
    conds = list(table[0]["by_condition"])
    head = f"{'method':<13} {'strategies':<25} {'weight':<7} {'rank':>5} " + " ".join(f"{c:>15}" for c in conds)
    lines = [f"test NDCG@10, mean over seeds {list(args.seeds)}; rank: mean over the conditions (sessions/presentation)",
             head, "-" * len(head)]
    for row in table:
        lines.append(f"{row['method']:<13} {row['strategies']:<25} {row['weight']:<7} {row['mean_rank']:>5.1f} "
                     + " ".join(f"{row['by_condition'][c]:>15.4f}" for c in conds))
    return "\n".join(lines)


#: The strategy sets ``pairs`` reads: the previous default, the default, and Click > Skip Above alone.
PAIR_SETS = {"skip-above+no-click-next": ("click>skip-above", "click>no-click-next"),
             "adjacent (default)": ("click>skip-previous", "click>no-click-next"),
             "skip-above": ("click>skip-above",)}


def pairs(args: argparse.Namespace) -> dict[str, Any]:
    from boostplug import clicks, metrics

    train, vali, test = _fold(args)
    out: dict[str, Any] = {"sessions": args.sessions, "seed": args.seed, "sets": []}
    for presentation in PRESENTATIONS:
        fold = prepare(train, vali, test, ClickSettings(n_sessions=args.sessions, presentation=presentation,
                                                        labeled_fraction=args.labeled_fraction), seed=args.seed)
        log = fold.log
        shown = np.bincount(log.doc, minlength=train.n_docs)
        mean_position = np.bincount(log.doc, weights=log.position, minlength=train.n_docs) / np.maximum(shown, 1)
        for label, strategies in PAIR_SETS.items():
            rows = clicks.to_rows(clicks.preferences(log, strategies), train.qid)
            a, b = rows.pairs[:, 0], rows.pairs[:, 1]
            row = {"presentation": presentation, "strategies": label, "pairs": len(rows),
                   "prefer_lower_shown": float(np.mean(mean_position[a] > mean_position[b])) if len(rows) else 0.0,
                   "labels_agree": float(np.mean(train.y[a] > train.y[b])) if len(rows) else 0.0,
                   "labels_contradict": float(np.mean(train.y[a] < train.y[b])) if len(rows) else 0.0}
            out["sets"].append(row)
            print(f"{presentation:8} {label:26} pairs {row['pairs']:7d}  prefer lower-shown {row['prefer_lower_shown']:.3f}"
                  f"  labels agree {row['labels_agree']:.3f}, contradict {row['labels_contradict']:.3f}")
    out["random_ndcg@10"] = float(metrics.ndcg(np.zeros(test.n_docs), test.y, test.group_ptr, k=10, ties="average"))
    print(f"random ranker's test NDCG@10 (expectation over orders): {out['random_ndcg@10']:.4f}")
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "pairs.json").write_text(json.dumps(out, indent=1))
    return out


#: ``diagnose``: QBRank on the click pairs varied one setting at a time, beside the other pair
#: learners and the clicks-as-labels baseline on the same click fold. A variant is a click
#: method (``name[key=value]``), optionally with the fold's pair weight changed (``@weight``).
DIAGNOSE = ("qbrank-P[num_leaves=31]", *(f"qbrank-P[num_leaves=31,{v}]" for v in (
    "pair_tau=0.05", "pair_tau=0.3", "hessian=mean", "learning_rate=0.02", "learning_rate=0.2",
    "min_data_in_leaf=1", "min_data_in_leaf=5")), "qbrank-P[num_leaves=3]", "qbrank-P[num_leaves=7]",
    "qbrank-P[num_leaves=31]@unit", "qbrank-P[num_leaves=31]@count", "qbrank-P[hessian=mean,num_leaves=7]",
    "rankboost-P", "mpboost-P", "lgb-clicks", "production")


def diagnose(args: argparse.Namespace) -> dict[str, Any]:
    """Every variant of ``--variants`` on one click fold per seed (PBM eta 1, fixed presentation,
    ``--sessions``); per variant the mean test NDCG@10 over seeds and paired tests (over the test
    queries, each query's NDCG averaged over the seeds) against the first variant and ``rankboost-P``."""
    C.single_thread()
    train, vali, test = _fold(args)
    runs: dict[str, list[dict[str, Any]]] = {v: [] for v in args.variants}
    for seed in args.seeds:
        base = ClickSettings(n_sessions=args.sessions, labeled_fraction=args.labeled_fraction,
                             vali_fraction=args.vali_fraction)
        fold = prepare(train, vali, test, base, seed=seed)
        for variant in args.variants:
            method, _, weight = variant.partition("@")
            on = replace(fold, settings=replace(base, weight=weight)) if weight else fold
            r = run_click_method(method, on, rounds=args.rounds, metric=METRIC, seed=seed, threads=1)
            runs[variant].append({"seed": seed, "best_round": r.best_round, METRIC: r.test[METRIC],
                                  "per_query": r.test_per_query[METRIC]})
        print(f"seed {seed}: done", file=sys.stderr)
    per_query = {v: np.mean([r["per_query"] for r in rs], axis=0) for v, rs in runs.items()}
    table = []
    for v, rs in runs.items():
        row: dict[str, Any] = {"variant": v, METRIC: float(np.mean([r[METRIC] for r in rs])),
                               "by_seed": [r[METRIC] for r in rs], "best_round": [r["best_round"] for r in rs]}
        for label, against in (("vs first", args.variants[0]), ("vs rankboost-P", "rankboost-P")):
            if against in per_query and against != v:
                t = paired_tests(per_query[v], per_query[against])
                row[label] = {"against": against, "diff": t.mean_diff, "p_t": t.t_pvalue,
                              "p_wilcoxon": t.wilcoxon_pvalue}
        table.append(row)
    print(f"test NDCG@10, mean over seeds {list(args.seeds)}; {args.sessions} sessions, PBM eta 1, fixed presentation")
    print(f"{'variant':<48} {'ndcg@10':>8} {'rounds':>15}  {'vs the first (p)':>18}  {'vs rankboost-P (p)':>18}")
    for row in table:
        cells = [f"{row[k]['diff']:+.4f} ({row[k]['p_t']:.2g})" if k in row else "" for k in
                 ("vs first", "vs rankboost-P")]
        print(f"{row['variant']:<48} {row[METRIC]:>8.4f} {str(row['best_round']):>15}  {cells[0]:>18}  "
              f"{cells[1]:>18}")
    out = {"data": "tiny" if args.tiny else str(args.data), "sessions": args.sessions, "seeds": list(args.seeds),
           "rounds": args.rounds, "table": table}
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "diagnose.json").write_text(json.dumps(out, indent=1))
    return out


# ---- routes: every way to learn from the clicks, chosen on some conditions, shown on others -----

#: The routes ``routes`` ranks: the pair learners (QBRank with the comparison's shared trees, 31
#: leaves, and with the smaller trees ``diagnose`` points to; the reference boosters), clicks as
#: labels with and without debiasing, the pair term beside them, and the inverse-propensity
#: routes (shuffled presentation only). Tree sizes are named so that the study does not depend
#: on the protocol's defaults.
ROUTES = ("qbrank-P[num_leaves=31]", "qbrank-P[num_leaves=7]", "qbrank-P[num_leaves=3]", "qbrank-P[hessian=mean,num_leaves=7]",
          "rankboost-P", "mpboost-P", "lgb-clicks", "lgb-clicks[num_leaves=7]", "lgb-position", "xgb-unbiased",
          "lgb-ips", "qbrank-P-ips[num_leaves=7]", "lgb-clicks+qbrank-P[num_leaves=7]", "qbrank-PL[num_leaves=3]")
#: What the chosen route is held against on the held-out conditions.
REFERENCES = ("production", "lgb-clicks", "lgb-position", "xgb-unbiased")
#: Also tested against the chosen route where they ran: the pairs with the judged queries under
#: the same small trees, and RankBoost on the same pairs.
ALSO_AGAINST = ("qbrank-PL[num_leaves=3]", "rankboost-P")
#: The item's target on a fixed presentation from 10^4 sessions on: at least this much above the
#: production ranker, and no more than ``LEVEL`` below clicks as labels and debiased LambdaMART
#: (``LEVEL_WITH``).
TARGET_OVER_PRODUCTION, LEVEL = 0.02, 0.005
LEVEL_WITH = ("lgb-clicks", "lgb-position", "xgb-unbiased")
#: The two halves of the grid: (data, fold, click model presets, sessions). The choice sees only
#: CHOOSE; HELD_OUT's data folds and click models are all others.
CHOOSE = (("example", 1, ("pbm-eta1", "cascade"), (1_000, 10_000)),
          ("mq2008", 1, ("pbm-eta1", "cascade"), (1_000, 10_000)))
HELD_OUT = (("mq2008", 2, ("pbm-eta0.5", "pbm-eta2", "ultra-pbm"), (10_000, 100_000)),
            ("ohsumed", 1, ("pbm-eta0.5", "pbm-eta2", "ultra-pbm"), (10_000,)))
#: ``--grid more``: the held-out data folds under the cascade (a CHOOSE click model, on other
#: data) and the DCM (unseen), more seeds where the target was missed on a fixed presentation, and
#: one condition at 10^6 sessions (a grid entry's fifth item: its seeds instead of ``--seed``).
#: Cheaper conditions first, so that a run cut short has finished them.
HELD_OUT_MORE = (("mq2008", 2, ("cascade", "dcm"), (10_000,)), ("ohsumed", 1, ("cascade", "dcm"), (10_000,)),
                 ("mq2008", 2, ("pbm-eta2",), (10_000,), (0, 1, 2)), ("ohsumed", 1, ("pbm-eta2",), (10_000,), (0, 1, 2)),
                 ("mq2008", 2, ("cascade", "dcm"), (100_000,)), ("ohsumed", 1, ("cascade", "dcm"), (100_000,)),
                 ("mq2008", 2, ("pbm-eta1",), (1_000_000,)))
TINY_CHOOSE = (("tiny", 1, ("pbm-eta1",), (400,)),)
TINY_HELD_OUT = (("tiny", 2, ("ultra-pbm", "pbm-eta2"), (400,)),)
TINY_HELD_OUT_MORE = (("tiny", 2, ("dcm",), (400,)), ("tiny", 2, ("pbm-eta2",), (400,), (0, 1)))
#: Judged share of the training queries (the production ranker's data) per data set: OHSUMED's 63
#: training queries at 5% would leave the production ranker 3.
LABELED_FRACTION = {"example": 0.05, "mq2008": 0.05, "ohsumed": 0.2, "tiny": 0.3}


def _load(name: str, fold: int, tiny: bool) -> Any:
    data = {"tiny": C.DEFAULT_DATA, "example": C.EXAMPLE, "mq2008": C.DEFAULT_DATA, "ohsumed": C.OHSUMED_DATA}[name]
    ns = argparse.Namespace(data=data, tiny=tiny, folds=[fold], ties=None)
    return C.load_folds(ns)[1][0]


def _conditions(halves: Sequence[tuple[str, Any, Sequence[str]]], sessions: Sequence[int] | None = None,
                seed: int = 0) -> list[dict[str, Any]]:
    """The conditions of the halves ``(half, grid, presentations)`` (``sessions``: instead of each
    grid entry's own; ``seed``: of the entries that name no seeds)."""
    return [{"half": half, "data": d, "fold": f, "model": m, "sessions": n, "presentation": p, "seed": s}
            for half, grid, presentations in halves for d, f, models, own, *seeds in grid
            for m, n, p, s in itertools.product(models, sessions or own, presentations, seeds[0] if seeds else (seed,))]


def _key(c: dict[str, Any]) -> str:
    seed = c.get("seed", 0)  # seed 0 unnamed: the conditions of the first runs had no seed
    return f"{c['data']}-F{c['fold']}_{c['model']}_{c['sessions']}_{c['presentation']}" + (f"_seed{seed}" if seed else "")


def _run_condition(c: dict[str, Any], routes: Sequence[str], args: argparse.Namespace,
                   done: dict[str, Any] | None = None) -> dict[str, Any]:
    """Every route and reference on one click fold of condition ``c`` (its seed): test NDCG@10 per
    query; a route that cannot train on this log (an inverse-propensity route on a fixed
    presentation) is left out. ``done``: an earlier run of ``c``, whose routes are kept (the fold
    is the same: a function of the condition and the seed; a log that differs is refused)."""
    from boostplug.compare.click_protocol import can_train, click_method

    settings = ClickSettings.from_preset(c["model"], n_sessions=c["sessions"], presentation=c["presentation"],
                                         labeled_fraction=LABELED_FRACTION[c["data"]], vali_fraction=1.0)
    out: dict[str, Any] = {"seed": c["seed"], **done} if done else {**c, "runs": {}}
    todo = [n for n in dict.fromkeys([*routes, *REFERENCES])
            if n not in out["runs"] and can_train(click_method(n), settings, simulated=True)]
    if not todo:
        return done if done else out
    train, vali, test = _load(c["data"], c["fold"], args.tiny)
    fold = prepare(train, vali, test, settings, seed=c["seed"])
    if done and done.get("log_sha256", fold.info["log"]["sha256"]) != fold.info["log"]["sha256"]:
        raise SystemExit(f"{_key(c)}: the click log differs from the earlier run's (SHA-256 {done['log_sha256']}, "
                         f"now {fold.info['log']['sha256']}); its routes cannot be completed on it")
    out["production_ndcg@10"] = fold.info["production"]["test_ndcg@10"]
    out["log_sha256"] = fold.info["log"]["sha256"]
    for name in todo:
        r = run_click_method(name, fold, rounds=args.rounds, metric=METRIC, seed=c["seed"], threads=1)
        out["runs"][name] = {METRIC: r.test[METRIC], "best_round": r.best_round, "per_query": r.test_per_query[METRIC]}
    return out


def _mean_ranks(conds: list[dict[str, Any]], routes: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Per route: its mean rank among the routes that ran in each condition (1 = best), over the
    conditions it ran in, and in how many."""
    ranks: dict[str, list[float]] = {r: [] for r in routes}
    for c in conds:
        present = [r for r in routes if r in c["runs"]]
        values = np.array([-c["runs"][r][METRIC] for r in present])
        order = rankdata(values, method="average")   # tied routes share their rank, whatever their order
        for r, k in zip(present, order):
            ranks[r].append(float(k))
    return {r: {"mean_rank": float(np.mean(v)) if v else float("nan"), "conditions": len(v),
                "mean_ndcg@10": float(np.mean([c["runs"][r][METRIC] for c in conds if r in c["runs"]]))
                if v else float("nan")} for r, v in ranks.items()}


_SETTING = ("data", "fold", "model", "sessions", "presentation")


def _pooled(conds: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per setting run with several seeds, one condition whose every route (that ran with each
    seed) has each test query's NDCG@10 averaged over the seeds; its ``seed`` names them."""
    by: dict[tuple, list[dict[str, Any]]] = {}
    for c in conds:
        by.setdefault(tuple(c[k] for k in _SETTING), []).append(c)
    out = []
    for group in by.values():
        if len(group) < 2:
            continue
        group = sorted(group, key=lambda c: c.get("seed", 0))
        runs = {}
        for r in [r for r in group[0]["runs"] if all(r in c["runs"] for c in group[1:])]:  # a fixed order
            per_query = np.mean([c["runs"][r]["per_query"] for c in group], axis=0)
            runs[r] = {METRIC: float(np.mean(per_query)), "per_query": per_query.tolist()}
        out.append({**{k: group[0][k] for k in ("half", *_SETTING)},
                    "seed": "+".join(str(c.get("seed", 0)) for c in group), "runs": runs})
    return out


def _against(conds: list[dict[str, Any]], route: str) -> list[dict[str, Any]]:
    """``route`` against every reference (and :data:`ALSO_AGAINST`) in each condition: mean
    difference over the test queries, paired t-test and Wilcoxon p-values, whether the item's
    target holds there, and the best route of the condition."""
    rows = []
    for c in conds:
        if route not in c["runs"]:
            continue
        row: dict[str, Any] = {**{k: c[k] for k in _SETTING}, "seed": c.get("seed", 0)}
        row[METRIC] = c["runs"][route][METRIC]
        for ref in (*REFERENCES, *ALSO_AGAINST):
            if ref in c["runs"] and ref != route:
                t = paired_tests(c["runs"][route]["per_query"], c["runs"][ref]["per_query"])
                row[ref] = {"diff": t.mean_diff, "p_t": t.t_pvalue, "p_wilcoxon": t.wilcoxon_pvalue}
        row["target_met"] = bool(row.get("production", {}).get("diff", -1) >= TARGET_OVER_PRODUCTION and all(
            row[ref]["diff"] >= -LEVEL for ref in LEVEL_WITH if ref in row))
        row["best"] = max(c["runs"], key=lambda r: c["runs"][r][METRIC])
        rows.append(row)
    return rows


def routes(args: argparse.Namespace) -> dict[str, Any]:
    """Run (or reuse from ``--out``) every condition of both halves, choose the route with the best
    mean rank on CHOOSE among those that ran in all of its conditions, and hold it against the
    references on HELD_OUT."""
    C.single_thread()
    held_out, shown = {"main": (TINY_HELD_OUT if args.tiny else HELD_OUT, PRESENTATIONS),
                       "more": (TINY_HELD_OUT_MORE if args.tiny else HELD_OUT_MORE, ("fixed",))}[args.grid]
    halves = [("choose", TINY_CHOOSE if args.tiny else CHOOSE, args.presentations or PRESENTATIONS),
              ("held-out", held_out, args.presentations or shown)]
    conds = _conditions(halves, args.sessions, args.seed)
    shard, shards = args.shard
    ours = [c for c in conds if args.half in ("all", c["half"])]
    mine = {_key(c) for c in ours[shard::shards]}
    reused = {_key(c): c for f in args.reuse for c in _read_report(f)["conditions"]}
    done: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    for c in conds:
        path = None if args.out is None else args.out / "conditions" / f"{_key(c)}.json"
        earlier = json.loads(path.read_text()) if path is not None and path.is_file() else reused.get(_key(c))
        if _key(c) not in mine:  # another process's share (or half): read what it finished
            if earlier is not None:
                done.append(earlier)
            continue
        result = _run_condition(c, args.routes, args, earlier)
        if result is earlier:
            done.append(result)
            continue
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(result))
        done.append(result)
        print(f"{_key(c)}: done ({time.perf_counter() - t0:.0f} s)", file=sys.stderr)
    chosen_on = [c for c in done if c["half"] == "choose"]
    held = [c for c in done if c["half"] == "held-out"]
    out: dict[str, Any] = {"tiny": args.tiny, "seed": args.seed, "rounds": args.rounds, "routes": list(args.routes),
                           "references": list(REFERENCES), "choose": [list(g) for g in halves[0][1]],
                           "held_out": [list(g) for g in halves[1][1]], "conditions": done}
    if chosen_on:
        # among every route the CHOOSE conditions hold, so that a run of fewer routes holds out the same choice
        ranks = _ran(_mean_ranks(chosen_on, list(dict.fromkeys([*args.routes, *ROUTES]))))
        eligible = [r for r in ranks if ranks[r]["conditions"] == len(chosen_on)]
        out["choose_ranks"] = ranks
        out["winner"] = min(eligible, key=lambda r: ranks[r]["mean_rank"])
    if held:
        out["held_out_ranks"] = _ran(_mean_ranks(held, args.routes))
        if "winner" in out:
            out["winner_held_out"] = _against(held + _pooled(held), out["winner"])
    out["ips"] = _ips_against_unweighted(done, args.routes)
    text = _format_routes(out)
    print(text)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "routes.json").write_text(json.dumps(out, indent=1))
        (args.out / "routes.txt").write_text(text + "\n")
    return out


def _read_report(path: Path) -> dict[str, Any]:
    """An earlier ``routes.json``, gzipped or not."""
    raw = path.read_bytes()
    return json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)


def _ran(ranks: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The routes of ``ranks`` that ran in at least one condition."""
    return {r: v for r, v in ranks.items() if v["conditions"]}


def _ips_against_unweighted(conds: list[dict[str, Any]], routes: Sequence[str]) -> list[dict[str, Any]]:
    """Each inverse-propensity route against the same route unweighted (``lgb-ips`` against
    ``lgb-clicks``, ``qbrank-P-ips[...]`` against ``qbrank-P[...]``), per condition where both ran."""
    rows = []
    for r in routes:
        if "-ips" not in r:
            continue
        twin = "lgb-clicks" if r == "lgb-ips" else r.replace("-ips", "")
        for c in conds:
            if r in c["runs"] and twin in c["runs"]:
                t = paired_tests(c["runs"][r]["per_query"], c["runs"][twin]["per_query"])
                rows.append({"route": r, "against": twin, **{k: c[k] for k in ("data", "fold", "model", "sessions",
                                                                             "presentation")},
                             "diff": t.mean_diff, "p_t": t.t_pvalue, "p_wilcoxon": t.wilcoxon_pvalue})
    return rows


def _format_routes(out: dict[str, Any]) -> str:
    lines = []
    for half in ("choose", "held_out"):
        ranks = out.get(f"{half}_ranks")
        if not ranks:
            continue
        n = sum(c["half"] == half.replace("_", "-") for c in out["conditions"])
        lines += [f"{half.replace('_', '-').upper()} ({n} conditions): mean rank among the routes that ran "
                  "(1 = best), mean test NDCG@10", f"{'route':<40} {'rank':>6} {'ndcg@10':>8} {'conditions':>10}"]
        for r in sorted(ranks, key=lambda r: (np.isnan(ranks[r]["mean_rank"]), ranks[r]["mean_rank"])):
            v = ranks[r]
            lines.append(f"{r:<40} {v['mean_rank']:>6.2f} {v['mean_ndcg@10']:>8.4f} {v['conditions']:>10}")
        lines.append("")
    if "winner" in out:
        lines.append(f"chosen on CHOOSE: {out['winner']}")
    rows = out.get("winner_held_out", [])
    if rows:
        refs = [r for r in (*REFERENCES, *ALSO_AGAINST) if r != out["winner"] and any(r in row for row in rows)]
        lines += ["", f"{out['winner']} on HELD-OUT: difference over each reference (paired t-test p); target: "
                  f">= +{TARGET_OVER_PRODUCTION} over production, >= -{LEVEL} against {', '.join(LEVEL_WITH)}; "
                  "seed a+b: each test query's NDCG@10 averaged over those seeds",
                  f"{'condition':<50} {'ndcg@10':>8} " + " ".join(f"{r:>24}" for r in refs)
                  + "  target  best route"]
        for row in rows:
            cond = f"{row['data']}-F{row['fold']} {row['model']} {row['sessions']} {row['presentation']}"
            if row["seed"] != 0:
                cond += f" seed {row['seed']}"
            cells = [f"{row[r]['diff']:+.4f} ({row[r]['p_t']:.2g})" if r in row else "" for r in refs]
            lines.append(f"{cond:<50} {row[METRIC]:>8.4f} " + " ".join(f"{x:>24}" for x in cells)
                         + f"  {'met' if row['target_met'] else 'no':<6}  {row['best']}")
        fixed = [r for r in rows if r["presentation"] == "fixed" and r["sessions"] >= 10_000 and r["seed"] == 0]
        if fixed:
            lines.append(f"target met on {sum(r['target_met'] for r in fixed)} of {len(fixed)} held-out fixed-"
                         "presentation conditions from 10^4 sessions on (seed 0)")
    if out.get("ips"):
        lines += ["", "inverse-propensity routes against the same routes unweighted: difference (paired t-test p)"]
        for r in out["ips"]:
            lines.append(f"{r['route']:<28} - {r['against']:<24} {r['data']}-F{r['fold']} {r['model']} "
                         f"{r['sessions']} {r['presentation']}: {r['diff']:+.4f} ({r['p_t']:.2g})")
    return "\n".join(lines)


# ---- figure and claims from compare's outputs ---------------------------------------------------

_RUN = re.compile(r"^(?P<data>.+)_(?P<n>\d+)$")


def _read_runs(folder: Path) -> dict[tuple[str, int], dict[str, Any]]:
    """``(data, sessions) -> results.json`` of every ``<DATA>_<SESSIONS>`` run under ``folder``."""
    out = {}
    for d in sorted(folder.iterdir()):
        m = _RUN.match(d.name)
        if m and (d / "results.json").is_file():
            out[(m["data"], int(m["n"]))] = json.loads((d / "results.json").read_text())
    return out


def _per_query(payload: dict[str, Any]) -> dict[str, np.ndarray]:
    return {r["method"]: np.asarray(r["test_per_query"][METRIC], dtype=np.float64) for r in payload["results"]}


def _gather(specs: Sequence[str]) -> tuple[dict[str, dict[tuple[str, int], dict[str, np.ndarray]]], list[str]]:
    """``presentation -> (data, sessions) -> method -> per-query test NDCG@10``, and the labels
    (``""`` first, for the unlabeled folders), from the
    ``PRESENTATION[:LABEL]=FOLDER`` specs; a folder's methods are named ``method (LABEL)`` when it
    has a label (its runs must test the same queries as the unlabeled folder's)."""
    runs: dict[str, dict[tuple[str, int], dict[str, np.ndarray]]] = {}
    labels = [""]
    for spec in specs:
        key, sep, folder = spec.partition("=")
        if not sep:
            raise SystemExit(f"--runs {spec!r}: expected PRESENTATION[:LABEL]=FOLDER")
        presentation, _, label = key.partition(":")
        if label and label not in labels:
            labels.append(label)
        for where, payload in _read_runs(Path(folder)).items():
            named = {(f"{m} ({label})" if label else m): v for m, v in _per_query(payload).items()}
            runs.setdefault(presentation, {}).setdefault(where, {}).update(named)
    return runs, labels


#: QBRank's claims, and the comparisons around them: (claim, method, against).
CLAIMS = (("preferences beat GBT on the clicks they came from", "qbrank-P", "lgb-clicks"),
          ("P u L beats P", "qbrank-PL", "qbrank-P"),
          ("P u L beats the judged queries alone", "qbrank-PL", "labeled-only"),
          ("debiased LambdaMART against P", "lgb-position", "qbrank-P"),
          ("RankBoost on the pairs against GBT on the clicks", "rankboost-P", "lgb-clicks"),
          ("position debiasing against clicks as labels", "lgb-position", "lgb-clicks"))
#: The methods that learn from the pairs (a labeled folder's setting applies to them).
PAIR_LEARNERS = ("qbrank-P", "qbrank-PL", "mpboost-P", "rankboost-P")


def claims(runs: dict[str, dict[tuple[str, int], dict[str, np.ndarray]]],
           labels: Sequence[str] = ("",)) -> list[dict[str, Any]]:
    """The claims as paired tests over the test queries, at every data set, size and
    presentation; for each label, its pair learners' runs in place of the unlabeled ones (the
    comparisons without a pair learner once)."""
    rows = []
    for presentation, by in runs.items():
        for (data, n), pq in sorted(by.items()):
            for label in labels:
                def named(m: str) -> str:
                    return f"{m} ({label})" if label and m in PAIR_LEARNERS else m
                for name, a, b in CLAIMS:
                    if label and a not in PAIR_LEARNERS and b not in PAIR_LEARNERS:
                        continue
                    a, b = named(a), named(b)
                    if a in pq and b in pq:
                        t = paired_tests(pq[a], pq[b])
                        rows.append({"presentation": presentation, "data": data, "sessions": n, "claim": name,
                                     "method": a, "against": b, "n": t.n, "mean_diff": t.mean_diff,
                                     "p_t": t.t_pvalue, "p_wilcoxon": t.wilcoxon_pvalue})
    return rows


def figure(args: argparse.Namespace) -> dict[str, Any]:
    runs, labels = _gather(args.runs)
    series: dict[str, Any] = {}
    for presentation, by in runs.items():
        for (data, n), pq in sorted(by.items()):
            for method, values in pq.items():
                ci = bootstrap_ci(values, resamples=2000, seed=0)
                series.setdefault(presentation, {}).setdefault(data, {}).setdefault(method, []).append(
                    {"sessions": n, "mean": float(np.mean(values)), "low": ci.low, "high": ci.high})
    rows = claims(runs, labels)
    for r in rows:
        print(f"{r['presentation']:<8} {r['data']:<8} {r['sessions']:>8}  {r['method']:>22} vs {r['against']:<22} "
              f"diff {r['mean_diff']:+.4f}  p(t) {r['p_t']:.2g}  p(W) {r['p_wilcoxon']:.2g}  (n={r['n']})")
    out = {"series": series, "claims": rows}
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "claims.json").write_text(json.dumps(out, indent=1))
    if args.png is not None:
        _plot(series, args.png)
    return out


def _plot(series: dict[str, Any], png: Path) -> None:
    plt = C.pyplot()
    presentations = list(series)
    datas = sorted({d for p in series.values() for d in p})
    fig, axes = plt.subplots(len(presentations), len(datas), figsize=(5.6 * len(datas), 4.0 * len(presentations)),
                             squeeze=False, sharex=True)
    colors = {"labeled-only": "k", "lgb-clicks": "tab:blue", "lgb-position": "tab:cyan", "xgb-unbiased": "tab:purple",
              "qbrank-P": "tab:red", "qbrank-PL": "tab:orange", "mpboost-P": "tab:green", "rankboost-P": "tab:olive"}
    for i, p in enumerate(presentations):
        for j, d in enumerate(datas):
            ax = axes[i][j]
            for method, pts in series[p].get(d, {}).items():
                pts = sorted(pts, key=lambda q: q["sessions"])
                x = [q["sessions"] for q in pts]
                base = method.split(" (")[0]
                ls = "--" if base == "labeled-only" else (":" if "(" in method else "-")
                color = colors.get(base)
                ax.plot(x, [q["mean"] for q in pts], ls, color=color, marker="o", ms=3, label=method)
                ax.fill_between(x, [q["low"] for q in pts], [q["high"] for q in pts], color=color, alpha=0.08)
            ax.set_xscale("log")
            ax.set_title(f"{d}, {'shuffled' if p == 'shuffle' else 'fixed'} presentation", fontsize=10)
            ax.set_xlabel("simulated sessions")
            ax.set_ylabel("test NDCG@10 (true labels)")
            ax.grid(alpha=0.3)
    handles, names = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, names, loc="lower center", ncol=min(6, len(names)), fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.07, 1, 1))  # room for the legend below the panels
    png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(png, dpi=110)
    plt.close(fig)


def _shard(text: str) -> tuple[int, int]:
    k, sep, n = text.partition("/")
    if not (sep and k.isdigit() and n.isdigit() and int(k) < int(n)):
        raise argparse.ArgumentTypeError(f"expected K/N with 0 <= K < N, got {text!r}")
    return int(k), int(n)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    c = sub.add_parser("choose", help="the settings grid of the recommended default")
    c.add_argument("--data", type=C._data_arg, default=C.EXAMPLE)
    c.add_argument("--tiny", action="store_true", help="small synthetic data (for tests)")
    c.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    c.add_argument("--sessions", type=int, nargs="+", default=[10_000, 100_000])
    c.add_argument("--labeled-fraction", type=float, default=0.05)
    c.add_argument("--vali-fraction", type=float, default=1.0,
                   help="share of the validation queries judged for round selection (default: all)")
    c.add_argument("--rounds", type=int, default=300)
    c.add_argument("--out", type=Path, default=None)
    q = sub.add_parser("pairs", help="what the click pairs of each strategy set say, against the true labels")
    q.add_argument("--data", type=C._data_arg, default=C.DEFAULT_DATA)
    q.add_argument("--tiny", action="store_true", help="small synthetic data (for tests)")
    q.add_argument("--sessions", type=int, default=100_000)
    q.add_argument("--labeled-fraction", type=float, default=0.05)
    q.add_argument("--seed", type=int, default=0)
    q.add_argument("--out", type=Path, default=None)
    d = sub.add_parser("diagnose", help="QBRank on the click pairs varied one setting at a time")
    d.add_argument("--data", type=C._data_arg, default=C.DEFAULT_DATA)
    d.add_argument("--tiny", action="store_true", help="small synthetic data (for tests)")
    d.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    d.add_argument("--sessions", type=int, default=10_000)
    d.add_argument("--labeled-fraction", type=float, default=0.05)
    d.add_argument("--vali-fraction", type=float, default=1.0,
                   help="share of the validation queries judged for round selection (default: all)")
    d.add_argument("--variants", nargs="+", default=list(DIAGNOSE))
    d.add_argument("--rounds", type=int, default=300)
    d.add_argument("--out", type=Path, default=None)
    r = sub.add_parser("routes", help="every route chosen on some conditions and held out on others")
    r.add_argument("--tiny", action="store_true", help="small synthetic data and grid (for tests)")
    r.add_argument("--half", choices=("all", "choose", "held-out"), default="all",
                   help="run one half of the grid only (two processes can share an --out folder)")
    r.add_argument("--shard", type=_shard, default=(0, 1), metavar="K/N",
                   help="run every N-th condition from the K-th (0-based) only; N processes with K = 0..N-1 share "
                        "an --out folder, and a last run without --shard reads them all")
    r.add_argument("--routes", nargs="+", default=list(ROUTES))
    r.add_argument("--presentations", nargs="+", default=None, choices=("fixed", "shuffle", "swap"),
                   help="the grid's presentations (default: fixed and shuffle; --grid more's held-out half: fixed)")
    r.add_argument("--sessions", type=int, nargs="+", default=None,
                   help="session counts instead of the grid's own (e.g. a smaller grid)")
    r.add_argument("--grid", choices=("main", "more"), default="main",
                   help="the held-out half: the study's (main) or its extension (more: the cascade and the DCM on "
                        "the held-out data, more seeds, 10^6 sessions; fixed presentation)")
    r.add_argument("--reuse", type=Path, nargs="*", default=[],
                   help="routes.json(.gz) of earlier runs whose conditions count as finished (and are completed "
                        "with the routes they lack where this run has them)")
    r.add_argument("--seed", type=int, default=0, help="the seed of the grid entries that name none")
    r.add_argument("--rounds", type=int, default=300)
    r.add_argument("--out", type=Path, default=None,
                   help="folder for routes.json/routes.txt; finished conditions there are reused (and completed "
                        "with the routes they lack)")
    f = sub.add_parser("figure", help="the figure and the claims from boostplug compare --clicks runs")
    f.add_argument("--runs", nargs="+", required=True, metavar="PRESENTATION[:LABEL]=FOLDER",
                   help="compare --out folders named DATA_SESSIONS under FOLDER; LABEL names another setting's "
                        "runs on the same folds (their methods become 'method (LABEL)')")
    f.add_argument("--out", type=Path, default=None)
    f.add_argument("--png", type=Path, default=None)
    args = ap.parse_args(argv)
    {"choose": choose, "pairs": pairs, "figure": figure, "diagnose": diagnose, "routes": routes}[args.command](args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
