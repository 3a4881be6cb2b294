"""A trained LightGBM or XGBoost booster as bytes, and back: the one form a model takes between
processes (distributed workers, Spark executors) and in a Spark model's saved params.

LightGBM's is its text model with the boostplug objective record (:mod:`.lightgbm.model_file`),
checked when read back; XGBoost's is its UBJSON model."""

from __future__ import annotations

from typing import Any

__all__ = ["booster_bytes", "booster_from_bytes"]


def booster_bytes(booster: Any) -> tuple[str, bytes]:
    """``(framework, raw)`` of an ``lgb.Booster`` (``"lightgbm"``) or an ``xgb.Booster`` (``"xgboost"``)."""
    if hasattr(booster, "model_to_string"):
        from .lightgbm.model_file import model_to_string

        return "lightgbm", model_to_string(booster).encode("utf-8")
    if hasattr(booster, "save_raw"):
        return "xgboost", bytes(booster.save_raw(raw_format="ubj"))
    raise TypeError(f"expected an lgb.Booster or an xgb.Booster, got {type(booster).__name__}")


def booster_from_bytes(framework: str, raw: bytes) -> Any:
    """The booster :func:`booster_bytes` gave ``raw`` for."""
    if framework == "lightgbm":
        from .lightgbm.model_file import load_model

        return load_model(model_str=bytes(raw).decode("utf-8"))
    if framework == "xgboost":
        import xgboost as xgb

        booster = xgb.Booster()
        booster.load_model(bytearray(raw))
        return booster
    raise ValueError(f"framework must be 'lightgbm' or 'xgboost', got {framework!r}")
