"""ONNX export of LightGBM and XGBoost ranking models, boostplug objectives included.

onnxmltools refuses a LightGBM model trained with a callable objective (its model names no
objective: ``NotImplementedError``), and takes an XGBoost ``rank:*`` booster for a binary
classifier. A model trained with a boostplug objective is an ordinary tree ensemble whose raw
score is the ranking score, so :func:`to_onnx` writes that ensemble itself: one ONNX
``TreeEnsembleRegressor`` whose output is what ``booster.predict(X)`` returns, with the
framework's missing-value rules and split comparisons.
"""

from __future__ import annotations

import os
import warnings
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from ._onnx_graph import INPUT, OUTPUT, ensemble_to_onnx
from ._trees import Ensemble

if TYPE_CHECKING:
    import onnx

__all__ = ["to_onnx", "INPUT", "OUTPUT"]

def to_onnx(model: Any, *, path: str | os.PathLike[str] | None = None, num_iteration: int | None = None,
            dtype: Any = "float32") -> "onnx.ModelProto":
    """The ONNX model computing ``model``'s ranking score (its raw score) from a feature matrix.

    Example:
        >>> import lightgbm as lgb
        >>> import onnxruntime as ort
        >>> from boostplug import lightgbm as bpl
        >>> booster = lgb.train({"objective": bpl.objective(name, **objective_params), "verbose": -1},
        ...                     bpl.dataset(X, y, qid=qid), 10)
        >>> session = ort.InferenceSession(to_onnx(booster).SerializeToString())  # or to_onnx(booster, path=...)
        >>> features = Xt.astype(np.float32)
        >>> scores = session.run(None, {"X": features})[0]
        >>> bool(np.allclose(scores, booster.predict(features), rtol=1e-5, atol=1e-6))
        True

    The graph has one input ``X``, an ``(n, n_features)`` matrix of ``dtype`` (NaN is a missing
    value, read as the framework reads it), and one output ``score``, a float32 vector of ``n``
    raw scores: for LightGBM ``booster.predict(X)``, for XGBoost ``booster.predict(DMatrix(X))``
    (the margin, intercept included). Its metadata say which framework and objective trained the
    model (``framework``, ``objective``; ``boostplug_objective``: the objective record of
    :mod:`boostplug.frameworks.model_record` when the model carries one).

    Args:
        model: a ``lightgbm.Booster`` or a fitted ``lightgbm.LGBMModel`` (``LGBMRanker``,
            boostplug's included), an ``xgboost.Booster`` or a fitted ``xgboost.XGBModel``
            (``XGBRanker``...). Trained with a boostplug or other custom objective, or with a
            built-in objective whose prediction is its raw score (LightGBM: ``lambdarank``,
            ``rank_xendcg``, the regression objectives; XGBoost: ``rank:ndcg``, ``rank:pairwise``,
            ``rank:map``, ``reg:squarederror``, ...); a model with a sigmoid, softmax or exp
            output, several outputs, categorical splits, linear-tree leaves or XGBoost's ``dart``
            or ``gblinear`` booster is a ``ValueError`` saying which.
        path: also write the model there (atomically), e.g. ``"ranker.onnx"``.
        num_iteration: export the first ``num_iteration`` boosting rounds; ``None`` exports the
            rounds up to the best iteration after early stopping (what the rankers' ``predict``
            uses), else every round. An early-stopped ``xgboost.Booster``'s own ``predict`` uses
            every tree: its export warns that it holds the best iteration only.
        dtype: the input's type, ``"float32"`` (default: what ONNX pipelines pass) or
            ``"float64"``. LightGBM compares double features: its float32 graph decides every
            float32 value exactly, its float64 graph every double. XGBoost rounds features to
            float32 first, and so do both of its graphs.

    Returns:
        The ``onnx.ModelProto``. Needs the ``onnx`` package (the ``serve`` extra); running it,
        ``onnxruntime``.
    """
    try:
        import onnx  # noqa: F401
    except ImportError as exc:
        raise ImportError('boostplug.export.to_onnx needs the onnx package, which the serve extra brings: '
                          'pip install "boostplug[serve]"') from exc
    in_dtype = _check_dtype(dtype)
    ensemble = _ensemble(model, _check_iteration(num_iteration))
    if not ensemble.trees:
        raise ValueError(f"to_onnx: the {ensemble.framework} model has no trees (trained for 0 rounds?)")
    metadata = {"framework": ensemble.framework, "objective": ensemble.objective}
    if ensemble.record is not None:
        from ..frameworks.model_record import RECORD_KEY

        metadata[RECORD_KEY] = ensemble.record
    doc = (f"Raw ranking score of a {ensemble.framework} model (objective {ensemble.objective}, "
           f"{len(ensemble.trees)} trees): input {INPUT!r} ({in_dtype.name}, n x {ensemble.n_features}, "
           f"NaN = missing), output {OUTPUT!r} (float32, n).")
    proto = ensemble_to_onnx(ensemble, in_dtype, metadata, doc)
    if path is not None:
        from .._atomic import write_bytes

        write_bytes(path, proto.SerializeToString())
    return proto


