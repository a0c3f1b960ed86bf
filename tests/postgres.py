"""The tests' PostgreSQL: one throwaway cluster for the session (eval.kit.postgres)."""

import pytest

from eval.kit.postgres import Postgres

__all__ = ["Postgres", "postgres"]


@pytest.fixture(scope="session")
def postgres():
    server = Postgres()
    yield server
    server.remove()
