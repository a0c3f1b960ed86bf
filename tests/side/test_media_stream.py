"""A call over the WebSocket media stream, from a real WebSocket client streaming speech in real time."""

import json
import subprocess
import sys
import threading
import time
from collections import deque

import numpy as np
import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect

from eval.kit.phone import load_wav
from eval.kit.scoring import heard_said
from tests.peers import WARRANTY, AgentProcess, heard

TOKEN = "test-token-media-stream"
TICK = 320  # 20 ms at 16 kHz


@pytest.fixture(scope="module")
def stream_agent(tmp_path_factory, settings):
    agent = AgentProcess(tmp_path_factory.mktemp("stream"), settings, admin_token=TOKEN, inactivity_s=60)
    yield agent
    agent.stop()


class StreamCaller:
    """Streams 16 kHz audio in real time (silence between questions) and records what comes back on its own
    clock of 20 ms ticks: each tick takes the next audio frame that has arrived (silence when none has, as the
    agent sends audio only while it speaks), and text messages are placed at the tick they arrived by."""

    def __init__(self, agent, query: str = f"?token={TOKEN}") -> None:
        self.socket = connect(f"ws://127.0.0.1:{agent.http_port}/ws/media{query}", open_timeout=10, legacy=True)
        self.socket.send(json.dumps({"sample_rate": 16000}))
        self.received: list[np.ndarray] = []
        self.voiced: list[int] = []
        """Ticks with the agent's voice in them."""
        self.texts: list[tuple[int, dict]] = []
        """(tick, message)."""
        self.audio_messages = 0
        """Binary messages received, whatever they held."""
        self.queue: list[np.ndarray] = []
        self.sent_ticks = 0
        self._arrived: deque[np.ndarray] = deque()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        try:
            for message in self.socket:
                if isinstance(message, bytes):
                    self.audio_messages += 1
                    self._arrived.append(np.frombuffer(message, dtype="<i2"))
                else:
                    self.texts.append((len(self.received) + len(self._arrived), json.loads(message)))
        except ConnectionClosed:
            pass

    def say(self, audio: np.ndarray) -> int:
        """Queue speech to send next; returns the tick it will start at."""
        start = self.sent_ticks + sum(len(q) for q in self.queue) // TICK
        self.queue += [audio[i:i + TICK] for i in range(0, len(audio), TICK)]
        return start

    def run(self, seconds: float, until=None) -> None:
        """Send in real time for `seconds` (or until `until(self)`), speech when queued, else silence."""
        started, sent = time.monotonic(), 0
        while time.monotonic() - started < seconds and not (until and until(self)):
            heard = self._arrived.popleft() if self._arrived else np.zeros(TICK, np.int16)
            if np.sqrt(np.mean(heard.astype(np.float64) ** 2)) > 300:
                self.voiced.append(len(self.received))
            self.received.append(heard)
            frame = self.queue.pop(0) if self.queue else np.zeros(TICK, np.int16)
            self.socket.send(np.pad(frame, (0, TICK - len(frame))).astype("<i2").tobytes())
            self.sent_ticks, sent = self.sent_ticks + 1, sent + 1
            time.sleep(max(0.0, started + sent * 0.02 - time.monotonic()))

    def close(self) -> dict:
        self.socket.close()
        self._reader.join(5)
        return {"received": np.concatenate(self.received) if self.received else np.zeros(0, np.int16)}

    def voiced_from(self, tick: int) -> list[int]:
        return [i for i in self.voiced if i >= tick]


def test_a_question_streamed_over_a_websocket_is_answered_with_transcripts(stream_agent, models, questions):
    caller = StreamCaller(stream_agent)
    caller.run(3.0)  # the greeting
    question = load_wav(questions["warranty"])
    asked_at = len(caller.received)
    caller.say(question)
    caller.run(len(question) / 16000 + 8)
    timeline = caller.close()
    users = [m["text"] for _, m in caller.texts if m.get("type") == "transcript" and m["role"] == "user"]
    agents = [m["text"] for _, m in caller.texts if m.get("type") == "transcript" and m["role"] == "agent"]
    assert any("boiler" in u.lower() for u in users), caller.texts
    assert any("10-year manufacturer warranty" in a for a in agents), caller.texts
    assert all(m["final"] is True for _, m in caller.texts if m.get("type") == "transcript")
    said = heard(models, timeline, asked_at)
    assert heard_said(said, WARRANTY), said


