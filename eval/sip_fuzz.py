"""A SIP fuzzer of our own: mutated INVITEs against a running agent, an OPTIONS probe after each.

    python -m eval.sip_fuzz --target 127.0.0.1:5060 --cases 5000 [--seed 1] [--tcp-every 20] [--rate 20]

Each case takes a valid INVITE (PCMU offer) and damages its SDP or its headers
the ways a hostile or broken peer would: overlong and malformed addresses,
ports, format lists and attributes, repeated and missing lines, odd encodings
and line endings, wrong lengths. Every case is then followed by an OPTIONS
probe (over UDP), which must be answered. A case the agent answers 200 is
ACKed and hung up at once. Cases are a pure function of (seed, number), so a
failure can be replayed with `--only N`.

Run it from a trusted peer's address (the agent's SIP_TRUSTED_PEERS), or the
agent's flood protection cuts the fuzzer off after a few cases; `--rate`
keeps it under the agent's flood limit (see agent.sip.admission). Each TCP
case holds one of pjsip's 64 transport slots until its transaction times out
(about 32 s), so keep TCP cases under two a second.
"""

from __future__ import annotations

import argparse
import json
import random
import socket
import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

OVERLONG = ["%n" * 245, "a" * 300, "1" * 254, "9" * 4000, "x." * 140]
BAD_ADDRESSES = OVERLONG + ["", "1.2.3.4.5", "999.1.1.1", "::::::::::", "[::1]", "::1", "localhost",
                            "224.0.0.1", "255.255.255.255", "1.2.3.4/127/3", "-1", "\x00", "é.example",
                            "evil.example.com", "127.0.0.1 extra", "0x7f.1"]
BAD_NUMBERS = ["-1", "65536", "99999999999999999999", "abc", "", "0x10", "1e5", "4294967296", "00000000000000001",
               "1/99999", "0/0", "65535/65535"]


@dataclass(frozen=True)
class Case:
    number: int
    kind: str
    """What was damaged, e.g. 'sdp.c-address' or 'header.via-host'."""
    payload: bytes
    """The whole INVITE as sent."""


def base_sdp(media_port: int) -> list[str]:
    return ["v=0", "o=- 1 1 IN IP4 127.0.0.1", "s=-", "c=IN IP4 127.0.0.1", "t=0 0",
            f"m=audio {media_port} RTP/AVP 0 101", "a=rtpmap:0 PCMU/8000", "a=rtpmap:101 telephone-event/8000",
            "a=fmtp:101 0-16", "a=ptime:20", "a=sendrecv"]


def base_headers(target: str, local: int, call_id: str, transport: str) -> list[str]:
    return [f"INVITE sip:agent@{target} SIP/2.0",
            f"Via: SIP/2.0/{transport} 127.0.0.1:{local};branch=z9hG4bK{call_id[:16]};rport",
            "Max-Forwards: 70", f"From: <sip:fuzz@127.0.0.1:{local}>;tag={call_id[:8]}", f"To: <sip:agent@{target}>",
            f"Call-ID: {call_id}", "CSeq: 1 INVITE", f"Contact: <sip:fuzz@127.0.0.1:{local}>",
            "Content-Type: application/sdp"]


def _replace(lines: list[str], prefix: str, value: str) -> list[str]:
    return [value if line.startswith(prefix) else line for line in lines]


