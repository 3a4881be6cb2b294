"""LightGBM integration; users import :mod:`boostplug.lightgbm`, which re-exports it."""
