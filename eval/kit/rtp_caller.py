"""Callers that cost almost nothing: one SIP dialog over UDP and PCMU RTP in plain asyncio, many in one process.

eval.kit.caller is a whole pjsua2 user agent per process; a soak or load run of dozens of those takes the CPU it
means to measure. This caller speaks just enough SIP for one call (INVITE with retransmissions, ACK, BYE from
either side, 200 to anything the agent asks inside the dialog), paces 20 ms μ-law frames on the event loop's
clock, sends RFC 4733 digits, and keeps what it hears by the 20 ms tick it arrived in.

    result = await place_call("127.0.0.1", 5060, Script(ticks=500, says=((50, question8k),)))
"""

from __future__ import annotations

import asyncio
import random
import re
import struct
import uuid
from dataclasses import dataclass

import numpy as np

from eval.kit.line import ulaw_encode
from eval.kit.recording import ulaw_decode

FRAME = 160  # samples per 20 ms at 8 kHz
TICK_S = 0.02
PCMU, EVENT = 0, 101
EVENT_CODES = {**{str(d): d for d in range(10)}, "*": 10, "#": 11}
SILENCE = b"\xff" * FRAME  # μ-law zero


@dataclass(frozen=True)
class Script:
    """What the caller does, tick by tick: each of `says` is (tick, 8 kHz int16 audio) sent from that tick,
    a digit at each of `digits` ticks (each event lasts one tick), and a BYE after `ticks` unless the agent
    hangs up first."""

    ticks: int
    says: tuple[tuple[int, np.ndarray], ...] = ()
    digits: tuple[tuple[int, str], ...] = ()

    def frame(self, tick: int) -> bytes:
        """The μ-law frame to send at `tick` (silence outside the audio)."""
        for start, audio in self.says:
            offset = (tick - start) * FRAME
            if 0 <= offset < len(audio):
                return ulaw_encode(audio[offset:offset + FRAME]).ljust(FRAME, b"\xff")
        return SILENCE


@dataclass
class CallResult:
    status: int
    sip_call_id: str
    received: np.ndarray  # 8 kHz int16, each packet placed at the tick it arrived in
    ended_by: str  # "caller", "agent" or "" (never answered)


# --- pure: messages and packets --------------------------------------------------------------------------

def offer_sdp(host: str, rtp_port: int) -> str:
    return (f"v=0\r\no=- {random.getrandbits(31)} 1 IN IP4 {host}\r\ns=-\r\nc=IN IP4 {host}\r\nt=0 0\r\n"
            f"m=audio {rtp_port} RTP/AVP {PCMU} {EVENT}\r\na=rtpmap:{PCMU} PCMU/8000\r\n"
            f"a=rtpmap:{EVENT} telephone-event/8000\r\na=fmtp:{EVENT} 0-15\r\na=ptime:20\r\na=sendrecv\r\n")


def answer_media(sdp: str) -> tuple[str, int]:
    """The address and port the answer's audio goes to (session- or media-level c= line)."""
    host = re.findall(r"^c=IN IP4 (\S+)", sdp, re.M)[-1]
    port = int(re.search(r"^m=audio (\d+)", sdp, re.M).group(1))
    return host, port


@dataclass(frozen=True)
class Message:
    first_line: str
    headers: dict[str, str]  # lower-case name -> first value
    body: str

    @property
    def status(self) -> int:
        return int(self.first_line.split()[1]) if self.first_line.startswith("SIP/2.0 ") else 0


def parse_message(data: bytes) -> Message:
    head, _, body = data.decode(errors="replace").partition("\r\n\r\n")
    lines = head.split("\r\n")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers.setdefault(name.strip().lower(), value.strip())
    return Message(lines[0], headers, body)


def rtp_packet(payload_type: int, sequence: int, timestamp: int, ssrc: int, payload: bytes,
               marker: bool = False) -> bytes:
    return struct.pack("!BBHII", 0x80, payload_type | (0x80 if marker else 0), sequence & 0xFFFF,
                       timestamp & 0xFFFFFFFF, ssrc) + payload