def _sdp_mutations(r: random.Random) -> dict[str, Callable[[list[str]], list[str]]]:
    def attrs(lines: list[str], extra: list[str]) -> list[str]:
        return lines + extra

    return {
        "sdp.c-address": lambda s: _replace(s, "c=", f"c=IN IP4 {r.choice(BAD_ADDRESSES)}"),
        "sdp.c-ip6-mismatch": lambda s: _replace(s, "c=", f"c=IN IP6 {r.choice(['127.0.0.1', '::1', 'a' * 300])}"),
        "sdp.c-fields": lambda s: _replace(s, "c=", r.choice(["c=IN", "c=", "c=XX IP4 1.2.3.4", "c=IN IP9 1.2.3.4",
                                                              "c=IN IP4", "c=IN  IP4  127.0.0.1"])),
        "sdp.c-repeated": lambda s: s + ["c=IN IP4 " + r.choice(BAD_ADDRESSES)] * r.randint(1, 40),
        "sdp.c-missing": lambda s: [line for line in s if not line.startswith("c=")],
        "sdp.o-address": lambda s: _replace(s, "o=", f"o=- 1 1 IN IP4 {r.choice(BAD_ADDRESSES)}"),
        "sdp.o-fields": lambda s: _replace(s, "o=", r.choice(["o=", "o=- 1", "o=- a b IN IP4 1.2.3.4 extra",
                                                              "o=" + "-" * 600])),
        "sdp.m-port": lambda s: _replace(s, "m=", f"m=audio {r.choice(BAD_NUMBERS)} RTP/AVP 0"),
        "sdp.m-formats": lambda s: _replace(s, "m=", "m=audio 20000 RTP/AVP " + " ".join(
            r.choice(["0", "8", "9", "101", "128", "-1", "999999", "abc", "%s"]) for _ in range(r.randint(0, 200)))),
        "sdp.m-proto": lambda s: _replace(s, "m=", f"m=audio 20000 {r.choice(['', 'X' * 300, 'RTP/SAVP', 'UDP'])} 0"),
        "sdp.m-many": lambda s: s + [f"m=audio {20000 + 2 * i} RTP/AVP 0" for i in range(r.randint(2, 60))],
        "sdp.m-missing": lambda s: [line for line in s if not line.startswith("m=")],
        "sdp.m-other-media": lambda s: s + [f"m={r.choice(['video', 'image', 'application', 'x' * 80])} 20002 "
                                            f"{r.choice(['RTP/AVP 96', 'udptl t38', 'TCP/BFCP *'])}"],
        "sdp.rtpmap": lambda s: attrs(s, [f"a=rtpmap:{r.choice(['0', '300', '-1', 'x', ''])} "
                                          f"{r.choice(['PCMU', 'x' * 200, ''])}/{r.choice(BAD_NUMBERS + ['8000'])}"
                                          f"{r.choice(['', '/0', '/999', '/-1'])}"]),
        "sdp.fmtp": lambda s: attrs(s, [f"a=fmtp:{r.choice(['101', '0', '999', 'x'])} " + ";".join(
            f"k{i}={'v' * r.randint(0, 50)}" for i in range(r.randint(0, 300)))]),
        "sdp.rtcp": lambda s: attrs(s, [f"a=rtcp:{r.choice(BAD_NUMBERS + ['20001'])} IN IP4 "
                                        f"{r.choice(BAD_ADDRESSES)}"]),
        "sdp.ptime": lambda s: _replace(s, "a=ptime", f"a=ptime:{r.choice(BAD_NUMBERS + ['0', '1', '100000'])}"),
        "sdp.attributes-many": lambda s: attrs(s, [f"a=x-{i}:{'y' * r.randint(0, 40)}"
                                                   for i in range(r.randint(40, 400))]),
        "sdp.attribute-long": lambda s: attrs(s, [f"a={r.choice(['x', 'rtpmap', 'fmtp', 'candidate'])}:"
                                                  + "z" * r.randint(300, 5000)]),
        "sdp.direction": lambda s: attrs(s, [r.choice(["a=sendonly:x", "a=inactive", "a=recvonly", "a=sendrecv"])
                                             for _ in range(r.randint(1, 10))]),
        "sdp.bandwidth": lambda s: attrs(s, [f"b={r.choice(['AS', 'TIAS', 'X' * 100])}:{r.choice(BAD_NUMBERS)}"
                                             for _ in range(r.randint(1, 12))]),
        "sdp.v-missing": lambda s: s[1:],
        "sdp.v-repeated": lambda s: s + ["v=0"] * r.randint(1, 5),
        "sdp.garbage-line": lambda s: s + [r.choice(["=", "x", "a", "zz=1", "a=", "\x01=\x02", "m", "c"])],
        "sdp.shuffled": lambda s: r.sample(s, len(s)),
        "sdp.truncated": lambda s: "\r\n".join(s)[:r.randint(1, 80)].split("\r\n"),
    }


