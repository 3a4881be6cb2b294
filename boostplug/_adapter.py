"""Where :mod:`boostplug.boosters` finds two adapter helpers until it imports them from
:mod:`boostplug.frameworks._adapter`, where they live."""

from .frameworks._adapter import MetricSpec, query_weights_from_rows

__all__ = ["MetricSpec", "query_weights_from_rows"]
