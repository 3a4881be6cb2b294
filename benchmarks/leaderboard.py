"""The loss leaderboard: every loss of the catalogue tuned alike against tuned ``lambdarank`` on three data
sets, from their ``boostplug compare --out`` folders, written to docs/studies/leaderboard.md with a forest
plot per data set in docs/img/.

Usage, from the project root:

    python benchmarks/leaderboard.py                    # the page and the plots, from the results folders
    python benchmarks/leaderboard.py --command mq2008   # the study's compare command (mq2008, ohsumed, trees)
    python benchmarks/leaderboard.py --check            # what each folder holds, without writing

The studies' folders are docs/results/leaderboard/<set>/ (each a ``compare --out`` folder). The page says
which runs are missing or failed; folders of different boostplug versions or protocols are refused, naming
the difference. The page is a function of the folders: the same folders give the same page, byte for byte.
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results" / "leaderboard"
PAGE = ROOT / "docs" / "studies" / "leaderboard.md"
IMG = ROOT / "docs" / "img"
BASELINE = "lambdarank"
EVERY_PAIR = "lambdarank[lambdarank_truncation_level=2147483647]"
ALPHA = 0.05

#: Every loss that trains on LightGBM trees (compare --methods list, the -plugin reproductions of built-ins left
#: out: they equal their built-in), the built-ins, CatBoost's own losses, the reference boosters the studies run
#: and the two linear baselines.
LIGHTGBM_LOSSES = (
    "qbrank", "mpboost-binary", "mpboost-ldd", "mpboost-logdd", "mpboost-logitdd", "ndcg_boost", "rankboost-loss",
    "yetirank", "yetiloss", "listnet", "ranknet", "ndcg_loss1", "ndcg_loss2", "ndcg_loss2pp", "approx_ndcg",
    "approx_mrr", "listmle", "lambdamart_map", "lambdamart_err", "lambdamart_mrr", "lambdamart_rbp", "approx_ap",
    "neural_ndcg", "st_listnet", "rank_cosine")
METHODS = (BASELINE, EVERY_PAIR, "rank_xendcg", "regression", *LIGHTGBM_LOSSES, "xgb-rank:ndcg", "xgb-rank:pairwise",
           "cb-yetirank", "cb-querysoftmax", "cb-lambdamart-ndcg", "rb-c", "adarank-ndcg", "linear-ridge",
           "linear-ranksvm")
METRICS = "ndcg@1,ndcg@3,ndcg@5,ndcg@10,map,err@10,mrr"


@dataclass(frozen=True)
class Study:
    """One data set's study: its compare flags besides the shared ones."""
    key: str
    title: str
    made: str  # what the data are and how they were made (one sentence)
    data: str
    flags: tuple[str, ...]
    tune: int

    def command(self, out: str, scheduler: str = "local:2", data: str | None = None) -> list[str]:
        """The ``boostplug compare`` command of this study, into ``out`` (``data``: where the set is here)."""
        return ["boostplug", "compare", "--data", data or self.data, *self.flags, "--methods", ",".join(METHODS),
                "--metrics", METRICS, "--select", "ndcg@10", "--tune", str(self.tune), "--seed", "0",
                "--baseline", BASELINE, "--scheduler", scheduler, "--no-plots", "--out", out]


STUDIES = (
    Study("mq2008", "MQ2008", "LETOR 4.0's MQ2008 (784 queries, 15,211 documents, 46 features, labels 0-2; "
          "TREC 2008 Million Query judgments on GOV2), its five official folds", "../shared/data/MQ2008",
          ("--layout", "letor4"), 20),
    Study("ohsumed", "OHSUMED", "LETOR 3.0's OHSUMED, QueryLevelNorm (106 queries, 16,140 documents, 45 "
          "features, labels 0-2), its five official folds", "../shared/data/OHSUMED", ("--layout", "letor3"), 20),
    Study("trees", "MSLR-shaped trees set", "synthetic: MSLR-WEB10K's shape at scale 0.01 (37,711 documents, "
          "315 queries, 136 features) with labels from a random ensemble of depth-3 trees "
          "(`python benchmarks/mslr_shaped.py --work W --scale 0.01 --stages data`), folds 1-3 of a query-level "
          "5-fold split", "W/mslr_shaped.txt", ("--kfold", "5", "--folds", "1,2,3"), 10),
)

#: Settings that must agree across the three folders for one page (the protocol); the data, folds and trials
#: differ by design and are stated per set.
PROTOCOL = ("rounds", "early_stopping_metric", "seed", "tree_params", "threads")


