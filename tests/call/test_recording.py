"""A whole call recorded over a real SIP call: served as one stereo WAV with the admin token, the caller's
question on the left and the agent's answer on the right where the call's record puts them, and shown on the
dashboard."""

import io
import wave

import numpy as np
import pytest

from tests.peers import AgentProcess, flite_wav, place_call

TOKEN = "test-token-recording-0123"
WINDOW = 160
"""10 ms at 16 kHz."""


@pytest.fixture(scope="module")
def recorded_call(tmp_path_factory, settings):
    folder = tmp_path_factory.mktemp("recording")
    agent = AgentProcess(folder, settings, admin_token=TOKEN, record_calls="true",
                         consent_notice="This call is recorded.", inactivity_s=60)
    try:
        question = flite_wav(folder, "hours", "What are your opening hours on a weekday?")
        place_call(agent, folder, "--question", str(question), "--question-at", "6", duration=16)
        (call,) = agent.http("GET", "/calls", TOKEN).json()["calls"]
        record = agent.http("GET", f"/calls/{call['id']}", TOKEN).json()
        wav = agent.http("GET", f"/calls/{call['id']}/recording", TOKEN)
        unauthorised = agent.http("GET", f"/calls/{call['id']}/recording").status_code
        dashboard = agent.http("GET", "/dashboard", TOKEN).text
        yield record, wav, unauthorised, dashboard
    finally:
        agent.stop()


def voiced(channel: np.ndarray) -> np.ndarray:
    """Per 10 ms window: louder than -40 dBFS."""
    windows = channel[:len(channel) // WINDOW * WINDOW].astype(np.float32).reshape(-1, WINDOW)
    return np.sqrt((windows ** 2).mean(axis=1)) > 32768 * 0.01


def test_the_recording_is_a_stereo_wav_for_the_admin_only(recorded_call):
    record, wav, unauthorised, _ = recorded_call
    assert wav.status_code == 200 and wav.headers["content-type"] == "audio/wav" and unauthorised in (401, 403)
    with wave.open(io.BytesIO(wav.content)) as w:
        assert (w.getnchannels(), w.getframerate()) == (2, 16000)
        assert abs(w.getnframes() / 16000 - (record["ended"] - record["started"])) < 1.5


def test_the_question_is_on_the_left_and_the_answer_on_the_right_where_the_record_has_them(recorded_call):
    record, wav, _, _ = recorded_call
    with wave.open(io.BytesIO(wav.content)) as w:
        stereo = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").reshape(-1, 2)
    caller, agent = stereo[:, 0], stereo[:, 1]
    (turn,) = [t for t in record["turns"] if t["outcome"] == "answered"]
    speech_end = turn["started"] - turn["latencies_ms"]["endpointing_ms"] / 1000 - record["started"]
    reply_at = round((speech_end + turn["latencies_ms"]["response_ms"] / 1000) * 16000)
    asked = slice(round((speech_end - 1.5) * 16000), round(speech_end * 16000))
    assert voiced(caller[asked]).mean() > 0.5 and not agent[asked].any()  # the agent's side is silent meanwhile
    first_reply_sample = asked.stop + int(np.flatnonzero(agent[asked.stop:])[0])
    # The reply goes out on the media tick after it is queued: the file has it within a tick or two of the record.
    assert -320 <= first_reply_sample - reply_at <= 2 * 320
    assert agent[:16000 * 3].any()  # the consent notice and greeting


def test_the_dashboard_plays_the_recording_with_the_turns_marked(recorded_call):
    record, _, _, dashboard = recorded_call
    assert f"src='/calls/{record['id']}/recording'" in dashboard and "class='timeline'" in dashboard
