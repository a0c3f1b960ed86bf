"""Closed compounds a caller says as one word where the KB writes their parts: "campfire" for "fires", "firewood"
for "fire pits ... and logs", "toothbrush" for "brush". Pure, on text.

Only a word that is not English by the lexicon (the embedder's WordPiece vocabulary, as in soundalike) is split:
"campfire" and "firewood" are not in it, "weekend", "however" and "understand" are. It is split where both halves
are English words of three letters or more and at least one of them is a word of the KB's; the split question is
searched beside the words heard, never instead of them (base.reworded).
"""

from __future__ import annotations

from collections.abc import Iterable

from agent.knowledge.text import STOPWORDS, WORD, stem_words

MIN_PART = 3


class Compounds:
    """Splits a question's unknown compounds into KB words, for one KB's text."""

    def __init__(self, kb_texts: Iterable[str], lexicon: frozenset[str]) -> None:
        self._lexicon = lexicon
        self._kb_stems = frozenset(stem_words(" ".join(kb_texts))) - STOPWORDS

    def split(self, question: str) -> str:
        """The question with each unknown compound written as its two words; '' when none was split."""
        words = WORD.findall(question)
        out = [" ".join(self.parts(w.lower())) or w for w in words]
        return " ".join(out) if out != words else ""

    def parts(self, word: str) -> tuple[str, ...]:
        """The two words `word` joins (of several splits, the first with the most KB words); () for a word that is
        English or no such compound."""
        if not self._lexicon or word in self._lexicon or not word.isalpha():
            return ()
        splits = [(word[:i], word[i:]) for i in range(MIN_PART, len(word) - MIN_PART + 1)]
        splits = [s for s in splits if all(p in self._lexicon and p not in STOPWORDS for p in s)]
        in_kb = [(sum(self._in_kb(p) for p in s), s) for s in splits]
        best = max(in_kb, key=lambda scored: scored[0], default=(0, ()))
        return best[1] if best[0] else ()

    def _in_kb(self, word: str) -> bool:
        return stem_words(word)[0] in self._kb_stems
