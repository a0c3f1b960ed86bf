"""The agent's numbers: Prometheus metrics, and percentiles over a sliding window for humans."""

from __future__ import annotations

import threading
import time
from collections import deque

import numpy as np
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

STAGES = ("vad_endpointing", "asr_queue_wait", "asr", "retrieval", "answer", "tts_first_audio", "response")
"""Timed stages of a turn. `response` is end of caller speech → first answer audio frame, the number
a caller feels; `asr_queue_wait` is kept apart so contention for the model cannot hide in `asr`;
`retrieval` and `answer` add up the KB's work on every reading of the utterance (see call.understand)."""

_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0)


class Metrics:
    """One registry per agent (tests run several agents in one process)."""

    def __init__(self, window_s: float = 900.0) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.calls = Counter("agent_calls", "Calls by outcome.", ["outcome"], registry=r)
        self.active_calls = Gauge("agent_active_calls", "Calls in progress.", registry=r)
        self.turns = Counter("agent_turns", "Caller turns by outcome.", ["outcome"], registry=r)
        self.barge_ins = Counter("agent_barge_ins", "Times a caller talked over the agent.", registry=r)
        self.cut_offs = Counter("agent_cut_offs", "Answers taken back because the caller went on with the question "
                                "just after the turn was ended short (see call.endpointing).", registry=r)
        self.abstentions = Counter("agent_abstentions", "Answers declined for weak evidence.", registry=r)
        self.messages = Counter("agent_messages", "Messages callers left, by how the recording ended.", ["ended_by"],
                                registry=r)
        self.transfers = Counter("agent_transfers", "Transfers to a person, by result.", ["result"], registry=r)
        self.readings = Counter("agent_readings_chosen", "Questions by the reading acted on: Whisper's best guess "
                                "(first), another of its beam's readings, which the KB backed better (other), or the "
                                "second recogniser's, which heard a doubtful turn again (again).",
                                ["reading"], registry=r)
        self.dtmf = Counter("agent_dtmf_digits", "DTMF digits received.", registry=r)
        self.errors = Counter("agent_errors", "Failures by stage.", ["stage"], registry=r)
        self.stage = Histogram("agent_stage_seconds", "Time spent per turn stage.", ["stage"], buckets=_BUCKETS,
                               registry=r)
        self.registered = Gauge("agent_sip_registered", "1 while registered to the configured registrar.",
                                registry=r)
        self.registrations = Counter("agent_sip_registrations", "REGISTER outcomes.", ["outcome"], registry=r)
        self.speech_cache = Counter("agent_speech_cache_lookups", "Answer audio looked up in the speech cache, by "
                                    "result (hit: rendered ahead; miss: synthesised during the call).", ["result"],
                                    registry=r)
        self.spare_calls = Gauge("agent_spare_calls", "Calls this agent can still take: the lower of max_calls "
                                 "left and what fits in AGENT_CPU_TARGET by the calls' measured CPU cost.", registry=r)
        self.render_backlog = Gauge("agent_speech_render_backlog", "Answer sentences not rendered yet.", registry=r)
        self.notifications = Counter("agent_notifications", "Attempts to tell the owner, by channel (webhook, mail) "
                                     "and result (delivered, retried, refused).", ["channel", "result"], registry=r)
        self.notifications_pending = Gauge("agent_notifications_pending", "Events waiting in the outbox for their "
                                           "channel.", ["channel"], registry=r)
        self.store_degraded = False
        """The call-record store is unavailable (writes wait to be retried); /readyz says so."""
        self.record_store_degraded = Gauge("agent_record_store_degraded", "1 while the call-record store is "
                                           "unavailable and writes wait, in order, to be retried.", registry=r)
        self.record_writes_pending = Gauge("agent_record_writes_pending", "Call-record writes waiting for the store.",
                                           registry=r)
        self.refused = Counter("agent_sip_refused", "INVITEs refused before a call, by status and reason.",
                               ["status", "reason"], registry=r)
        self.response = Histogram("agent_response_seconds", "End of caller speech to the first answer audio "
                                  "frame.", buckets=_BUCKETS, registry=r)
        self.answers = Counter("agent_answers", "Answers spoken, by who phrased them: extractive (the KB's "
                               "sentences), llm, or llm_rejected (the LLM's phrasing failed its check or deadline; "
                               "the KB's sentences were spoken).", ["answerer"], registry=r)
        self.llm_first_sentence = Histogram("agent_llm_first_sentence_seconds", "End of the turn to the LLM's first "
                                            "checked sentence.", buckets=_BUCKETS, registry=r)
        # CPU per answered turn in PromQL: rate(agent_process_cpu_seconds) / rate(agent_response_seconds_count).
        self.cpu = Gauge("agent_process_cpu_seconds", "CPU time of the agent process, all threads (user + system).",
                         registry=r)
        self.cpu.set_function(time.process_time)
        self.asr_decodes = Gauge("agent_asr_decodes", "Utterances Whisper has decoded since start, those prepared "
                                 "during a pause and dropped too (per turn: against agent_response_seconds_count).",
                                 registry=r)
        self._turn_cpu: deque[tuple[float, float]] = deque()
        self._window_s = window_s
        self._samples: dict[str, deque[tuple[float, float]]] = {s: deque() for s in STAGES}
        self._lock = threading.Lock()

    def observe(self, stage: str, seconds: float, now: float | None = None) -> None:
        """Record one stage duration in the histogram and the sliding window."""
        now = time.monotonic() if now is None else now
        if stage == "response":
            self.response.observe(seconds)
        else:
            self.stage.labels(stage).observe(seconds)
        with self._lock:
            # Both kept within the window here, not only when a summary is asked for (a scrape never asks).
            self._samples[stage].append((now, seconds))
            self._forget_before(self._samples[stage], now)
            if stage == "response":
                self._turn_cpu.append((now, time.process_time()))
                self._forget_before(self._turn_cpu, now)

    def _forget_before(self, samples: deque[tuple[float, float]], now: float) -> None:
        """Drop (time, value) samples older than the window (call with the lock held)."""
        while samples and samples[0][0] < now - self._window_s:
            samples.popleft()

    def count_decodes(self, transcriber) -> None:
        """Read the transcriber's count of decodes at each scrape."""
        self.asr_decodes.set_function(lambda: transcriber.decoded)

    def notification(self, channel: str, result: str) -> None:
        self.notifications.labels(channel, result).inc()

    def notification_pending(self, channel: str, n: int) -> None:
        self.notifications_pending.labels(channel).set(n)

    def records_degraded(self, degraded: bool) -> None:
        self.store_degraded = degraded
        self.record_store_degraded.set(int(degraded))

    def registration(self, status) -> None:
        """A registration outcome (a RegistrationStatus), from the SIP thread."""
        self.registered.set(1 if status.registered else 0)
        self.registrations.labels("ok" if status.registered else "failed").inc()

    def speech_lookup(self, hit: bool) -> None:
        """A speech cache lookup (from a model worker)."""
        self.speech_cache.labels("hit" if hit else "miss").inc()

    def refusal(self, refusal) -> None:
        """An INVITE refused (a screening.Refusal), from the SIP thread."""
        self.refused.labels(str(refusal.status), refusal.reason).inc()

    def summary(self, now: float | None = None) -> dict[str, dict[str, float | int]]:
        """p50/p90/p95/p99 (milliseconds) and count per stage over the sliding window."""
        now = time.monotonic() if now is None else now
        out: dict[str, dict[str, float | int]] = {}
        with self._lock:
            for stage, samples in self._samples.items():
                self._forget_before(samples, now)
                values = np.array([v for _, v in samples]) * 1000
                if len(values):
                    p50, p90, p95, p99 = (round(float(np.percentile(values, q)), 1) for q in (50, 90, 95, 99))
                    out[stage] = {"count": len(values), "p50_ms": p50, "p90_ms": p90, "p95_ms": p95, "p99_ms": p99}
                else:
                    out[stage] = {"count": 0}
        return out

    def cpu_per_turn(self, now: float | None = None) -> float | None:
        """Agent CPU-seconds per answered turn over the window: all the process spent (listening, VAD, the
        bridge, the models) between the first and the last answer in it, over the answers after the first."""
        now = time.monotonic() if now is None else now
        with self._lock:
            self._forget_before(self._turn_cpu, now)
            if len(self._turn_cpu) < 2:
                return None
            return round((self._turn_cpu[-1][1] - self._turn_cpu[0][1]) / (len(self._turn_cpu) - 1), 3)


def summary_markdown(summary: dict[str, dict[str, float | int]], window_s: float) -> str:
    lines = [f"Stage latencies over the last {window_s:g} s (milliseconds)", "",
             "| stage | count | p50 | p90 | p95 | p99 |", "|---|---:|---:|---:|---:|---:|"]
    for stage, row in summary.items():
        cells = [str(row.get(k, "–")) for k in ("p50_ms", "p90_ms", "p95_ms", "p99_ms")]
        lines.append(f"| {stage} | {row['count']} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
