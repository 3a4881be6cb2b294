"""OHSUMED (LETOR 3.0): the reference boosters with the papers' own settings, tested against the
papers' OHSUMED claims and LETOR 3.0's published baselines.

Three of the five papers report on OHSUMED: MPBoost (Figure 3), NDCG_Boost (Figure 1) and AdaRank
(Figure 2, on an earlier OHSUMED feature set with 4 folds of its own). This script runs, on
LETOR 3.0's five folds (``--data ohsumed``: Fold1 trains on S2-S4, validates on S5, tests on S1)
and with the LETOR evaluation conventions (``_common.score``: NDCG discount "letor", i.e. ranks 1
and 2 undiscounted then ``1/log2(rank)``; a query without a relevant document scores 0; MAP with
labels >= 1 relevant; tied scores in the file's order, as the LETOR 3.0 script keeps them;
``--ties average`` averages them over their orders instead):

* the LETOR baselines' protocol, the round chosen on validation MAP: RankBoost Rb-c with RankLib's
  thresholds (``thresholds="ranklib"``, RankLib's RankBoost), Rb-d and RankBoost+ (255 sampled
  thresholds), AdaRank.MAP and AdaRank.NDCG@5 (the paper's update and stop rule, and RankLib-style);
* MPBoost's protocol, the round chosen on validation NDCG@5: stump MPBoost with BINARY and each
  DDF at the paper's Figure 2 parameters (alpha 0.2, lambda 3, beta 0.5), and each DDF with its
  parameter also chosen on validation NDCG@5 (alpha in {0.2, 0.5, 1}, lambda in {0.5, 1, 3},
  beta in {0.5, 1, 2}), as the paper tunes them;
* NDCG_Boost's protocol: stump NDCG_Boost (sigma 2), 100 rounds, no validation set (and, for
  comparison, the same fit with the round chosen on validation MAP).

Per method it prints test NDCG@1/3/5/10 and MAP (mean and standard deviation over the five
folds, the rounds per fold), the difference to LETOR 3.0's published baselines, and each claim's
paired test over the 106 test queries pooled across the folds (paired t-test and Wilcoxon
signed-rank, :func:`boostplug.compare.stats.paired_tests`).

Usage::

    nice env NUMBA_NUM_THREADS=1 python examples/replication/ohsumed_letor.py \\
        [--data ohsumed] [--rounds 300] [--no-grid] [--out DIR] [--tiny]
    python examples/replication/ohsumed_letor.py --summarize docs/results/replication/ohsumed/ohsumed_letor.json
"""

from __future__ import annotations

import time
from typing import Any, Callable

import numpy as np

import _common as C
from boostplug.boosters import AdaRank, MPBoost, NDCGBoost, RankBoost
from boostplug.compare.stats import paired_tests

TEST_METRICS = ("ndcg@1", "ndcg@2", "ndcg@3", "ndcg@4", "ndcg@5", "ndcg@6", "ndcg@7", "ndcg@8", "ndcg@9",
                "ndcg@10", "map")
SHOWN = ("ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10", "map")
PAPER_ROUNDS = 100
ADARANK_ROUNDS = 500
RANKLIB_ADARANK = {"update": "multiplicative", "enqueue": True, "max_consecutive": 5, "tolerance": -0.002}
GRID = {"ldd": ("alpha", (0.2, 0.5, 1.0)), "logdd": ("lam", (0.5, 1.0, 3.0)), "logitdd": ("beta", (0.5, 1.0, 2.0))}
PAPER_PARAM = {"ldd": 0.2, "logdd": 3.0, "logitdd": 0.5}

#: LETOR 3.0's published OHSUMED baselines (QueryLevelNorm, mean over the five folds, chosen on
#: validation MAP). Secondary source: a transcription of the baseline page's OHSUMED rows in a
#: comment of honbaa/RankBCA (RankBCA_OHSUMED_Thread_Cross/src/test/ParallelRankBCAClient.java),
#: whose MQ2007 rows match Liu's book (Table 11.9) value for value; None where no source was
#: found (see docs/studies/replication.md)
LETOR_BASELINES: dict[str, dict[str, float] | None] = {
    "RankBoost": {"ndcg@1": 0.4632, "ndcg@3": 0.4555, "ndcg@5": 0.4494, "ndcg@10": 0.4302, "map": 0.4411},
    "AdaRank-MAP": {"ndcg@1": 0.5388, "ndcg@3": 0.4682, "ndcg@5": 0.4613, "ndcg@10": 0.4429, "map": 0.4487},
    "AdaRank-NDCG": None,
}
#: which of our rows stands for each published baseline
BASELINE_ROW = {"RankBoost": "RankBoost Rb-c (RankLib)", "AdaRank-MAP": "AdaRank.MAP (paper)",
                "AdaRank-NDCG": "AdaRank.NDCG@5 (paper)"}

