"""Every objective the documentation and the examples define passes ``check_objective``: the
classes in docs/objectives/custom.md's code blocks (the ``Loss``, ``PairwiseLoss`` and
``ListwiseLoss`` ones) and
in examples/custom_objective.py (imported without running its ``main``), and the page's
``parametrize_with_checks`` block collects them."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from boostplug import objectives
from boostplug.objectives import ListwiseLoss, Loss, PairwiseLoss
from boostplug.testing import check_objective, objective_checks

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "objectives" / "custom.md"
EXAMPLE = ROOT / "examples" / "custom_objective.py"


def _python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), flags=re.S)


def _page_classes() -> dict[str, type[Loss]]:
    """The Loss subclasses the page's blocks define (a block's own ``register`` call is undone)."""
    found: dict[str, type[Loss]] = {}
    for block in _python_blocks():
        if not re.search(r"^class \w+\((Pairwise|Listwise)?Loss\):", block, flags=re.M):
            continue
        before = set(objectives.names())
        namespace: dict = dict(_FIRST_BLOCK_NAMES)
        try:
            exec(compile(block, f"{PAGE}:block", "exec"), namespace)
        finally:
            for name in set(objectives.names()) - before:
                objectives.unregister(name)
        found.update({k: v for k, v in namespace.items()
                      if isinstance(v, type) and issubclass(v, Loss)
                      and v not in (Loss, PairwiseLoss, ListwiseLoss)})
    return found


class _Skipped:
    """Stands for what a block uses of the page's first one (training data, LightGBM) to train:
    the classes are what is checked here, not the training the page shows."""

    def __getattr__(self, name):
        return self

    def __call__(self, *args, **kwargs):
        return self

    def __format__(self, spec):
        return "skipped"


_FIRST_BLOCK_NAMES = {n: _Skipped() for n in ("lgb", "bpl", "train", "test", "metrics", "booster")}


def _example_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("custom_objective_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # defines the class; main() runs only as a script
    return module


def test_the_page_and_the_example_define_the_same_objective() -> None:
    page = _page_classes()
    assert list(page) == ["RankNet", "PairRankNet", "SquaredHinge", "MyNDCGLoss2PP", "LambdaMAP", "MyListNet"]
    assert _example_module().RankNet.hessians == page["RankNet"].hessians


@pytest.mark.parametrize("where", ["docs/objectives/custom.md", "examples/custom_objective.py"])
def test_the_documented_objective_passes_every_contract_check(where: str) -> None:
    cls = _page_classes()["RankNet"] if where.startswith("docs") else _example_module().RankNet
    before = objectives.names()
    ran = check_objective(cls)
    assert len(ran) == len(objective_checks(cls)) and objectives.names() == before


def test_the_pages_pytest_block_parametrises_over_the_objective() -> None:
    (block,) = [b for b in _python_blocks() if "@parametrize_with_checks" in b]
    namespace: dict = {"RankNet": _page_classes()["RankNet"]}
    exec(compile(block, f"{PAGE}:block", "exec"), namespace)
    test = next(v for k, v in namespace.items() if k.startswith("test_"))
    ids = [p.id for p in test.pytestmark[0].args[1]]
    assert "my_ranknet-exact-sigma=0.5-gradient" in ids and "my_ranknet-parameters" in ids
    first = test.pytestmark[0].args[1][0]
    test(*first.values)  # the documented test body runs a check


@pytest.mark.parametrize("name", ["PairRankNet", "SquaredHinge"])
def test_the_pages_pairwise_objectives_pass_every_contract_check(name: str) -> None:
    cls = _page_classes()[name]
    before = objectives.names()
    ran = check_objective(cls)
    assert len(ran) == len(objective_checks(cls)) and objectives.names() == before


def test_the_pages_pairwise_ranknet_is_its_ranknet() -> None:
    """The three pair functions give the hand-written class's loss, gradient and exact Hessian."""
    page = _page_classes()
    rng = np.random.default_rng(5)
    labels = rng.integers(0, 4, 40).astype(float)
    group_ptr = np.array([0, 1, 9, 20, 40])
    scores = rng.normal(size=40)
    weights = np.array([1.0, 0.5, 0.0, 2.0])
    ours = page["PairRankNet"](labels, group_ptr, weights=weights, sigma=1.7)
    theirs = page["RankNet"](labels, group_ptr, weights=weights, sigma=1.7)
    assert ours.loss(scores) == pytest.approx(theirs.loss(scores), rel=1e-12)
    for a, b in zip(ours.grad_hess(scores), theirs.grad_hess(scores)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)


def test_the_pages_weighted_pair_loss_is_the_registered_ndcg_loss2pp() -> None:
    """The page's twenty-line NDCG-Loss2++ gives the registered ``ndcg_loss2pp``'s loss, lambdas and
    Hessian (also with the weights of other scores), and passes the gradient and Hessian checks."""
    cls = _page_classes()["MyNDCGLoss2PP"]
    rng = np.random.default_rng(6)
    labels = rng.integers(0, 4, 30).astype(float)
    group_ptr = np.array([0, 1, 12, 30])
    scores, other = rng.normal(size=30), rng.normal(size=30)
    ours = cls(labels, group_ptr, weights=[1.0, 0.5, 2.0], sigma=1.5, mu=3.0)
    theirs = objectives.get("ndcg_loss2pp").prepare(labels, group_ptr, weights=[1.0, 0.5, 2.0], sigma=1.5, mu=3.0)
    assert ours.loss(scores) == pytest.approx(theirs.loss(scores), rel=1e-12)
    for at in (None, other):
        for a, b in zip(ours.grad_hess(scores, weights_at=at), theirs.grad_hess(scores, weights_at=at)):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)
    before = objectives.names()
    assert {r.check for r in check_objective(cls, checks=["gradient", "hessian"])} == {"gradient", "hessian"}
    assert objectives.names() == before


@pytest.mark.parametrize("name", ["LambdaMAP", "MyListNet"])
def test_the_pages_prefix_and_listwise_objectives_pass_every_contract_check(name: str) -> None:
    cls = _page_classes()[name]
    before = objectives.names()
    ran = check_objective(cls)
    assert len(ran) == len(objective_checks(cls)) and objectives.names() == before


def test_the_pages_listnet_is_the_registered_listnet() -> None:
    cls = _page_classes()["MyListNet"]
    rng = np.random.default_rng(7)
    labels = rng.integers(0, 4, 30).astype(float)
    group_ptr = np.array([0, 1, 12, 30])
    scores = rng.normal(size=30)
    ours = cls(labels, group_ptr, weights=[1.0, 0.5, 2.0])
    theirs = objectives.get("listnet").prepare(labels, group_ptr, weights=[1.0, 0.5, 2.0])
    assert ours.loss(scores) == pytest.approx(theirs.loss(scores), rel=1e-12)
    for a, b in zip(ours.grad_hess(scores), theirs.grad_hess(scores)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)