def event_payload(digit: str, duration: int, end: bool) -> bytes:
    """RFC 4733 telephone-event: event code, end bit with volume 10 dBm0, duration in samples."""
    return struct.pack("!BBH", EVENT_CODES[digit], (0x80 if end else 0) | 10, duration)


def place(heard: list[tuple[int, np.ndarray]]) -> np.ndarray:
    """Frames in arrival order, each at the tick it arrived in or just after the one before (two packets
    read in one tick are consecutive audio, not the same 20 ms)."""
    slots, last = [], -1
    for tick, _ in heard:
        last = max(tick, last + 1)
        slots.append(last)
    received = np.zeros((last + 1) * FRAME, np.int16)
    for slot, (_, samples) in zip(slots, heard, strict=True):
        received[slot * FRAME:slot * FRAME + len(samples[:FRAME])] = samples[:FRAME]
    return received


def rtp_payload(packet: bytes) -> tuple[int, bytes] | None:
    """(payload type, payload) of an RTP packet without CSRCs or extensions, as the agent sends them."""
    if len(packet) < 12 or packet[0] >> 6 != 2:
        return None
    return packet[1] & 0x7F, packet[12:]


# --- I/O ---------------------------------------------------------------------------------------------------

class _Socket(asyncio.DatagramProtocol):
    def __init__(self) -> None:
        self.inbox: asyncio.Queue[tuple[bytes, tuple]] = asyncio.Queue()

    def datagram_received(self, data: bytes, addr: tuple) -> None:
        self.inbox.put_nowait((data, addr))


class _Dialog:
    """One call's SIP: tags, CSeq and the agent's address."""

    def __init__(self, transport: asyncio.DatagramTransport, inbox: _Socket, local: tuple[str, int],
                 agent: tuple[str, int], user: str) -> None:
        self.transport, self.inbox, self.local, self.agent = transport, inbox, local, agent
        self.uri = f"sip:{user}@{agent[0]}:{agent[1]}"
        self.call_id, self.from_tag, self.to_tag, self.cseq = uuid.uuid4().hex, uuid.uuid4().hex[:8], "", 0

    def send(self, method: str, body: str = "", branch: str | None = None, cseq: int | None = None) -> str:
        branch = branch or f"z9hG4bK{uuid.uuid4().hex[:16]}"
        host, port = self.local
        to_tag = f";tag={self.to_tag}" if self.to_tag else ""
        content_type = "Content-Type: application/sdp\r\n" if body else ""
        message = (f"{method} {self.uri} SIP/2.0\r\nVia: SIP/2.0/UDP {host}:{port};branch={branch};rport\r\n"
                   f"Max-Forwards: 70\r\nFrom: <sip:caller@{host}:{port}>;tag={self.from_tag}\r\n"
                   f"To: <{self.uri}>{to_tag}\r\nCall-ID: {self.call_id}\r\nCSeq: {cseq or self.cseq} {method}\r\n"
                   f"Contact: <sip:caller@{host}:{port}>\r\n{content_type}Content-Length: {len(body)}\r\n\r\n{body}")
        self.transport.sendto(message.encode(), self.agent)
        return branch

    async def transaction(self, method: str, body: str = "", timeout: float = 10.0) -> Message | None:
        """Send a request, retransmitting on RFC 3261's timer A until a response; the final response."""
        self.cseq += 1
        branch = self.send(method, body)
        loop, interval = asyncio.get_running_loop(), 0.5
        deadline, resend = loop.time() + timeout, loop.time() + interval
        provisional = False
        while loop.time() < deadline:
            try:
                data, _ = await asyncio.wait_for(self.inbox.inbox.get(), min(resend, deadline) - loop.time())
            except TimeoutError:
                if not provisional:
                    self.send(method, body, branch, self.cseq)
                interval = min(interval * 2, 4.0)
                resend = loop.time() + interval
                continue
            reply = parse_message(data)
            if reply.status == 0:
                self.answer_ok(reply)
            elif reply.headers.get("cseq", "").endswith(method) and reply.status >= 200:
                return reply
            else:
                provisional = True
        return None

    def answer_ok(self, request: Message) -> None:
        keep = ("via", "from", "to", "call-id", "cseq")
        headers = "".join(f"{name.title()}: {request.headers[name]}\r\n" for name in keep if name in request.headers)
        self.transport.sendto(f"SIP/2.0 200 OK\r\n{headers}Content-Length: 0\r\n\r\n".encode(), self.agent)


