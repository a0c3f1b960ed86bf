"""What each stage needs of the settings, made in one place: a stage module never sees `Settings` whole.

The call's config (per dialplan profile), the knowledge base's, the side app's, the LLM phraser, and the knowledge
base with only its embedder loaded (the CLI's `kb` command and the evals); the models are made in models/load.py.
"""

from __future__ import annotations

from concurrent.futures import Executor
from pathlib import Path

from agent.call.config import CallConfig
from agent.call.listening.endpointing import EndpointConfig
from agent.call.listening.turns import TurnConfig
from agent.call.speaking.phrase import Phraser, PhraserConfig
from agent.call.understanding.message import MessageConfig
from agent.call.warm_transfer import WarmTransferConfig, targets
from agent.dialplan import Profile
from agent.knowledge.base import KnowledgeBase, KnowledgeConfig, open_knowledge
from agent.llm.client import ChatClient, LlmConfig
from agent.settings import Settings
from agent.side.state import SideConfig


def call_config(s: Settings, profile: Profile) -> CallConfig:
    """What a call on `profile` needs of the settings."""
    return CallConfig(
        turns=TurnConfig(s.vad_threshold, s.vad_min_speech_ms, s.vad_hangover_ms, s.vad_max_utterance_s,
                         barge_in_ms=s.vad_barge_in_ms, pause_ms=s.vad_pause_ms),
        endpointing=EndpointConfig(s.vad_hangover_ms, s.vad_short_hangover_ms, s.vad_long_hangover_ms,
                                   s.vad_early_end),
        messages=MessageConfig(s.message_max_s, s.message_silence_s), echo_gate_db=s.echo_gate_db,
        inactivity_s=profile.inactivity_s, max_call_s=profile.max_call_s, dead_call_s=s.dead_call_s,
        model_deadline_s=s.model_deadline_s, transfer_to=profile.transfer_to, transfer_digit=profile.transfer_digit,
        warm_transfer=WarmTransferConfig(targets(profile.transfer_to), s.transfer_ring_s)
        if s.transfer_mode == "warm" and profile.transfer_to else None)


def knowledge_config(s: Settings, kb_dir: Path | None = None, index_path: Path | None = None) -> KnowledgeConfig:
    """The settings' knowledge base, or a dialplan profile's own KB folder and index file."""
    return KnowledgeConfig(kb_dir or s.kb_dir, index_path or s.index_path, s.synonyms_path,
                           max_file_bytes=s.kb_max_file_bytes, max_total_bytes=s.kb_max_total_bytes,
                           chunk_target_chars=s.chunk_target_chars, chunk_max_chars=s.chunk_max_chars,
                           top_k=s.retrieval_top_k, budget_chars=s.retrieval_budget_chars,
                           abstain_below=s.abstain_threshold)


def phraser(s: Settings) -> Phraser | None:
    """The LLM that phrases answers; None when no LLM_URL is set."""
    if not s.llm_url:
        return None
    key = s.llm_api_key_file.read_text().strip() if s.llm_api_key_file is not None else s.llm_api_key
    client = ChatClient(LlmConfig(s.llm_url, s.llm_model, key, s.llm_connect_timeout_s, s.llm_read_timeout_s))
    return Phraser(client, PhraserConfig(s.llm_first_sentence_ms / 1000, s.llm_breaker_failures, s.llm_breaker_s))


def open_knowledge_alone(s: Settings, executor: Executor | None = None, *, kb_dir: Path | None = None,
                         index_path: Path | None = None) -> KnowledgeBase:
    """The knowledge base with only its embedder loaded (call `index.refresh()` next)."""
    from agent.knowledge.embedder import ARCHITECTURES, Embedder
    from agent.models.manifest import load_manifest
    from agent.models.verify import identity, resolve

    model = resolve("embedder", s.embed_model, s.embed_model_path, s.models_path, load_manifest())
    embedder = Embedder(model, ARCHITECTURES.get(s.embed_model, s.embed_model), threads=s.model_threads)
    return open_knowledge(knowledge_config(s, kb_dir, index_path), embedder, identity(model), executor)


def side_config(s: Settings) -> SideConfig:
    """What the side app's routes need of the settings."""
    return SideConfig(admin_token=s.admin_token, http_host=s.http_host, http_docs=s.http_docs, web_phone=s.web_phone,
                      metrics_window_s=s.metrics_window_s, recordings_path=s.recordings_path,
                      shared_records=bool(s.database_url))
