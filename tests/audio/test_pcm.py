import numpy as np
import pytest

from agent.audio.pcm import StreamResampler, bytes_to_int16, float_to_int16, int16_to_float, trim_leading_quiet


def test_int16_float_round_trip_is_exact_for_every_sample_value():
    samples = np.arange(-32768, 32768, dtype=np.int16)
    assert np.array_equal(float_to_int16(int16_to_float(samples) * 32768 / 32767), samples)


def test_float_to_int16_clips():
    assert float_to_int16(np.array([2.0, -2.0])).tolist() == [32767, -32768]


def test_odd_byte_count_is_rejected():
    with pytest.raises(ValueError, match="even number of bytes"):
        bytes_to_int16(b"\x00\x01\x02")


def test_stream_resampling_does_not_depend_on_frame_size():
    tone = float_to_int16(0.3 * np.sin(2 * np.pi * 440 * np.arange(8000) / 8000))
    whole = StreamResampler(8000, 16000)
    one_go = np.concatenate([whole.push(tone), whole.flush()])
    framed = StreamResampler(8000, 16000)
    by_frames = np.concatenate([framed.push(tone[i:i + 160]) for i in range(0, len(tone), 160)] + [framed.flush()])
    assert len(one_go) == len(by_frames) == 16000
    # soxr works in float and the rounding to int16 is the resampler's own: the same samples either way
    assert np.array_equal(one_go, by_frames)


def test_stream_resampling_gives_the_same_samples_in_every_process():
    # With soxr writing int16 itself, a stream fed frame by frame came out differently from one process to the
    # next (in the last bit or two): the same caller must reach Whisper as the same signal.
    import subprocess
    import sys

    program = ("import hashlib, numpy as np; from agent.audio.pcm import StreamResampler\n"
               "x = np.random.default_rng(7).normal(0, 2000, 16000).astype(np.int16)\n"
               "for size in (len(x), 160):\n"
               "    r = StreamResampler(8000, 16000)\n"
               "    out = np.concatenate([r.push(x[i:i + size]) for i in range(0, len(x), size)] + [r.flush()])\n"
               "    print(hashlib.sha256(out.tobytes()).hexdigest())")
    runs = {subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True).stdout
            for _ in range(4)}
    assert len(runs) == 1


def test_the_quiet_before_the_first_loud_sample_is_trimmed_less_a_margin():
    pcm = np.concatenate([np.zeros(640, np.int16), np.full(10, 20, np.int16), np.full(100, 5000, np.int16)])
    trimmed = trim_leading_quiet(pcm, threshold=64, keep=80)
    assert len(trimmed) == 100 + 80 and trimmed[-100:].tolist() == [5000] * 100


def test_audio_that_is_quiet_throughout_is_left_whole():
    pcm = np.full(320, 10, np.int16)
    assert trim_leading_quiet(pcm, threshold=64, keep=80) is pcm
