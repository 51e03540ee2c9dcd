"""Fixtures for the comparator tests: the learner tests' scripted OpenAI-compatible server."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

_SERVER = Path(__file__).parents[1] / "learner" / "fake_openai_server.py"


def _server_module():
    name = "relic_tests_ahd_fake_openai_server"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, _SERVER)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up while the class is built
        spec.loader.exec_module(module)
    return sys.modules[name]


@pytest.fixture
def openai_server():
    """A scripted local chat-completions server (tests/learner/fake_openai_server.py)."""
    with _server_module().FakeOpenAIServer() as server:
        yield server