#: (claim, paper, method, baseline, metrics): each a paired test over the pooled test queries
CLAIMS = (
    ("MPBoost: LDD beats BINARY", "MPBoost", "MPBoost.LDD alpha 0.2", "MPBoost.BINARY", ("ndcg@1", "ndcg@5", "ndcg@10")),
    ("MPBoost: LOGDD beats BINARY", "MPBoost", "MPBoost.LOGDD lambda 3", "MPBoost.BINARY", ("ndcg@1", "ndcg@5", "ndcg@10")),
    ("MPBoost: LOGITDD beats BINARY", "MPBoost", "MPBoost.LOGITDD beta 0.5", "MPBoost.BINARY",
     ("ndcg@1", "ndcg@5", "ndcg@10")),
    ("MPBoost: LDD (tuned) beats BINARY", "MPBoost", "MPBoost.LDD tuned", "MPBoost.BINARY", ("ndcg@1", "ndcg@5", "ndcg@10")),
    ("MPBoost: LOGDD (tuned) beats BINARY", "MPBoost", "MPBoost.LOGDD tuned", "MPBoost.BINARY",
     ("ndcg@1", "ndcg@5", "ndcg@10")),
    ("MPBoost: LOGITDD (tuned) beats BINARY", "MPBoost", "MPBoost.LOGITDD tuned", "MPBoost.BINARY",
     ("ndcg@1", "ndcg@5", "ndcg@10")),
    ("MPBoost: BINARY beats RankBoost", "MPBoost", "MPBoost.BINARY", "RankBoost Rb-c (RankLib)",
     ("ndcg@1", "ndcg@5", "ndcg@10")),
    ("MPBoost: LOGITDD beats AdaRank-NDCG", "MPBoost", "MPBoost.LOGITDD tuned", "AdaRank.NDCG@5 (paper)",
     ("ndcg@1", "ndcg@5", "ndcg@10")),
    ("NDCG_Boost beats RankBoost", "NDCG_Boost", "NDCG_Boost T=100", "RankBoost Rb-c (RankLib)",
     ("ndcg@1", "ndcg@3", "ndcg@10")),
    ("NDCG_Boost beats AdaRank-NDCG", "NDCG_Boost", "NDCG_Boost T=100", "AdaRank.NDCG@5 (paper)",
     ("ndcg@1", "ndcg@3", "ndcg@10")),
    ("NDCG_Boost beats AdaRank-MAP", "NDCG_Boost", "NDCG_Boost T=100", "AdaRank.MAP (paper)",
     ("ndcg@1", "ndcg@3", "ndcg@10")),
    ("AdaRank.MAP beats RankBoost in MAP", "AdaRank", "AdaRank.MAP (paper)", "RankBoost Rb-c (RankLib)", ("map",)),
    ("AdaRank.NDCG beats RankBoost in NDCG@5", "AdaRank", "AdaRank.NDCG@5 (paper)", "RankBoost Rb-c (RankLib)",
     ("ndcg@5",)),
    ("AdaRank.MAP (RankLib) beats RankBoost in MAP", "AdaRank", "AdaRank.MAP (RankLib)", "RankBoost Rb-c (RankLib)",
     ("map",)),
    ("AdaRank.NDCG (RankLib) beats RankBoost in NDCG@5", "AdaRank", "AdaRank.NDCG@5 (RankLib)",
     "RankBoost Rb-c (RankLib)", ("ndcg@5",)),
)

Fit = Callable[[], Any]


