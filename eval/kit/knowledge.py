"""The agent's knowledge base built from a folder, as the agent builds it, for the runners that ask it alone."""

from __future__ import annotations

from pathlib import Path

from agent import settings as settings_module
from agent.knowledge.base import KnowledgeBase
from agent.stages import open_knowledge_alone


def build_knowledge(kb_dir: Path, data_dir: Path, env: dict[str, str]) -> KnowledgeBase:
    """An indexed KnowledgeBase for kb_dir, with the embedder the settings choose."""
    settings = settings_module.parse(["--kb-dir", str(kb_dir), "--data-dir", str(data_dir)], env)
    knowledge = open_knowledge_alone(settings)
    report = knowledge.index.refresh()
    if not report.ok:
        raise SystemExit(f"indexing {kb_dir} failed: {report.error}")
    return knowledge
