import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


import itertools

import psycopg2
import pytest

from real_postgres import real_postgres

_databases = itertools.count()


@pytest.fixture(scope="session")
def postgres_server():
    with real_postgres() as url:
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def storage(request, tmp_path):
    """Every study test runs on both storages the search worker supports: a SQLite file (the
    default) and PostgreSQL (RAGEN_SEARCH_STORAGE, as docker-compose sets it), each test its own."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'optuna.db'}"
    server = request.getfixturevalue("postgres_server")
    name = f"study_{next(_databases)}"
    conn = psycopg2.connect(server.replace("postgresql+psycopg2", "postgresql") + "/postgres")
    conn.autocommit = True
    with conn.cursor() as cur:
        cur.execute(f"CREATE DATABASE {name}")
    conn.close()
    return f"{server}/{name}"
