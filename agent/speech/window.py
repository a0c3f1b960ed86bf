"""The encoder window sized to the utterance, and the guards a short window needs. Pure.

faster-whisper pads every utterance to Whisper's 30 s window, so a 2 s question costs the encoder as
much as a 30 s one. CTranslate2's encoder also takes fewer mel frames. Measured with `eval.asr_accuracy` on
150 Asterisk prompts (tiny.en): a 10 s window (longer utterances get theirs plus 1 s) gives the 30 s
window's WER at a third of its time; shorter windows cost WER (see README). Short windows fail one
way: the decoder reads the utterance again and again before it ends. So the guards: the decode is
capped at a length tied to the audio's duration, a transcript that is one phrase repeated keeps the
phrase once, and a text that compresses like a loop is not trusted.
"""

from __future__ import annotations

import re
import zlib

SAMPLE_RATE = 16000
FRAMES_PER_S = 100  # Whisper's mel hop is 10 ms
FULL_WINDOW = 3000
MIN_WINDOW = 1000
MARGIN = 100
MAX_COMPRESSION = 2.4  # faster-whisper's own threshold for a looping decode


def window_frames(samples: int, minimum: int = MIN_WINDOW) -> int:
    """Encoder window for an utterance: at least `minimum` frames, else the utterance plus a margin."""
    needed = -(-samples * FRAMES_PER_S // SAMPLE_RATE) + MARGIN
    return min(FULL_WINDOW, max(minimum, needed))


def token_cap(audio_s: float) -> int:
    """The most tokens a decode of `audio_s` seconds may produce: English speech runs at about three
    tokens a second, so twice that plus a dozen only cuts off a loop."""
    return int(12 + 6 * audio_s)


def strip_repeats(text: str) -> tuple[str, bool]:
    """'Press 1. Press 1. Press' -> ('Press 1.', True): the shortest phrase whose repetition (the last copy
    possibly cut short) makes up the whole text, compared word by word without case or punctuation."""
    words = text.split()
    keys = [re.sub(r"[^\w]", "", w.lower()) for w in words]
    last = len(keys) - 1
    for period in range(1, len(keys) // 2 + 1):
        # The cap may fall inside the last word ("What" of "What's"): it only has to begin like its twin.
        if all(keys[i] == keys[i + period] or (i + period == last and keys[i].startswith(keys[last]))
               for i in range(len(keys) - period)):
            return " ".join(words[:period]), True
    return text, False


def compression_ratio(text: str) -> float:
    raw = text.encode("utf-8")
    return len(raw) / len(zlib.compress(raw)) if raw else 1.0
