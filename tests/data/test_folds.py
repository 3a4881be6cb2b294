"""boostplug.data: fold layouts, the LETOR rotation, query-level splits, make_ranking, load_example."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from boostplug.data import (
    RankingData,
    folds_from_parts,
    kfold_by_query,
    letor_layout,
    load_example,
    load_letor,
    load_letor_folds,
    make_ranking,
    train_test_split_by_query,
    write_letor,
)
from boostplug.pairs import count_critical_pairs


def _part(tag: int, n_queries: int, n_features: int) -> RankingData:
    """A tiny part whose qids and first feature identify it (qid = tag * 100 + query)."""
    sizes = np.arange(1, n_queries + 1)
    qid = np.repeat(tag * 100 + np.arange(n_queries), sizes)
    X = np.zeros((qid.size, n_features))
    X[:, 0] = tag
    X[:, -1] = 0.5
    return RankingData(X, np.ones(qid.size), qid)


def _tags(d: RankingData) -> list[int]:
    return [int(t) for t in d.qid[d.group_ptr[:-1]] // 100]


# --- folds ------------------------------------------------------------------------------------

def test_rotation_matches_letor_table():
    parts = [_part(i, 2, 3) for i in range(1, 6)]
    folds = folds_from_parts(parts)
    table = [([1, 2, 3], 4, 5), ([2, 3, 4], 5, 1), ([3, 4, 5], 1, 2), ([4, 5, 1], 2, 3), ([5, 1, 2], 3, 4)]
    assert len(folds) == 5
    for (train, vali, test), (tr, va, te) in zip(folds, table):
        assert _tags(train) == [t for t in tr for _ in range(2)]
        assert _tags(vali) == [va, va] and _tags(test) == [te, te]


@pytest.mark.parametrize("k", [3, 4, 7])
def test_rotation_any_number_of_parts(k):
    parts = [_part(i, 1, 2) for i in range(k)]
    folds = folds_from_parts(parts)
    assert len(folds) == k
    # Every part is tested once and validated once; each fold uses every part exactly once.
    assert sorted(_tags(f[2])[0] for f in folds) == list(range(k))
    assert sorted(_tags(f[1])[0] for f in folds) == list(range(k))
    for train, vali, test in folds:
        assert sorted(_tags(train) + _tags(vali) + _tags(test)) == list(range(k))


def test_rotation_widens_parts_and_needs_three():
    folds = folds_from_parts([_part(1, 1, 2), _part(2, 1, 5), _part(3, 1, 3)])
    assert {d.n_features for f in folds for d in f} == {5}
    with pytest.raises(ValueError, match="at least 3 parts, got 2"):
        folds_from_parts([_part(1, 1, 2), _part(2, 1, 2)])


def _write_parts(root: Path, widths: list[int]) -> list[RankingData]:
    root.mkdir(exist_ok=True)
    parts = [_part(i + 1, 3, w) for i, w in enumerate(widths)]
    for i, p in enumerate(parts):
        write_letor(root / f"S{i + 1}.txt", p)
    return parts


def test_parts_and_fold_folders_agree(tmp_path):
    parts = _write_parts(tmp_path / "parts", [4, 6, 4, 4, 5, 4, 4, 4, 4, 4, 4])  # S10, S11 sort after S9
    from_parts = load_letor_folds(tmp_path / "parts", "rotate")
    assert len(from_parts) == 11
    assert _tags(from_parts[0][0]) == [t for t in range(1, 10) for _ in range(3)]
    assert _tags(from_parts[0][1]) == [10] * 3 and _tags(from_parts[0][2]) == [11] * 3
    # The same folds written as Fold1..Fold11 folders read back identically.
    folds_root = tmp_path / "folds"
    for i, fold in enumerate(from_parts, start=1):
        (folds_root / f"Fold{i}").mkdir(parents=True)
        for name, d in zip(("train", "vali", "test"), fold):
            write_letor(folds_root / f"Fold{i}" / f"{name}.txt", d)
    from_folders = load_letor_folds(folds_root, dense=False)
    assert letor_layout(folds_root).kind == "folds"
    for fa, fb in zip(from_parts, from_folders):
        for a, b in zip(fa, fb):
            assert sp.issparse(b.X) and b.n_features == a.n_features == 6
            assert np.array_equal(a.X, b.X.toarray()) and np.array_equal(a.qid, b.qid)
            assert np.array_equal(a.group_ptr, b.group_ptr)
    assert len(parts) == 11


def test_chosen_folds_are_the_same_folds_and_read_only_their_files(tmp_path, monkeypatch):
    """folds=: the selected folds equal those of the full build; of fold folders only their
    files are read (of parts all parts, one fold built)."""
    from boostplug.data import folds as folds_module
    from boostplug.data import letor_fold_count

    _write_parts(tmp_path / "parts", [4, 6, 4, 4, 5])
    full = load_letor_folds(tmp_path / "parts", "rotate")
    some = load_letor_folds(tmp_path / "parts", "rotate", folds=[3, 1])
    folds_root = tmp_path / "folds"
    for i, fold in enumerate(full, start=1):
        (folds_root / f"Fold{i}").mkdir(parents=True)
        for name, d in zip(("train", "vali", "test"), fold):
            write_letor(folds_root / f"Fold{i}" / f"{name}.txt", d)
    read = []
    real_load = folds_module.load_letor
    monkeypatch.setattr(folds_module, "load_letor", lambda f, **kw: read.append(Path(f).parent.name) or real_load(f, **kw))
    from_folders = load_letor_folds(folds_root, folds=[3, 1])
    assert read == ["Fold4"] * 3 + ["Fold2"] * 3
    assert letor_fold_count(folds_root) == letor_fold_count(tmp_path / "parts", "rotate") == 5
    assert len(read) == 6  # counting reads no file
    for got in (some, from_folders):
        assert len(got) == 2
        for fa, fb in zip((full[3], full[1]), got):
            for a, b in zip(fa, fb):
                assert np.array_equal(a.X, b.X) and np.array_equal(a.qid, b.qid) and np.array_equal(a.y, b.y)
    with pytest.raises(ValueError, match=r"fold index 5 is out of range: there are 5 folds"):
        load_letor_folds(folds_root, folds=[5])
    with pytest.raises(ValueError, match=r"fold index -1 is out of range"):
        load_letor_folds(tmp_path / "parts", "rotate", folds=[-1])


def test_layout_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such folder"):
        load_letor_folds(tmp_path / "absent")
    with pytest.raises(ValueError, match="not a LETOR folder.*found 0 part"):
        load_letor_folds(tmp_path)
    _write_parts(tmp_path / "two", [3, 3])
    with pytest.raises(ValueError, match="found 2 part"):
        load_letor_folds(tmp_path / "two", "rotate")
    (tmp_path / "f" / "Fold1").mkdir(parents=True)
    (tmp_path / "f" / "Fold1" / "train.txt").write_text("1 qid:1 1:1\n")
    with pytest.raises(FileNotFoundError, match=r"Fold1/vali\.txt: missing"):
        load_letor_folds(tmp_path / "f")


def _write_letor_parts(root: Path, n_parts: int = 5, n_features: int = 46) -> None:
    """Parts S1..S{n_parts} of two one-document queries each; qid = part * 100 + query."""
    root.mkdir(parents=True, exist_ok=True)
    for i in range(1, n_parts + 1):
        (root / f"S{i}.txt").write_text("".join(f"{q % 2} qid:{i * 100 + q} 1:{i} {n_features}:0.5\n" for q in range(2)))


def _part_numbers(d: RankingData) -> list[int]:
    return list(dict.fromkeys(int(t) for t in d.qid[d.group_ptr[:-1]] // 100))


@pytest.mark.parametrize("layout, n_features, fold1, fold2", [
    ("letor4", 46, ([1, 2, 3], [4], [5]), ([2, 3, 4], [5], [1])),
    ("letor3", 45, ([2, 3, 4], [5], [1]), ([3, 4, 5], [1], [2])),
    ("letor3", 64, ([2, 3, 4], [5], [1]), ([3, 4, 5], [1], [2])),
    ("rotate", 7, ([1, 2, 3], [4], [5]), ([2, 3, 4], [5], [1])),
])
def test_parts_layouts_build_their_folds(tmp_path, layout, n_features, fold1, fold2):
    _write_letor_parts(tmp_path, n_features=n_features)
    folds = load_letor_folds(tmp_path, layout)
    assert len(folds) == 5
    assert tuple(map(_part_numbers, folds[0])) == fold1
    assert tuple(map(_part_numbers, folds[1])) == fold2
    for train, vali, test in folds:  # every part is tested once and never trains or validates its own fold
        assert not set(_part_numbers(test)) & set(_part_numbers(train) + _part_numbers(vali))
    assert sorted(_part_numbers(f[2])[0] for f in folds) == [1, 2, 3, 4, 5]


def test_parts_folder_needs_a_layout(tmp_path):
    _write_letor_parts(tmp_path)
    with pytest.raises(ValueError, match=r"S1\.txt\.\.S5\.txt, but no layout.*'letor4'.*'letor3'.*'rotate'"):
        load_letor_folds(tmp_path)
    with pytest.raises(ValueError, match=r"unknown layout 'letor5'; choose one of: layout 'letor4' \(LETOR 4\.0"):
        load_letor_folds(tmp_path, "letor5")
    with pytest.raises(ValueError, match=r"not Fold1\.\.FoldK folders"):
        load_letor_folds(tmp_path, "folds")


def test_layout_that_does_not_fit_the_folder(tmp_path):
    _write_letor_parts(tmp_path / "six", n_parts=6)
    with pytest.raises(ValueError, match=r"layout 'letor4' has five parts S1\.\.S5, got 6"):
        load_letor_folds(tmp_path / "six", "letor4")
    _write_letor_parts(tmp_path / "gap")
    (tmp_path / "gap" / "S3.txt").unlink()
    with pytest.raises(FileNotFoundError, match=r"S3\.txt missing"):
        load_letor_folds(tmp_path / "gap", "letor3")
    _write_letor_parts(tmp_path / "ohsumed", n_features=45)
    with pytest.raises(ValueError, match="layout 'letor4'.*46 features, but these parts have 45"):
        load_letor_folds(tmp_path / "ohsumed", "letor4")
    _write_letor_parts(tmp_path / "mq", n_features=46)
    with pytest.raises(ValueError, match="layout 'letor3'.*45 or 64 features, but these parts have 46"):
        load_letor_folds(tmp_path / "mq", "letor3")
    fold = tmp_path / "folds" / "Fold1"
    fold.mkdir(parents=True)
    for name in ("train", "vali", "test"):
        (fold / f"{name}.txt").write_text("1 qid:1 1:1\n0 qid:1 1:0\n")
    with pytest.raises(ValueError, match=r"fold folders Fold1\.\.Fold1, read as they are; layout 'letor4' is for parts"):
        load_letor_folds(tmp_path / "folds", "letor4")
    assert len(load_letor_folds(tmp_path / "folds", "folds")) == len(load_letor_folds(tmp_path / "folds")) == 1


@pytest.mark.realdata
def test_real_folds_test_the_documented_parts(mq2008_dir: Path, ohsumed_dir: Path):
    for root, layout, test_part, width in ((ohsumed_dir, "letor3", "S1", 45), (mq2008_dir, "letor4", "S5", 46)):
        folds = load_letor_folds(root, layout, dense=False)
        test = load_letor(root / f"{test_part}.txt", dense=False)
        assert np.array_equal(folds[0][2].qid, test.qid) and np.array_equal(folds[0][2].y, test.y)
        assert {d.n_features for f in folds for d in f} == {width}
    with pytest.raises(ValueError, match="45"):
        load_letor_folds(ohsumed_dir, "letor4")


@pytest.mark.realdata
def test_mq2008_folds(mq2008_dir: Path):
    folds = load_letor_folds(mq2008_dir, "letor4")
    assert len(folds) == 5
    rows = {"S1": 2933, "S2": 3635, "S3": 3062, "S4": 2707, "S5": 2874}
    train, vali, test = folds[0]
    assert (train.n_docs, vali.n_docs, test.n_docs) == (2933 + 3635 + 3062, 2707, 2874)
    assert {d.n_features for f in folds for d in f} == {46}
    s = [load_letor(mq2008_dir / f"S{i}.txt") for i in (1, 2, 3)]
    assert [p.n_docs for p in s] == [rows["S1"], rows["S2"], rows["S3"]]
    manual = RankingData.concat(*s)
    assert np.array_equal(manual.X, train.X) and np.array_equal(manual.y, train.y)
    assert np.array_equal(manual.qid, train.qid) and np.array_equal(manual.group_ptr, train.group_ptr)
    assert train.n_queries == 3 * 157 and test.n_queries == 156


# --- splits -----------------------------------------------------------------------------------

@pytest.mark.parametrize("n_queries, n_splits", [(10, 3), (7, 7), (23, 5)])
@pytest.mark.parametrize("shuffle", [True, False])
def test_kfold_disjoint_covering_balanced(n_queries, n_splits, shuffle):
    splits = kfold_by_query(n_queries, n_splits, seed=3, shuffle=shuffle)
    tests = [t for _, t in splits]
    assert sorted(np.concatenate(tests).tolist()) == list(range(n_queries))
    sizes = sorted(t.size for t in tests)
    assert sizes[-1] - sizes[0] <= 1
    for train, test in splits:
        assert not set(train.tolist()) & set(test.tolist())
        assert train.size + test.size == n_queries
        assert np.all(np.diff(train) > 0) and np.all(np.diff(test) > 0)
    if not shuffle:
        assert np.all(np.diff(np.concatenate(tests)) == 1)


def test_kfold_seeded_and_on_data():
    d = make_ranking(n_queries=20, seed=1)
    a = kfold_by_query(d, 4, seed=7)
    b = kfold_by_query(d, 4, seed=7)
    c = kfold_by_query(d, 4, seed=8)
    assert all(np.array_equal(x[1], y[1]) for x, y in zip(a, b))
    assert any(not np.array_equal(x[1], y[1]) for x, y in zip(a, c))
    train = d.subset(a[0][0])
    assert train.n_queries == 15
    with pytest.raises(ValueError, match=r"between 2 and the number of queries \(20\), got 21"):
        kfold_by_query(d, 21)
    with pytest.raises(ValueError, match="got 1"):
        kfold_by_query(d, 1)
    with pytest.raises(TypeError, match="n_splits must be an integer"):
        kfold_by_query(d, 2.5)


def test_train_test_split_by_query():
    d = make_ranking(n_queries=30, docs_per_query=(2, 6), seed=2)
    train, test = train_test_split_by_query(d, test_size=0.2, seed=5)
    assert (train.n_queries, test.n_queries) == (24, 6)
    assert train.n_docs + test.n_docs == d.n_docs
    assert not set(train.qid.tolist()) & set(test.qid.tolist())
    assert np.all(np.diff(test.qid[test.group_ptr[:-1]]) > 0)  # original order kept
    again, _ = train_test_split_by_query(d, test_size=0.2, seed=5)
    assert np.array_equal(again.qid, train.qid)
    other, _ = train_test_split_by_query(d, test_size=0.2, seed=6)
    assert not np.array_equal(other.qid, train.qid)
    assert train_test_split_by_query(d, test_size=4)[1].n_queries == 4
    assert train_test_split_by_query(d, test_size=0.01)[1].n_queries == 1  # ceil
    for bad in (0.0, 1.0, 30, 0, -0.5):
        with pytest.raises(ValueError, match="test_size"):
            train_test_split_by_query(d, test_size=bad)


# --- make_ranking -------------------------------------------------------------------------------

def test_make_ranking_properties():
    d = make_ranking(n_queries=50, docs_per_query=(3, 12), n_features=8, n_informative=3, n_labels=4, seed=11)
    assert d.n_queries == 50 and d.n_features == 8 and d.X.dtype == np.float64
    assert d.sizes.min() >= 3 and d.sizes.max() <= 12 and np.unique(d.sizes).size > 3
    counts = np.bincount(d.y.astype(int))
    assert counts.size == 4 and counts.max() - counts.min() <= 1  # quantile grades: all occur, balanced
    assert d.qid.tolist() == np.repeat(np.arange(50), d.sizes).tolist()
    same = make_ranking(n_queries=50, docs_per_query=(3, 12), n_features=8, n_informative=3, n_labels=4, seed=11)
    assert np.array_equal(d.X, same.X) and np.array_equal(d.y, same.y)
    assert not np.array_equal(d.X, make_ranking(n_queries=50, docs_per_query=(3, 12), n_features=8,
                                                n_informative=3, n_labels=4, seed=12).X)


def test_make_ranking_informative_features_carry_the_signal():
    d = make_ranking(n_queries=200, n_features=10, n_informative=3, noise=0.3, seed=0)
    corr = [abs(np.corrcoef(d.X[:, j], d.y)[0, 1]) for j in range(10)]
    assert min(corr[:3]) > 0.2 and max(corr[3:]) < 0.1
    # Without noise and one informative feature, the grade is a monotone function of it.
    clean = make_ranking(n_queries=20, n_features=4, n_informative=1, noise=0.0, seed=1)
    y_sorted = clean.y[np.argsort(clean.X[:, 0])]
    steps = np.diff(y_sorted)
    assert np.all(steps >= 0) or np.all(steps <= 0)
    assert count_critical_pairs(clean.y, clean.group_ptr).sum() > 0


def test_make_ranking_fixed_size_and_errors():
    assert make_ranking(n_queries=4, docs_per_query=6, seed=0).sizes.tolist() == [6, 6, 6, 6]
    with pytest.raises(ValueError, match="n_informative \\(5\\) must not exceed n_features \\(3\\)"):
        make_ranking(n_features=3, n_informative=5)
    with pytest.raises(ValueError, match="min <= max"):
        make_ranking(docs_per_query=(9, 3))
    with pytest.raises(ValueError, match="noise must be"):
        make_ranking(noise=-1.0)
    with pytest.raises(ValueError, match="cannot hold all 5 grades"):
        make_ranking(n_queries=1, docs_per_query=2, n_labels=5)
    with pytest.raises(TypeError, match="n_queries must be an integer"):
        make_ranking(n_queries=2.0)
    with pytest.raises(ValueError, match="n_queries must be >= 1"):
        make_ranking(n_queries=0)


# --- embedded example -----------------------------------------------------------------------------

def test_example_shape():
    train, test = load_example()
    assert (train.n_docs, train.n_queries, train.n_features) == (3005, 201, 300)
    assert (test.n_docs, test.n_queries, test.n_features) == (768, 50, 300)
    assert set(np.unique(train.y).tolist()) == {0.0, 1.0, 2.0, 3.0, 4.0}
    sparse_train, _ = load_example(dense=False)
    assert sp.issparse(sparse_train.X) and np.array_equal(sparse_train.X.toarray(), train.X)


@pytest.mark.realdata
def test_example_equals_original_files(lgb_example_dir: Path):
    train, test = load_example()
    for name, d in (("rank.train", train), ("rank.test", test)):
        ref = load_letor(lgb_example_dir / name, n_features=300)
        assert np.array_equal(ref.X, d.X)  # bit-identical float64
        assert np.array_equal(ref.y, d.y)
        assert np.array_equal(ref.group_ptr, d.group_ptr) and np.array_equal(ref.qid, d.qid)