@dataclass
class Folder:
    """What one study's folder holds, read once."""
    study: Study
    path: Path
    payload: dict[str, Any]
    summary: dict[str, dict[str, str]]
    expected: list[int]
    missing: dict[str, list[int]] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)


def read_folder(study: Study, path: Path) -> Folder | None:
    """The folder's results (``None``: the study has not run yet)."""
    if not (path / "results.json").is_file():
        return None
    payload = json.loads((path / "results.json").read_text(encoding="utf-8"))
    with open(path / "summary.csv", newline="", encoding="utf-8") as f:
        summary = {r["method"]: r for r in csv.DictReader(f)}
    folds = payload["settings"].get("folds")
    done = payload.get("folds_completed", {})
    offset = _offset(payload)
    expected = ([int(x) for x in str(folds).split(",")] if folds not in (None, "", "all")
                else sorted({f for v in done.values() for f in v} | {_fold(r, offset) for r in payload["results"]}))
    folder = Folder(study, path, payload, summary, expected)
    for m in METHODS:
        lack = [f for f in expected if f not in done.get(m, [])]
        if lack:
            folder.missing[m] = lack
    for fail in payload.get("failures", []):
        folder.failed.setdefault(fail.get("method", "?"), f"fold {_fold(fail, offset)}: {_one_line(fail.get('error', ''))}")
    return folder


def _fold(entry: dict[str, Any], offset: int = 0) -> int:
    """A run's fold, numbered from 1 (``offset`` 1 for a results.json that numbered its runs from 0)."""
    return int(entry.get("fold", 0)) + offset


def _offset(payload: dict[str, Any]) -> int:
    """1 where the file numbers runs' folds from 0 (as results.json once did), else 0."""
    return int(any(int(e.get("fold", 1)) == 0 for e in [*payload.get("results", []), *payload.get("failures", [])]))


def _one_line(text: str, most: int = 120) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= most else text[:most - 3] + "..."


def check_together(folders: list[Folder]) -> None:
    """Refuse folders of different boostplug versions or protocols, naming the difference."""
    if not folders:
        return
    first = folders[0]

    def of(f: Folder) -> dict[str, Any]:
        s, p = f.payload["settings"], f.payload.get("provenance", {})
        return {"boostplug": p.get("versions", {}).get("boostplug"), "conventions": f.payload.get("conventions"),
                "baseline": f.payload.get("baseline"), **{k: s.get(k) for k in PROTOCOL}}

    want = of(first)
    for f in folders[1:]:
        got = of(f)
        for k in want:
            if got[k] != want[k]:
                raise SystemExit(f"leaderboard: {f.path} and {first.path} differ in {k}: {got[k]!r} against "
                                 f"{want[k]!r}; one page needs one commit and one protocol (rerun the study, or "
                                 "--resume it from the same commit)")


def holm(pvalues: dict[str, float]) -> dict[str, float]:
    """Holm's step-down adjusted p-values (monotone, capped at 1); NaN stays NaN and counts no test."""
    tested = sorted((p, m) for m, p in pvalues.items() if not math.isnan(p))
    out, running, n = {m: math.nan for m in pvalues}, 0.0, len(tested)
    for i, (p, m) in enumerate(tested):
        running = max(running, min(1.0, (n - i) * p))
        out[m] = running
    return out


def _float(row: dict[str, str], key: str) -> float:
    value = row.get(key, "")
    return float(value) if value not in ("", None) else math.nan


@dataclass
class Row:
    method: str
    ndcg: float
    map: float
    diff: float
    low: float
    high: float
    p: float
    p_holm: float
    verdict: str  # "above", "below", "not different", "baseline", "failed", "no test"
    train: float  # training seconds relative to the baseline's
    tune: float  # search seconds relative to the baseline's
    pairs: str
    note: str = ""


def _tuning_seconds(payload: dict[str, Any]) -> dict[str, float]:
    total: dict[str, float] = {}
    for r in payload.get("results", []):
        total[r["method"]] = total.get(r["method"], 0.0) + float(((r.get("info") or {}).get("tuning") or {})
                                                                 .get("seconds", r.get("seconds", 0.0)))
    return total


def _pairs(payload: dict[str, Any]) -> dict[str, str]:
    """The pairs each loss used, per fold where --tune chose them (compare's own rule)."""
    from boostplug.compare.methods import METHODS as CATALOGUE, pair_rule, split_spec

    rules: dict[str, dict[int, str]] = {}
    offset = _offset(payload)
    for r in payload.get("results", []):
        base, given = split_spec(r["method"], CATALOGUE)
        if base not in CATALOGUE:
            continue
        chosen = ((r.get("info") or {}).get("tuning") or {}).get("chosen", {})
        rules.setdefault(r["method"], {})[_fold(r, offset)] = pair_rule({**CATALOGUE[base].parameters(), **given, **chosen})
    shown = {}
    for m, by_fold in rules.items():
        values = [by_fold[f] for f in sorted(by_fold)]
        shown[m] = values[0] if len(set(values)) == 1 else "/".join(values)
    return shown


