"""Fixtures for the judge tests: a loopback OpenAI-compatible server per test."""

from __future__ import annotations

import pytest

from .fake_openai import FakeOpenAI


@pytest.fixture
def fake_openai():
    """``start(responder) -> FakeOpenAI``; every server started is stopped at test end."""
    servers: list[FakeOpenAI] = []

    def start(responder) -> FakeOpenAI:
        server = FakeOpenAI(responder)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()
