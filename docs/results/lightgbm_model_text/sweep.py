"""What plain LightGBM does with every cut point of the small real model files of
tests/models/test_lightgbm_model_text.py, and with that file's damage cases: loads, refuses with
its own error, dies of a signal, or hangs. No boostplug check runs before LightGBM here.

Run: ``PYTHONPATH=. OMP_NUM_THREADS=1 python docs/results/lightgbm_model_text/sweep.py``.

One fork server imports LightGBM once; each forked child loads ``lgb.Booster(model_str=...)``
case after case until one kills it (a signal, or SIGALRM after 20 s: a hang), then the server
forks the next child from the case after it. Every case is one string loaded in memory (a file
is read into the same parser). For a cut that loads, it also says whether boostplug's objective
record is still whole in the text (``record_from_text`` gives the full text's record).
"""

from __future__ import annotations

import collections
import json
import os
import signal
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests" / "models"))
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests"))


def cases() -> list[tuple[str, str]]:
    import test_lightgbm_model_text as t

    with tempfile.TemporaryDirectory() as tmp:
        ranking = t._ranking_model(Path(tmp) / "ranking.txt")
    texts = {"ranking": ranking, "categorical_linear": t._categorical_linear_model().model_to_string(),
             "earlier": t._earlier_layout(ranking)}
    out = [(f"cut {name} {c}", text[:c]) for name, text in texts.items() for c in range(len(text) + 1)]
    out += [(f"damage {name}", mutate(ranking)) for name, mutate, _ in t.DAMAGE]
    cat = texts["categorical_linear"]
    for old, new in [("threshold=-0.32014606995311679 0 1", "threshold=-0.32014606995311679 0 2"),
                     ("cat_boundaries=0 1 2", "cat_boundaries=0 1 3"),
                     ("cat_threshold=9 36", "cat_threshold=9 99999999999"),
                     ("num_features=0 0 0 0", "num_features=0 0 0 1")]:
        assert old in cat, old
        out.append((f"damage categories {old.split('=')[0]}", cat.replace(old, new, 1)))
    return out, texts


def main() -> None:
    all_cases, texts = cases()
    from boostplug.frameworks.lightgbm.model_file import record_from_text

    records = {name: record_from_text(text) for name, text in texts.items()}
    import lightgbm as lgb

    log = tempfile.NamedTemporaryFile(prefix="sweep_", suffix=".log", delete=False).name
    results: dict[int, str] = {}
    start = 0
    while start < len(all_cases):
        open(log, "w").close()
        pid = os.fork()
        if pid == 0:
            fd = os.open(log, os.O_WRONLY | os.O_APPEND)
            os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
            os.dup2(os.open(os.devnull, os.O_WRONLY), 2)
            for i in range(start, len(all_cases)):
                os.write(fd, f"S {i}\n".encode())
                signal.alarm(20)
                try:
                    lgb.Booster(model_str=all_cases[i][1])
                    status = "loads"
                except lgb.basic.LightGBMError as e:
                    status = "lightgbm error: " + str(e).splitlines()[0][:120]
                except Exception as e:  # noqa: BLE001
                    status = "python error: " + repr(e)[:120]
                signal.alarm(0)
                os.write(fd, (json.dumps([i, status]) + "\n").encode())
            os._exit(0)
        _, status = os.waitpid(pid, 0)
        last = start - 1
        for line in Path(log).read_text().splitlines():
            if line.startswith("S "):
                last = int(line[2:])
            else:
                i, s = json.loads(line)
                results[i] = s
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            results[last] = "hangs (20 s)" if sig == signal.SIGALRM else f"dies: {signal.Signals(sig).name}"
            start = last + 1
        else:
            start = len(all_cases)
    os.unlink(log)
    summary: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for i, (name, text) in enumerate(all_cases):
        s = results[i]
        kind = s.split(":")[0]
        if name.startswith("cut"):
            source = name.split()[1]
            if s == "loads" and records[source] is not None:
                try:
                    whole = record_from_text(text) == records[source]
                except ValueError:
                    whole = False
                kind = "loads, record whole" if whole else "loads, record LOST"
            summary[f"cut {source} ({len(texts[source]) + 1} cuts)"][kind] += 1
        else:
            print(f"{name:45s} {s}")
    for group, counter in summary.items():
        print(f"{group}: " + ", ".join(f"{k} {v}" for k, v in sorted(counter.items())))
    crashes = [all_cases[i][0] for i in sorted(results) if results[i].startswith(("dies", "hangs"))]
    print(f"dies or hangs: {len(crashes)}")
    json.dump({all_cases[i][0]: results[i] for i in sorted(results)},
              open(os.environ.get("SWEEP_JSON", "/tmp/sweep.json"), "w"), indent=0)


if __name__ == "__main__":
    main()
