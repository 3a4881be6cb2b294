"""``boostplug compare --scheduler``'s addresses: a value no Dask scheduler can be at is refused at once
in one line suggesting the right form (it had waited 30 s, then said "no Dask scheduler answers there",
or raised a raw TypeError); an overlong one is shown by its start and its length; ``tls://`` works with
Dask's TLS configuration (certificates in files) and without it names the configuration's keys."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from boostplug.cli import main
from boostplug.compare import cluster

SUGGESTS = "give a Dask scheduler's address, as in tcp://HOST:8786"


def _refused(value: str, monkeypatch, capsys) -> str:
    """The one line ``compare --scheduler value`` ends with, asserted to come within 10 s."""
    monkeypatch.setattr(cluster, "WAIT_SECONDS", 2.0)  # (a value that is tried would take 2 s, not 30 s)
    started = time.monotonic()
    assert main(["compare", "--methods", "regression", "--rounds", "2", "--no-progress", "--scheduler", value]) == 2
    assert time.monotonic() - started < 10
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert "no Dask scheduler answers there" not in err, err  # refused, not tried
    return err


@pytest.mark.parametrize("value,says", [
    ("LOCAL:2", "local:N, in lower case, takes N worker processes, a whole number from 1 to"),
    ("Local:2", "as in local:2"),
    ("tcp://127.0.0.1:0", "the port must be a whole number from 1 to 65535"),
    ("tcp://127.0.0.1:99999", "the port must be a whole number from 1 to 65535"),
    ("127.0.0.1", "the port must be a whole number from 1 to 65535"),
    ("tcp://127.0.0.1:\u0668\u0667\u0668\u0666", "in ASCII digits"),  # 8786 in Arabic-Indic digits
    ("ws://127.0.0.1:8786", "boostplug connects over tcp:// or tls://, not ws://"),
    ("ucx://127.0.0.1:8786", "not ucx://"),
    ("inproc://127.0.0.1/1/2", "not inproc://"),
    ("tcp://:8786", "that is not a host name or IP address"),
], ids=["LOCAL", "Local", "port-0", "port-99999", "no-port", "arabic-indic-port", "ws", "ucx", "inproc", "no-host"])
def test_an_address_no_scheduler_can_be_at_is_refused_at_once(value: str, says: str, monkeypatch, capsys) -> None:
    err = _refused(value, monkeypatch, capsys)
    assert says in err and (SUGGESTS in err or "as in local:2" in err), err


@pytest.mark.parametrize("value", ["x" * 10_000, "tcp://" + "h" * 10_000 + ":8786", "local:" + "9" * 10_000])
def test_an_overlong_value_is_shown_by_its_start_and_length(value: str, monkeypatch, capsys) -> None:
    err = _refused(value, monkeypatch, capsys)
    assert len(err) < 400 and f"({len(value):,} characters)" in err and value[:30] in err, err


def test_tls_without_dask_tls_configuration_names_its_keys(monkeypatch, capsys) -> None:
    dask = pytest.importorskip("dask")
    with dask.config.set({"distributed.comm.tls.ca-file": None, "distributed.comm.tls.client.cert": None}):
        err = _refused("tls://127.0.0.1:8786", monkeypatch, capsys)
    for key in ("distributed.comm.tls.ca-file", "distributed.comm.tls.client.cert", "distributed.comm.tls.client.key"):
        assert key in err, err


def _certificates(folder: Path) -> dict[str, str]:
    """A self-signed certificate (its own CA) and its key, ``Security.temporary()``'s, written to files."""
    from distributed import Security

    made = Security.temporary()
    (folder / "cert.pem").write_text(made.tls_client_cert)
    (folder / "key.pem").write_text(made.tls_client_key)
    return {"ca": str(folder / "cert.pem"), "cert": str(folder / "cert.pem"), "key": str(folder / "key.pem")}


@pytest.mark.dask
@pytest.mark.slow
def test_tls_with_dask_tls_configuration_trains(tmp_path: Path, capsys) -> None:
    """A scheduler and workers that speak TLS only, their certificates in files; the command, given the
    same files through Dask's configuration, trains there."""
    pytest.importorskip("distributed")
    import dask
    from distributed import LocalCluster, Security

    files = _certificates(tmp_path)
    security = Security(require_encryption=True, tls_ca_file=files["ca"], tls_scheduler_cert=files["cert"],
                        tls_scheduler_key=files["key"], tls_worker_cert=files["cert"], tls_worker_key=files["key"],
                        tls_client_cert=files["cert"], tls_client_key=files["key"])
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1", security=security,
                      dashboard_address=None, scheduler_kwargs={"dashboard_address": "127.0.0.1:0"}) as tls:
        assert tls.scheduler_address.startswith("tls://")
        with dask.config.set({"distributed.comm.tls.ca-file": files["ca"],
                              "distributed.comm.tls.client.cert": files["cert"],
                              "distributed.comm.tls.client.key": files["key"]}):
            code = main(["compare", "--methods", "regression", "--rounds", "2", "--no-progress",
                         "--scheduler", tls.scheduler_address])
    err = capsys.readouterr().err
    assert code == 0, err
    assert f"on a Dask cluster (--scheduler {tls.scheduler_address})" in err
