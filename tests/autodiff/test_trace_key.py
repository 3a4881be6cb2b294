"""What a JaxLoss's query_loss reads is part of its trace key, read when the loss is bound: a value changed before a
new binding is the new binding's, loss and derivatives alike, however query_loss reaches it (a module's attribute,
a class's or an object's, a SimpleNamespace, an array changed in place, a set, a functools.partial's function,
globals()["X"]; -0.0 after 0.0); a module is a library by where it lives, not by its name; what the key cannot read
is refused when the loss is bound, naming it; the key costs nothing per round, and the traces kept are bounded.
The loss of the issue's reproducers: SCALE * sum((s - y)^2) at s = 0, y = (2, 1, 0, 1): gradient (-4, -2, 0, -2)."""

from __future__ import annotations

import functools
import gc
import importlib
import sys
import time
import types
import weakref

import numpy as np
import pytest

pytest.importorskip("jax")

import jax.numpy as jnp  # noqa: E402

from boostplug.autodiff import JaxLoss, _jax  # noqa: E402

LABELS, PTR, ZERO = np.array([2.0, 1.0, 0.0, 1.0]), np.array([0, 4]), np.zeros(4)
BASE = np.array([-4.0, -2.0, 0.0, -2.0])


def gradient(cls: type) -> np.ndarray:
    return cls(LABELS, PTR, hessian="constant").grad_hess(ZERO)[0]


def _loss(body):
    """A JaxLoss whose query_loss is ``body`` (a module-level function here, reading this module's globals)."""
    return type(body.__name__.title().replace("_", ""), (JaxLoss,), {
        "name": f"trace_key_{body.__name__}", "summary": "a trace key test", "query_loss": staticmethod(body)})


def _squares(s, y, mask):
    return jnp.sum(jnp.where(mask, (s - y) ** 2, 0.0))


class Config:
    SCALE = 1.0


CONFIG = Config()
CONFIG.scale = 1.0
NAMESPACE = types.SimpleNamespace(scale=1.0)
WEIGHTS = np.ones(3)
FACTORS = {1.0}
G_SCALE = 1.0
SIGNED = 0.0
PARTIAL_SCALE = 1.0


def class_attribute(s, y, mask):
    return Config.SCALE * _squares(s, y, mask)


def instance_attribute(s, y, mask):
    return CONFIG.scale * _squares(s, y, mask)


def namespace(s, y, mask):
    return NAMESPACE.scale * _squares(s, y, mask)


def array_in_place(s, y, mask):
    return jnp.asarray(WEIGHTS)[1] * _squares(s, y, mask)


def mutated_set(s, y, mask):
    return max(FACTORS) * _squares(s, y, mask)


def through_globals(s, y, mask):
    return globals()["G_SCALE"] * _squares(s, y, mask)


def signed_zero(s, y, mask):
    return jnp.copysign(1.0, SIGNED) * _squares(s, y, mask)


def _scaled(power, s, y, mask):
    return PARTIAL_SCALE * jnp.sum(jnp.where(mask, jnp.abs(s - y) ** power, 0.0))


def set_scale(name: str, value: float) -> None:
    """Sets what each reader reads to ``value`` (in place where it is an array or a set)."""
    if name == "class_attribute":
        Config.SCALE = value
    elif name == "instance_attribute":
        CONFIG.scale = value
    elif name == "namespace":
        NAMESPACE.scale = value
    elif name == "array_in_place":
        WEIGHTS[:] = value
    elif name == "mutated_set":
        FACTORS.clear()
        FACTORS.add(value)
    elif name == "through_globals":
        globals()["G_SCALE"] = value
    elif name == "partial":
        globals()["PARTIAL_SCALE"] = value


@pytest.mark.parametrize("name", ["class_attribute", "instance_attribute", "namespace", "array_in_place", "mutated_set",
                                  "through_globals", "partial"])
