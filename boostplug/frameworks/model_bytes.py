"""A trained LightGBM or XGBoost booster as bytes, and back: the one form a model takes between
processes (distributed workers, Spark executors) and in a Spark model's saved params.

LightGBM's is its text model with the boostplug objective record (:mod:`.lightgbm.model_file`);
XGBoost's is its UBJSON model. Both are checked before the framework parses them
(:func:`booster_from_bytes`): either framework's reader can crash the process or hang on a model
cut short."""

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
    """The booster :func:`booster_bytes` gave ``raw`` for.

    ``raw`` is checked before the framework reads it, as :func:`boostplug.xgboost.load_model` and
    :func:`boostplug.lightgbm.load_model` check a file: an XGBoost model must be one complete
    UBJSON value whose trees hold together (:func:`~.xgboost.model_check.load_checked`), a
    LightGBM model complete UTF-8 model text (:func:`~.lightgbm.model_text.check_model_text`).
    Anything else is a ``ValueError`` naming "the model bytes" (or "the model string") and what
    is wrong."""
    data = bytes(raw)
    if framework == "lightgbm":
        from .lightgbm.model_file import load_model

        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"the model bytes: not a LightGBM text model (byte {exc.start} of {len(data)} is not "
                             "UTF-8 text)") from None
        return load_model(model_str=text)
    if framework == "xgboost":
        import xgboost as xgb

        from .xgboost.model_check import forget_checksum, load_checked
        from .xgboost.ubjson import looks_like_ubjson

        if not looks_like_ubjson(data):
            raise ValueError(f"the model bytes: not an XGBoost UBJSON model (it starts with {data[:8]!r}, "
                             f"{len(data)} bytes)")
        booster = xgb.Booster()
        load_checked(data, lambda checked: booster.load_model(bytearray(checked)))
        return forget_checksum(booster)
    raise ValueError(f"framework must be 'lightgbm' or 'xgboost', got {framework!r}")
