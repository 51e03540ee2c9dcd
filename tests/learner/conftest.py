"""Fixtures for the learner tests.

The suite runs with ``--import-mode=importlib``, where test modules cannot import
their neighbours, so helper modules are loaded here by path and exposed as fixtures.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest


def _load_helper(name: str):
    qualified = f"relic_tests_learner_{name}"
    if qualified in sys.modules:
        return sys.modules[qualified]
    spec = importlib.util.spec_from_file_location(qualified, Path(__file__).with_name(f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[qualified] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def openai_server():
    """A scripted local chat-completions server (see ``fake_openai_server.py``)."""
    with _load_helper("fake_openai_server").FakeOpenAIServer() as server:
        yield server


@pytest.fixture
def leaky_model():
    """The module of the code-leaking model that the boundary tests script (see ``leaky_model.py``)."""
    return _load_helper("leaky_model")