def test_talking_over_the_answer_clears_it_and_the_stream_goes_silent(stream_agent, questions):
    caller = StreamCaller(stream_agent)
    caller.run(3.0)
    question = load_wav(questions["warranty"])
    asked = caller.say(question)
    caller.run(15, until=lambda c: len(c.voiced_from(asked + len(question) // TICK)) > 25)  # 0.5 s of answer
    second = load_wav(questions["hours"])
    caller.say(second)
    caller.run(1.5)
    caller.close()
    clears = [tick for tick, m in caller.texts if m.get("type") == "clear"]
    assert clears, caller.texts
    # From the clear on, the agent is quiet until it answers the new question (after it ends + hangover).
    after = caller.received[clears[0] + 2:clears[0] + 20]
    assert after and all(np.abs(f).max() < 300 for f in after)


def test_the_agent_sends_audio_only_while_it_speaks(stream_agent, questions):
    """Between answers nothing is sent, so a harness waiting for the end of the agent's audio sees it end."""
    caller = StreamCaller(stream_agent)
    caller.run(15, until=lambda c: c.voiced and len(c.received) - c.voiced[-1] > 50)  # the greeting, then 1 s
    greeting = caller.audio_messages
    caller.run(2.0)  # nobody speaks
    assert caller.audio_messages == greeting, "audio was sent while the agent was quiet"
    caller.say(load_wav(questions["hours"]))
    caller.run(8.0)
    caller.close()
    assert caller.audio_messages > greeting + 50  # the answer came, in 20 ms messages


def test_a_stream_without_the_token_is_refused(stream_agent):
    with pytest.raises(InvalidStatus) as refused:
        connect(f"ws://127.0.0.1:{stream_agent.http_port}/ws/media?token=wrong-token", open_timeout=10)
    assert refused.value.response.status_code == 403  # closed before the handshake is accepted


def test_a_bad_sample_rate_closes_the_stream_with_the_reason(stream_agent):
    socket = connect(f"ws://127.0.0.1:{stream_agent.http_port}/ws/media?token={TOKEN}", open_timeout=10,
                     legacy=True)
    socket.send(json.dumps({"sample_rate": 12345}))
    with pytest.raises(ConnectionClosed) as closed:
        while True:
            socket.recv(timeout=10)
    assert closed.value.rcvd.code == 1003 and "sample_rate" in closed.value.rcvd.reason


def test_voicebench_runs_a_spoken_scenario_with_a_barge_in_and_a_cough_to_its_end(stream_agent, questions, tmp_path):
    """voicebench (the harness the docs point to) over its own websocket adapter: two spoken questions, one of them
    talking over the answer, and a cough while the agent speaks; the session ends when the agent's audio does."""
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(f"""
name: phone-agent-stream
sample_rate: 16000
frame_ms: 20
adapter:
  type: websocket
  options: {{start_message: {{sample_rate: 16000}}}}
defaults:
  response_timeout_ms: 6000
turns:
  - id: hours
    audio: {{file: {questions["hours"]}}}
    start: {{after: agent_speech_end, delay_ms: 500}}
  - id: barge-in
    audio: {{file: {questions["warranty"]}}}
    start: {{after: agent_speech_start, delay_ms: 1000}}
    expect: stop
    max_stop_ms: 1000
  - id: cough
    audio: {{synth: noise, duration_ms: 180, level_db: -25}}
    start: {{after: agent_speech_start, delay_ms: 600}}
    expect: ignore
assert:
  max_missed_responses: 0
  min_barge_in_success_rate: 1.0
  max_false_barge_ins: 0
""")
    url = f"ws://127.0.0.1:{stream_agent.http_port}/ws/media?token={TOKEN}"
    result = subprocess.run([sys.executable, "-m", "voicebench", "run", str(scenario), "--url", url, "--out",
                             str(tmp_path / "out"), "--format", "json"], capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    (report,) = (tmp_path / "out").glob("*.json")
    report = json.loads(report.read_text())
    assert report["passed"] and report["summary"]["turns_passed"] == 3
    assert report["summary"]["barge_in_success_rate"] == 1.0 and report["summary"]["false_barge_ins"] == 0
    # The session ended when the scenario and the agent's last answer did, not at voicebench's two-minute cap
    # (an agent streaming silence between answers never lets its audio end).
    assert not report["sessions"][0]["truncated"]