def rows_of(folder: Folder) -> list[Row]:
    """The table's rows, the baseline first, then by dNDCG@10 (largest first), failed methods last."""
    s, base = folder.summary, folder.summary.get(BASELINE)
    others = [m for m in s if m != BASELINE]
    adjusted = holm({m: _float(s[m], "p_ttest") for m in others})
    tune, pairs = _tuning_seconds(folder.payload), _pairs(folder.payload)
    base_train = _float(base, "seconds_mean") if base else math.nan
    rows = []
    for m in s:
        r = s[m]
        d, p = _float(r, "dndcg@10"), _float(r, "p_ttest")
        if m == BASELINE:
            verdict = "baseline"
        elif math.isnan(p):
            verdict = "no test"
        elif adjusted[m] < ALPHA:
            verdict = "above" if d > 0 else "below"
        else:
            verdict = "not different"
        note = ""
        if m in folder.missing:
            note = f"folds {','.join(map(str, folder.missing[m]))} missing"
        rows.append(Row(m, _float(r, "ndcg@10_mean"), _float(r, "map_mean"), d, _float(r, "dndcg@10_ci_low"),
                        _float(r, "dndcg@10_ci_high"), p, adjusted.get(m, math.nan), verdict,
                        _float(r, "seconds_mean") / base_train, tune.get(m, math.nan) / tune.get(BASELINE, math.nan),
                        pairs.get(m, ""), note))
    for m in METHODS:
        if m not in s:
            reason = folder.failed.get(m, "not run" if m not in folder.missing or len(folder.missing[m]) ==
                                       len(folder.expected) else "")
            rows.append(Row(m, *[math.nan] * 7, "failed" if m in folder.failed else "missing", math.nan,
                            math.nan, "", reason))
    key = {"baseline": 0, "failed": 2, "missing": 2}
    return sorted(rows, key=lambda r: (key.get(r.verdict, 1), -r.diff if not math.isnan(r.diff) else math.inf,
                                       r.method))


def _f(x: float, fmt: str) -> str:
    return "" if math.isnan(x) else format(x, fmt)


def _interval_words(r: Row) -> str:
    """The interval as what it rules out."""
    if math.isnan(r.low):
        return ""
    return f"[{r.low:+.4f}, {r.high:+.4f}]"


def table(folder: Folder, rows: list[Row]) -> str:
    lines = ["| method | NDCG@10 | MAP | dNDCG@10 | 95% interval | p (t) | Holm | train × | tune × | pairs |",
             "|---|---:|---:|---:|---|---:|---|---:|---:|---|"]
    for r in rows:
        verdict = {"above": "**above**", "below": "below", "baseline": "baseline",
                   "not different": "not different"}.get(r.verdict, r.verdict)
        if r.note:
            verdict += f" ({r.note})"
        lines.append(f"| `{r.method}` | {_f(r.ndcg, '.4f')} | {_f(r.map, '.4f')} | "
                     f"{'' if r.verdict == 'baseline' else _f(r.diff, '+.4f')} | "
                     f"{'' if r.verdict == 'baseline' else _interval_words(r)} | "
                     f"{'' if r.verdict == 'baseline' else _f(r.p, '.2g')} | {verdict} | {_f(r.train, '.2f')} | "
                     f"{_f(r.tune, '.2f')} | {r.pairs} |")
    return "\n".join(lines)


