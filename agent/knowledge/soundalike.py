"""What the caller may have said: KB words that sound like the words Whisper wrote but no English word.

Whisper turns a word it half hears into a near-homophone: "discount" becomes "despunt", "cost" "cust",
"Castleton" "cast the Lichon". Retrieval then finds nothing, and the agent would say it does not know.
This module finds, for each transcript word that is not an English word (the embedder's WordPiece
vocabulary is the lexicon) — alone, or joined with its neighbours — the KB word whose Metaphone key
is within one edit (two for a joined run) and whose spelling is close. The recovered question is
searched beside the transcript, never instead of it: what the caller said is kept as heard, and a real
word the KB lacks ("solar") is left alone, so questions the KB cannot answer are still declined.

Whisper also swaps a KB word for a real one ("I can smell grass" for "gas"), and no reading of its beam
holds the right word. `guess` puts back KB words for real words too: far less safe ("Do you sell home
insurance?" becomes "Do you smell home insurance"), so a guess is never searched beside the question; the
agent only offers it as a confirmation where it would otherwise ask the caller to say the question again
(see call.understand).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable

import jellyfish

from agent.knowledge.text import STOPWORDS, stem_words

_WORD = re.compile(r"[A-Za-z]+")
MIN_LENGTH = 3
MAX_RUN = 3
"""Words joined into one candidate ("cast the Lichon" -> "castthelichon" -> Castleton)."""
SPELLING = {1: 0.65, MAX_RUN: 0.85}
"""Least Jaro-Winkler similarity of spellings: loose for one word, strict for a joined run."""
GUESS_SPELLING = 0.8
"""Least Jaro-Winkler similarity for a guess: a real word is replaced only by a KB word spelled much like it."""


class SoundAlikes:
    """Recovers near-homophones of KB words in a transcript."""

    def __init__(self, kb_words: Iterable[str], lexicon: frozenset[str]) -> None:
        self._lexicon = lexicon
        # Keys and their words in sorted order: of two KB words that sound equally alike, the one put back is the
        # same in every process, whatever the order Python's string hashing gives a set.
        self._by_key: dict[str, list[str]] = defaultdict(list)
        words = sorted({w.lower() for w in kb_words})
        self._kb_stems = frozenset(stem_words(" ".join(words)))
        for word in words:
            if len(word) >= MIN_LENGTH and word.isalpha() and word not in STOPWORDS:
                self._by_key[jellyfish.metaphone(word)].append(word)

    @classmethod
    def from_texts(cls, texts: Iterable[str], lexicon: frozenset[str]) -> SoundAlikes:
        return cls((w for text in texts for w in _WORD.findall(text)), lexicon)

    def recover(self, question: str) -> str:
        """The question with its unknown words (or runs around them) replaced by the KB words they sound
        like; '' when there was nothing to recover."""
        if not self._lexicon:
            return ""
        words = _WORD.findall(question)
        replacements: list[tuple[int, int, str]] = []  # (start, size, KB word), left to right
        for i, word in enumerate(words):
            if self._unknown(word) and not (replacements and i < sum(replacements[-1][:2])):
                match = self._best_run(words, i)
                if match is not None:
                    replacements.append(match)
        if not replacements:
            return ""
        out, i = [], 0
        for start, size, kb_word in replacements:
            if start < i:  # overlaps the previous replacement
                continue
            out += [*words[i:start], kb_word]
            i = start + size
        return " ".join(out + words[i:])

    def guess(self, question: str) -> tuple[str, tuple[str, ...]]:
        """The question with each content word the KB does not use (in any form) replaced by the KB word it
        sounds most like (Metaphone keys within one edit, spellings close), and the KB words put in; ('', ())
        when no word was replaced."""
        words, guessed = _WORD.findall(question), []
        for i, word in enumerate(words):
            lowered = word.lower()
            if len(lowered) < MIN_LENGTH or lowered in STOPWORDS or stem_words(lowered)[0] in self._kb_stems:
                continue
            best = max(self._candidates(lowered, 1, GUESS_SPELLING, min_key=0, min_word=MIN_LENGTH), default=None)
            if best is not None:
                words[i] = best[1]
                guessed.append(best[1])
        return (" ".join(words), tuple(guessed)) if guessed else ("", ())

    def _unknown(self, word: str) -> bool:
        """Neither English nor the KB's own ("MOT" is the KB's, though no English word)."""
        lowered = word.lower()
        return len(word) >= MIN_LENGTH and lowered not in self._lexicon and stem_words(lowered)[0] not in self._kb_stems

    def _best_run(self, words: list[str], at: int) -> tuple[int, int, str] | None:
        """The best KB word for a run of up to MAX_RUN words around words[at]: (start, size, word)."""
        best: tuple[float, int, int, str] | None = None
        for size in range(1, MAX_RUN + 1):
            for start in range(max(0, at - size + 1), min(at, len(words) - size) + 1):
                joined = "".join(words[start:start + size]).lower()
                allowed, least = (1, SPELLING[1]) if size == 1 else (2, SPELLING[MAX_RUN])
                for rank, kb_word in self._candidates(joined, allowed, least):
                    if best is None or rank > best[0]:
                        best = (rank, start, size, kb_word)
        return best[1:] if best else None

    def _candidates(self, joined: str, allowed: int, least: float, min_key: int = 3,
                    min_word: int = MIN_LENGTH + 1) -> Iterable[tuple[float, str]]:
        """(rank, KB word) for each KB word of at least `min_word` letters whose Metaphone key is within `allowed`
        edits of `joined`'s and at least `min_key` long, and whose spelling is at least `least` alike."""
        key = jellyfish.metaphone(joined)
        for kb_key, kb_words in self._by_key.items():
            distance = jellyfish.levenshtein_distance(key, kb_key)
            if distance > allowed or len(kb_key) < min_key:
                continue
            for kb_word in (w for w in kb_words if len(w) >= min_word):
                similarity = jellyfish.jaro_winkler_similarity(joined, kb_word)
                if similarity >= least:
                    yield similarity - 0.1 * distance, kb_word
