"""The browser phone's HTTP surface: off unless enabled, behind the token beyond loopback, and an offer the
agent cannot take (malformed, or the agent full) is refused with the reason and leaves nothing running.
The offers are real ones, made by an aiortc peer connection as a browser would make them."""

import asyncio

import aioice.ice
import pytest
from aiortc import RTCConfiguration, RTCPeerConnection
from aiortc.mediastreams import AudioStreamTrack
from fastapi.testclient import TestClient

from agent.browser.offer import OfferError
from agent.browser.phone import BrowserPhone, CallRefused
from agent.settings import parse
from agent.side.http import create_app
from agent.side.metrics import Metrics
from agent.side.records import SqliteCallStore
from agent.side.state import SideState
from agent.stages import side_config

TOKEN = "a-long-enough-admin-token"


def _client(tmp_path, open_call=None, spare=1, **env) -> TestClient:
    settings = parse([], {"AGENT_ADMIN_TOKEN": TOKEN, **{f"AGENT_{k.upper()}": v for k, v in env.items()}})
    state = SideState(side_config(settings), Metrics(), SqliteCallStore(tmp_path / "calls.db"), open_call=open_call,
                      spare_calls=lambda: spare)
    return TestClient(create_app(state))


@pytest.fixture(autouse=True)
def loopback_only(monkeypatch):
    """Both peers here gather candidates on loopback only (see agent.browser.call.gather_on)."""
    monkeypatch.setattr(aioice.ice, "get_host_addresses", lambda use_ipv4, use_ipv6: ["127.0.0.1"])


async def _offer() -> dict:
    pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
    pc.addTrack(AudioStreamTrack())
    pc.createDataChannel("call")
    await pc.setLocalDescription(await pc.createOffer())
    offer = {"type": "offer", "sdp": pc.localDescription.sdp}
    await pc.close()
    return offer


def test_the_phone_is_off_unless_enabled(tmp_path):
    client = _client(tmp_path)
    assert client.get("/phone").status_code == 404
    assert client.post("/phone/offer", json={}).status_code == 404


def test_on_loopback_the_page_is_served_without_a_token(tmp_path):
    page = _client(tmp_path, web_phone="true").get("/phone")
    assert page.status_code == 200 and "RTCPeerConnection" in page.text
    assert "<script src" not in page.text and "https://" not in page.text  # nothing from a CDN


def test_beyond_loopback_the_page_and_its_signalling_need_the_token(tmp_path):
    client = _client(tmp_path, web_phone="true", http_host="0.0.0.0")
    assert client.get("/phone").status_code == 401
    assert client.post("/phone/offer", json={}).status_code == 401
    assert client.get("/phone", auth=("me", TOKEN)).status_code == 200


def test_before_the_agent_has_started_an_offer_is_told_to_wait(tmp_path):
    assert _client(tmp_path, web_phone="true").post("/phone/offer", json={}).status_code == 503


def test_a_full_agent_refuses_an_offer_before_opening_anything_for_it(tmp_path):
    async def never(call):
        raise AssertionError("a full agent must not start a call")

    refused = _client(tmp_path, open_call=never, spare=0, web_phone="true").post("/phone/offer", json={})
    assert refused.status_code == 503 and "busy" in refused.json()["detail"]


@pytest.mark.parametrize("body, why", [
    (b"not json", "must be JSON"),
    (b'{"type": "offer"}', "expected"),
    (b'{"type": "offer", "sdp": "v=0\\r\\nm=video 9 UDP/TLS/RTP/SAVPF 96\\r\\n"}', "no audio"),
])
def test_a_malformed_offer_is_refused_with_the_reason(tmp_path, body, why):
    async def never(call):
        raise AssertionError("a malformed offer must not become a call")

    refused = _client(tmp_path, open_call=never, web_phone="true").post(
        "/phone/offer", content=body, headers={"content-type": "application/json"})
    assert refused.status_code == 400 and why in refused.json()["detail"]


@pytest.mark.parametrize("damage", [
    lambda sdp: sdp.replace("c=IN IP4", "c=IN IP9"),  # aiortc asserts
    lambda sdp: sdp.replace("a=rtpmap:", "a=x:"),  # no codec in common: aiortc raises OperationError
    lambda sdp: "\n".join(line for line in sdp.split("\n") if "ice-ufrag" not in line),
])
def test_an_offer_aiortc_cannot_use_is_refused_as_a_bad_offer(damage):
    async def never(call):
        raise AssertionError("an unusable offer must not become a call")

    async def scenario():
        offer = await _offer()
        with pytest.raises(OfferError, match="could not be used"):
            await BrowserPhone().call({**offer, "sdp": damage(offer["sdp"])}, never, "browser:127.0.0.1", "browser")

    asyncio.run(scenario())


def test_an_offer_the_agent_has_no_room_for_is_refused_and_closed():
    calls = []

    async def full(call):
        calls.append(call)
        return "busy: the agent is at its call limit"

    async def scenario():
        with pytest.raises(CallRefused, match="busy"):
            await BrowserPhone().call(await _offer(), full, "browser:127.0.0.1", "browser")
        return calls[0]._pc.connectionState

    assert asyncio.run(scenario()) == "closed"

