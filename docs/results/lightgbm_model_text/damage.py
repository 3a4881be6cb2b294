"""Damaged model text loaded by plain LightGBM (no boostplug check) in a forked child: what dies,
hangs (SIGALRM after 20 s), refuses, or loads and predicts 200 rows (NaNs included).

Part 1: the damage cases of tests/models/test_lightgbm_model_text.py (loaded, predicted, written
out). Part 2: more damage to that file's ranking model, the predictions compared with the
undamaged model's. Run from the repository root:
PYTHONPATH=.:tests/models:tests OMP_NUM_THREADS=1 python docs/results/lightgbm_model_text/damage.py
"""

import os
import signal
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sweep  # noqa: E402
import test_lightgbm_model_text as t  # noqa: E402


def in_child(work) -> str:
    """``work()``'s text, or what killed the child; a fork server that never ran LightGBM (a fork
    after OpenMP started would deadlock)."""
    rd, wr = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
        os.dup2(os.open(os.devnull, os.O_WRONLY), 2)
        signal.alarm(20)
        try:
            out = work()
        except Exception as e:  # noqa: BLE001
            out = f"error {type(e).__name__}: {str(e).splitlines()[0][:100]}"
        os.write(wr, out.encode())
        os._exit(0)
    os.close(wr)
    _, status = os.waitpid(pid, 0)
    out = os.read(rd, 400).decode()
    os.close(rd)
    return f"dies: {signal.Signals(os.WTERMSIG(status)).name}" if os.WIFSIGNALED(status) else out


def main() -> None:
    import lightgbm as lgb

    all_cases, texts = sweep.cases()
    X = np.random.default_rng(0).normal(size=(200, 6))
    X[::7] = np.nan
    X[::5, -1] = np.arange(0, 200, 5) % 8

    def load_predict(text: str) -> str:
        b = lgb.Booster(model_str=text)
        b.predict(X[:, :b.num_feature()])
        b.model_to_string()
        return "loads+predicts"

    for name, text in all_cases:
        if name.startswith("damage"):
            print(f"{name:45s} {in_child(lambda: load_predict(text))}", flush=True)
    r = texts["ranking"]
    extra = {
        "tree_sizes 478 300": t._header("tree_sizes", "478 300")(r),
        "tree_sizes 478 2000": t._header("tree_sizes", "478 2000")(r),
        "tree_sizes count": t._header("tree_sizes", "478")(r),
        "tree_sizes 478 489": t._header("tree_sizes", "478 489")(r),
        "tree numbering": r.replace("Tree=1\n", "Tree=5\n", 1),
        "NUL": r.replace("num_cat=0", "num_cat=\x00", 1),
        "monotone count": r.replace("feature_infos=", "monotone_constraints=0 0\nfeature_infos=", 1),
        "label_index -1": t._header("label_index", "-1")(r),
        "max_feature_idx gone": r.replace("\nmax_feature_idx=", "\nmax_feature_id=", 1),
        "num_class 0": t._header("num_class", "0")(r),
        "is_linear 2": r.replace("num_cat=0\n", "num_cat=0\nis_linear=2\n", 1),
        "num_cat -1": r.replace("num_cat=0\n", "num_cat=-1\n", 1),
        "line without =": r.replace("num_cat=0\n", "num_cat=0\nshrinkage\n", 1),
        "unknown field": r.replace("num_cat=0\n", "num_cat=0\nfoo=1\n", 1),
        "pandas not last": r + "Column_0=1\n",
        "first line": "xtree" + r[4:],
        "leaf_value junk": t._tree0_field("leaf_value", "0.1 x 0.3 0.4")(r),
        "threshold junk": t._tree0_field("threshold", "0.1 x 0.3")(r),
        "leaf_count junk": t._tree0_field("leaf_count", "31 4 x 21")(r),
        "split_gain junk": t._tree0_field("split_gain", "1 x 2")(r),
    }

    def compare(text: str) -> str:
        b = lgb.Booster(model_str=text)
        same = np.array_equal(b.predict(X[:, :3]), lgb.Booster(model_str=r).predict(X[:, :3]))
        return f"loads+predicts, same predictions: {same}, trees {b.num_trees()}"

    for name, text in extra.items():
        print(f"{name:25s} {in_child(lambda: compare(text))}", flush=True)


if __name__ == "__main__":
    main()
