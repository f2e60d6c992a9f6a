"""Shared pytest fixtures: the asyncio backend and a private data folder for every test session."""

import os

import pytest


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session", autouse=True)
def _private_data_dir(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Servers started by the tests build their business systems here, never in the learner's data/."""
    os.environ.setdefault("LABKIT_DATA_DIR", str(tmp_path_factory.mktemp("labkit-data")))
