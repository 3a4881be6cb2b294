"""The paths of a raw click log (both readers, through clicks/formats/_lines.paths_of): a path
given as bytes is one path (it was iterated as byte values: "expected paths, got int (47)"), and
a FIFO or a device is named as what it is (it was "no such file or folder")."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from boostplug import clicks
from tests._helpers import fifo_in

YANDEX = "1\t0\tQ\t10\t213\t100\t101\n1\t5\tC\t101\n"
READERS = {"yandex": clicks.YandexRelPred, "baidu": clicks.BaiduULTR}


@pytest.mark.parametrize("reader", list(READERS))
def test_a_bytes_path_is_one_path(tmp_path: Path, reader: str) -> None:
    path = tmp_path / "log.txt"
    path.write_text(YANDEX)
    for given in (bytes(path), [bytes(path)], os.fsencode(tmp_path)):
        assert READERS[reader](given).paths == [path]
    log = clicks.read_yandex(bytes(path))
    assert log.doc.tolist() == [100, 101] and log.clicked.tolist() == [False, True]
    with pytest.raises(TypeError, match=r"expected a path \(str, bytes or os.PathLike\), got int \(47\)"):
        READERS[reader]([47])


@pytest.mark.parametrize("reader", list(READERS))
def test_a_fifo_or_a_device_is_named_as_what_it_is(tmp_path: Path, reader: str) -> None:
    with fifo_in(tmp_path) as fifo, pytest.raises(ValueError, match=rf"'{fifo}' is a FIFO, not a file or folder"):
        READERS[reader](fifo)
    with pytest.raises(ValueError, match=r"'/dev/null' is a character device, not a file or folder"):
        READERS[reader]("/dev/null")
    with pytest.raises(ValueError, match="no such file or folder: .*missing"):
        READERS[reader](tmp_path / "missing")
