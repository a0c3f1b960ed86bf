"""The side app's admin token: long enough beyond loopback, and not guessable at network speed."""

import pytest
from fastapi.testclient import TestClient

from agent.settings import SettingsError, parse
from agent.side.auth import AUTH_FAILURES
from agent.side.http import create_app
from agent.side.metrics import Metrics
from agent.side.records import SqliteCallStore
from agent.side.state import SideState
from agent.stages import side_config

TOKEN = "a-long-enough-admin-token"


def test_repeated_wrong_tokens_are_refused_outright_even_before_the_right_one(tmp_path):
    settings = parse([], {"AGENT_ADMIN_TOKEN": TOKEN})
    client = TestClient(create_app(SideState(side_config(settings), Metrics(), SqliteCallStore(tmp_path / "calls.db"))))
    assert client.get("/calls", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
    for _ in range(AUTH_FAILURES):
        assert client.get("/calls", headers={"Authorization": "Bearer guess"}).status_code == 401
    refused = client.get("/calls", headers={"Authorization": f"Bearer {TOKEN}"})
    assert refused.status_code == 429 and int(refused.headers["Retry-After"]) > 0


def test_a_short_token_is_refused_when_the_side_app_listens_beyond_loopback():
    with pytest.raises(SettingsError, match="at least 16"):
        parse([], {"AGENT_ADMIN_TOKEN": "short", "AGENT_HTTP_HOST": "0.0.0.0"})
    assert parse([], {"AGENT_ADMIN_TOKEN": "short"}).admin_token == "short"  # loopback only: the operator's call


def test_a_browser_page_asks_for_the_token_and_accepts_it_as_the_basic_password(tmp_path):
    settings = parse([], {"AGENT_ADMIN_TOKEN": TOKEN})
    state = SideState(side_config(settings), Metrics(), SqliteCallStore(tmp_path / "calls.db"),
                      embed=lambda texts: None)
    client = TestClient(create_app(state))
    challenge = client.get("/dashboard")
    assert challenge.status_code == 401 and challenge.headers["WWW-Authenticate"].startswith("Basic realm=")
    assert client.get("/dashboard", auth=("owner", "wrong")).status_code == 401
    page = client.get("/dashboard", auth=("owner", TOKEN))
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert client.get("/calls", auth=("anyone", TOKEN)).status_code == 200
    assert client.get("/calls", headers={"Authorization": "Basic !!not-base64"}).status_code == 401
