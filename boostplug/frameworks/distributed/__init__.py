"""Training on one worker's whole queries as one member of a network of workers: what
:mod:`boostplug.spark`'s barrier tasks and :mod:`boostplug.dask`'s keyed training both run.

Each worker builds its own training set with the boostplug builders (``doc=`` keys included, so a
:class:`~boostplug.keyed_pairs.KeyedPairs` objective parameter maps onto its own rows) and joins
LightGBM's socket network (:mod:`.lightgbm_worker`) or XGBoost's collective
(:mod:`.xgboost_worker`); :mod:`.metric` adds up a validation metric across the workers. The
engines only differ in how the workers learn their neighbours' addresses and send the model back.
:mod:`.layout` finds a query split between partitions (or in two runs of one) for either engine;
each worker module also names what a driver needs of its framework (``objective``,
``prepare_params``, ``uses_tracker``, ``load``, ``record_objective``)."""
