"""Serving models trained with boostplug objectives outside Python's frameworks.

* :func:`to_onnx`: a LightGBM or XGBoost model (boostplug objective, other custom objective, or
  a built-in ranking objective) as an ONNX model whose output is its raw ranking score, for
  onnxruntime and other ONNX runtimes. Needs the ``serve`` extra (``onnx``).

treelite reads the saved model files directly (``treelite.frontend.load_lightgbm_model``,
``load_xgboost_model``): see ``examples/serve_models.py``, which serves the same models both ways.
"""

from __future__ import annotations

from .onnx import to_onnx

__all__ = ["to_onnx"]
