"""The numeric core shared by the metrics, the objectives and the boosters (private).

* :mod:`.dispatch`: whether a numba kernel runs in parallel or as its serial twin;
* :mod:`.dcg`: gains, discounts, DCG and ideal DCG.
"""