async def place_call(agent_host: str, agent_port: int, script: Script, user: str = "agent",
                     local_host: str = "127.0.0.1") -> CallResult:
    loop = asyncio.get_running_loop()
    sip, sip_inbox = await loop.create_datagram_endpoint(_Socket, local_addr=(local_host, 0))
    rtp, rtp_inbox = await loop.create_datagram_endpoint(_Socket, local_addr=(local_host, 0))
    try:
        dialog = _Dialog(sip, sip_inbox, sip.get_extra_info("sockname")[:2], (agent_host, agent_port), user)
        reply = await dialog.transaction("INVITE", offer_sdp(local_host, rtp.get_extra_info("sockname")[1]))
        if reply is None:
            return CallResult(0, dialog.call_id, np.zeros(0, np.int16), "")
        dialog.to_tag = reply.headers.get("to", "").partition(";tag=")[2].split(";")[0]
        # ACK: a 2xx gets its own transaction; a refusal is acknowledged in the INVITE's.
        dialog.send("ACK", cseq=dialog.cseq)
        if reply.status >= 300:
            return CallResult(reply.status, dialog.call_id, np.zeros(0, np.int16), "")
        heard, ended_by = await _media(dialog, rtp, rtp_inbox, answer_media(reply.body), script)
        if ended_by == "caller":
            await dialog.transaction("BYE")
        return CallResult(reply.status, dialog.call_id, place(heard), ended_by)
    finally:
        sip.close()
        rtp.close()


async def _media(dialog: _Dialog, rtp: asyncio.DatagramTransport, inbox: _Socket, remote: tuple[str, int],
                 script: Script) -> tuple[list[tuple[int, np.ndarray]], str]:
    loop = asyncio.get_running_loop()
    digits = dict(script.digits)
    ssrc, sequence, start = random.getrandbits(32), random.getrandbits(16), loop.time()
    heard: list[tuple[int, np.ndarray]] = []
    for tick in range(script.ticks):
        timestamp = tick * FRAME
        if tick in digits:  # one 20 ms event: the start packet, then the end packet three times (RFC 4733)
            rtp.sendto(rtp_packet(EVENT, sequence, timestamp, ssrc, event_payload(digits[tick], FRAME, False),
                                  marker=True), remote)
            for _ in range(3):
                sequence += 1
                rtp.sendto(rtp_packet(EVENT, sequence, timestamp, ssrc, event_payload(digits[tick], FRAME, True)),
                           remote)
        else:
            rtp.sendto(rtp_packet(PCMU, sequence, timestamp, ssrc, script.frame(tick)), remote)
        sequence += 1
        while not inbox.inbox.empty():
            parsed = rtp_payload(inbox.inbox.get_nowait()[0])
            if parsed is not None and parsed[0] == PCMU:
                heard.append((tick, ulaw_decode(parsed[1])))
        while not dialog.inbox.inbox.empty():
            message = parse_message(dialog.inbox.inbox.get_nowait()[0])
            if message.status == 0:
                dialog.answer_ok(message)
                if message.first_line.startswith("BYE "):
                    return heard, "agent"
        await asyncio.sleep(max(0.0, start + (tick + 1) * TICK_S - loop.time()))
    return heard, "caller"
