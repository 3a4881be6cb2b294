"""boostplug.groups: conversions between qid, sizes and group_ptr, and their errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests._hypothesis import SETTINGS

from boostplug.groups import (
    Regrouped,
    check_group_ptr,
    first_noncontiguous,
    group_ptr_from_qid,
    group_ptr_from_sizes,
    qid_from_group_ptr,
    sizes_from_group_ptr,
)


def _slow_ptr(qid: list) -> list[int]:
    """Run boundaries, by a plain loop."""
    ptr = [0]
    for i in range(1, len(qid)):
        if qid[i] != qid[i - 1]:
            ptr.append(i)
    ptr.append(len(qid))
    return ptr if qid else [0]


def test_contiguous_unsorted_qid_keeps_file_order():
    ptr = group_ptr_from_qid([10002, 10002, 10002, 7, 7, 30])
    assert ptr.dtype == np.int64
    assert ptr.tolist() == [0, 3, 5, 6]


def test_string_qid():
    assert group_ptr_from_qid(np.array(["b", "b", "a", "c", "c"])).tolist() == [0, 2, 3, 5]


@pytest.mark.parametrize("trial", range(20))
def test_qid_ptr_matches_loop_and_round_trips(rng, trial):
    sizes = rng.integers(1, 6, size=rng.integers(1, 12))
    ids = rng.permutation(1000)[: sizes.size]  # distinct, unsorted
    qid = np.repeat(ids, sizes)
    ptr = group_ptr_from_qid(qid)
    assert ptr.tolist() == _slow_ptr(qid.tolist())
    assert sizes_from_group_ptr(ptr).tolist() == sizes.tolist()
    assert group_ptr_from_sizes(sizes).tolist() == ptr.tolist()
    assert group_ptr_from_qid(qid_from_group_ptr(ptr)).tolist() == ptr.tolist()
    assert qid_from_group_ptr(ptr).tolist() == np.repeat(np.arange(sizes.size), sizes).tolist()


def test_empty_inputs():
    assert group_ptr_from_qid([]).tolist() == [0]
    assert group_ptr_from_sizes([]).tolist() == [0]
    assert group_ptr_from_sizes([], n_docs=0).tolist() == [0]
    assert check_group_ptr([0], n_docs=0).tolist() == [0]
    assert qid_from_group_ptr([0]).tolist() == []
    r = group_ptr_from_qid([], regroup=True)
    assert r.group_ptr.tolist() == [0] and r.permutation.tolist() == []


def test_noncontiguous_qid_names_qid_and_rows():
    with pytest.raises(ValueError, match=r"qid 5 is not contiguous: its rows start at row 1 .* again at row 4"):
        group_ptr_from_qid([3, 5, 5, 8, 5, 3])
    assert first_noncontiguous([3, 5, 5, 8, 5, 3]) == (4, 1)
    assert first_noncontiguous([1, 1, 2, 2]) is None
    assert first_noncontiguous([4]) is None


def test_noncontiguous_string_qid_message():
    with pytest.raises(ValueError, match=r"qid 'a' is not contiguous.*row 2"):
        group_ptr_from_qid(["a", "b", "a"])


def test_regroup_is_stable_and_ordered_by_first_appearance():
    qid = np.array([3, 5, 5, 8, 5, 3, 8, 9])
    r = group_ptr_from_qid(qid, regroup=True)
    assert isinstance(r, Regrouped)
    # Queries in order of first appearance (3, 5, 8, 9), rows in original order within each.
    assert r.permutation.tolist() == [0, 5, 1, 2, 4, 3, 6, 7]
    assert r.group_ptr.tolist() == [0, 2, 5, 7, 8]
    assert qid[r.permutation].tolist() == [3, 3, 5, 5, 5, 8, 8, 9]


@pytest.mark.parametrize("trial", range(10))
def test_regroup_random_against_slow_reference(rng, trial):
    qid = rng.integers(0, 5, size=rng.integers(1, 30))
    r = group_ptr_from_qid(qid, regroup=True)
    order: list[int] = []
    for v in qid.tolist():
        if v not in order:
            order.append(v)
    expected = [i for v in order for i in range(qid.size) if qid[i] == v]
    assert r.permutation.tolist() == expected
    assert r.group_ptr.tolist() == _slow_ptr(qid[r.permutation].tolist())


def test_regroup_of_contiguous_is_identity():
    r = group_ptr_from_qid([2, 2, 1], regroup=True)
    assert r.permutation.tolist() == [0, 1, 2]
    assert r.group_ptr.tolist() == [0, 2, 3]


def test_qid_errors():
    with pytest.raises(ValueError, match=r"row 1 has qid nan"):
        group_ptr_from_qid([1.0, np.nan])
    with pytest.raises(ValueError, match=r"one-dimensional.*\(2, 2\)"):
        group_ptr_from_qid([[1, 1], [2, 2]])


def test_sizes_errors_show_values():
    with pytest.raises(ValueError, match=r"positive; got \[0, -2\] at positions \[1, 3\]"):
        group_ptr_from_sizes([3, 0, 2, -2])
    with pytest.raises(ValueError, match=r"sum to 5 but there are 6 documents"):
        group_ptr_from_sizes([2, 3], n_docs=6)
    with pytest.raises(ValueError, match=r"whole numbers; got \[2.5\]"):
        group_ptr_from_sizes([1.0, 2.5])
    with pytest.raises(TypeError, match="integers"):
        group_ptr_from_sizes(["a"])
    assert group_ptr_from_sizes(np.array([2.0, 1.0])).tolist() == [0, 2, 3]


def test_group_ptr_errors_show_values():
    with pytest.raises(ValueError, match=r"start at 0, got \[1, 3\]"):
        check_group_ptr([1, 3])
    with pytest.raises(ValueError, match=r"group_ptr\[1\] = 3 is followed by group_ptr\[2\] = 3"):
        check_group_ptr([0, 3, 3, 5])
    with pytest.raises(ValueError, match=r"group_ptr\[0\] = 0 is followed by group_ptr\[1\] = -1"):
        check_group_ptr([0, -1])
    with pytest.raises(ValueError, match=r"ends at 5 but there are 4 documents"):
        check_group_ptr([0, 2, 5], n_docs=4)
    with pytest.raises(ValueError, match="at least one entry"):
        check_group_ptr([])
    with pytest.raises(ValueError, match="whole numbers"):
        check_group_ptr([0.0, 1.5])
    with pytest.raises(TypeError, match="integer array"):
        check_group_ptr(np.array(["0", "1"]))
    with pytest.raises(ValueError, match="one-dimensional"):
        check_group_ptr(np.zeros((2, 2), dtype=np.int64))
    with pytest.raises(ValueError, match="not followed|strictly increasing"):
        sizes_from_group_ptr([0, 2, 1])


def test_long_values_are_abbreviated():
    sizes = np.zeros(20, dtype=np.int64)
    with pytest.raises(ValueError, match=r"\(20 values\)"):
        group_ptr_from_sizes(sizes)


def test_check_group_ptr_returns_contiguous_int64():
    g = check_group_ptr(np.array([0, 2, 4], dtype=np.int32)[::1], n_docs=4)
    assert g.dtype == np.int64 and g.flags.c_contiguous


# -- property-based (hypothesis): the conversions round-trip for every list of sizes ---------------
@SETTINGS
@given(st.lists(st.integers(1, 20), min_size=0, max_size=30))
def test_group_conversions_round_trip(sizes):
    ptr = group_ptr_from_sizes(np.asarray(sizes, dtype=np.int64))
    assert ptr.dtype == np.int64 and ptr[0] == 0 and ptr[-1] == sum(sizes)
    np.testing.assert_array_equal(sizes_from_group_ptr(ptr), sizes)
    np.testing.assert_array_equal(group_ptr_from_qid(qid_from_group_ptr(ptr)), ptr)
