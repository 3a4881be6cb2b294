"""docs/build_api.py: the API reference built from the docstrings with pdoc has a page per public
module naming its public functions and classes, and the build fails when a module does not import."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "docs" / "build_api.py"

#: Each page and public names it must document (pdoc gives each documented member an anchor).
PAGES = {
    "boostplug.html": ("__version__",),
    "boostplug/objectives.html": ("register", "get", "names"),
    "boostplug/metrics.html": ("ndcg", "average_precision", "by_name", "make_scorer"),
    "boostplug/data.html": ("load_letor", "make_ranking", "train_test_split_by_query"),
    "boostplug/groups.html": ("group_ptr_from_qid",),
    "boostplug/boosters.html": ("RankBoost", "AdaRank", "MPBoost", "NDCGBoost"),
    "boostplug/lightgbm.html": ("objective", "dataset", "cv", "LGBMRanker"),
    "boostplug/xgboost.html": ("objective", "dmatrix", "XGBRanker"),
    "boostplug/dask.html": ("repartition_by_query", "train_lightgbm", "evaluate"),
    "boostplug/compare.html": ("run", "summary"),
}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess]:
    out = tmp_path_factory.mktemp("api")
    proc = subprocess.run([sys.executable, str(SCRIPT), str(out)], capture_output=True, text=True,
                          timeout=600, cwd=ROOT)
    return out, proc


def test_the_build_reports_no_import_error(built):
    out, proc = built
    assert proc.returncode == 0, proc.stderr
    assert "(0 import errors," in proc.stdout
    assert "error:" not in proc.stderr
    assert (out / "index.html").is_file() and (out / "search.js").is_file()


@pytest.mark.parametrize("page, names", PAGES.items(), ids=list(PAGES))
def test_each_public_module_has_a_page_with_its_names(built, page, names):
    out, _ = built
    html = (out / page).read_text(encoding="utf-8")
    missing = [name for name in names if f'id="{name}"' not in html]
    assert not missing, f"{page} does not document {missing}"


def test_docstring_markup_is_rendered(built):
    out, _ = built
    html = (out / "boostplug/metrics.html").read_text(encoding="utf-8")
    assert ":func:" not in html and ":mod:" not in html  # reST roles became links
    assert 'href="#ndcg"' in html or 'href="metrics.html#ndcg"' in html


def _load_script():
    spec = importlib.util.spec_from_file_location("build_api", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_module_that_fails_to_import_fails_the_build(tmp_path, monkeypatch, capsys):
    package = tmp_path / "apidocs_broken_pkg"
    package.mkdir()
    (package / "__init__.py").write_text('"""A package."""\n__all__ = ["fine", "broken"]\n')
    (package / "fine.py").write_text('"""Imports."""\n')
    (package / "broken.py").write_text('"""Does not import."""\nimport apidocs_no_such_module\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in [m for m in sys.modules if m.startswith("apidocs_broken_pkg")]:
        monkeypatch.delitem(sys.modules, name)
    script = _load_script()
    monkeypatch.setattr(script, "MODULES", ("apidocs_broken_pkg",))

    assert script.main([str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert "error:" in err and "apidocs_broken_pkg.broken" in err
    for name in [m for m in sys.modules if m.startswith("apidocs_broken_pkg")]:
        del sys.modules[name]
