"""Whether heard audio holds a recording that was played into a call, found by lining the two up (normalised
cross-correlation) rather than by what a recogniser makes of it.

Through G.711 the same words line up at 0.6-1.0 and different speech stays under 0.2, so `MATCH` sits between.
A line under load moves the words in two ways. A jitter buffer drops or repeats a 20 ms frame now and then,
shifting the rest by tens of milliseconds either way; and a process that stalls (a busy machine scheduling it late)
leaves a gap that the receiver fills with silence or concealment, so the words after it come up to a second later.
One alignment of the whole recording then scores low although every word came through, which is what
`alike_through_a_line` allows for.
"""

from __future__ import annotations

import numpy as np

MATCH = 0.3
HEARD = 0.5
"""`alike_through_a_line`'s bar: the same words through a loaded line scored 0.64-1.0 there, other speech (the
agent's own prompts, the other party's words) at most 0.37, on the transfer tests' recordings it was chosen on.
With stalls allowed for (`STALL`, `DROPPED`): the same words 0.68-1.0 on 20 warm-transfer recordings made beside
other tests or with the three parties stalled, other speech at most 0.31."""
PIECE = 8000
"""Half a second at 16 kHz: long enough that unrelated speech does not line up by chance, short enough that a
shift inside one piece costs it little."""
STALL = 16000
"""1 s: how much later a piece may line up than where the piece before it placed the voice. A sender or receiver
that a busy machine stalls delays every word after the stall by as long as it lasted."""
DROPPED = 8000
"""0.5 s: how much earlier it may line up. A jitter buffer drops a frame now and then, and after a stall it drops
what arrived in a burst beyond what it holds; with the agent, the caller and the person each stopped for 0.4 s every
1.2 s, the words moved 0.2-0.34 s later and up to 0.28 s earlier from one half-second piece to the next."""


def alike_at_every_lag(window: np.ndarray, voice: np.ndarray) -> np.ndarray:
    """For each place `voice` could start in `window`, how alike the two are there (1 is the same audio)."""
    if len(window) < len(voice) or not len(voice):
        return np.zeros(0)
    window, voice = window.astype(np.float64), voice.astype(np.float64)
    n = 1 << (len(window) + len(voice)).bit_length()
    score = np.fft.irfft(np.fft.rfft(window, n) * np.conj(np.fft.rfft(voice, n)), n)[:len(window) - len(voice) + 1]
    heard = np.sqrt(np.maximum(np.convolve(window ** 2, np.ones(len(voice)), "valid"), 0.0))
    alike = score / (heard * np.linalg.norm(voice) + 1e-9)
    alike[heard < 0.05 * np.linalg.norm(voice)] = 0.0  # near-silence: rounding noise over nothing is no match
    return alike


def best_match(window: np.ndarray, voice: np.ndarray) -> tuple[int, float]:
    """Where in `window` `voice` lines up best as one piece, and how well."""
    alike = alike_at_every_lag(window, voice)
    if not len(alike):
        return 0, 0.0
    best = int(np.argmax(alike))
    return best, float(alike[best])


def alike_through_a_line(window: np.ndarray, voice: np.ndarray) -> float:
    """How alike `window` is to `voice` when the line may have dropped or repeated frames, or stalled, on the way.

    The voice is cut into half-second pieces; the piece that lines up best anywhere anchors the walk, and each
    later piece is lined up from `DROPPED` before to `STALL` after where the one before it placed the voice
    (each earlier piece the other way round): the words keep their order, and move within what a busy line does
    to them. The median piece's likeness is the answer, so one piece lost to a burst of loss does not decide it.
    Pieces of the voice that are near silent are left out: they line up with anything quiet.
    """
    starts = range(0, len(voice) - PIECE + 1, PIECE)
    energy = [float(np.linalg.norm(voice[s:s + PIECE].astype(np.float64))) for s in starts]
    loud = [s for s, e in zip(starts, energy, strict=True) if e >= 0.25 * max(energy, default=0.0)]
    curves = [alike_at_every_lag(window, voice[s:s + PIECE]) for s in loud]
    if not curves or not len(curves[0]):
        return 0.0
    peaks = [float(curve.max()) for curve in curves]
    anchor = int(np.argmax(peaks))
    scores = {anchor: peaks[anchor]}
    anchor_lag = int(np.argmax(curves[anchor])) - loud[anchor]
    for order, earlier, later in ((range(anchor + 1, len(curves)), DROPPED, STALL),
                                  (range(anchor - 1, -1, -1), STALL, DROPPED)):
        lag = anchor_lag  # where the voice starts, as the last piece placed it
        for i in order:
            low = min(max(lag + loud[i] - earlier, 0), len(curves[i]) - 1)
            high = min(lag + loud[i] + later + 1, len(curves[i]))
            near = curves[i][low:high]
            best = low + int(np.argmax(near)) if len(near) else low
            lag, scores[i] = best - loud[i], float(curves[i][best])
    return float(np.median(list(scores.values())))
