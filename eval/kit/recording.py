"""Recorded calls as two time-aligned legs (caller, agent): from a stereo WAV, two mono WAVs, or a
packet capture (pcap or pcapng) of the call's RTP.

Captures are decoded here, in plain Python: G.711 (PCMU, PCMA) payloads placed by their RTP
timestamps, the two directions aligned by the capture time of their first packets. G.722 captures
are refused with a way out (record the call as WAV instead).
"""

from __future__ import annotations

import struct
import wave
from dataclasses import dataclass
from pathlib import Path

import numpy as np

G711 = {0: "PCMU", 8: "PCMA"}
RATE = 8000


class RecordingError(ValueError):
    """The recording cannot be read as a call; the message says why."""


@dataclass(frozen=True)
class Legs:
    caller: np.ndarray
    """int16 mono at `rate`; sample 0 of both legs is the same instant."""
    agent: np.ndarray
    rate: int


def _read_wav(path: Path) -> tuple[np.ndarray, int, int]:
    try:
        with wave.open(str(path), "rb") as wav:
            if wav.getsampwidth() != 2:
                raise RecordingError(f"{path}: {8 * wav.getsampwidth()}-bit WAV; 16-bit PCM is needed")
            frames = np.frombuffer(wav.readframes(wav.getnframes()), dtype="<i2")
            return frames.reshape(-1, wav.getnchannels()), wav.getframerate(), wav.getnchannels()
    except (wave.Error, EOFError) as exc:
        raise RecordingError(f"{path}: not a readable WAV file ({exc})") from None


def read_stereo(path: Path, caller_channel: int = 0) -> Legs:
    """A two-channel recording: one leg per channel."""
    frames, rate, channels = _read_wav(path)
    if channels != 2:
        raise RecordingError(f"{path}: {channels} channel(s); a call recording needs 2 (caller and agent), "
                             "or give the agent's leg as a second file")
    return Legs(frames[:, caller_channel].copy(), frames[:, 1 - caller_channel].copy(), rate)


def read_two_files(caller: Path, agent: Path) -> Legs:
    """Two mono recordings that start at the same instant."""
    (a, rate_a, ch_a), (b, rate_b, ch_b) = _read_wav(caller), _read_wav(agent)
    if ch_a != 1 or ch_b != 1:
        raise RecordingError("two-file recordings must be mono WAVs")
    if rate_a != rate_b:
        raise RecordingError(f"the legs have different rates ({rate_a} and {rate_b} Hz)")
    length = max(len(a), len(b))
    return Legs(np.pad(a[:, 0], (0, length - len(a))), np.pad(b[:, 0], (0, length - len(b))), rate_a)


def ulaw_decode(payload: bytes) -> np.ndarray:
    """G.711 μ-law bytes to int16 samples."""
    u = ~np.frombuffer(payload, dtype=np.uint8)
    exponent, mantissa = (u >> 4) & 7, u & 15
    magnitude = ((mantissa.astype(np.int32) << 3) + 0x84) << exponent
    return np.where(u & 0x80, 0x84 - magnitude, magnitude - 0x84).astype(np.int16)


def alaw_decode(payload: bytes) -> np.ndarray:
    """G.711 A-law bytes to int16 samples."""
    a = np.frombuffer(payload, dtype=np.uint8) ^ 0x55
    exponent, mantissa = (a >> 4) & 7, (a & 15).astype(np.int32)
    magnitude = np.where(exponent == 0, (mantissa << 4) + 8, ((mantissa << 4) + 0x108) << (exponent - 1))
    return np.where(a & 0x80, magnitude, -magnitude).astype(np.int16)


@dataclass(frozen=True)
class RtpPacket:
    time: float
    """Capture time, seconds."""
    source: str
    """ip:port that sent it."""
    ssrc: int
    payload_type: int
    timestamp: int
    payload: bytes


