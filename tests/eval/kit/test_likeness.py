"""Finding a recording in heard audio by lining the two up, when the line dropped or repeated frames on the way."""

import numpy as np
import pytest

from eval.kit.likeness import HEARD, MATCH, alike_through_a_line, best_match
from eval.kit.phone import load_wav
from tests.peers import flite_wav

FRAME = 320  # 20 ms at 16 kHz


@pytest.fixture(scope="module")
def speech(tmp_path_factory):
    folder = tmp_path_factory.mktemp("likeness")
    return (load_wav(flite_wav(folder, "hello", "Reception, good morning. How can I help?", voice="kal")),
            load_wav(flite_wav(folder, "other", "I would like to book a boiler service next week.")))


def through_a_busy_line(voice: np.ndarray, step: int) -> np.ndarray:
    """The voice after a jitter buffer under load: every `step` 20 ms frames it drops one (step > 0) or plays one
    twice (step < 0), so the words drift further from where they began as they go."""
    frames = [voice[i:i + FRAME] for i in range(0, len(voice), FRAME)]
    return np.concatenate([f for n, frame in enumerate(frames)
                           for f in ([] if step > 0 and n % step == step - 1 else
                                     [frame, frame] if step < 0 and n % -step == -step - 1 else [frame])])


def through_a_stalling_line(voice: np.ndarray, every_s: float, stall_s: float) -> np.ndarray:
    """The voice from a sender or receiver that a busy machine stops for `stall_s` every `every_s`: silence where it
    stood still, the rest of the words that much later."""
    step, gap = int(every_s * 16000), np.zeros(int(stall_s * 16000), dtype=np.int16)
    return np.concatenate([part for i in range(0, len(voice), step) for part in (voice[i:i + step], gap)])


def in_a_call(voice: np.ndarray) -> np.ndarray:
    rng = np.random.default_rng(1)
    quiet = lambda seconds: rng.normal(0, 30, int(seconds * 16000)).astype(np.int16)  # noqa: E731
    return np.concatenate([quiet(2.3), voice, quiet(1.7)])


def test_the_same_words_through_a_clean_line_line_up_whole(speech):
    hello, _ = speech
    at, alike = best_match(in_a_call(hello), hello)
    assert at == int(2.3 * 16000) and alike > 0.99
    assert alike_through_a_line(in_a_call(hello), hello) > 0.99


@pytest.mark.parametrize("step", [15, -15])
def test_words_that_lost_or_gained_frames_on_the_way_are_still_heard(speech, step):
    hello, _ = speech
    heard = in_a_call(through_a_busy_line(hello, step))
    assert best_match(heard, hello)[1] < MATCH < HEARD < alike_through_a_line(heard, hello)


@pytest.mark.parametrize("every_s, stall_s", [(0.7, 0.3), (1.1, 0.5), (1.3, 0.8)])
def test_words_that_came_on_after_a_stalled_line_are_still_heard(speech, every_s, stall_s):
    hello, _ = speech
    assert alike_through_a_line(in_a_call(through_a_stalling_line(hello, every_s, stall_s)), hello) > HEARD


def test_other_words_are_not_heard_as_these(speech):
    hello, other = speech
    assert alike_through_a_line(in_a_call(other), hello) < HEARD
    assert alike_through_a_line(in_a_call(through_a_busy_line(other, 15)), hello) < HEARD
    assert alike_through_a_line(in_a_call(through_a_stalling_line(other, 0.7, 0.3)), hello) < HEARD


def test_nothing_heard_or_too_little_to_hold_it_is_no_match(speech):
    hello, _ = speech
    assert alike_through_a_line(np.zeros(5 * 16000, dtype=np.int16), hello) == 0.0
    assert alike_through_a_line(hello[:4000], hello) == 0.0
    assert alike_through_a_line(in_a_call(hello), hello[:4000]) == 0.0  # shorter than one piece: nothing to line up
