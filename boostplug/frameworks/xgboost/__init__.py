"""XGBoost integration; users import :mod:`boostplug.xgboost`, which re-exports it."""
