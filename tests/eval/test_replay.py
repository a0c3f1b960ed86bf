"""One small real replay: an agent, real SIP calls from the eval caller, scored from the wire."""

import json
import os
import subprocess
import sys
import wave

import numpy as np

from agent.call.commands import Phrase
from agent.knowledge.answer import ABSTAIN_TEXT
from eval.bench import replay_figures
from eval.kit.scoring import heard_said
from tests.conftest import REPO


def test_a_small_replay_scores_answers_latency_and_barge_in(tmp_path, settings):
    cases = tmp_path / "cases.jsonl"
    cases.write_text("\n".join(json.dumps(c) for c in [
        {"id": "hours", "call": "a", "say": "What are your opening hours during the week?",
         "expect_any": ["Monday to Friday"]},
        {"id": "warranty", "call": "a", "say": "What warranty comes with a new boiler?",
         "expect_any": ["10-year", "10 year"], "barge_in_at_ms": 1500},
        {"id": "table", "call": "b", "say": "Can I book a table for two tonight?", "expect_abstain": True},
    ]) + "\n")
    out = tmp_path / "out"
    env = {**os.environ, "AGENT_MODELS_DIR": str(settings.models_path.resolve())}
    result = subprocess.run([sys.executable, "-m", "eval.replay", "--kb", str(REPO / "kb"), "--cases", str(cases),
                             "--out", str(out)], cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads((out / "report.json").read_text())
    summary, rows = report["summary"], {r["id"]: r for r in report["cases"]}
    assert summary["n"] == 3 and summary["errors"] == 0
    assert rows["hours"]["interrupted"] and rows["hours"]["correct"] is None  # barged in on purpose
    assert rows["warranty"]["correct"] and rows["table"]["correct"] and rows["table"]["abstained"]
    # Beside what the scorer heard, the agent's own record: what it heard and what it answered.
    assert "10-year" in rows["warranty"]["agent_answer"] and rows["table"]["agent_outcome"] == "answered"
    assert "table" in rows["table"]["agent_heard"].lower()
    # The agent kept what it heard of each turn: the question, as the recogniser got it (16 kHz, some seconds).
    (exchange,) = rows["table"]["agent_exchanges"]
    with wave.open(exchange["audio"]) as heard:
        assert heard.getframerate() == 16000 and 1.0 < heard.getnframes() / 16000 < 6.0
    assert 0 < rows["hours"]["latency_ms"] < 5000
    # The latency split on the agent's clock: its parts add up, and the agent's part is its own response.
    warranty = rows["warranty"]
    assert warranty["way_in_ms"] + warranty["agent_ms"] + warranty["way_out_ms"] == warranty["latency_ms"]
    assert 0 < warranty["agent_ms"] < warranty["latency_ms"] and summary["way_out_p50_ms"] is not None
    assert rows["warranty"]["bargein_ms"] is not None and rows["warranty"]["bargein_ms"] < 1000
    assert (out / "report.md").read_text().startswith("# Call replay") and (out / "latency.png").stat().st_size > 0
    # eval.bench's row for such a run says the same.
    figures = {f.name: f.value for f in replay_figures(out, "bundled cases", "python -m eval.replay")}
    assert figures["in-KB answered right, by the end"] == "100.0% (1 of 1)"
    assert figures["out-of-KB declined"] == "1 of 1"
    # The caller's two legs are a recording on one clock: scored as a recorded call, they give the
    # same verdicts and, within a VAD window, the same timings.
    calls = out / "calls" / "a"
    result = subprocess.run([sys.executable, "-m", "eval.replay", "--kb", str(REPO / "kb"), "--cases", str(cases),
                             "--call", "a", "--recording", str(calls / "sent.wav"), "--agent-recording",
                             str(calls / "received.wav"), "--out", str(tmp_path / "recorded")],
                            cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    recorded = {r["id"]: r for r in json.loads((tmp_path / "recorded" / "report.json").read_text())["cases"]}
    assert recorded["warranty"]["correct"] and recorded["hours"]["interrupted"]
    assert abs(recorded["hours"]["latency_ms"] - rows["hours"]["latency_ms"]) <= 64
    assert abs(recorded["warranty"]["bargein_ms"] - rows["warranty"]["bargein_ms"]) <= 64


def test_the_same_replay_runs_on_the_browser_phone(tmp_path, settings):
    """WebRTC (aiortc in the browser's place, Opus both ways): scored from what the caller received, and the
    agent's own record found by the call identifier the signalling returned."""
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps({"id": "warranty", "call": "a", "say": "What warranty comes with a new boiler?",
                                 "expect_any": ["10-year", "10 year"]}) + "\n")
    out = tmp_path / "out"
    env = {**os.environ, "AGENT_MODELS_DIR": str(settings.models_path.resolve())}
    result = subprocess.run([sys.executable, "-m", "eval.replay", "--kb", str(REPO / "kb"), "--cases", str(cases),
                             "--out", str(out), "--transport", "webrtc"], cwd=REPO, env=env, capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads((out / "report.json").read_text())
    (row,) = report["cases"]
    assert report["codec"] == "opus/48000 (webrtc)" and report["summary"]["errors"] == 0
    # What the caller received is the answer (the scorer's ear, hearing Opus, once took "10-year" for "tinier":
    # whether it is right is eval.replay's to say, the agent's own answer is checked from its record).
    assert "warranty" in row["heard"].lower() and "10-year" in row["agent_answer"]
    assert row["latency_ms"] is not None


def test_a_caller_who_repeats_says_the_question_again_when_asked_and_is_scored_by_the_last_answer(tmp_path, settings):
    """--caller-repeats: the caller hears the agent ask for its question again (gibberish Whisper is unsure of, or a
    guess by sound it says no to), says it again, and the case is scored by the agent's answer to the repeat
    (declined: the question is out of the KB)."""
    cases = tmp_path / "cases.jsonl"
    cases.write_text("\n".join(json.dumps(c) for c in [
        {"id": "gibberish", "call": "a", "say": "Flibber jabble snorkwick grommet?", "expect_abstain": True},
        {"id": "hours", "call": "a", "say": "What are your opening hours during the week?",
         "expect_any": ["Monday to Friday"]}]) + "\n")
    out = tmp_path / "out"
    env = {**os.environ, "AGENT_MODELS_DIR": str(settings.models_path.resolve())}
    result = subprocess.run([sys.executable, "-m", "eval.replay", "--kb", str(REPO / "kb"), "--cases", str(cases),
                             "--out", str(out), "--caller-repeats"], cwd=REPO, env=env, capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads((out / "report.json").read_text())
    summary, rows = report["summary"], {r["id"]: r for r in report["cases"]}
    # Whisper hears the gibberish a little differently from run to run: mostly the agent asks for it again, but
    # a word heard as "grondet" may be offered as a guess by sound ("Are you asking about guarantee?"), to which
    # the caller says no and is asked for its question again. Either way the caller says it again when asked,
    # never says yes, and the case ends on the decline.
    gibberish = rows["gibberish"]
    exchanges, outcomes, heard = gibberish["exchanges"], gibberish["agent_outcomes"], gibberish["caller_heard"]
    assert exchanges[0] == "question" and exchanges[-1] == "repeat" and "yes" not in exchanges, exchanges
    assert outcomes[-1] == "answered" and gibberish["correct"], outcomes
    assert heard_said(heard[-1], ABSTAIN_TEXT), heard
    # What the caller made of the reply it said the question again to is kept (a confirmation whose topic it
    # could not make out also gets the question again).
    asking = {"asked again": Phrase.ASK_AGAIN.value, "not confirmed": Phrase.NOT_THAT.value}.get(outcomes[-2])
    assert heard_said(heard[-2], asking) if asking else "asking about" in heard[-2].lower(), (outcomes, heard)
    assert rows["hours"]["exchanges"] == ["question"] and rows["hours"]["correct"]  # the script went on
    assert summary["asked_again"] >= 1 and summary["first_try_accuracy"] == 1.0 and summary["wrong_answers"] == 0


def test_the_scorer_hears_an_answer_sentence_by_sentence(tmp_path, models):
    """Two sentences apart by the agent's pause, in 10 s of received audio: each is heard on its own."""
    from eval.kit.call_scoring import SENTENCE_GAP_TICKS, hear_by_sentence, scorer
    from eval.kit.scoring import contains_any
    from eval.kit.wire import voiced_runs, voiced_ticks
    from tests.conftest import synthesize_caller

    first = synthesize_caller(tmp_path, "You can cancel a visit up to a day before it starts.", rate=16000,
                              engine="flite", voice="awb")
    second = synthesize_caller(tmp_path, "A late cancellation costs forty dollars.", rate=16000, engine="flite",
                               voice="awb")
    received = np.zeros(16000 * 10, np.int16)
    received[8000:8000 + len(first)] = first
    start = 8000 + len(first) + 8000  # half a second between them
    received[start:start + len(second)] = second
    voiced = voiced_ticks([received[i:i + 320] for i in range(0, len(received) - 319, 320)])
    assert len(voiced_runs(voiced, 0, len(received) // 320, SENTENCE_GAP_TICKS)) == 2
    heard = hear_by_sentence(received, voiced, 0, len(received) // 320, scorer(models.transcriber.model), "")
    assert contains_any(heard, ("cancel a visit",)) and contains_any(heard, ("$40", "forty dollars")), heard
