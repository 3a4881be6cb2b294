"""Without jax, ``import boostplug`` and every other objective work, ``approx_ap`` is not listed,
and ``import boostplug.autodiff`` says what to install (jax hidden from a child interpreter)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CHILD = textwrap.dedent("""
    import sys
    sys.modules["jax"] = None          # what an interpreter without jax finds: import jax fails
    import numpy as np
    import boostplug
    from boostplug import objectives
    assert "approx_ap" not in objectives.names() and "approx_ndcg" in objectives.names()
    g, h = objectives.get("listnet").grad_hess(np.array([0.5, 0.1]), np.array([1.0, 0.0]), np.array([0, 2]))
    try:
        import boostplug.autodiff
    except ImportError as e:
        print(e)
    else:
        raise SystemExit("boostplug.autodiff imported without jax")
""")


def test_without_jax_boostplug_works_and_autodiff_names_the_extra() -> None:
    out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, cwd=ROOT, timeout=300,
                         env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stderr
    assert 'pip install "boostplug[jax]"' in out.stdout


WITHOUT_JAX = textwrap.dedent("""
    import sys
    sys.modules["jax"] = None
    sys.modules["catboost"] = None     # and without catboost
    import numpy as np
    import boostplug.lightgbm as bpl
    import boostplug.xgboost as bpx
    from boostplug.compare.methods import get_method
    from boostplug.data import make_ranking
    d = make_ranking(n_queries=6, seed=0)
    calls = [lambda: bpl.objective("approx_ap"), lambda: get_method("approx_ap"), lambda: get_method("xgb-neural_ndcg"),
             lambda: bpl.LGBMRanker(objective="approx_ap", n_estimators=1).fit(d.X, d.y, group=np.diff(d.group_ptr)),
             lambda: __import__("boostplug.catboost")]
    for call in calls:
        try:
            call()
        except (ValueError, ImportError) as e:
            print(type(e).__name__, e)
        else:
            raise SystemExit(f"no error from {call}")
    for load, of, path in ((bpl.load_model, bpl.objective_of, sys.argv[1]), (bpx.load_model, bpx.objective_of, sys.argv[2])):
        model = load(path)
        x = d.X if load is bpl.load_model else __import__("xgboost").DMatrix(d.X)
        print("loaded", of(path).name, np.asarray(model.predict(x))[:2].round(6).tolist())
""")


def test_without_jax_its_losses_say_what_to_install_and_their_saved_models_load_and_predict(tmp_path) -> None:
    """approx_ap and neural_ndcg in Python, in compare and in LGBMRanker name the jax extra; a LightGBM and an
    XGBoost model whose record names approx_ap load and predict without jax (only training needs it);
    ``from boostplug import catboost`` without catboost names its extra."""
    pytest = __import__("pytest")
    lgb, xgb = pytest.importorskip("lightgbm"), pytest.importorskip("xgboost")
    import numpy as np

    import boostplug.lightgbm as bpl
    import boostplug.xgboost as bpx
    from boostplug.data import make_ranking

    d = make_ranking(n_queries=6, seed=0)
    booster = lgb.train({"objective": "lambdarank", "verbose": -1, "min_data_in_leaf": 1},
                        bpl.dataset(d.X, d.y, group_ptr=d.group_ptr), 2)
    bpl.save_model(booster, tmp_path / "m.txt", objective="approx_ap")
    xb = xgb.train({"objective": "rank:ndcg"}, xgb.DMatrix(d.X, d.y, qid=np.repeat(np.arange(6), np.diff(d.group_ptr))), 2)
    bpx.save_model(xb, tmp_path / "m.json", objective="approx_ap")
    out = subprocess.run([sys.executable, "-c", WITHOUT_JAX, str(tmp_path / "m.txt"), str(tmp_path / "m.json")],
                         capture_output=True, text=True, cwd=ROOT, timeout=300,
                         env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stderr
    lines = [line for line in out.stdout.splitlines() if not line.startswith("[LightGBM]")]
    jax_missing = 'is written in JAX, which is not installed: pip install "boostplug[jax]"'
    assert lines[0] == f"ValueError objective 'approx_ap' {jax_missing}"
    assert lines[1] == f"ValueError method 'approx_ap' trains a loss that {jax_missing}"
    assert lines[2] == f"ValueError method 'xgb-neural_ndcg' trains a loss that {jax_missing}"
    assert lines[3] == f"ValueError objective 'approx_ap' {jax_missing}"
    assert lines[4] == ('ModuleNotFoundError boostplug.catboost trains with CatBoost, which is not installed: '
                        'pip install "boostplug[catboost]"')
    expected = [np.round(booster.predict(d.X)[:2], 6).tolist(), np.round(xb.predict(xgb.DMatrix(d.X))[:2], 6).tolist()]
    assert lines[5:] == [f"loaded approx_ap {expected[0]}", f"loaded approx_ap {expected[1]}"]