def capture_packets(data: bytes) -> list[tuple[float, int, bytes]]:
    """(time, link type, frame) of every packet in a pcap or pcapng file."""
    if len(data) < 24:
        raise RecordingError("capture too short to be a pcap or pcapng file")
    magic = data[:4]
    if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
        little = magic[0] in (0xD4, 0x4D)
        endian = "<" if little else ">"
        nano = magic in (b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d")
        link = struct.unpack(endian + "I", data[20:24])[0]
        out, offset = [], 24
        while offset + 16 <= len(data):
            seconds, fraction, captured, _ = struct.unpack(endian + "IIII", data[offset:offset + 16])
            frame = data[offset + 16:offset + 16 + captured]
            out.append((seconds + fraction / (1e9 if nano else 1e6), link, frame))
            offset += 16 + captured
        return out
    if magic == b"\x0a\x0d\x0d\x0a":
        return _pcapng_packets(data)
    raise RecordingError("not a pcap or pcapng file (unknown magic number)")


def _pcapng_packets(data: bytes) -> list[tuple[float, int, bytes]]:
    endian = "<" if data[8:12] == b"\x4d\x3c\x2b\x1a" else ">"
    links: list[int] = []
    out, offset = [], 0
    while offset + 12 <= len(data):
        kind, length = struct.unpack(endian + "II", data[offset:offset + 8])
        if length < 12:
            raise RecordingError("damaged pcapng block")
        body = data[offset + 8:offset + length - 4]
        if kind == 1:  # interface description: link type (timestamps assumed in microseconds)
            links.append(struct.unpack(endian + "H", body[:2])[0])
        elif kind == 6:  # enhanced packet
            interface, high, low, captured = struct.unpack(endian + "IIII", body[:16])
            out.append((((high << 32) | low) / 1e6, links[interface], body[20:20 + captured]))
        offset += length
    return out


def _udp(link: int, frame: bytes) -> tuple[str, str, bytes] | None:
    """(source ip:port, destination ip:port, payload) of an IPv4 UDP frame, else None."""
    header = {1: 14, 113: 16, 276: 20, 0: 4, 101: 0, 228: 0}.get(link)
    if header is None:
        raise RecordingError(f"unsupported capture link type {link}")
    ip = frame[header:]
    if len(ip) < 20 or ip[0] >> 4 != 4 or ip[9] != 17:
        return None
    ihl = (ip[0] & 15) * 4
    udp = ip[ihl:]
    if len(udp) < 8:
        return None
    source_port, destination_port = struct.unpack(">HH", udp[:4])
    source, destination = ".".join(map(str, ip[12:16])), ".".join(map(str, ip[16:20]))
    return f"{source}:{source_port}", f"{destination}:{destination_port}", udp[8:]


def rtp_packets(data: bytes) -> list[RtpPacket]:
    """G.711 RTP packets of a capture (anything else, SIP and RFC 4733 events included, is skipped)."""
    packets = []
    for time, link, frame in capture_packets(data):
        udp = _udp(link, frame)
        if udp is None or len(udp[2]) < 12 or udp[2][0] >> 6 != 2:
            continue
        payload = udp[2]
        payload_type = payload[1] & 0x7F
        if payload_type == 9:
            raise RecordingError("the capture carries G.722 audio, which is not decoded here; record the call "
                                 "as a stereo WAV instead")
        if payload_type not in G711:
            continue
        csrc = (payload[0] & 15) * 4
        timestamp, ssrc = struct.unpack(">II", payload[4:12])
        packets.append(RtpPacket(time, udp[0], ssrc, payload_type, timestamp, payload[12 + csrc:]))
    return packets


def _place(packets: list[RtpPacket], start: float) -> np.ndarray:
    """One stream as samples from `start` (capture time), each payload at its RTP timestamp."""
    first = packets[0]
    offset = round((first.time - start) * RATE)
    chunks = [(offset + ((p.timestamp - first.timestamp) & 0xFFFFFFFF),
               ulaw_decode(p.payload) if p.payload_type == 0 else alaw_decode(p.payload)) for p in packets]
    audio = np.zeros(max(at + len(c) for at, c in chunks), dtype=np.int16)
    for at, chunk in chunks:
        audio[at:at + len(chunk)] = chunk
    return audio


def read_capture(path: Path, agent_source: str) -> Legs:
    """The call in a pcap/pcapng: the agent's leg is the RTP sent from `agent_source` (ip or ip:port),
    the caller's the other stream."""
    packets = rtp_packets(path.read_bytes())
    streams: dict[tuple[str, int], list[RtpPacket]] = {}
    for packet in packets:
        streams.setdefault((packet.source, packet.ssrc), []).append(packet)
    agent = [k for k in streams if k[0] == agent_source or k[0].startswith(agent_source + ":")]
    caller = [k for k in streams if k not in agent]
    if len(agent) != 1 or len(caller) != 1:
        found = ", ".join(f"{source} ssrc {ssrc:#x}" for source, ssrc in streams) or "none"
        raise RecordingError(f"{path}: need one G.711 RTP stream from the agent ({agent_source}) and one from the "
                             f"caller; found {found}")
    start = min(streams[agent[0]][0].time, streams[caller[0]][0].time)
    agent_audio, caller_audio = _place(streams[agent[0]], start), _place(streams[caller[0]], start)
    length = max(len(agent_audio), len(caller_audio))
    return Legs(np.pad(caller_audio, (0, length - len(caller_audio))),
                np.pad(agent_audio, (0, length - len(agent_audio))), RATE)
