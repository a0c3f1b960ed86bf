"""The knowledge base as the call path sees it: one narrow interface over index, retrieval and answering.

    reply = kb.draft(memory, "how much is the annual service?")  # in a worker thread: nothing remembered
    for chunk in kb.chunks(reply): speak(chunk.spoken)             # sentence by sentence
    kb.commit(memory, reply)                                       # once the answer is really given

The call path drafts while the caller may still go on talking (see agent/call/understanding/prepare.py) and
commits only when the turn is over; `compose` is draft + commit for the CLI and the evals. An optional
LLM may phrase the drafted answer for the ear, checked sentence by sentence against it (call/speaking/phrase.py); the
decision to answer or decline stays here.
"""

from __future__ import annotations

import time
from concurrent.futures import Executor
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from agent.knowledge.answer import ABSTAIN_TEXT, candidates, lines_to_say, score
from agent.knowledge.compounds import Compounds
from agent.knowledge.index import KnowledgeIndex, Snapshot
from agent.knowledge.joining import choose
from agent.knowledge.memory import CallMemory, Query, Turn
from agent.knowledge.question import analyse
from agent.knowledge.retrieval import Passage, SearchQuery, search
from agent.knowledge.soundalike import SoundAlikes
from agent.knowledge.speakable import speakable
from agent.knowledge.synonyms import KB_FILE, Synonyms, load_groups
from agent.knowledge.text import as_asked, load_word_frequencies, tokens
from agent.knowledge.topic import name_topic
from agent.knowledge.vocabulary import chunks_hint

RECOVERED_WEIGHT = 0.7
"""Weight of the reworded question in the fusion: a guess at what was meant counts less than what was heard."""
ADDRESSES_KEPT = 2
"""A where-question's candidates always include this many of the KB's address chunks, the first in KB order."""


@dataclass(frozen=True)
class KnowledgeConfig:
    """A knowledge base: its folder, index file and synonyms; how documents are cut; how much is retrieved; and
    the retrieval score under which a question is declined."""

    kb_dir: Path
    index_path: Path
    synonyms_path: Path | None
    max_file_bytes: int
    max_total_bytes: int
    chunk_target_chars: int
    chunk_max_chars: int
    top_k: int
    budget_chars: int
    abstain_below: float


@dataclass(frozen=True)
class SourceRef:
    """Where an answer sentence came from."""

    path: str
    heading: str
    chunk_id: str


@dataclass(frozen=True)
class Reply:
    """A complete answer to one question."""

    question: str
    sentences: tuple[str, ...]
    """Verbatim KB sentences, or the abstention line."""
    sources: tuple[SourceRef, ...]
    abstained: bool
    evidence: float
    """Support for the best sentence (see answer.evidence); below the threshold the agent abstains."""
    passages: tuple[Passage, ...]
    """What retrieval returned, best first."""
    retrieval_ms: float
    answer_ms: float
    topic: str = ""
    """What the answer is about, in a few of the KB's words (knowledge.topic), for a confirmation; '' for a
    decline."""
    own_evidence: float = 0.0
    """The best sentence's support from the question's own words, without the call's context: how readings of
    one utterance compare, since the context is the same for all of them."""
    heard_evidence: float | None = None
    """The best sentence's support with the words recovered by sound left out (answer.ScoredSentence); None where
    the question had none."""
    drawn_from: tuple[str, ...] = ()
    """The chosen sentences whole, a list's every line: what the next question is understood beside."""

    @property
    def text(self) -> str:
        return " ".join(self.sentences)

    def declined(self) -> Reply:
        """This reply as the KB's decline (the evidence and passages kept, for the record)."""
        return replace(self, sentences=(ABSTAIN_TEXT,), sources=(), abstained=True, topic="", drawn_from=())


@dataclass(frozen=True)
class ReplyChunk:
    """One sentence of a reply, ready to synthesise."""

    text: str
    """As written in the KB."""
    spoken: str
    """As Piper should read it."""
    sources: tuple[SourceRef, ...]
    abstained: bool
    retrieval_ms: float = 0.0
    """Of the whole reply (the same on every chunk)."""
    answer_ms: float = 0.0


