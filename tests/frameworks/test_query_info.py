"""One rule tells weights given one per row from weights given one per query, and the three
framework functions that read weights (objective, builder, metric) all follow it."""

import numpy as np
import pytest

from boostplug.frameworks._builders import builder_weights
from boostplug.frameworks._query_info import metric_query_weights, query_weights_from_rows, weights_by_query

GP = np.array([0, 2, 5, 6], dtype=np.int64)  # 3 queries, 6 rows


def test_the_rule_reads_the_count():
    assert weights_by_query(6, GP) is False
    assert weights_by_query(3, GP) is True
    single = np.arange(4, dtype=np.int64)  # every query one row: both readings are the same weights
    assert weights_by_query(3, single) is False
    with pytest.raises(ValueError, match=r"^XGBoost: got 4 weights for 6 rows in 3 queries"):
        weights_by_query(4, GP, "XGBoost")


def test_per_query_weights_are_read_alike():
    w = np.array([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(query_weights_from_rows(w, GP, "LightGBM"), w)
    np.testing.assert_array_equal(metric_query_weights(w, GP), w)
    np.testing.assert_array_equal(builder_weights(w, GP, "XGBoost", per_query=True), w)
    np.testing.assert_array_equal(builder_weights(w, GP, "LightGBM", per_query=False), [1, 1, 2, 2, 2, 3])


def test_per_row_weights_are_read_alike():
    rows = np.array([1.0, 1.0, 2.0, 2.0, 2.0, 3.0])
    np.testing.assert_array_equal(query_weights_from_rows(rows, GP, "LightGBM"), [1, 2, 3])
    np.testing.assert_array_equal(builder_weights(rows, GP, "XGBoost", per_query=True), [1, 2, 3])
    np.testing.assert_array_equal(builder_weights(rows, GP, "LightGBM", per_query=False), rows)
    varying = np.array([1.0, 3.0, 2.0, 2.0, 5.0, 3.0])
    np.testing.assert_allclose(metric_query_weights(varying, GP), [2.0, 3.0, 3.0])  # the query's mean


@pytest.mark.parametrize("read", [
    lambda w: query_weights_from_rows(w, GP, "LightGBM"),
    lambda w: metric_query_weights(w, GP, "LightGBM"),
    lambda w: builder_weights(w, GP, "LightGBM", per_query=False),
    lambda w: builder_weights(w, GP, "LightGBM", per_query=True),
])
def test_a_count_that_is_neither_is_refused_the_same_way(read):
    with pytest.raises(ValueError, match=r"^LightGBM: got 4 weights for 6 rows in 3 queries; give one weight per row "
                                         r"or one per query$"):
        read(np.ones(4))
