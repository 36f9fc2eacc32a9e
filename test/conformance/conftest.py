from pathlib import Path

import pytest

from conformance_data import require_conformance_dir


@pytest.fixture(scope="session")
def conformance_dir() -> Path:
    return require_conformance_dir()
