"""More damage, to the ranking model of the tests: loaded by plain LightGBM in a forked child,
predicted on 200 rows and compared with the undamaged model. Run from the repository root:
PYTHONPATH=.:tests/models:tests OMP_NUM_THREADS=1 python docs/results/lightgbm_model_text/damage_more.py"""
import os, signal, sys
sys.argv = [sys.argv[0]]
sys.path.insert(0, "docs/results/lightgbm_model_text")
import sweep
import numpy as np
all_cases, texts = sweep.cases()
import test_lightgbm_model_text as t
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
import lightgbm as lgb
X = np.random.default_rng(0).normal(size=(200, 3)); X[::7] = np.nan
for name, text in extra.items():
    rd, wr = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1); os.dup2(os.open(os.devnull, os.O_WRONLY), 2)
        signal.alarm(20)
        try:
            b = lgb.Booster(model_str=text)
        except Exception as e:
            os.write(wr, f"error {type(e).__name__}: {str(e)[:100]}".encode()); os._exit(3)
        p = b.predict(X)
        ref = lgb.Booster(model_str=r).predict(X)
        os.write(wr, f"loads+predicts, same predictions: {np.array_equal(p, ref)}, trees {b.num_trees()}".encode()); os._exit(0)
    os.close(wr)
    _, st = os.waitpid(pid, 0)
    msg = os.read(rd, 300).decode(); os.close(rd)
    res = f"signal {signal.Signals(os.WTERMSIG(st)).name}" if os.WIFSIGNALED(st) else msg
    print(f"{name:25s} {res}", flush=True)
