"""Recorded calls: G.711 decoding, captures, and scoring a recording like a replayed call."""

import json
import struct
import subprocess
import wave

import numpy as np
import pytest

from eval.kit.recording import RecordingError, alaw_decode, read_capture, read_stereo, read_two_files, ulaw_decode
from eval.replay import main as replay_main
from tests.conftest import REPO, synthesize_caller


def sox_codec_roundtrip(pcm: np.ndarray, encoding: str, tmp_path) -> tuple[bytes, np.ndarray]:
    """The G.711 bytes sox encodes `pcm` to, and sox's own decoding of them."""
    raw, coded, decoded = tmp_path / "in.raw", tmp_path / "coded.raw", tmp_path / "out.raw"
    raw.write_bytes(pcm.astype("<i2").tobytes())
    pcm_args = ["-t", "raw", "-r", "8000", "-e", "signed", "-b", "16", "-c", "1"]
    law_args = ["-t", "raw", "-r", "8000", "-e", encoding, "-b", "8", "-c", "1"]
    subprocess.run(["sox", *pcm_args, str(raw), *law_args, str(coded)], check=True)
    subprocess.run(["sox", *law_args, str(coded), *pcm_args, str(decoded)], check=True)
    return coded.read_bytes(), np.frombuffer(decoded.read_bytes(), dtype="<i2")


SWEEP = (np.sin(np.linspace(0, 300, 8000)) * np.linspace(0, 32000, 8000)).astype(np.int16)


@pytest.mark.parametrize(("encoding", "decode"), [("u-law", ulaw_decode), ("a-law", alaw_decode)])
def test_g711_decoding_matches_sox_exactly(tmp_path, encoding, decode):
    coded, expected = sox_codec_roundtrip(SWEEP, encoding, tmp_path)
    assert np.array_equal(decode(coded), expected)


def rtp(sequence: int, timestamp: int, ssrc: int, payload: bytes, payload_type: int = 0) -> bytes:
    return struct.pack(">BBHII", 0x80, payload_type, sequence, timestamp, ssrc) + payload


def udp_frame(source: tuple[str, int], destination: tuple[str, int], payload: bytes) -> bytes:
    """Ethernet + IPv4 + UDP around `payload` (checksums left zero, as capture readers allow)."""
    udp = struct.pack(">HHHH", source[1], destination[1], 8 + len(payload), 0) + payload
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0, 64, 17, 0,
                     bytes(map(int, source[0].split("."))), bytes(map(int, destination[0].split("."))))
    return b"\0" * 12 + b"\x08\x00" + ip + udp


def write_pcap(path, packets: list[tuple[float, bytes]]) -> None:
    out = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)]
    for time, frame in packets:
        out.append(struct.pack("<IIII", int(time), round((time % 1) * 1e6), len(frame), len(frame)) + frame)
    path.write_bytes(b"".join(out))


CALLER, AGENT = ("10.0.0.5", 4000), ("10.0.0.9", 40002)


def two_streams(agent_payload_type: int = 0) -> list[tuple[float, bytes]]:
    """Caller: 10 packets of 0x00 μ-law (loud) from t=100 s; agent: packets from t=100.5 s with packet 3
    lost (its RTP timestamp jumps by 320)."""
    packets = [(100 + 0.02 * i, udp_frame(CALLER, AGENT, rtp(i, 1000 + 160 * i, 0x1111, b"\x00" * 160)))
               for i in range(10)]
    for i in (0, 1, 2, 4, 5):
        packets.append((100.5 + 0.02 * i, udp_frame(AGENT, CALLER, rtp(i, 5000 + 160 * i, 0x2222, b"\x80" * 160,
                                                                    agent_payload_type))))
    return sorted(packets)


def test_a_capture_becomes_two_aligned_legs_with_losses_as_silence(tmp_path):
    write_pcap(tmp_path / "call.pcap", two_streams())
    legs = read_capture(tmp_path / "call.pcap", "10.0.0.9")
    assert legs.rate == 8000 and len(legs.caller) == len(legs.agent) == 4000 + 6 * 160
    assert np.all(legs.caller[:1600] < -30000) and np.all(legs.caller[1600:] == 0)
    agent_voiced = np.flatnonzero(legs.agent)
    assert agent_voiced[0] == 4000 and legs.agent[4000 + 3 * 160:4000 + 4 * 160].max() == 0
    assert np.count_nonzero(legs.agent) == 5 * 160


