"""All settings of the agent: one frozen dataclass, read once from flags and environment.

Precedence: command-line flag, then environment variable AGENT_<FIELD>, then the
default. Every field's help text is its documentation (`python -m agent --help`).
"""

from __future__ import annotations

import argparse
import difflib
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

from agent.settings_checks import SettingsError, check, check_together, convert, env_name, flag
from agent.side.notify.mail import SECURITY as SMTP_SECURITY
from agent.sip.security import SRTP_MODES

_LOG_LEVELS = ("debug", "info", "warning", "error")


def setting(default: object, help: str, *, low: float | None = None, high: float | None = None,
            choices: tuple[str, ...] | None = None, ip: bool = False) -> typing.Any:
    return field(default=default, metadata={"help": help, "low": low, "high": high, "choices": choices, "ip": ip})


@dataclass(frozen=True)
class Settings:
    # --- network
    sip_host: str = setting("127.0.0.1", "IP address the SIP user agent and its RTP ports bind to.", ip=True)
    sip_port: int = setting(5060, "SIP port, UDP and TCP.", low=1, high=65535)
    sip_domains: str = setting("", "Comma-separated Request-URI hosts answered besides SIP_HOST (a proxy's domain).")
    sip_trusted_peers: str = setting("127.0.0.1", "Comma-separated addresses or networks of the PBX or proxy in "
                                     "front of the agent: exempt from the per-source limits below.")
    sip_calls_per_source: int = setting(2, "Concurrent calls one untrusted address may hold.", low=1, high=16)
    sip_invite_rate: float = setting(2.0, "INVITEs per second one untrusted address may send; beyond it (after a "
                                     "burst of SIP_INVITE_BURST) the address is cut off for SIP_BLOCK_S.",
                                     low=0.1, high=100)
    sip_invite_burst: int = setting(5, "INVITEs one untrusted address may send at once.", low=1, high=20)
    sip_block_s: int = setting(60, "How long an address that floods is dropped by the kernel filter.", low=1,
                               high=86400)
    sip_tls_port: int = setting(0, "SIP over TLS port on SIP_HOST (0: off); needs SIP_TLS_CERT and SIP_TLS_KEY.",
                                low=0, high=65535)
    sip_tls_cert: Path | None = setting(None, "PEM certificate (with its chain) the TLS port presents.")
    sip_tls_key: Path | None = setting(None, "PEM private key of SIP_TLS_CERT, unencrypted.")
    srtp: str = setting("off", "SRTP (SDES) for call audio, on calls signalled over TLS: off, optional (used when "
                        "the caller offers it), mandatory (anything else gets 488).", choices=SRTP_MODES)
    rtp_port_min: int = setting(40000, "First port of the RTP range.", low=1024, high=65535)
    rtp_port_max: int = setting(40999, "Last port of the RTP range (two ports per call).", low=1024, high=65535)
    http_host: str = setting("127.0.0.1", "IP address of the side app (metrics, health, admin).", ip=True)
    http_port: int = setting(8000, "TCP port of the side app.", low=1, high=65535)
    http_docs: bool = setting(False, "Serve interactive API docs at /docs.")
    metrics_window_s: float = setting(900.0, "Sliding window of /metrics/summary percentiles.", low=10, high=86400)
    records_retention_days: int = setting(30, "Call records and messages older than this are deleted (at start-up "
                                          "and daily).", low=1, high=3650)
    turn_audio_dir: Path | None = setting(None, "Keep each caller turn as the agent heard it, as DIR/<call id>/<turn>"
                                          ".wav, to find out why one was misheard (deleted with the call's record); "
                                          "unset: kept nowhere (it records callers).")
    record_calls: bool = setting(False, "Record whole calls, both sides, as DATA_DIR/recordings/<call id>.wav "
                                 "(deleted with the call's record); needs a CONSENT_NOTICE to speak.")
    admin_token: str | None = setting(None, "Bearer token for admin and call-record endpoints; unset disables them.")
    web_phone: bool = setting(False, "Serve the browser phone at /phone: a page that calls the agent over WebRTC.")
    web_phone_address: str = setting("", "The one IP address the browser phone's media is offered on; empty: "
                                     "every interface but loopback.")

    # --- registration to a PBX or SIP trunk (optional)
    sip_registrar: str = setting("", "Registrar URI to REGISTER with (e.g. sip:pbx.example.com); empty: none.")
    sip_username: str = setting("agent", "User name registered (and the digest authentication user).")
    sip_password: str | None = setting(None, "Digest authentication password for the registrar.")
    sip_auth_realm: str = setting("*", "Digest realm of the password ('*': whatever the registrar asks).")
    sip_register_expires_s: int = setting(300, "Registration lifetime asked for; renewed before it ends.",
                                          low=10, high=86400)
    sip_register_retry_max_s: int = setting(120, "Longest wait between failed registration attempts (the wait "
                                            "doubles from 2 s up to this).", low=2, high=3600)

    # --- files
    kb_dir: Path = setting(Path("kb"), "Directory of Markdown and text documents the agent answers from.")
    dialplan: Path | None = setting(None, "TOML file mapping dialled extensions to profiles (KB, greeting, voice, "
                                    "limits), e.g. dialplans/agent.toml; unset: one profile from these settings.")
    data_dir: Path = setting(Path("var"), "Directory for the index, call records and (by default) models.")
    database_url: str = setting("", "PostgreSQL URL (postgresql://user:password@host/db) where call records are "
                                "kept, shared by every agent on a line; empty: SQLite under DATA_DIR.")
    instance: str = setting("", "This agent's name in shared call records; empty: SIP_HOST:SIP_PORT.")
    models_dir: Path | None = setting(None, "Directory of installed models; default DATA_DIR/models.")

    # --- knowledge
    kb_max_file_bytes: int = setting(1 << 20, "Largest KB file indexed; bigger ones are rejected.", low=1,
                                     high=1 << 30)
    kb_max_total_bytes: int = setting(64 << 20, "Largest total KB size indexed.", low=1, high=1 << 34)
    chunk_target_chars: int = setting(350, "Target chunk length; chunks read well aloud.", low=80, high=4000)
    chunk_max_chars: int = setting(600, "Hard cap on a chunk built from one long paragraph.", low=120, high=8000)
    retrieval_top_k: int = setting(3, "Passages retrieved per question (before neighbour expansion).", low=1, high=20)
    retrieval_budget_chars: int = setting(1500, "Character budget of the passages one answer reads.", low=200,
                                          high=20000)
    abstain_threshold: float = setting(0.35, "Evidence below which the agent says it doesn't know.", low=0, high=1)
    synonyms_path: Path | None = setting(None, "Extra synonym groups (one comma-separated group per line) that "
                                         "map callers' words to the KB's, beside agent/knowledge/synonyms.txt.")
    memory_turns: int = setting(4, "Turns of a call remembered for follow-up questions.", low=0, high=50)
    memory_chars: int = setting(1200, "Characters of a call remembered for follow-up questions.", low=100,
                                high=20000)

    # --- an optional language model that phrases answers (off unless LLM_URL is set; call/speaking/phrase.py)
    llm_url: str = setting("", "Base URL of an OpenAI-compatible chat server (vLLM, Ollama, llama.cpp), e.g. "
                           "http://127.0.0.1:8080/v1; empty: answers are KB sentences read aloud.")
    llm_model: str = setting("default", "Model name sent to LLM_URL.")
    llm_api_key: str | None = setting(None, "Bearer key for LLM_URL (or LLM_API_KEY_FILE).")
    llm_api_key_file: Path | None = setting(None, "File holding the bearer key for LLM_URL.")
    llm_connect_timeout_s: float = setting(1.0, "Longest wait to connect to LLM_URL.", low=0.05, high=30)
    llm_read_timeout_s: float = setting(5.0, "Longest wait between two pieces of the LLM's streamed answer.",
                                        low=0.1, high=120)
    llm_first_sentence_ms: int = setting(1200, "From the end of the caller's turn: with no checked first sentence "
                                         "from the LLM by then, the KB's own answer is spoken.", low=100,
                                         high=10000)
    llm_breaker_failures: int = setting(3, "Failed LLM answers in a row (errors, timeouts, garbage) after which it "
                                        "is not asked for LLM_BREAKER_S.", low=1, high=100)
    llm_breaker_s: float = setting(30.0, "How long the LLM is left alone after LLM_BREAKER_FAILURES.", low=1,
                                   high=3600)

    # --- models: a manifest name (offline), a hub name (needs internet), or an explicit path
    asr_model: str = setting("whisper-tiny.en", "Speech recogniser: manifest name or faster-whisper hub name.")
    asr_model_path: Path | None = setting(None, "CTranslate2 Whisper directory; overrides ASR_MODEL.")
    asr_compute_type: str = setting("int8", "CTranslate2 compute type for Whisper.",
                                    choices=("int8", "int8_float32", "float32", "default"))
    asr_beam_size: int = setting(5, "Whisper beam width; every distinct reading of the beam's best is weighed "
                                 "against the KB (see call.understand). 1: greedy, one reading, fastest.",
                                 low=1, high=10)
    asr_threads: int = setting(1, "Threads each Whisper decode runs on. One: on 2 CPU cores a second thread made "
                               "one decode alone a little faster (eval.asr_threads) but calls slower from 8 callers "
                               "on, two replicas then asking for four threads (eval.load).",
                               low=1, high=64)
    asr_workers: int = setting(2, "Whisper decodes that may run at once (a model replica each): a decode started "
                               "at a mid-question pause no longer holds up the real one.", low=1, high=8)
    asr_second_model: str = setting("whisper-base", "A larger recogniser that hears again a turn the first left "
                                    "asked again, confirmed or declined, its understanding acted on when it gets the "
                                    "caller further (call.understanding.hear_again); manifest or hub name, '' none.")
    asr_second_model_path: Path | None = setting(None, "CTranslate2 Whisper directory; overrides ASR_SECOND_MODEL.")
    asr_language: str = setting("en", "Language spoken by callers (ISO code; ignored by .en models).")
    tts_model: str = setting("piper-en_US-joe-medium", "Piper voice: manifest name or Piper voice name.")
    tts_model_path: Path | None = setting(None, "Piper .onnx voice file (with .onnx.json beside it).")
    embed_model: str = setting("minilm-l6-v2-int8", "Sentence embedder: manifest name or fastembed model name.")
    embed_model_path: Path | None = setting(None, "Directory with model.onnx and tokenizer files.")
    vad_model: str = setting("silero-vad-v6", "Voice activity detector: manifest name.")
    vad_model_path: Path | None = setting(None, "Silero VAD .onnx file; overrides VAD_MODEL.")
    model_threads: int = setting(2, "Worker threads for model calls (ASR, TTS, embedding).", low=1, high=64)

    # --- turn-taking
    vad_threshold: float = setting(0.5, "Speech probability at or above which a frame is speech.", low=0.05, high=0.95)
    vad_min_speech_ms: int = setting(200, "Speech needed before an utterance starts.", low=20, high=2000)
    vad_hangover_ms: int = setting(500, "Silence that ends an utterance (when nothing was judged of what was said, "
                                   "or with VAD_EARLY_END off).", low=100, high=5000)
    vad_early_end: bool = setting(True, "End a turn by what was said: a complete question the "
                                  "KB answers firmly after VAD_SHORT_HANGOVER_MS of silence, a plainly unfinished "
                                  "one after VAD_LONG_HANGOVER_MS.")
    vad_short_hangover_ms: int = setting(224, "Silence after which a complete question is answered.", low=64,
                                         high=5000)
    vad_long_hangover_ms: int = setting(1216, "Silence an unfinished question is waited for.", low=100, high=10000)
    vad_barge_in_ms: int = setting(128, "Caller speech, while the agent talks, that stops the agent (at most "
                                   "VAD_MIN_SPEECH_MS).", low=64, high=2000)
    vad_pause_ms: int = setting(96, "Silence after which what the caller said is transcribed and a reply prepared "
                                "while the hangover runs (shorter gaps, between words, cost no decode).", low=32,
                                high=1000)
    vad_max_utterance_s: float = setting(15.0, "Longest utterance before it is cut and answered.", low=1, high=120)
    listen_tick_ms: int = setting(32, "How often the audio of a call where someone speaks is cut into VAD windows and "
                                  "judged, all such calls in one pass: adds up to this much to the "
                                  "end of a turn and to a barge-in.", low=20, high=200)
    listen_quiet_tick_ms: int = setting(128, "The same for a call where nobody speaks (at least LISTEN_TICK_MS): "
                                        "longer costs less CPU per call and only delays noticing that speech "
                                        "started.", low=20, high=500)

    # --- calls
    max_calls: int = setting(8, "Concurrent calls; the next INVITE gets 486 Busy Here. The default is what one "
                             "process on two cores answers within 1.2 s (p95, callers asking at different "
                             "moments; docs/load.md), cut to what the installed pjsua2 holds (PyPI's wheel: 4); "
                             "a value set above that limit stops start-up.", low=1, high=64)
    cpu_target: float = setting(0.8, "Share of all CPU cores calls may use on average, by their measured cost; "
                                "an INVITE that would go beyond gets 503 with Retry-After. 0: off (max_calls "
                                "only).", low=0.0, high=1.0)
    max_call_s: int = setting(900, "Say goodbye and hang up calls longer than this.", low=10, high=86400)
    inactivity_s: int = setting(20, "Caller silent this long: ask if they are still there; again: hang up.",
                                low=3, high=3600)
    dead_call_s: int = setting(30, "Hang up when no RTP has arrived for this long.", low=5, high=3600)
    model_deadline_s: float = setting(10.0, "Longest a turn may wait for its models (speech recognition, a "
                                      "sentence's synthesis); beyond it the caller hears an apology.", low=1,
                                      high=120)
    drain_s: int = setting(20, "On SIGTERM: new calls get 503 and calls in progress get this long to hear the end of "
                           "their sentence and a goodbye before the agent exits.", low=0, high=600)
    speech_prerender: bool = setting(True, "Render every answer sentence of the KB in the background after each "
                                     "refresh (paused while calls are up), so answers start from a file read.")
    transfer_to: str = setting("", "SIP URI a caller asking for a person is put through to, e.g. "
                               "sip:reception@pbx.example.com (warm: several, comma-separated, tried in order); "
                               "empty: the agent offers a message.")
    transfer_mode: str = setting("warm", "warm: the caller holds while the agent calls the person, tells them who "
                                 "is waiting and puts the caller through when they accept (1 or yes), else offers "
                                 "a message; blind: REFER the caller to TRANSFER_TO.", choices=("warm", "blind"))
    transfer_ring_s: int = setting(20, "Warm transfer: how long each person may ring.", low=5, high=120)
    transfer_digit: str = setting("0", "DTMF digit that asks for a person ('none': no digit does).",
                                  choices=("none", *"0123456789*#"))
    message_max_s: int = setting(60, "Longest message a caller can leave (after the tone).", low=5, high=600)
    message_silence_s: float = setting(3.0, "Quiet after the caller has spoken that ends a message (or press #).",
                                       low=1.0, high=30.0)
    greeting: str = setting("Hello, thanks for calling. How can I help you?", "Spoken when a call is answered.")
    consent_notice: str = setting("", "Spoken before the greeting, e.g. 'This call may be recorded.'; empty: none.")
    echo_gate_db: float = setting(-9.0, "While the agent speaks, caller audio must be louder than the agent's "
                                  "recent output by this much to count (echo rejection).", low=-40, high=0)

    # --- telling the owner (agent/side/notify)
    webhook_url: str = setting("", "URL each event (message left, question declined, transfer failed) is POSTed to "
                               "as signed JSON; empty: no webhook.")
    webhook_secret: str = setting("", "Key of the webhook's HMAC-SHA256 signature (X-Agent-Signature).")
    smtp_host: str = setting("", "SMTP server mail to the owner goes through; empty: no mail.")
    smtp_port: int = setting(587, "SMTP port (587 with starttls, 465 with tls).", low=1, high=65535)
    smtp_security: str = setting("starttls", "starttls, tls (implicit) or none.", choices=SMTP_SECURITY)
    smtp_user: str = setting("", "SMTP login; empty: none.")
    smtp_password: str = setting("", "SMTP password.")
    smtp_from: str = setting("", "The mails' From address.")
    smtp_to: str = setting("", "The owner's address(es), comma-separated.")
    smtp_ca_file: Path | None = setting(None, "PEM certificates the SMTP server's is checked against (a private CA).")
    smtp_digest_hour: int = setting(18, "Local hour the day's unanswered questions are mailed (-1: never).", low=-1,
                                    high=23)

    # --- logs
    log_level: str = setting("info", "Lowest level logged.", choices=_LOG_LEVELS)
    log_json: bool = setting(False, "Log JSON objects instead of key=value lines.")

    @property
    def instance_name(self) -> str:
        return self.instance or f"{self.sip_host}:{self.sip_port}"

    @property
    def models_path(self) -> Path:
        return self.models_dir if self.models_dir is not None else self.data_dir / "models"

    @property
    def records_path(self) -> Path:
        return self.data_dir / "calls.sqlite3"

    @property
    def messages_path(self) -> Path:
        return self.data_dir / "messages"

    @property
    def recordings_path(self) -> Path:
        return self.data_dir / "recordings"

    @property
    def index_path(self) -> Path:
        return self.data_dir / "index.sqlite3"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """One flag per setting; default None so an absent flag leaves the environment's value."""
    group = parser.add_argument_group("settings (flag, or environment variable AGENT_<NAME>)")
    for f in fields(Settings):
        default = f.default if f.default is not None else "unset"
        group.add_argument(flag(f.name), dest=f.name, default=None, metavar=f.name.upper(),
                           help=f"{f.metadata['help']} [{env_name(f.name)}, default {default}]")