def _header_mutations(r: random.Random) -> dict[str, Callable[[list[str]], list[str]]]:
    def host(h: list[str], prefix: str, template: str) -> list[str]:
        return _replace(h, prefix, template.format(r.choice(BAD_ADDRESSES).replace("\x00", "")))

    return {
        "header.via-host": lambda h: host(h, "Via:", "Via: SIP/2.0/UDP {}:5060;branch=z9hG4bKfuzz"),
        "header.via-port": lambda h: _replace(h, "Via:", f"Via: SIP/2.0/UDP 127.0.0.1:{r.choice(BAD_NUMBERS)};"
                                                         "branch=z9hG4bKfuzz"),
        "header.via-params": lambda h: [line + r.choice([";received=" + "1" * 300, ";maddr=" + "a" * 300,
                                                         ";rport=99999", ";ttl=-1", ";branch="])
                                        if line.startswith("Via:") else line for line in h],
        "header.contact-host": lambda h: host(h, "Contact:", "Contact: <sip:fuzz@{}>"),
        "header.contact-port": lambda h: _replace(h, "Contact:",
                                                  f"Contact: <sip:fuzz@127.0.0.1:{r.choice(BAD_NUMBERS)}>"),
        "header.contact-many": lambda h: h + [f"Contact: <sip:c{i}@127.0.0.1>" for i in range(r.randint(2, 50))],
        "header.record-route": lambda h: h + [f"Record-Route: <sip:{r.choice(BAD_ADDRESSES)};lr>"
                                              for _ in range(r.randint(1, 5))],
        "header.from-to": lambda h: host(h, r.choice(["From:", "To:"]), r.choice(["From: <sip:x@{}>;tag=1",
                                                                                  "To: <sip:agent@{}>"])),
        "header.request-uri": lambda h: [f"INVITE sip:agent@{r.choice(BAD_ADDRESSES)} SIP/2.0"] + h[1:],
        "header.call-id": lambda h: _replace(h, "Call-ID:", "Call-ID: " + r.choice(["", "x" * 3000, "a b c",
                                                                                   "\u00e9\u00e9"])),
        "header.cseq": lambda h: _replace(h, "CSeq:", f"CSeq: {r.choice(BAD_NUMBERS)} "
                                                      f"{r.choice(['INVITE', 'OPTIONS', '', 'X' * 100])}"),
        "header.max-forwards": lambda h: _replace(h, "Max-Forwards:", f"Max-Forwards: {r.choice(BAD_NUMBERS)}"),
        "header.content-type": lambda h: _replace(h, "Content-Type:", "Content-Type: " + r.choice(
            ["", "text/plain", "multipart/mixed;boundary=x", "application/sdp;" + "p" * 2000, "application/SDP"])),
        "header.missing": lambda h: [line for line in h if not line.startswith(
            r.choice(["Via:", "From:", "To:", "Call-ID:", "CSeq:", "Contact:", "Max-Forwards:", "Content-Type:"]))],
        "header.repeated": lambda h: h + [r.choice(h[1:])] * r.randint(1, 30),
        "header.long": lambda h: h + [f"X-Fuzz: {'q' * r.randint(1000, 20000)}"],
        "header.folded": lambda h: h + ["Subject: first", " " + "w" * r.randint(1, 3000), "\tmore"],
        "header.compact": lambda h: [line.replace("Via:", "v:").replace("Contact:", "m:").replace(
            "Content-Type:", "c:") for line in h],
        "header.controls": lambda h: h + [f"X-Bytes: {''.join(chr(r.randint(0, 31)) for _ in range(40))}"],
        "header.supported-require": lambda h: h + [r.choice(["Require: 100rel, timer, x" * 50, "Supported: ,,,,",
                                                             "Session-Expires: -1", "Min-SE: 99999999999"])],
    }


