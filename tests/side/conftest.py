"""Call-record stores of both backends, so each store test runs against SQLite and a real PostgreSQL."""

import pytest

from agent.side.records import SqliteCallStore


@pytest.fixture(params=["sqlite", "postgresql"])
def open_store(request, tmp_path):
    """`open_store(name="calls", instance="")`: the store called `name` (the same name reopens the same records, as
    after a restart or from another agent), as `instance`."""
    places: dict[str, str] = {}
    opened = []

    def open_store(name: str = "calls", instance: str = ""):
        if request.param == "sqlite":
            store = SqliteCallStore(tmp_path / f"{name}.sqlite3", instance)
        else:
            from agent.side.records_pg import PostgresCallStore

            if name not in places:
                places[name] = request.getfixturevalue("postgres").new_database()
            store = PostgresCallStore(places[name], instance)
            opened.append(store)
        return store

    yield open_store
    for store in opened:
        store.close()


@pytest.fixture(params=["folder", "postgresql"])
def message_store(request, tmp_path):
    """The messages folder, or the messages table of a fresh PostgreSQL database."""
    if request.param == "folder":
        from agent.side.messages import MessageStore

        yield MessageStore(tmp_path / "messages")
        return
    from agent.side.messages_pg import PostgresMessageStore
    from agent.side.records_pg import PostgresCallStore

    records = PostgresCallStore(request.getfixturevalue("postgres").new_database(), "agent-a")
    yield PostgresMessageStore(records)
    records.close()