class KnowledgeBase:
    """Answers questions from one KB index, with per-call memory."""

    def __init__(self, index: KnowledgeIndex, embedder, *, top_k: int = 3, budget_chars: int = 1500,
                 abstain_below: float = 0.35, executor: Executor | None = None,
                 synonym_groups: list[tuple[str, ...]] | None = None) -> None:
        self.index = index
        self._embedder = embedder
        self._top_k = top_k
        self._budget = budget_chars
        self.abstain_below = abstain_below
        self._executor = executor
        self._hint: tuple[Snapshot, str] | None = None
        self._wording: tuple[Snapshot, SoundAlikes, Synonyms, Compounds] | None = None
        self._synonym_groups = load_groups(index.kb_dir / KB_FILE) if synonym_groups is None else synonym_groups
        lexicon = getattr(embedder, "lexicon", None)
        self._lexicon = lexicon() if lexicon is not None else frozenset()

    def vocabulary_hint(self) -> str:
        """ASR prompt from the current snapshot's proper nouns and codes (cached per snapshot)."""
        snapshot = self.index.snapshot
        if self._hint is None or self._hint[0] is not snapshot:
            self._hint = (snapshot, chunks_hint(c.chunk for c in snapshot.chunks))
        return self._hint[1]

    def prepare(self) -> None:
        """Build now what the first question would otherwise build while its caller waits: the English word
        frequencies, this snapshot's sound-alikes, synonyms and compounds, and its address chunks (blocking; run it
        off the event loop)."""
        load_word_frequencies()
        self._kb_wording(self.index.snapshot)
        _ = self.index.snapshot.addresses

    def _kb_wording(self, snapshot: Snapshot) -> tuple[SoundAlikes, Synonyms, Compounds]:
        """Near-homophone, synonym and compound recovery against this snapshot's words (cached per snapshot)."""
        if self._wording is None or self._wording[0] is not snapshot:
            texts = [c.chunk.text for c in snapshot.chunks]
            self._wording = (snapshot, SoundAlikes.from_texts(texts, self._lexicon),
                             Synonyms(self._synonym_groups, texts), Compounds(texts, self._lexicon))
        return self._wording[1:]

    def reworded(self, snapshot: Snapshot, question: str) -> str:
        """The question in the KB's own words — callers' synonyms swapped for the KB's, near-homophones put
        back — or '' when that changes nothing. Searched beside the question, never instead of it."""
        return self._reword(snapshot, question)[0]

    def _reword(self, snapshot: Snapshot, question: str) -> tuple[str, bool]:
        """`reworded`, and whether a near-homophone was put back."""
        sound_alikes, synonyms, compounds = self._kb_wording(snapshot)
        # Synonyms first: a caller's real word the recogniser's vocabulary lacks ("checkup") must not be
        # "recovered" as a near-homophone first, nor a compound ("firewood"); then near-homophones; then synonyms
        # of what they recovered.
        text = synonyms.rephrase(question) or question
        text = compounds.split(text) or text
        by_sound = sound_alikes.recover(text)
        text = by_sound or text
        text = synonyms.rephrase(text) or text
        return (text, bool(by_sound)) if text != question else ("", False)

    def guess_by_sound(self, question: str) -> tuple[str, tuple[str, ...]]:
        """The question with the real words the KB lacks swapped for KB words they sound like, and those KB
        words (('', ()) when none): something to offer the caller as a confirmation, never to answer unasked
        (see soundalike.guess)."""
        return self._kb_wording(self.index.snapshot)[0].guess(question)

    @staticmethod
    def _texts(query: Query) -> list[str]:
        """What is embedded for a query: the question, its expanded form, the recovered question."""
        return [query.question] + ([query.expanded] if query.context else []) + \
            ([query.recovered] if query.recovered else [])

    def retrieve(self, snapshot: Snapshot, query: Query, embedded: dict[str, np.ndarray] | None = None
                 ) -> tuple[list[Passage], np.ndarray, np.ndarray | None, np.ndarray | None]:
        """Passages for a query, and the embeddings of the question, of its expanded form and of the recovered
        question (None when there is none); `embedded`: those texts' embeddings, when already made."""
        texts = self._texts(query)
        vectors = np.stack([embedded[t] for t in texts]) if embedded is not None else self._embedder.embed(texts)
        question_vector, expanded_vector = vectors[0], (vectors[1] if query.context else None)
        recovered_vector = vectors[-1] if query.recovered else None
        searches = [SearchQuery(question_vector, tokens(query.question))]
        if expanded_vector is not None:
            expanded = SearchQuery(expanded_vector, tokens(query.expanded))
            # The text that leads gets full weight in the fusion, the other half.
            lead, other = (expanded, searches[0]) if query.follow_up else (searches[0], expanded)
            searches = [lead, SearchQuery(other.vector, other.tokens, 0.5)]
        if recovered_vector is not None:
            searches.append(SearchQuery(recovered_vector, tokens(query.recovered), RECOVERED_WEIGHT))
        keep = tuple(snapshot.by_id[c] for c in query.topic_chunks if c in snapshot.by_id)
        if "place" in analyse(query.question).kinds:
            keep += snapshot.addresses[:ADDRESSES_KEPT]
        passages = search(snapshot, searches, top_k=self._top_k, budget_chars=self._budget, keep=keep)
        return passages, question_vector, expanded_vector, recovered_vector

    def draft(self, memory: CallMemory, question: str, excluded: frozenset[str] = frozenset()) -> Reply:
        """Retrieve and choose the answer to `question` without remembering it (a speculative answer
        may be dropped); `excluded`: chunk ids whose sentences are not chosen. Blocking: run off the loop."""
        return self.draft_each(memory, [question], excluded)[0]

    def draft_each(self, memory: CallMemory, questions: list[str],
                   excluded: frozenset[str] = frozenset()) -> list[Reply]:
        """`draft` for each of several readings of one utterance, their texts embedded in one call (a call a
        reading paid the model's per-call cost for each). Blocking: run off the loop."""
        if not questions:
            return []
        snapshot = self.index.snapshot  # one snapshot for the whole question, whatever refreshes meanwhile
        started = time.perf_counter()
        queries = []
        for question in map(as_asked, questions):
            recovered, by_sound = self._reword(snapshot, question)
            queries.append(replace(memory.query(question), recovered=recovered, by_sound=by_sound))
        texts = list(dict.fromkeys(t for query in queries for t in self._texts(query)))
        embedded = dict(zip(texts, self._embedder.embed(texts), strict=True))
        # The embedding's time is shared out: each reply's retrieval time is its share of it plus its search.
        share = (time.perf_counter() - started) / len(queries)
        return [self._draft(snapshot, query, embedded, share, excluded) for query in queries]

    def _draft(self, snapshot: Snapshot, query: Query, embedded: dict[str, np.ndarray], embed_s: float,
               excluded: frozenset[str]) -> Reply:
        started = time.perf_counter() - embed_s
        question = query.question
        passages, question_vector, expanded_vector, recovered_vector = self.retrieve(snapshot, query, embedded)
        retrieved = time.perf_counter()
        scored = score(snapshot, candidates(snapshot, passages, excluded), question_vector, expanded_vector, query,
                       recovered_vector)
        chosen = choose(scored)
        best = max(scored, key=lambda s: s.score) if scored else None
        support = best.evidence if best else 0.0
        if not chosen or support < self.abstain_below:
            reply_sentences, sources, abstained = (ABSTAIN_TEXT,), (), True
        else:
            reply_sentences = lines_to_say(snapshot, query, [s.candidate for s in chosen])
            sources = tuple(dict.fromkeys(
                SourceRef(snapshot.chunks[s.candidate.chunk_index].chunk.path,
                          " > ".join(snapshot.chunks[s.candidate.chunk_index].chunk.heading),
                          snapshot.chunks[s.candidate.chunk_index].chunk.id) for s in chosen))
            abstained = False
        done = time.perf_counter()
        # Named from the sentence the evidence is for: a neighbour joined to it may come first and be about
        # something else ("An annual boiler service costs $149 ..." before the gas safety certificate's price).
        topic = "" if abstained else name_topic(best.candidate.text, snapshot.idf, frozenset(tokens(question)))
        return Reply(question, reply_sentences, sources, abstained, support, tuple(passages),
                     (retrieved - started) * 1000, (done - retrieved) * 1000, topic,
                     best.own_evidence if best else 0.0, best.heard_evidence if best else None,
                     () if abstained else tuple(" ".join(s.candidate.text.split()) for s in chosen))

    @staticmethod
    def commit(memory: CallMemory, reply: Reply) -> None:
        """Remember an answer that is being given (follow-up questions build on it)."""
        memory.add(Turn(reply.question, " ".join(reply.drawn_from) or reply.text,
                        "" if reply.abstained else reply.sources[0].heading,
                        tuple(s.chunk_id for s in reply.sources)))

    def compose(self, memory: CallMemory, question: str) -> Reply:
        """draft + commit: the answer to `question`, remembered. Blocking: run off the loop."""
        reply = self.draft(memory, question)
        self.commit(memory, reply)
        return reply

    @staticmethod
    def chunks(reply: Reply) -> list[ReplyChunk]:
        """The reply as speakable sentences."""
        return [ReplyChunk(sentence, speakable(sentence), reply.sources, reply.abstained, reply.retrieval_ms,
                           reply.answer_ms) for sentence in reply.sentences]


def open_knowledge(config: KnowledgeConfig, embedder, embedder_identity: str,
                   executor: Executor | None = None) -> KnowledgeBase:
    """The knowledge base `config` describes, loaded from its SQLite index (call `index.refresh()` next)."""
    index = KnowledgeIndex(config.kb_dir, config.index_path, embedder, max_file_bytes=config.max_file_bytes,
                           max_total_bytes=config.max_total_bytes, chunk_target_chars=config.chunk_target_chars,
                           chunk_max_chars=config.chunk_max_chars, model_identity=embedder_identity)
    return KnowledgeBase(index, embedder, top_k=config.top_k, budget_chars=config.budget_chars,
                         abstain_below=config.abstain_below, executor=executor,
                         synonym_groups=load_groups(index.kb_dir / KB_FILE, config.synonyms_path))