def test_a_value_changed_before_a_new_binding_is_read_by_it(name) -> None:
    body = functools.partial(_scaled, 2.0) if name == "partial" else globals()[name]
    cls = type(f"Reads{name.title()}", (JaxLoss,), {"name": f"trace_key_{name}", "summary": "a trace key test",
                                                   "query_loss": staticmethod(body)})
    np.testing.assert_array_equal(gradient(cls), BASE)
    set_scale(name, 3.0)
    try:
        np.testing.assert_array_equal(gradient(cls), 3.0 * BASE)
    finally:
        set_scale(name, 1.0)
    np.testing.assert_array_equal(gradient(cls), BASE)


def test_minus_zero_is_not_zero() -> None:
    cls = _loss(signed_zero)
    np.testing.assert_array_equal(gradient(cls), BASE)
    globals()["SIGNED"] = -0.0
    try:
        np.testing.assert_array_equal(gradient(cls), -BASE)
    finally:
        globals()["SIGNED"] = 0.0


@pytest.fixture
def user_modules(tmp_path, monkeypatch):
    """Modules of the user's in tmp_path, importable under any name (``code`` too: the standard library's is moved
    aside for the test)."""
    monkeypatch.syspath_prepend(str(tmp_path))
    saved = sys.modules.pop("code", None)
    yield tmp_path
    for name in ("code", "cfgmod", "mycode"):
        sys.modules.pop(name, None)
    if saved is not None:
        sys.modules["code"] = saved


@pytest.mark.parametrize("module", ["code", "mycode"])
def test_a_helper_of_the_users_is_read_through_whatever_its_name(user_modules, module) -> None:
    """F3: a helper module named like the standard library's ``code`` is the user's by where it lives."""
    (user_modules / f"{module}.py").write_text("import jax.numpy as jnp\nPOWER = 2\n\n\ndef term(x):\n"
                                               "    return jnp.abs(x) ** POWER\n")
    helper = importlib.import_module(module)

    def uses_helper(s, y, mask):
        return jnp.sum(jnp.where(mask, helper.term(s - y), 0.0))

    cls = _loss(uses_helper)
    np.testing.assert_array_equal(gradient(cls), BASE)
    helper.POWER = 3
    np.testing.assert_array_equal(gradient(cls), [-12.0, -3.0, 0.0, -3.0])


def test_a_user_modules_attribute_is_read(user_modules) -> None:
    """F2: ``cfgmod.SCALE``, set after the first training."""
    (user_modules / "cfgmod.py").write_text("SCALE = 1.0\n")
    cfgmod = importlib.import_module("cfgmod")

    def reads_cfgmod(s, y, mask):
        return cfgmod.SCALE * _squares(s, y, mask)

    cls = _loss(reads_cfgmod)
    np.testing.assert_array_equal(gradient(cls), BASE)
    cfgmod.SCALE = 3
    np.testing.assert_array_equal(gradient(cls), 3.0 * BASE)


def test_lightgbm_trains_with_the_value_of_its_own_training() -> None:
    """F2's end to end: a temperature in a SimpleNamespace, 1.0 then 0.1, gives two models (it gave one twice)."""
    lgb = pytest.importorskip("lightgbm")
    from boostplug import lightgbm as bpl
    from boostplug.data import load_example

    train, _ = load_example()
    settings = types.SimpleNamespace(temperature=1.0)

    def listnet(s, y, mask):
        target = jnp.exp(jnp.where(mask, y, -jnp.inf) / settings.temperature)
        log_p = s - jnp.log(jnp.sum(jnp.where(mask, jnp.exp(s), 0.0)))
        return -jnp.sum(jnp.where(mask, target / jnp.sum(target) * log_p, 0.0))

    cls = _loss(listnet)

    def predict():
        params = {"verbose": -1, "num_threads": 1, "metric": "None", "objective": bpl.objective(cls, hessian="constant")}
        return lgb.train(params, bpl.dataset(train.X, train.y, group_ptr=train.group_ptr), 5).predict(train.X)

    hot = predict()
    settings.temperature = 0.1
    assert np.abs(predict() - hot).max() > 1e-3


SELF = [1.0]
SELF.append(SELF)


def self_containing(s, y, mask):
    return SELF[0] * _squares(s, y, mask)


def test_a_self_containing_global_list_is_keyed() -> None:
    """P10: no RecursionError."""
    np.testing.assert_array_equal(gradient(_loss(self_containing)), BASE)


