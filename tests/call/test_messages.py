"""Taking a message over real SIP calls: recorded, transcribed, listed at /messages, and kept on a hang-up."""

import html
import json
import time
import wave
from pathlib import Path

import pytest

from agent.call.commands import Phrase
from eval.kit.owner import SmtpReceiver, WebhookReceiver
from eval.kit.scoring import heard_said, word_error_rate
from tests.conftest import synthesize_caller
from tests.peers import AgentProcess, chromium, heard, place_call

TOKEN = "test-token-messages"
ARTIFACTS = Path(__file__).resolve().parents[2] / "var" / "test-artifacts" / "dashboard"
"""The dashboard's screenshot, kept after the run (var/ is not in git)."""
WEBHOOK_SECRET = "owner-webhook-secret-42"
MESSAGE = "Hello, this is Sam Baker. Please call me back about my boiler service, my number is five five five, one two."


@pytest.fixture(scope="module")
def owner(tmp_path_factory):
    """The owner's webhook receiver and mail server, both real, on loopback."""
    webhook, mail = WebhookReceiver(WEBHOOK_SECRET).start(), SmtpReceiver(tmp_path_factory.mktemp("smtp")).start()
    yield webhook, mail
    webhook.stop()
    mail.stop()


@pytest.fixture(scope="module")
def message_agent(tmp_path_factory, settings, owner):
    webhook, mail = owner
    process = AgentProcess(tmp_path_factory.mktemp("messages"), settings, admin_token=TOKEN, message_silence_s=2,
                           inactivity_s=60, webhook_url=webhook.url, webhook_secret=WEBHOOK_SECRET,
                           smtp_host="127.0.0.1", smtp_port=mail.port, smtp_user=SmtpReceiver.USER,
                           smtp_password=SmtpReceiver.PASSWORD, smtp_from="agent@example.com",
                           smtp_to="owner@example.com", smtp_ca_file=mail.ca_file)
    yield process
    process.stop()


@pytest.fixture(scope="module")
def voices(tmp_path_factory):
    folder = tmp_path_factory.mktemp("message-voices")

    def make(name: str, text: str):
        path = folder / f"{name}.wav"
        with wave.open(str(path), "wb") as wav:
            wav.setnchannels(1)
            wav.setsampwidth(2)
            wav.setframerate(8000)
            wav.writeframes(synthesize_caller(folder, text, engine="flite").tobytes())
        return path

    return {"request": make("request", "Can I leave a message, please?"), "message": make("message", MESSAGE)}


def _messages(agent, expected: int, timeout: float = 30) -> list[dict]:
    """The agent's messages once `expected` of them are transcribed."""
    deadline = time.monotonic() + timeout
    while True:
        found = agent.http("GET", "/messages", TOKEN).json()["messages"]
        if sum(m["transcript"] is not None for m in found) >= expected or time.monotonic() > deadline:
            return found
        time.sleep(0.5)


def test_a_message_is_recorded_after_the_tone_and_listed_with_its_transcript(message_agent, models, voices,
                                                                              tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"audio": str(voices["request"])}, {"audio": str(voices["message"])}]))
    timeline = place_call(message_agent, tmp_path, "--script", str(script), duration=40)
    (message,) = _messages(message_agent, 1)
    assert message_agent.http("GET", "/messages").status_code == 401
    assert message["ended_by"] == "silence" and "caller" in message["caller"]
    assert word_error_rate(MESSAGE, message["transcript"]) <= 0.35, message["transcript"]
    audio = message_agent.http("GET", message["audio"], TOKEN)
    assert audio.status_code == 200 and audio.headers["content-type"] == "audio/wav"
    path = tmp_path / "message.wav"
    path.write_bytes(audio.content)
    with wave.open(str(path)) as wav:
        assert wav.getframerate() == 16000 and abs(wav.getnframes() / 16000 - message["seconds"]) < 0.1
    # The message is the caller's words only: it starts after the tone and ends soon after the last word.
    assert 4 < message["seconds"] < 10
    message_end = timeline["steps"][1]["end_tick"]
    assert heard_said(heard(models, timeline, message_end), Phrase.MESSAGE_SAVED.value)
    record = message_agent.http("GET", f"/calls/{message['call_id']}", TOKEN).json()
    assert [t["outcome"] for t in record["turns"]] == ["message requested", "message taken"]
    assert record["turns"][1]["transcript"] == message["transcript"]


