"""Dask integration; users import :mod:`boostplug.dask`, which re-exports it."""