def _encode(kind: str, r: random.Random, head: str, body: str) -> bytes:
    """The message as bytes, with the length and encoding damage some cases ask for."""
    if kind == "encoding.latin1":
        return (head + f"\r\nContent-Length: {len(body.encode('latin-1', 'replace'))}\r\n\r\n").encode() \
            + body.replace("s=-", "s=\u00e9\u00ff").encode("latin-1", "replace")
    if kind == "encoding.bare-lf":
        body, head = body.replace("\r\n", "\n"), head.replace("\r\n", "\n")
        return f"{head}\nContent-Length: {len(body)}\n\n{body}".encode()
    if kind == "encoding.nul":
        cut = r.randint(0, len(body))
        body = body[:cut] + "\x00" + body[cut:]
    if kind == "encoding.bom":
        body = "\ufeff" + body
    length = len(body.encode())
    if kind == "length.wrong":
        length = r.choice([0, 1, length - 5, length + 50, 999999, -1])
    return (head + f"\r\nContent-Length: {length}\r\n\r\n" + body).encode()


ENCODINGS = ["encoding.latin1", "encoding.bare-lf", "encoding.nul", "encoding.bom", "length.wrong"]


def make_case(seed: int, number: int, target: str, local: int, media_port: int, transport: str = "UDP") -> Case:
    """Case `number` of the run seeded `seed`: one valid INVITE with one kind of damage (sometimes two)."""
    r = random.Random(seed * 1_000_003 + number)
    call_id = uuid.UUID(int=r.getrandbits(128)).hex
    sdp, headers = base_sdp(media_port), base_headers(target, local, call_id, transport)
    sdp_mutations, header_mutations = _sdp_mutations(r), _header_mutations(r)
    kinds = [r.choice(list(sdp_mutations) + list(header_mutations) + ENCODINGS) for _ in range(r.choice([1, 1, 1, 2]))]
    for kind in kinds:
        if kind in sdp_mutations:
            sdp = sdp_mutations[kind](sdp)
        elif kind in header_mutations:
            headers = header_mutations[kind](headers)
    body = "".join(f"{line}\r\n" for line in sdp)
    encoding = next((k for k in kinds if k in ENCODINGS), "")
    return Case(number, "+".join(kinds), _encode(encoding, r, "\r\n".join(headers), body))


class Peer:
    """One loopback socket pair for sending cases and probes (UDP or TCP)."""

    def __init__(self, target: tuple[str, int], local: int, transport: str) -> None:
        self.target, self.local, self.transport = target, local, transport

    def send(self, payload: bytes, wait: float) -> list[str]:
        """Send one message; return the responses that came back within `wait` seconds."""
        kind = socket.SOCK_DGRAM if self.transport == "UDP" else socket.SOCK_STREAM
        responses: list[str] = []
        with socket.socket(socket.AF_INET, kind) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(("127.0.0.1", self.local if self.transport == "UDP" else 0))
            sock.settimeout(wait)
            try:
                if self.transport == "UDP":
                    sock.sendto(payload, self.target)
                else:
                    sock.connect(self.target)
                    sock.sendall(payload)
                deadline = time.monotonic() + wait
                while time.monotonic() < deadline:
                    data = sock.recv(65535).decode(errors="replace")
                    if not data:
                        break
                    responses += [part for part in data.split("SIP/2.0 ")[1:]]
                    if any(not part.startswith("1") for part in responses):
                        break
            except (TimeoutError, ConnectionError, OSError):
                pass
        return responses


def options(peer: Peer, host: str, port: int) -> str:
    call_id = uuid.uuid4().hex
    message = (f"OPTIONS sip:agent@{host}:{port} SIP/2.0\r\n"
               f"Via: SIP/2.0/{peer.transport} 127.0.0.1:{peer.local};branch=z9hG4bK{call_id[:12]};rport\r\n"
               f"Max-Forwards: 70\r\nFrom: <sip:probe@127.0.0.1:{peer.local}>;tag={call_id[:8]}\r\n"
               f"To: <sip:agent@{host}:{port}>\r\nCall-ID: {call_id}\r\nCSeq: 1 OPTIONS\r\nContent-Length: 0\r\n\r\n")
    finals = [r for r in peer.send(message.encode(), 3.0) if not r.startswith("1")]
    return finals[0].split("\r\n", 1)[0] if finals else ""