def methods(rounds: int, grid: bool) -> list[tuple[str, str, list[tuple[str, Fit]], str | None]]:
    """``(label, protocol, [(parameter label, factory), ...], selection metric)`` per row; a row
    with several factories picks the factory and the round together on validation; selection
    ``None`` takes the last round (the paper's fixed T)."""
    def rb(variant: str, **kw: Any) -> Fit:
        return lambda: RankBoost(variant=variant, n_rounds=rounds, random_state=0, **kw)

    def ada(measure: str, **kw: Any) -> Fit:
        return lambda: AdaRank(measure=measure, n_rounds=ADARANK_ROUNDS, **kw)

    def mp(ddf: str, **kw: Any) -> Fit:
        return lambda: MPBoost(ddf=ddf, n_rounds=rounds, random_state=0, **kw)

    rows: list[tuple[str, str, list[tuple[str, Fit]], str | None]] = [
        ("RankBoost Rb-c (RankLib)", "LETOR", [("", rb("rb-c", thresholds="ranklib"))], "map"),
        ("RankBoost Rb-d", "LETOR", [("", rb("rb-d"))], "map"),
        ("RankBoost+", "LETOR", [("", rb("rankboost+"))], "map"),
        ("AdaRank.MAP (paper)", "LETOR", [("", ada("map"))], "map"),
        ("AdaRank.NDCG@5 (paper)", "LETOR", [("", ada("ndcg@5"))], "map"),
        ("AdaRank.MAP (RankLib)", "LETOR", [("", ada("map", **RANKLIB_ADARANK))], "map"),
        ("AdaRank.NDCG@5 (RankLib)", "LETOR", [("", ada("ndcg@5", **RANKLIB_ADARANK))], "map"),
        ("MPBoost.BINARY", "MPBoost", [("", mp("binary"))], "ndcg@5"),
    ]
    names = {"ldd": ("LDD", "alpha"), "logdd": ("LOGDD", "lambda"), "logitdd": ("LOGITDD", "beta")}
    for ddf, (key, values) in GRID.items():
        up, word = names[ddf]
        p = PAPER_PARAM[ddf]
        rows.append((f"MPBoost.{up} {word} {p:g}", "MPBoost", [(f"{word} {p:g}", mp(ddf, **{key: p}))], "ndcg@5"))
    if grid:
        for ddf, (key, values) in GRID.items():
            up, word = names[ddf]
            rows.append((f"MPBoost.{up} tuned", "MPBoost",
                         [(f"{word} {v:g}", mp(ddf, **{key: v})) for v in values], "ndcg@5"))
    rows.append(("NDCG_Boost T=100", "NDCG_Boost",
                 [("", lambda: NDCGBoost(n_rounds=PAPER_ROUNDS, random_state=0))], None))
    rows.append(("NDCG_Boost T on vali MAP", "LETOR",
                 [("", lambda: NDCGBoost(n_rounds=rounds, random_state=0))], "map"))
    return rows


def fit_staged(make: Fit, fold: C.Fold) -> tuple[list[np.ndarray], list[np.ndarray], float]:
    train, vali, test = fold
    t0 = time.perf_counter()
    model = make().fit(train.X, train.y, group=np.diff(train.group_ptr))
    secs = time.perf_counter() - t0
    return list(model.staged_predict(vali.X)), list(model.staged_predict(test.X)), secs


def run_row(candidates: list[tuple[str, Fit]], select: str | None, fold: C.Fold,
            cache: dict[str, tuple[list[np.ndarray], list[np.ndarray], float]]) -> dict[str, Any]:
    """Fit every candidate (reusing fits another row made), choose parameter and round on vali."""
    _, vali, test = fold
    best: tuple[float, int, str] | None = None
    secs = 0.0
    for plabel, make in candidates:
        key = repr(make().get_params())
        if key not in cache:
            cache[key] = fit_staged(make, fold)
        vs, ts, s = cache[key]
        secs += s
        if not ts:
            continue
        if select is None:
            cand = (0.0, len(ts), plabel)
        else:
            curve = [C.score(select, v, vali) for v in vs]
            r = C.best_round(curve)
            cand = (curve[r - 1], r, plabel)
        if best is None or cand[0] > best[0]:
            best = (cand[0], cand[1], plabel)
            best_ts = ts
    if best is None:  # no round at all: every score 0
        scores, r, plabel, vbest = np.zeros(test.X.shape[0]), 0, "", 0.0
    else:
        vbest, r, plabel = best
        scores = best_ts[r - 1]
    row: dict[str, Any] = {"round": r, "param": plabel, "vali": vbest, "seconds": secs}
    row.update({m: float(C.score(m, scores, test)) for m in TEST_METRICS})
    row["per_query"] = {m: C.score(m, scores, test, per_query=True) for m in SHOWN}
    return row


def claim_tests(res: dict[str, Any]) -> list[dict[str, Any]]:
    """Each claim of :data:`CLAIMS` whose rows ran: per metric the paired tests over the pooled
    test queries and the number of folds the method wins."""
    out = []
    for claim, paper, method, base, ms in CLAIMS:
        if method not in res or base not in res:
            continue
        tests = {}
        for m in ms:
            a = np.concatenate([r["per_query"][m] for r in res[method]["folds"]])
            b = np.concatenate([r["per_query"][m] for r in res[base]["folds"]])
            t = paired_tests(a, b)
            won = sum(x[m] > y[m] for x, y in zip(res[method]["folds"], res[base]["folds"]))
            tests[m] = {"mean_diff": t.mean_diff, "n": t.n, "t_pvalue": t.t_pvalue,
                        "wilcoxon_pvalue": t.wilcoxon_pvalue, "folds_won": int(won)}
        out.append({"claim": claim, "paper": paper, "method": method, "baseline": base, "tests": tests})
    return out


