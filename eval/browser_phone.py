"""The browser phone against a phone line, in one run: where the browser's extra latency goes.

    python -m eval.browser_phone --kb DIR --cases FILE [--limit 8] [--out DIR]

Starts one agent with the browser phone on, and asks the first question of each of the first N call groups
twice: on a SIP call (the eval caller, PCMU, as eval.replay) and from headless Chromium's /phone page, whose
fake microphone plays the same WAV. Latency on both is from the question's last voiced window (Silero, as
eval.replay) to the first voiced frame of the answer the caller received. In the browser both ends are taken
on the page's own clock (WebAudio analysers on the microphone and on the agent's voice), and the agent's
`call.turn` event says when it heard the question end and how long it took to answer, which splits the
browser's latency into the way in (capture, Opus, the network, aiortc's jitter buffer and decoder, VAD),
the agent's response, and the way out (aiortc's encoder, the network, Chromium's jitter buffer). Writes
DIR/report.json.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from eval.kit.agent_process import AgentProcess
from eval.kit.call_scoring import score_call, scorer
from eval.kit.cases import Case, load_cases
from eval.kit.chromium import Chromium
from eval.kit.phone import load_wav, save_wav
from eval.kit.placing import TOKEN, kb_hint, question_audio, run_call
from eval.kit.ports import free_port_block
from eval.kit.report import percentile
from eval.kit.scoring import contains_any
from eval.kit.voices import FLITE
from eval.kit.wire import latency_split, speech_bounds

LEVEL = 0.01
"""Full-scale RMS above which the page counts a sound as voiced (eval.kit.wire's VOICED_RMS is 300 of 32768)."""
ANALYSER_SAMPLES = 512
"""The page's analysers look at the last 512 samples at the page's 48 kHz (10.7 ms)."""
TRANSCRIPT = "[...document.querySelectorAll('#transcript li.agent')].map(li => li.lastChild.textContent)"
# On the page's clock in Unix milliseconds: when the microphone last carried sound and when the agent's voice
# first did after that.
MEASURE = """(() => {
  const ctx = new AudioContext();
  const level = (stream) => {
    const analyser = ctx.createAnalyser(), samples = new Float32Array(__SAMPLES__);
    analyser.fftSize = __SAMPLES__;
    ctx.createMediaStreamSource(stream).connect(analyser);
    return () => {
      analyser.getFloatTimeDomainData(samples);
      return Math.sqrt(samples.reduce((a, v) => a + v * v, 0) / samples.length);
    };
  };
  const mic = level(microphone), voice = level(document.getElementById('voice').srcObject);
  window.heardAt = {questionEnd: 0, answerStart: 0};
  setInterval(() => {
    const now = performance.timeOrigin + performance.now();
    if (mic() > __LEVEL__) { heardAt.questionEnd = now; heardAt.answerStart = 0; }
    else if (heardAt.questionEnd && !heardAt.answerStart && voice() > __LEVEL__) heardAt.answerStart = now;
  }, 5);
  return true;
})()""".replace("__SAMPLES__", str(ANALYSER_SAMPLES)).replace("__LEVEL__", str(LEVEL))
GREETING_S, AFTER_S = 5, 12


def level_end_to_vad_end_ms(pcm: np.ndarray, vad) -> float:
    """How much later the question's last voiced VAD window ends than the page's analyser last hears it above
    LEVEL: added to the page's time so that both transports measure from the same end of the question."""
    bounds = speech_bounds(vad.push(pcm.astype(np.float32) / 32768))
    window = ANALYSER_SAMPLES * 16000 // 48000
    loud = [i for i in range(window, len(pcm) + 1, 16)
            if np.sqrt(np.mean((pcm[i - window:i] / 32768.0) ** 2)) > LEVEL]
    if bounds is None or not loud:
        return 0.0
    return ((bounds[1] + 1) * 512 - loud[-1]) / 16


def microphone(question: np.ndarray, path: Path) -> Path:
    """What the page's microphone plays: the greeting's length of silence, the question, then silence."""
    silence = np.zeros(16000 * GREETING_S, np.int16)
    save_wav(path, np.concatenate([silence, question, np.zeros(16000 * AFTER_S, np.int16)]))
    return path


def ask_in_browser(agent: AgentProcess, case: Case, question: Path, folder: Path, vad) -> dict:
    """One browser call asking one question; the page's and the agent's timings of it."""
    pcm = load_wav(question)
    folder.mkdir(parents=True, exist_ok=True)
    turns_before = len(agent.events("call.turn"))
    chromium = Chromium(folder / "profile", microphone(pcm, folder / "mic.wav"), free_port_block(4))
    try:
        chromium.open(f"http://127.0.0.1:{agent.http_port}/phone")
        chromium.evaluate("document.getElementById('call').click()")
        chromium.wait_for("pc && pc.connectionState === 'connected' && !!document.getElementById('voice').srcObject",
                          15)
        chromium.evaluate(MEASURE)
        measured = chromium.wait_for("heardAt.answerStart && heardAt", timeout=GREETING_S + AFTER_S + 5)
        answer = " ".join(chromium.wait_for(f"{TRANSCRIPT}.length && {TRANSCRIPT}", timeout=10))
        chromium.evaluate("document.getElementById('hangup').click()")
    finally:
        chromium.close()
    turns = agent.wait_for("call.turn", turns_before + 1, timeout=20)[turns_before:]
    if not turns:
        return {"id": case.id, "error": "the agent recorded no turn"}
    turn = turns[0]
    question_end = measured["questionEnd"] + level_end_to_vad_end_ms(pcm, vad)
    latency = round(measured["answerStart"] - question_end)
    # Right by what the page showed the agent saying (the SIP side is scored by what the caller heard).
    return {"id": case.id, "answer": answer, "correct": contains_any(answer, case.expect_any), "latency_ms": latency,
            **latency_split(latency, question_end / 1000, float(turn["speech_end_at"]), float(turn["response_ms"]))}


def summarize(sip: list[dict], browser: list[dict]) -> dict:
    def stat(rows: list[dict], key: str) -> dict:
        values = [r[key] for r in rows if r.get(key) is not None]
        return {"p50": percentile(values, 50), "p95": percentile(values, 95), "n": len(values)}

    summary = {"sip_latency_ms": stat(sip, "latency_ms"), "browser_latency_ms": stat(browser, "latency_ms"),
               "browser_way_in_ms": stat(browser, "way_in_ms"), "browser_agent_ms": stat(browser, "agent_ms"),
               "browser_way_out_ms": stat(browser, "way_out_ms"),
               "sip_correct": sum(bool(r.get("correct")) for r in sip),
               "browser_correct": sum(bool(r.get("correct")) for r in browser), "questions": len(browser)}
    sip_p50, browser_p50 = summary["sip_latency_ms"]["p50"], summary["browser_latency_ms"]["p50"]
    summary["gap_p50_ms"] = None if None in (sip_p50, browser_p50) else browser_p50 - sip_p50
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kb", type=Path, required=True)
    parser.add_argument("--cases", type=Path, required=True)
    parser.add_argument("--limit", type=int, default=8, help="questions (the first of each call group)")
    parser.add_argument("--out", type=Path, default=Path("var/eval/browser"))
    args = parser.parse_args(argv)

    from agent import settings as settings_module
    from agent.models.load import resolve_all
    from agent.speech.vad import SileroVad

    settings = settings_module.parse([], os.environ)
    resolved = resolve_all(settings)
    transcriber = scorer(resolved["asr"])
    firsts: dict[str, Case] = {}
    for case in load_cases(args.cases):
        if case.barge_in_at_ms is None and not case.expect_abstain:
            firsts.setdefault(case.call, case)
    chosen, hint = list(firsts.values())[:args.limit], kb_hint(args.kb)
    args.out.mkdir(parents=True, exist_ok=True)
    sip, browser = [], []
    with tempfile.TemporaryDirectory(prefix="browser-eval-") as scratch:
        agent = AgentProcess(Path(scratch), (free_port_block(110), free_port_block(110)), settings.models_path,
                             kb_dir=args.kb.resolve(), inactivity_s=60, admin_token=TOKEN, speech_prerender="true",
                             web_phone="true", web_phone_address="127.0.0.1")
        try:
            agent.wait_for("speech.prerendered", 1, timeout=600)
            for n, case in enumerate(chosen):
                folder = args.out / "calls" / case.id
                folder.mkdir(parents=True, exist_ok=True)
                timeline = run_call(agent, case.id, [case], args.out, "pcmu", FLITE[n % len(FLITE)])
                sip.extend(score_call([case], timeline, args.out / "calls" / case.id, transcriber,
                                      lambda: SileroVad.open(resolved["vad"].location), hint))
                question = question_audio(case, folder, FLITE[n % len(FLITE)])
                browser.append(ask_in_browser(agent, case, question, folder / "browser",
                                              SileroVad.open(resolved["vad"].location)))
                print(f"[{n + 1}/{len(chosen)}] {case.id}: sip {sip[-1].get('latency_ms')} ms, browser "
                      f"{browser[-1].get('latency_ms')} ms (in {browser[-1].get('way_in_ms')}, agent "
                      f"{browser[-1].get('agent_ms')}, out {browser[-1].get('way_out_ms')})", flush=True)
                time.sleep(1)
        finally:
            agent.stop()
    report = {"summary": summarize(sip, browser), "sip": sip, "browser": browser}
    (args.out / "report.json").write_text(json.dumps(report, indent=2))
    print(json.dumps(report["summary"], indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