def hang_up(peer: Peer, case: Case, response: str, host: str, port: int) -> None:
    """ACK a 200 and send BYE, so an accepted case does not hold a line."""
    text = case.payload.decode(errors="replace")
    headers = {line.split(":", 1)[0].lower(): line for line in response.split("\r\n")[1:] if ":" in line}
    to, call_id = headers.get("to", ""), headers.get("call-id", "")
    head = [f"Via: SIP/2.0/{peer.transport} 127.0.0.1:{peer.local};branch=z9hG4bK{uuid.uuid4().hex[:12]};rport",
            "Max-Forwards: 70", next((line for line in text.split("\r\n") if line.startswith("From:")), ""), to,
            call_id]
    for method, cseq in (("ACK", 1), ("BYE", 2)):
        message = "\r\n".join([f"{method} sip:agent@{host}:{port} SIP/2.0", *head, f"CSeq: {cseq} {method}",
                               "Content-Length: 0", "", ""])
        peer.send(message.encode(), 0.5 if method == "BYE" else 0.01)


def run(host: str, port: int, cases: int, seed: int, local: int, media_port: int, tcp_every: int,
        only: int | None = None, alive: Callable[[], bool] = lambda: True, rate: float = 20.0) -> dict:
    """Send the cases, at most `rate` a second; returns counts per kind and response, and the first case after
    which the agent stopped answering (None when it answered every probe) and whether it was still running
    then (`alive()`: False means it died, True that it lived but did not answer)."""
    statuses: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    numbers = [only] if only is not None else range(cases)
    started = time.monotonic()
    for n, number in enumerate(numbers):
        time.sleep(max(0.0, started + n / rate - time.monotonic()))
        transport = "TCP" if tcp_every and number % tcp_every == tcp_every - 1 else "UDP"
        peer = Peer((host, port), local, transport)
        case = make_case(seed, number, f"{host}:{port}", local, media_port, transport)
        kinds[case.kind.split("+")[0]] += 1
        finals = [r for r in peer.send(case.payload, 0.15) if not r.startswith("1")]
        status = finals[0][:3] if finals else "none"
        statuses[status] += 1
        if status == "200":
            hang_up(peer, case, finals[0], host, port)
        running = alive()
        if not running or options(Peer((host, port), local + 1, "UDP"), host, port) != "200 OK":
            return {"cases": number + 1, "statuses": dict(statuses), "kinds": dict(kinds), "failed_at": number,
                    "failed_kind": case.kind, "agent_alive": running and alive(),
                    "failed_payload": case.payload[:4000].decode(errors="replace")}
    return {"cases": len(numbers), "statuses": dict(statuses), "kinds": dict(kinds), "failed_at": None}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval.sip_fuzz", description=__doc__.splitlines()[0])
    parser.add_argument("--target", required=True, help="HOST:PORT of the agent")
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--only", type=int, help="replay this one case number")
    parser.add_argument("--local-port", type=int, default=5090)
    parser.add_argument("--media-port", type=int, default=30000)
    parser.add_argument("--tcp-every", type=int, default=20, help="every Nth case over TCP (0: UDP only)")
    parser.add_argument("--rate", type=float, default=20.0, help="cases per second at most")
    args = parser.parse_args(argv)
    host, _, port = args.target.rpartition(":")
    result = run(host, int(port), args.cases, args.seed, args.local_port, args.media_port, args.tcp_every, args.only,
                 rate=args.rate)
    print(json.dumps(result, indent=2))
    return 0 if result["failed_at"] is None else 1


if __name__ == "__main__":
    sys.exit(main())