MIXED = [1.0, "a"] * 10_000
BUFFER = bytearray(b"ab")


def reads_mixed(s, y, mask):
    return MIXED[0] * _squares(s, y, mask)


def reads_buffer(s, y, mask):
    return len(BUFFER) * _squares(s, y, mask)


def test_what_the_key_cannot_read_is_refused_when_the_loss_is_bound_naming_it() -> None:
    with pytest.raises(ValueError, match=r"ReadsMixed\.query_loss reads MIXED, a list of 20,000 items \(a key reads "
                                         r"10,000 one by one\): make it a NumPy array"):
        _loss(reads_mixed)(LABELS, PTR)
    with pytest.raises(ValueError, match=r"ReadsBuffer\.query_loss reads BUFFER, a builtins\.bytearray, which a trace "
                                         r"key cannot read: pass it as a parameter"):
        _loss(reads_buffer)(LABELS, PTR)


TABLE = list(np.linspace(0.5, 1.5, 200_000))
TABLE = [float(v) for v in TABLE]


def reads_table(s, y, mask):
    return TABLE[100_000] * _squares(s, y, mask)


def test_a_large_global_is_keyed_once_per_binding_not_per_round(monkeypatch) -> None:
    """A 200,000-item list of floats (hashed as bytes) costs its key once, when the loss is bound: no round reads it."""
    cls = _loss(reads_table)
    start = time.perf_counter()
    loss = cls(LABELS, PTR, hessian="constant")
    assert time.perf_counter() - start < 0.5  # bound: the key read (about 20 ms), nothing traced yet
    loss.grad_hess(ZERO)
    calls = []
    monkeypatch.setattr(_jax, "trace_key", lambda *a: calls.append(a) or pytest.fail("keyed again"))
    for _ in range(5):
        loss.grad_hess(ZERO)
    assert not calls


def test_the_trace_cache_keeps_the_most_recently_used() -> None:
    """40 losses of other values: the process keeps TRACE_CACHE_SIZE compiled functions, the others are freed."""
    first = None
    for k in range(40):
        def scaled(s, y, mask, k=float(k)):
            return k * _squares(s, y, mask)

        loss = _loss(scaled)(LABELS, PTR, hessian="constant")
        loss.grad_hess(ZERO)
        if first is None:
            first = weakref.ref(_jax._COMPILED[next(reversed(_jax._COMPILED))])
        del loss
    gc.collect()
    assert len(_jax._COMPILED) <= _jax.TRACE_CACHE_SIZE and first() is None


@pytest.mark.parametrize("where", ["a module it imports", "its own plugin module"])
def test_an_installed_modules_global_is_read_by_value(tmp_path, monkeypatch, where) -> None:
    """A module under a folder named site-packages was a library's, keyed by identity: a query_loss reading its global
    (an installed config, or the plugin module the loss is installed in, as docs/compare.md has --import plugins
    installed on workers) kept its first trace's value after the global changed. Now the value is read."""
    site = tmp_path / "lib" / "site-packages"
    site.mkdir(parents=True)
    (site / "sitecfg.py").write_text("SCALE = 1.0\n")
    (site / "siteplugin.py").write_text(
        "import jax.numpy as jnp\nSCALE = 1.0\n\n\ndef query_loss(s, y, mask):\n"
        "    return SCALE * jnp.sum(jnp.where(mask, (s - y) ** 2, 0.0))\n")
    monkeypatch.syspath_prepend(str(site))
    for name in ("sitecfg", "siteplugin"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    _jax._library.cache_clear()
    module = importlib.import_module("sitecfg" if where == "a module it imports" else "siteplugin")
    assert _jax._library(module.__name__)

    def reads_sitecfg(s, y, mask):
        return module.SCALE * _squares(s, y, mask)

    cls = _loss(reads_sitecfg if module.__name__ == "sitecfg" else module.query_loss)
    np.testing.assert_array_equal(gradient(cls), BASE)
    monkeypatch.setattr(module, "SCALE", 3.0)
    np.testing.assert_array_equal(gradient(cls), 3.0 * BASE)
