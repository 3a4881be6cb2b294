"""The damage cases of tests/models/test_lightgbm_model_text.py, each loaded by plain LightGBM in a
forked child and, if it loads, predicted on 200 rows (NaNs included) and written out: what dies,
hangs (SIGALRM after 20 s) or refuses. Run from the repository root:
PYTHONPATH=. OMP_NUM_THREADS=1 python docs/results/lightgbm_model_text/damage.py"""
import os, signal, sys, json
sys.argv = [sys.argv[0]]
sys.path.insert(0, "docs/results/lightgbm_model_text")
import sweep
all_cases, texts = sweep.cases()
dmg = [(n, t) for n, t in all_cases if n.startswith("damage")]
import lightgbm as lgb
for name, text in dmg:
    pid = os.fork()
    if pid == 0:
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1); os.dup2(os.open(os.devnull, os.O_WRONLY), 2)
        signal.alarm(20)
        try:
            b = lgb.Booster(model_str=text)
        except lgb.basic.LightGBMError:
            os._exit(3)
        except Exception:
            os._exit(4)
        try:
            import numpy as np
            X = np.random.default_rng(0).normal(size=(200, b.num_feature()))
            X[::7, :] = np.nan
            X[::5, -1] = np.arange(0, 200, 5) % 8
            b.predict(X); b.model_to_string(); os._exit(0)
        except lgb.basic.LightGBMError:
            os._exit(3)
        except Exception:
            os._exit(4)
    _, st = os.waitpid(pid, 0)
    r = f"signal {signal.Signals(os.WTERMSIG(st)).name}" if os.WIFSIGNALED(st) else {0: "loads+predicts", 3: "lightgbm error", 4: "python error"}[os.WEXITSTATUS(st)]
    print(f"{name:45s} {r}", flush=True)