def summarize(payload: dict[str, Any]) -> str:
    res = payload["results"]
    folds = payload["folds"]
    out = [f"OHSUMED, LETOR 3.0 conventions; folds {folds}; test values at the chosen round, "
           f"mean±std over folds", ""]
    head = f"{'method':28s} {'protocol':10s} " + " ".join(f"{m.upper():>15s}" for m in SHOWN) + "  rounds (param) per fold"
    out.append(head)
    for label, info in res.items():
        rows = info["folds"]
        cells = [C.mean_std(r[m] for r in rows) for m in SHOWN]
        rounds = "/".join(f"{r['round']}" + (f" ({r['param']})" if r["param"] and info["n_candidates"] > 1 else "")
                          for r in rows)
        out.append(f"{label:28s} {info['protocol']:10s} " + " ".join(f"{c:>15s}" for c in cells) + f"  {rounds}")
    out += ["", "Test NDCG@1..10 (mean over folds):",
            f"{'method':28s} " + " ".join(f"{'@' + str(k):>7s}" for k in range(1, 11))]
    for label, info in res.items():
        out.append(f"{label:28s} " + " ".join(f"{np.mean([r[f'ndcg@{k}'] for r in info['folds']]):7.4f}"
                                              for k in range(1, 11)))
    out += ["", "Test NDCG@10 per fold:"]
    out.append(C.fold_table({label: [r["ndcg@10"] for r in info["folds"]] for label, info in res.items()}, folds, 28))
    out += ["", "Against LETOR 3.0's published baselines (ours - published, mean over folds; published values from a "
            "secondary source, see docs/studies/replication.md):"]
    for name, row in BASELINE_ROW.items():
        pub = LETOR_BASELINES.get(name)  # published constants: a stored run may predate them
        if row not in res:
            continue
        ours = {m: np.mean([r[m] for r in res[row]["folds"]]) for m in SHOWN}
        if pub is None:
            out.append(f"  {name:14s} (ours: {row}) published values not available: "
                       + ", ".join(f"{m.upper()} {ours[m]:.4f}" for m in SHOWN))
        else:
            out.append(f"  {name:14s} (ours: {row}) " + ", ".join(
                f"{m.upper()} {ours[m]:.4f} vs {pub[m]:.4f} ({ours[m] - pub[m]:+.4f})" for m in SHOWN if m in pub))
    out += ["", "Claims, paired over the test queries of all folds (method - baseline; t-test / Wilcoxon p):"]
    for c in payload["claims"]:
        out.append(f"  {c['claim']}: {c['method']} vs {c['baseline']}")
        out += [f"      {m.upper()} {t['mean_diff']:+.4f} (folds {t['folds_won']}/{len(folds)}, n={t['n']}, "
                f"p={t['t_pvalue']:.3g}/{t['wilcoxon_pvalue']:.3g})" for m, t in c["tests"].items()]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = C.parser(__doc__)
    ap.add_argument("--rounds", type=int, default=300, help="rounds of the boosters chosen on vali (default 300)")
    ap.add_argument("--no-grid", action="store_true", help="skip the tuned MPBoost DDF rows")
    args, saved = C.start(ap, argv, lambda s: print(summarize(s)))
    if saved is not None:
        return saved
    if args.rounds < 1:
        raise SystemExit(f"--rounds must be at least 1, got {args.rounds}")
    rounds = 20 if args.tiny else args.rounds
    numbers, folds, what = C.load_folds(args)
    print(f"OHSUMED replication on {what}; folds {numbers}; up to {rounds} rounds; {C.threads_note()}", flush=True)
    rows = methods(rounds, grid=not args.no_grid)
    results: dict[str, Any] = {label: {"protocol": proto, "select": sel, "n_candidates": len(cands), "folds": []}
                               for label, proto, cands, sel in rows}
    t0 = time.perf_counter()
    for f, fold in zip(numbers, folds):
        cache: dict[str, Any] = {}
        for label, _proto, cands, sel in rows:
            row = run_row(cands, sel, fold, cache)
            results[label]["folds"].append(row)
            print(f"Fold{f} {label:28s} round {row['round']:4d} {row['param']:12s} test NDCG@10 {row['ndcg@10']:.4f} "
                  f"MAP {row['map']:.4f}", flush=True)
    payload = {"data": what, "folds": numbers, "rounds": rounds, "discount": C.DISCOUNT,
               "conventions": "NDCG gain 2^r-1, discount " + C.DISCOUNT + ", all-0 queries 0, ties " + C.TIES + ", "
                              "MAP with labels >= 1 relevant",
               "letor_baselines": LETOR_BASELINES, "seconds": time.perf_counter() - t0, "results": results,
               "claims": claim_tests(results)}
    payload = _jsonable(payload)
    print()
    print(summarize(payload))
    C.write_json(args.out, "ohsumed_letor.json", payload)
    return payload


def _jsonable(payload: dict[str, Any]) -> dict[str, Any]:
    """The payload as its JSON reads back (per-query arrays as lists), so both paths print alike."""
    import json

    return json.loads(json.dumps(payload, default=C._jsonable))


if __name__ == "__main__":
    main()
