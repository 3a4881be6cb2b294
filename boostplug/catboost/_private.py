"""Every use boostplug makes of CatBoost's private API: the model's bytes (no public call gives them
but through a file) and the parameters a fitted model reports (``set_params`` refuses a fitted
model). Tested with CatBoost 1.2; pyproject.toml asks for ``catboost>=1.2,<1.3``: CatBoost's
feature releases are 1.0, 1.1, 1.2 (then patches), each free to change its internals. A release
without one of these fails at its first use with a ``RuntimeError`` naming it."""

from __future__ import annotations

from typing import Any

__all__ = ["TESTED", "model_bytes", "given_params", "params_as_read"]

#: The CatBoost releases boostplug.catboost is tested with (pyproject.toml's range).
TESTED = ">=1.2,<1.3"


def _private(model: Any, name: str) -> Any:
    if not hasattr(model, name):
        import catboost

        raise RuntimeError(f"boostplug.catboost uses CatBoost's private {name}, which catboost {catboost.__version__} "
                           f"does not have: boostplug is tested with catboost{TESTED}")
    return getattr(model, name)


def model_bytes(model: Any) -> bytes:
    """What CatBoost's binary model file of ``model`` holds."""
    return _private(model, "_serialize_model")()


def given_params(model: Any) -> dict[str, Any]:
    """The parameters ``model.get_params()`` reports, to change in place (CatBoost's copy of them
    with synonyms resolved is dropped: made again from these when next read)."""
    _private(model, "_canonized_params")
    model._canonized_params = None
    return _private(model, "_init_params")


def params_as_read(model: Any) -> None:
    """Set :func:`given_params` from the model's own parameters, as CatBoost's reader of a path does."""
    model._init_params = _private(model, "_get_params_from_model_updated_with_init_params")()
