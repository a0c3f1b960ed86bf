"""The browser phone end to end: headless Chromium opens /phone, calls, speaks a question into its fake
microphone, and hears and reads the answer over a real WebRTC connection (aiortc on the agent's side)."""

import base64
import io
import json
import time
import wave
from pathlib import Path

import av
import numpy as np
import pytest

from eval.browser_phone import MEASURE
from eval.kit.chromium import Chromium
from eval.kit.scoring import heard_said
from tests.conftest import read_wav
from tests.peers import HOURS, AgentProcess, heard, next_ports

TOKEN = "test-token-browser-phone"
ARTIFACTS = Path(__file__).resolve().parents[2] / "var" / "test-artifacts" / "browser-phone"
"""The page's screenshot and the latency measured in the browser, kept after the run (var/ is not in git)."""
TRANSCRIPT = "[...document.querySelectorAll('#transcript li.{role}')].map(li => li.lastChild.textContent)"


@pytest.fixture(scope="module")
def phone_agent(tmp_path_factory, settings):
    agent = AgentProcess(tmp_path_factory.mktemp("phone"), settings, web_phone=True, web_phone_address="127.0.0.1",
                         admin_token=TOKEN, inactivity_s=60)
    yield agent
    agent.stop()


def _microphone(question, path):
    """What the browser's microphone plays: the greeting's length of silence, the question, then silence."""
    pcm, rate = read_wav(question)
    silence = np.zeros(rate * 5, dtype=np.int16)
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(np.concatenate([silence, pcm, silence, silence, silence]).tobytes())
    return path


@pytest.fixture
def browser(tmp_path, questions):
    chromium = Chromium(tmp_path / "profile", _microphone(questions["hours"], tmp_path / "mic.wav"),
                        next_ports()[0] + 2)
    yield chromium
    chromium.close()


RECORD = """(() => {
  window.recording = [];
  window.recorder = new MediaRecorder(document.getElementById('voice').srcObject);
  recorder.ondataavailable = (e) => recording.push(e.data);
  recorder.start();
  return true;
})()"""
RECORDED = """new Promise((resolve) => {
  recorder.onstop = () => {
    const reader = new FileReader();
    reader.onload = () => resolve(reader.result.split(',')[1]);
    reader.readAsDataURL(new Blob(recording));
  };
  recorder.stop();
})"""
ENERGY = ("pc.getStats().then(stats => [...stats.values()]"
          ".filter(s => s.type === 'inbound-rtp' && s.kind === 'audio').map(s => s.totalAudioEnergy)[0] || 0)")


def _decoded(webm: bytes) -> np.ndarray:
    """What the browser recorded (WebM/Opus) as 16 kHz mono int16."""
    resampler = av.AudioResampler(format="s16", layout="mono", rate=16000)
    with av.open(io.BytesIO(webm)) as container:
        frames = [out for frame in container.decode(audio=0) for out in resampler.resample(frame)]
    return np.concatenate([f.to_ndarray().reshape(-1) for f in frames])


def _until_quiet(browser, seconds: float = 1.5, timeout: float = 30) -> None:
    """Until the agent's voice has stopped reaching the browser for `seconds`."""
    deadline, last, since = time.monotonic() + timeout, -1.0, time.monotonic()
    while time.monotonic() < deadline:
        energy = browser.evaluate(ENERGY)
        if energy != last:
            last, since = energy, time.monotonic()
        elif time.monotonic() - since >= seconds:
            return
        time.sleep(0.25)
    raise TimeoutError("the agent's voice did not stop")


def test_a_browser_call_is_answered_aloud_and_in_the_page_transcript(phone_agent, browser, models):
    browser.open(f"http://127.0.0.1:{phone_agent.http_port}/phone")
    browser.evaluate("document.getElementById('call').click()")
    browser.wait_for("pc && pc.connectionState === 'connected' && !!document.getElementById('voice').srcObject", 10)
    browser.evaluate(RECORD)
    browser.evaluate(MEASURE)
    answers = browser.wait_for(f"{TRANSCRIPT.format(role='agent')}.length && {TRANSCRIPT.format(role='agent')}",
                               timeout=40)
    assert "monday to friday" in " ".join(answers).lower()
    assert "hours" in " ".join(browser.evaluate(TRANSCRIPT.format(role="user"))).lower()
    _until_quiet(browser)
    # Kept with the run's artifacts: how the page looked with the call up, and the latency the browser measured.
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = browser.command("Page.captureScreenshot", format="png", captureBeyondViewport=True)
    screenshot = base64.b64decode(shot["data"])
    assert screenshot.startswith(b"\x89PNG") and len(screenshot) > 5000
    (ARTIFACTS / "page.png").write_bytes(screenshot)
    measured = browser.evaluate("heardAt")
    assert 0 < measured["questionEnd"] < measured["answerStart"]  # the answer's audio reached the browser
    latency_ms = round(measured["answerStart"] - measured["questionEnd"])
    (ARTIFACTS / "latency.json").write_text(json.dumps({"question_end_to_answer_audio_ms": latency_ms}))
    print(f"browser phone: end of question to the answer's first audio in the browser: {latency_ms} ms")
    # The answer was heard, not only read: what the browser played, transcribed.
    played = _decoded(base64.b64decode(browser.evaluate(RECORDED)))
    assert heard_said(heard(models, {"received": played}), HOURS)

    browser.evaluate("document.getElementById('hangup').click()")
    (ended,) = phone_agent.wait_for("call.ended", 1, timeout=15)
    assert ended["outcome"] == "caller hung up"
    (closed,) = phone_agent.wait_for("browser.closed", 1, timeout=5)
    assert closed["reason"] == "caller hung up"
    (latest,) = phone_agent.http("GET", "/calls?limit=1", TOKEN).json()["calls"]
    assert (latest["transport"], latest["codec"], latest["from"]) == ("webrtc", "opus/48000", "browser:127.0.0.1")
    turn = phone_agent.http("GET", f"/calls/{latest['id']}", TOKEN).json()["turns"][0]
    assert turn["outcome"] == "answered" and "contact-and-hours.md" in turn["sources"][0]