def unknown_variables(env: Mapping[str, str]) -> list[str]:
    """AGENT_* variables that are no setting, each with the nearest real one ("AGENT_SRTPP (did you mean
    AGENT_SRTP?)"): a typo would otherwise change nothing and say nothing."""
    known = [env_name(f.name) for f in fields(Settings)]
    out = []
    for name in sorted(k for k in env if k.startswith("AGENT_") and k not in known):
        near = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
        out.append(f"{name} (did you mean {near[0]}?)" if near else name)
    return out


def load(env: Mapping[str, str], flags: argparse.Namespace | None = None) -> Settings:
    """Build Settings from flags over environment over defaults; raise SettingsError on the first bad value or on
    an AGENT_* variable that is no setting."""
    unknown = unknown_variables(env)
    if unknown:
        raise SettingsError(f"not a setting: {', '.join(unknown)}; `python -m agent --help` lists every setting")
    hints = typing.get_type_hints(Settings)
    values: dict[str, object] = {}
    for f in fields(Settings):
        raw = getattr(flags, f.name, None) if flags is not None else None
        if raw is None:
            raw = env.get(env_name(f.name))
        if raw is None:
            continue
        value = convert(f.name, raw, hints[f.name])
        check(f.name, value, f.metadata)
        values[f.name] = value
    settings = replace(Settings(), **values)
    check_together(settings)
    return settings


def parse(argv: Sequence[str], env: Mapping[str, str]) -> Settings:
    """Settings from a flag list alone (tests and tools)."""
    parser = argparse.ArgumentParser(add_help=False)
    add_arguments(parser)
    return load(env, parser.parse_args(list(argv)))
