"""The framework integrations behind :mod:`boostplug.lightgbm`, :mod:`boostplug.xgboost` and
:mod:`boostplug.dask` (those public modules re-export what users call); what each module holds:
ARCHITECTURE.md, ``frameworks/``.
"""
