"""Fixtures of the elicitation tests: fake chat-completions servers, stopped after the test."""

from __future__ import annotations

import pytest

from tests._fake_openai_server import FakeOpenAIServer


@pytest.fixture
def make_server():
    servers = []

    def make(behaviour=None):
        srv = FakeOpenAIServer(behaviour).start()
        servers.append(srv)
        return srv

    yield make
    for srv in servers:
        srv.stop()
