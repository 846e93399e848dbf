"""Connecting to a Ray cluster (``--ray-address``): an address that does not answer fails
within the connect timeout, in one line naming the address, before Ray is asked."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import types

import pytest

from fasteval.batch.ray_engine import connect_ray, ray_endpoint
from fasteval.errors import FastevalError

WAIT_ENV = "RAY_gcs_server_port_wait_time_s"


def _closed_port() -> int:
    """A local port nothing listens on (bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _fake_ray(seen: list):
    def init(address, **options):
        seen.append((address, os.environ.get(WAIT_ENV)))

    return types.SimpleNamespace(is_initialized=lambda: False, init=init)


@pytest.mark.parametrize(("address", "expected"), [
    ("10.0.0.1:6379", ("10.0.0.1", 6379)),
    ("ray://al:pw@head.example:10001?token=t", ("head.example", 10001)),
    ("[::1]:6379", ("::1", 6379)),
    ("auto", None),
    ("ray://head", None),
    ("host:0", None),
    ("host:99999", None),
])
def test_ray_endpoint(address, expected):
    assert ray_endpoint(address) == expected


def test_a_refused_address_fails_at_once_without_asking_ray():
    seen: list = []
    port = _closed_port()
    t0 = time.monotonic()
    with pytest.raises(FastevalError) as exc:
        connect_ray(f"127.0.0.1:{port}", ray=_fake_ray(seen))
    assert time.monotonic() - t0 < 5
    assert seen == []
    text = str(exc.value)
    assert "\n" not in text
    assert text.startswith(f"could not connect to the Ray cluster at '127.0.0.1:{port}' (--ray-address): "
                           f"cannot open a connection to 127.0.0.1:{port}: ")


def test_a_silent_address_fails_after_the_timeout_with_credentials_masked(monkeypatch):
    def create_connection(endpoint, timeout):
        assert endpoint == ("10.0.0.9", 10001) and timeout == 2.5
        raise TimeoutError("timed out")

    monkeypatch.setattr(socket, "create_connection", create_connection)
    seen: list = []
    with pytest.raises(FastevalError) as exc:
        connect_ray("ray://al:hunter2@10.0.0.9:10001", ray=_fake_ray(seen), timeout=2.5)
    assert seen == []
    assert str(exc.value) == ("could not connect to the Ray cluster at 'ray://***@10.0.0.9:10001' "
                              "(--ray-address): no answer from 10.0.0.9:10001 within 2.5 s")


def test_ray_makes_one_gcs_attempt_and_the_environment_is_restored(monkeypatch):
    monkeypatch.delenv(WAIT_ENV, raising=False)
    seen: list = []
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(4)
        address = f"127.0.0.1:{server.getsockname()[1]}"
        assert connect_ray(address, ray=_fake_ray(seen)) is True
    assert seen == [(address, "1")]
    assert WAIT_ENV not in os.environ


def test_a_user_setting_of_the_gcs_wait_is_kept(monkeypatch):
    monkeypatch.setenv(WAIT_ENV, "40")
    seen: list = []
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(4)
        connect_ray(f"127.0.0.1:{server.getsockname()[1]}", ray=_fake_ray(seen))
    assert [wait for _, wait in seen] == ["40"]
    assert os.environ[WAIT_ENV] == "40"


def test_a_local_ray_gets_no_probe_and_no_gcs_setting(monkeypatch):
    monkeypatch.delenv(WAIT_ENV, raising=False)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    seen: list = []
    assert connect_ray(None, ray=_fake_ray(seen)) is True
    assert seen == [(None, None)]


def test_ray_address_in_the_environment_is_checked_and_named(monkeypatch):
    port = _closed_port()
    monkeypatch.setenv("RAY_ADDRESS", f"127.0.0.1:{port}")
    seen: list = []
    with pytest.raises(FastevalError) as exc:
        connect_ray(None, ray=_fake_ray(seen))
    assert seen == []
    assert str(exc.value).startswith(f"could not connect to the Ray cluster at '127.0.0.1:{port}' "
                                     f"($RAY_ADDRESS): cannot open a connection to 127.0.0.1:{port}: ")


@pytest.mark.parametrize("value", ["0", "-1", "inf", "nan", "soon"])
def test_cli_refuses_a_bad_connect_timeout(value, capsys):
    from fasteval.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(["eval", "q", "r", "-m", "map", "--engine", "ray", f"--ray-connect-timeout={value}"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip()
    assert (f"argument --ray-connect-timeout: expected a positive number of seconds, got '{value}'"
            in err)
    assert "\n" not in err


def test_cli_with_an_unreachable_ray_address_is_one_line_within_seconds(tmp_path):
    pytest.importorskip("ray")
    from tests._data import SHIPPED_TREC

    port = _closed_port()
    t0 = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "fasteval", "eval", str(SHIPPED_TREC / "qrels.test"),
         str(SHIPPED_TREC / "results.test"), "-m", "map", "--engine", "ray",
         "--ray-address", f"127.0.0.1:{port}", "--quiet"],
        capture_output=True, text=True, timeout=90, cwd=tmp_path)
    assert time.monotonic() - t0 < 60
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"fasteval: error: could not connect to the Ray cluster at '127.0.0.1:{port}' (--ray-address): "
        f"cannot open a connection to 127.0.0.1:{port}: Connection refused"]
    assert proc.stdout == ""