def forest_plot(study: Study, rows: list[Row], path: Path) -> None:
    """dNDCG@10 with its 95% interval per method, sorted, the zero line, Holm's verdict by colour."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = [r for r in rows if r.verdict not in ("baseline", "failed", "missing") and not math.isnan(r.diff)]
    shown.sort(key=lambda r: r.diff)
    colours = {"above": "tab:green", "below": "tab:red", "not different": "tab:gray", "no test": "tab:gray"}
    # the scale of the trees' methods: a linear baseline far below is drawn at the edge, its value written
    inside = [r for r in shown if not r.method.startswith("linear-")] or shown
    lo = min(min(r.low, r.diff) for r in inside if not math.isnan(r.low)) if inside else -0.01
    hi = max(max(r.high, r.diff) for r in inside if not math.isnan(r.high)) if inside else 0.01
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    pad = 0.08 * (hi - lo or 0.01)
    lo, hi = lo - pad, hi + pad
    fig, ax = plt.subplots(figsize=(7.5, 0.26 * len(shown) + 1.4))
    for y, r in enumerate(shown):
        c = colours[r.verdict]
        if lo <= r.diff <= hi:
            if not math.isnan(r.low):
                ax.plot([max(r.low, lo), min(r.high, hi)], [y, y], color=c, lw=1.6)
            ax.plot([r.diff], [y], "o", color=c, ms=4.5)
        else:
            edge = lo if r.diff < lo else hi
            ax.plot([edge], [y], "<" if r.diff < lo else ">", color=c, ms=6)
            ax.annotate(f"{r.diff:+.3f} (off scale)", (edge, y), xytext=(8 if r.diff < lo else -8, 0),
                        textcoords="offset points", va="center", ha="left" if r.diff < lo else "right",
                        fontsize=7, color=c)
    ax.set_xlim(lo, hi)
    ax.axvline(0.0, color="black", lw=0.8)
    ax.set_yticks(range(len(shown)), [r.method.replace(EVERY_PAIR, "lambdarank (every pair)") for r in shown],
                  fontsize=7.5)
    ax.set_xlabel(f"test NDCG@10 minus tuned {BASELINE}'s (95% bootstrap interval)")
    ax.set_title(f"{study.title}: green above, red below {BASELINE} after Holm's correction", fontsize=9)
    ax.grid(axis="x", lw=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110, metadata={"Software": None})
    plt.close(fig)


def _span(folder: Folder) -> str:
    runs = folder.payload.get("results", [])
    trials = sum(len(((r.get("info") or {}).get("tuning") or {}).get("trials", [])) or 1 for r in runs)
    prov = folder.payload.get("provenance", {})
    return (f"{len(folder.summary)} methods x {len(folder.expected)} folds, {len(runs)} runs, {trials} trainings "
            f"(`--tune {folder.study.tune}`), boostplug {prov.get('versions', {}).get('boostplug', '?')}")


def page(folders: dict[str, Folder | None]) -> tuple[str, dict[str, list[Row]]]:
    present = [f for f in folders.values() if f is not None]
    check_together(present)
    all_rows = {k: rows_of(f) for k, f in folders.items() if f is not None}
    out = ["# The loss leaderboard: every loss tuned alike against tuned `lambdarank`", ""]
    out += [_lead(folders, all_rows), ""]
    if present:
        conv = present[0].payload.get("conventions", {})
        out += ["## Conventions", "",
                f"Every set under one protocol: NDCG gain `{conv.get('gain')}`, discount `{conv.get('discount')}`, "
                f"ties `{conv.get('ties')}`; a query without a relevant document scores {conv.get('empty')} in "
                "NDCG and MAP for every method (compare's default, `--empty 1`), so it dilutes every difference "
                "without deciding any (`--empty skip` leaves such queries out). Each method's parameters were "
                "searched by `--tune` (Optuna TPE, trial 0 its defaults; the built-ins' truncation and sigmoid "
                "included) on each fold's validation part, its rounds (up to "
                f"{present[0].payload['settings'].get('rounds')}) chosen on validation NDCG@10; the test "
                "queries were never seen. dNDCG@10 is the paired difference to tuned `lambdarank` over the test "
                "queries of all folds, its interval a paired percentile bootstrap (2,000 resamples within folds), "
                "p the paired t-test's, *Holm* the verdict after Holm's correction over the set's methods at "
                f"{ALPHA}. *train ×*: the chosen model's training time over `lambdarank`'s; *tune ×*: the whole "
                "search's. *pairs*: the pairs each loss used (per fold where the search chose them).", ""]
    for study in STUDIES:
        f = folders.get(study.key)
        out += [f"## {study.title}", "", f"Data: {study.made}.", ""]
        if f is None:
            out += ["Not run yet: its folder `docs/results/leaderboard/" + study.key + "/` holds no results.json.",
                    ""]
            continue
        out += [f"{_span(f)}. Forest plot: [leaderboard_{study.key}.png](../img/leaderboard_{study.key}.png).", ""]
        if f.missing:
            whole = [m for m, v in f.missing.items() if len(v) == len(f.expected)]
            part = [f"`{m}` lacks folds {','.join(map(str, v))}" for m, v in f.missing.items() if m not in whole]
            out += ["**Incomplete**: " + "; ".join(part + [f"not run at all: {', '.join(f'`{m}`' for m in whole)}"]
                                                   * bool(whole)) + ".", ""]
        if f.payload.get("interrupted"):
            out += ["The study was interrupted; `--resume` continues it.", ""]
        out += [table(f, all_rows[study.key]), ""]
        if f.failed:
            out += ["Failed runs: " + "; ".join(f"`{m}` {why}" for m, why in f.failed.items()), ""]
    out += ["## Each loss across the sets", "", summary_table(all_rows), ""]
    return "\n".join(out), all_rows


def summary_table(all_rows: dict[str, list[Row]]) -> str:
    keys = [s.key for s in STUDIES]
    lines = ["| method | " + " | ".join(s.title for s in STUDIES) + " | in all |", "|---|" + "---|" * (len(keys) + 1)]
    for m in METHODS:
        if m == BASELINE:
            continue
        cells = []
        for k in keys:
            r = next((r for r in all_rows.get(k, []) if r.method == m), None)
            cells.append("" if r is None else r.verdict if r.verdict in ("failed", "missing", "no test") else
                         f"{r.verdict} ({r.diff:+.4f})")
        verdicts = [next((r.verdict for r in all_rows.get(k, []) if r.method == m), None) for k in keys]
        counted = [v for v in verdicts if v in ("above", "below", "not different")]
        total = (f"{counted.count('above')} above, {counted.count('below')} below, "
                 f"{counted.count('not different')} not different" if counted else "")
        lines.append(f"| `{m}` | " + " | ".join(cells) + f" | {total} |")
    return "\n".join(lines)


def _lead(folders: dict[str, Folder | None], all_rows: dict[str, list[Row]]) -> str:
    """The first paragraph, from the tables only."""
    ran = [s for s in STUDIES if folders.get(s.key) is not None]
    if not ran:
        return "No study has run yet."
    worth, never = {}, []
    for m in METHODS[1:]:
        v = {s.key: next((r for r in all_rows[s.key] if r.method == m), None) for s in ran}
        above = [s.title for s in ran if v[s.key] is not None and v[s.key].verdict == "above"]
        if above:
            worth[m] = above
        elif all(v[s.key] is not None and v[s.key].verdict == "below" for s in ran):
            never.append(m)
    trainings = sum(int(_span(folders[s.key]).split(" trainings")[0].rsplit(" ", 1)[1]) for s in ran)
    text = ("Which losses are worth a trial on data like these? "
            + ("; ".join(f"`{m}` on {', '.join(t)}" for m, t in worth.items()) + " beat tuned `lambdarank` after "
               "Holm's correction" if worth else "None beat tuned `lambdarank` in test NDCG@10 after Holm's "
               "correction on any set")
            + ". " + (f"Below it on every set: {', '.join(f'`{m}`' for m in never)}. " if never else "")
            + f"The fair verdict cost {trainings:,} trainings"
            + f" on {len(ran)} of {len(STUDIES)} sets.")
    missing = [s.title for s in STUDIES if folders.get(s.key) is None]
    if missing:
        text += f" Not run yet: {', '.join(missing)}."
    return text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--command", choices=[s.key for s in STUDIES], help="print the study's compare command")
    ap.add_argument("--out", help="with --command: the results folder (default docs/results/leaderboard/SET)")
    ap.add_argument("--scheduler", default="local:2", help="with --command: where it runs (default local:2)")
    ap.add_argument("--data", help="with --command: where the set is (default: the study's own path)")
    ap.add_argument("--results", type=Path, default=RESULTS, help=argparse.SUPPRESS)
    ap.add_argument("--page", type=Path, default=PAGE, help=argparse.SUPPRESS)
    ap.add_argument("--img", type=Path, default=IMG, help=argparse.SUPPRESS)
    ap.add_argument("--check", action="store_true", help="say what each folder holds; write nothing")
    args = ap.parse_args(argv)
    if args.command:
        study = next(s for s in STUDIES if s.key == args.command)
        out = args.out or str((args.results / study.key).relative_to(ROOT) if args.results.is_relative_to(ROOT)
                              else args.results / study.key)
        print(shlex.join(study.command(out, args.scheduler, args.data)))
        return 0
    sys.path.insert(0, str(ROOT))
    folders = {s.key: read_folder(s, args.results / s.key) for s in STUDIES}
    text, all_rows = page(folders)
    if args.check:
        for k, f in folders.items():
            print(f"{k}: " + ("not run" if f is None else _span(f) + (f"; missing {f.missing}" if f.missing else "")))
        return 0
    args.page.parent.mkdir(parents=True, exist_ok=True)
    args.page.write_text(text, encoding="utf-8")
    for s in STUDIES:
        if s.key in all_rows:
            forest_plot(s, all_rows[s.key], args.img / f"leaderboard_{s.key}.png")
    print(f"wrote {args.page}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