def _check_dtype(dtype: Any) -> np.dtype:
    try:
        got = np.dtype(dtype)
    except TypeError:
        got = None
    # Not `got in (...)`: numpy compares None equal to float64 (np.dtype(None) is float64).
    if got is None or dtype is None or got.name not in ("float32", "float64"):
        raise ValueError(f"to_onnx: dtype must be 'float32' or 'float64', got {dtype!r}")
    return got


def _check_iteration(num_iteration: Any) -> int | None:
    if num_iteration is None:
        return None
    if isinstance(num_iteration, (bool, np.bool_)) or not isinstance(num_iteration, (int, np.integer)):
        raise TypeError(f"to_onnx: num_iteration must be a positive int or None, got {num_iteration!r}")
    if num_iteration < 1:
        raise ValueError(f"to_onnx: num_iteration must be a positive int or None, got {int(num_iteration)}")
    return int(num_iteration)


def _ensemble(model: Any, num_iteration: int | None) -> Ensemble:
    """The trees of a LightGBM or XGBoost model, booster or scikit-learn estimator."""
    import lightgbm as lgb
    import xgboost as xgb

    if isinstance(model, lgb.LGBMModel):
        model = _fitted(model, lambda m: m.booster_)
    if isinstance(model, lgb.Booster):
        return _from_booster(model, True, num_iteration)
    if isinstance(model, xgb.XGBModel):
        booster = _fitted(model, lambda m: m.get_booster())
        if num_iteration is None:
            try:  # what XGBModel.predict uses: the best iteration when early stopping ran
                num_iteration = int(model.best_iteration) + 1
            except AttributeError:
                pass
        return _from_booster(booster, False, num_iteration)
    if isinstance(model, xgb.Booster):
        return _from_booster(model, False, _best_of_booster(model) if num_iteration is None else num_iteration)
    raise TypeError(f"to_onnx: expected a LightGBM or XGBoost booster or scikit-learn model, got "
                    f"{type(model).__module__}.{type(model).__qualname__}")


def _best_of_booster(booster: Any) -> int | None:
    """The rounds up to an early-stopped ``xgboost.Booster``'s best iteration (what ``XGBRanker.predict``
    scores with), with a warning: the Booster's own ``predict`` uses every tree."""
    try:
        best = int(booster.best_iteration) + 1
    except AttributeError:
        return None
    rounds = booster.num_boosted_rounds()
    if best < rounds:
        warnings.warn(f"to_onnx: the early-stopped xgboost.Booster exports its best iteration ({best} of {rounds} "
                      f"rounds), as XGBRanker.predict scores; its own predict uses every tree: pass "
                      f"num_iteration={rounds} to export them all", UserWarning, stacklevel=4)
    return best


def _fitted(model: Any, booster_of: Callable[[Any], Any]) -> Any:
    """``booster_of(model)``: the booster of a scikit-learn model, a ``ValueError`` if it is not fitted."""
    try:
        return booster_of(model)
    except (AttributeError, ValueError):
        raise ValueError(f"to_onnx: the {type(model).__name__} is not fitted; call fit first") from None


def _from_booster(booster: Any, lightgbm: bool, num_iteration: int | None) -> Ensemble:
    """The trees of a ``lgb.Booster`` (``lightgbm``) or an ``xgb.Booster``, its first ``num_iteration``
    rounds (``None``: those its ``predict`` uses), with the objective record it carries."""
    if lightgbm:
        from ..frameworks.lightgbm.model_file import objective_of
        rounds, name = booster.current_iteration(), "LightGBM"
    else:
        from ..frameworks.xgboost.model_file import objective_of
        rounds, name = booster.num_boosted_rounds(), "XGBoost"
    if num_iteration is not None and num_iteration > rounds:
        raise ValueError(f"to_onnx: num_iteration={num_iteration}, but the {name} model has {rounds} rounds")
    found = objective_of(booster)
    record = None if found is None else found.to_json()
    if lightgbm:
        from ._from_lightgbm import ensemble_from_lightgbm
        return ensemble_from_lightgbm(booster, num_iteration, record)
    from ._from_xgboost import ensemble_from_xgboost
    # LightGBM's dump takes the rounds; an XGBoost booster is sliced to them
    return ensemble_from_xgboost(booster if num_iteration in (None, rounds) else booster[:num_iteration], record)