def test_pcapng_reads_like_pcap(tmp_path):
    write_pcap(tmp_path / "call.pcap", two_streams())
    subprocess.run(["editcap", "-F", "pcapng", str(tmp_path / "call.pcap"), str(tmp_path / "call.pcapng")],
                   check=True)
    a, b = read_capture(tmp_path / "call.pcap", "10.0.0.9"), read_capture(tmp_path / "call.pcapng", "10.0.0.9:40002")
    assert np.array_equal(a.agent, b.agent) and np.array_equal(a.caller, b.caller)


@pytest.mark.parametrize(("packets", "agent", "message"), [
    (two_streams(agent_payload_type=9), "10.0.0.9", "G.722"),
    (two_streams(), "10.0.0.7", "need one G.711 RTP stream from the agent"),
])
def test_captures_that_cannot_be_scored_are_refused_with_the_reason(tmp_path, packets, agent, message):
    write_pcap(tmp_path / "call.pcap", packets)
    with pytest.raises(RecordingError, match=message):
        read_capture(tmp_path / "call.pcap", agent)


def test_a_file_that_is_not_a_capture_is_refused(tmp_path):
    (tmp_path / "x.pcap").write_bytes(b"GIF89a" + b"\0" * 40)
    with pytest.raises(RecordingError, match="magic"):
        read_capture(tmp_path / "x.pcap", "10.0.0.9")


def write_wav(path, channels: list[np.ndarray], rate: int = 8000) -> None:
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(len(channels))
        wav.setsampwidth(2)
        wav.setframerate(rate)
        wav.writeframes(np.stack(channels, axis=1).astype("<i2").tobytes())


def test_mono_recordings_need_the_other_leg(tmp_path):
    write_wav(tmp_path / "mono.wav", [SWEEP])
    with pytest.raises(RecordingError, match="needs 2"):
        read_stereo(tmp_path / "mono.wav")
    write_wav(tmp_path / "agent.wav", [SWEEP[:100]], rate=16000)
    with pytest.raises(RecordingError, match="different rates"):
        read_two_files(tmp_path / "mono.wav", tmp_path / "agent.wav")


def test_a_recorded_call_is_scored_like_a_replayed_one(tmp_path, settings, monkeypatch):
    """Caller asks at 1 s; the 'agent' (a flite voice) answers 600 ms after the question's last sample."""
    question = synthesize_caller(tmp_path, "What are your opening hours during the week?", engine="flite")
    answer = synthesize_caller(tmp_path, "Our offices open Monday to Friday, from 8am to 6pm.", engine="flite",
                               voice="awb")
    answer = answer[np.flatnonzero(np.abs(answer) > 300)[0]:]  # the first sample is loud: no leading silence
    question_end = 8000 + np.flatnonzero(np.abs(question) > 300)[-1]
    caller = np.zeros(question_end + 4800 + len(answer) + 16000, dtype=np.int16)
    agent = np.zeros_like(caller)
    caller[8000:8000 + len(question)] = question
    agent[question_end + 4800:question_end + 4800 + len(answer)] = answer
    write_wav(tmp_path / "call.wav", [caller, agent])
    (tmp_path / "cases.jsonl").write_text(json.dumps(
        {"id": "q1", "call": "c1", "say": "What are your opening hours during the week?",
         "expect_any": ["monday to friday"]}) + "\n")
    monkeypatch.setenv("AGENT_MODELS_DIR", str(settings.models_path.resolve()))
    code = replay_main(["--kb", str(REPO / "kb"), "--cases", str(tmp_path / "cases.jsonl"), "--recording",
                        str(tmp_path / "call.wav"), "--out", str(tmp_path / "report")])
    assert code == 0
    (row,) = json.loads((tmp_path / "report" / "report.json").read_text())["cases"]
    assert row["correct"] is True, row
    # 600 ms by construction; the VAD may end the question a window or two either side of its last
    # loud sample, and ticks are 20 ms.
    assert 520 <= row["latency_ms"] <= 680, row
