"""Keeps every answer sentence of every profile rendered in its voice, in the background.

Watches the profiles' KB snapshots; after each refresh (start-up included) it drops the audio of
sentences that left the KB and renders the new ones, one at a time on the model workers. Rendering
is optional work: it waits while any call is up, so no caller ever waits behind it (a sentence not
rendered yet is synthesised when needed, and kept).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from concurrent.futures import Executor

from agent.call.speaking.voice import Voice
from agent.knowledge.answer import ABSTAIN_TEXT
from agent.knowledge.base import KnowledgeBase
from agent.knowledge.index import Snapshot
from agent.knowledge.lines import split_lines
from agent.knowledge.speakable import speakable
from agent.logs import event

log = logging.getLogger(__name__)

POLL_S = 2.0


def answer_texts(snapshot: Snapshot) -> set[str]:
    """Everything the extractive answerer can say from this snapshot, as Piper will read it: each sentence, a
    list's or table's line by line (knowledge.lines)."""
    return {speakable(line) for chunk in snapshot.chunks for s in chunk.sentences for line in split_lines(s)} | \
        {speakable(ABSTAIN_TEXT)}


def plan(voice: Voice, snapshots: Iterable[Snapshot]) -> list[str]:
    """Drop the audio of sentences no KB of this voice holds any more; return the ones still to render."""
    texts = set(voice.fixed_texts).union(*(answer_texts(s) for s in snapshots))
    voice.cache.keep_only(texts)
    return sorted(t for t in texts if not voice.cache.has(t))


class Prerenderer:
    """One background task for all voices; `run()` until cancelled."""

    def __init__(self, jobs: Iterable[tuple[Voice, list[KnowledgeBase]]], executor: Executor,
                 busy: Callable[[], bool], on_backlog: Callable[[int], None] = lambda n: None) -> None:
        """`jobs`: each voice with the knowledge bases of the profiles it speaks for; `busy()`: a call is up."""
        self._jobs = [(voice, kbs) for voice, kbs in jobs if voice.cache is not None]
        self._executor, self._busy, self._on_backlog = executor, busy, on_backlog
        self._rendered: dict[int, tuple[Snapshot, ...]] = {}

    async def run(self) -> None:
        try:
            while True:
                for voice, kbs in self._jobs:
                    snapshots = tuple(kb.index.snapshot for kb in kbs)
                    if self._rendered.get(id(voice)) != snapshots:
                        await self._render(voice, snapshots)
                        self._rendered[id(voice)] = snapshots
                await asyncio.sleep(POLL_S)
        finally:
            event(log, "speech.prerender_stopped")

    async def _render(self, voice: Voice, snapshots: tuple[Snapshot, ...]) -> None:
        loop = asyncio.get_running_loop()
        missing = await loop.run_in_executor(self._executor, plan, voice, snapshots)
        event(log, "speech.prerender", voice=voice.key.split(":")[0], missing=len(missing))
        for left, text in zip(range(len(missing) - 1, -1, -1), missing, strict=True):
            while self._busy():
                await asyncio.sleep(0.25)
            try:
                await loop.run_in_executor(self._executor, voice.render, text)
            except Exception as exc:  # one sentence Piper cannot read must not stop the rest
                event(log, "speech.render_failed", logging.WARNING, error=type(exc).__name__)
            self._on_backlog(left)
        if missing:
            event(log, "speech.prerendered", sentences=len(missing), bytes=voice.cache.size_bytes())