def test_the_owner_is_told_of_the_message_by_a_signed_webhook_and_by_mail_with_the_recording(message_agent, owner):
    webhook, mail = owner
    (message,) = _messages(message_agent, 1)
    (told,) = [r for r in webhook.wait_for(1) if r["body"]["type"] == "message.left"]
    assert told["signed"] and told["key"] == f"message.left:{message['id']}"
    assert told["body"]["message"]["transcript"] == message["transcript"]
    assert told["body"]["call"]["id"] == message["call_id"]
    (mailed,) = mail.wait_for(1)
    assert mailed.get_body(("plain",)).get_content().startswith(message["transcript"])
    (recording,) = mailed.iter_attachments()
    assert recording.get_content() == message_agent.http("GET", message["audio"], TOKEN).content


def test_the_owner_sees_the_message_on_the_dashboard_in_a_real_browser(message_agent, tmp_path):
    (message,) = _messages(message_agent, 1)
    page = f"127.0.0.1:{message_agent.http_port}/dashboard"
    # The browser sends the token as HTTP Basic credentials, as it would after asking the owner for them.
    browser = chromium(tmp_path / "owner", f"http://owner:{TOKEN}@{page}", "--dump-dom")
    dom = browser.stdout
    assert message["transcript"] in dom, browser.stderr[-2000:]
    assert f'<audio controls="" preload="none" src="/messages/{message["id"]}.wav">' in dom
    call = message_agent.http("GET", f"/calls/{message['call_id']}", TOKEN).json()
    assert [html.escape(t["transcript"], quote=False) in dom for t in call["turns"]] == [True, True]
    assert "message requested" in dom and "<svg" in dom
    # Kept with the run's artifacts: the page as the owner's phone shows it.
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    screenshot = ARTIFACTS / "dashboard.png"
    screenshot.unlink(missing_ok=True)
    chromium(tmp_path / "shot", f"http://owner:{TOKEN}@{page}", f"--screenshot={screenshot}")
    assert screenshot.read_bytes().startswith(b"\x89PNG") and screenshot.stat().st_size > 10_000


def test_the_dashboard_shows_a_browser_without_the_token_nothing(message_agent, tmp_path):
    _messages(message_agent, 1)
    for credentials in ("", "owner:wrong-token-0000000@"):
        dom = chromium(tmp_path / str(len(credentials)), f"http://{credentials}127.0.0.1:{message_agent.http_port}"
                        "/dashboard", "--dump-dom").stdout
        assert "Sam" not in dom and "<svg" not in dom and "<audio" not in dom, dom[:2000]


def test_a_caller_hanging_up_mid_message_leaves_what_they_said(message_agent, voices, tmp_path):
    before = len(message_agent.http("GET", "/messages", TOKEN).json()["messages"])
    # The request at 2 s; the prompt and tone end by ~11 s; the message starts at 12 s and the caller hangs up
    # 3.5 s into it.
    place_call(message_agent, tmp_path, "--question", str(voices["request"]), "--question-at", "2",
               "--second", str(voices["message"]), "--second-at", "12", duration=15.5)
    found = _messages(message_agent, before + 1)
    assert len(found) == before + 1
    latest = found[0]
    assert latest["ended_by"] == "caller hung up" and 1.5 < latest["seconds"] < 5
    assert "sam" in latest["transcript"].lower() or "call me" in latest["transcript"].lower(), latest["transcript"]
