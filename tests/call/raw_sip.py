"""Raw SIP user agent clients for attack tests: they send exactly the bytes a test asks for. RawDialog keeps
one UDP dialog's tags and CSeq and returns the final status of each request; TcpLine carries several
dialogs on one TCP connection."""

from __future__ import annotations

import re
import socket
import time
import uuid

from tests.peers import next_ports


def offer(connection: str = "127.0.0.1", media_port: int = 30000, audio: str = "m=audio {port} RTP/AVP 0") -> str:
    return (f"v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 {connection}\r\nt=0 0\r\n"
            f"{audio.format(port=media_port)}\r\na=rtpmap:0 PCMU/8000\r\n")


class RawDialog:
    """One call's worth of requests from a UDP socket of its own."""

    def __init__(self, agent_port: int, host: str = "127.0.0.1") -> None:
        self.agent_port, self.host = agent_port, host
        self.local, _ = next_ports()
        self.call_id, self.from_tag, self.to_tag = uuid.uuid4().hex, uuid.uuid4().hex[:8], ""
        self.cseq = 0
        self._branch = ""
        self._last_status = ""
        self.last_reply = ""
        """The whole last final response."""
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", self.local))

    def request(self, method: str, body: str = "", wait: float = 3.0) -> str:
        """Send `method` in this dialog; the final status line ('' when none came). ACK sends and returns ''."""
        if method != "ACK":
            self.cseq += 1
        # The ACK of a refused INVITE belongs to its transaction (same branch); the ACK of a 200 is new.
        if method != "ACK" or " 200 " in self._last_status + " ":
            self._branch = f"z9hG4bK{uuid.uuid4().hex[:12]}"
        self.sock.sendto(self._message(method, body).encode(), ("127.0.0.1", self.agent_port))
        if method == "ACK":
            return ""
        self._last_status = self._final(wait)
        return self._last_status

    def invite(self, body: str) -> str:
        status = self.request("INVITE", body)
        if status:
            self.request("ACK")
        return status

    def requests_from_agent(self, wait: float = 5.0) -> list[str]:
        """Request lines the agent sent this dialog (e.g. its BYE) within `wait` seconds; each is answered 200."""
        self.sock.settimeout(wait)
        seen = []
        try:
            while True:
                message = self.sock.recv(65535).decode(errors="replace")
                if message.startswith("SIP/2.0"):
                    continue
                seen.append(message.split("\r\n", 1)[0])
                self._answer_ok(message)
                if message.startswith("BYE"):
                    return seen
        except (TimeoutError, ConnectionError):
            return seen

    def _answer_ok(self, request: str) -> None:
        keep = ("via:", "from:", "to:", "call-id:", "cseq:")
        headers = [line for line in request.split("\r\n")[1:] if line.lower().startswith(keep)]
        response = "SIP/2.0 200 OK\r\n" + "\r\n".join(headers) + "\r\nContent-Length: 0\r\n\r\n"
        self.sock.sendto(response.encode(), ("127.0.0.1", self.agent_port))

    def close(self) -> None:
        self.sock.close()

    def _message(self, method: str, body: str) -> str:
        to_tag = f";tag={self.to_tag}" if self.to_tag else ""
        content_type = "Content-Type: application/sdp\r\n" if body else ""
        return (f"{method} sip:agent@{self.host}:{self.agent_port} SIP/2.0\r\n"
                f"Via: SIP/2.0/UDP 127.0.0.1:{self.local};branch={self._branch};rport\r\n"
                f"Max-Forwards: 70\r\nFrom: <sip:raw@127.0.0.1:{self.local}>;tag={self.from_tag}\r\n"
                f"To: <sip:agent@{self.host}:{self.agent_port}>{to_tag}\r\nCall-ID: {self.call_id}\r\n"
                f"CSeq: {self.cseq} {method}\r\nContact: <sip:raw@127.0.0.1:{self.local}>\r\n{content_type}"
                f"Content-Length: {len(body)}\r\n\r\n{body}")

    def _final(self, wait: float) -> str:
        self.sock.settimeout(wait)
        try:
            while True:
                reply = self.sock.recv(65535).decode(errors="replace")
                if not reply.startswith("SIP/2.0 ") or reply.startswith("SIP/2.0 1"):
                    continue  # provisional responses, and requests the agent sends (BYE)
                for line in reply.split("\r\n"):
                    if line.lower().startswith("to:") and ";tag=" in line and not self.to_tag:
                        self.to_tag = line.split(";tag=", 1)[1].split(";")[0].strip()
                self.last_reply = reply
                return reply.split("\r\n", 1)[0]
        except (TimeoutError, ConnectionError):
            return ""


class TcpLine:
    """One TCP connection carrying several dialogs: requests are built as bytes (so a test can send two in one
    segment), final responses are picked out by Call-ID and method."""

    def __init__(self, port: int) -> None:
        self.uri = f"sip:agent@127.0.0.1:{port}"
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.local = self.sock.getsockname()[1]
        self.received = ""

    def request(self, method: str, call_id: str, cseq: int, to: str = "", body: str = "", uri: str = "",
                branch: str = "") -> bytes:
        lines = [f"{method} {uri or self.uri} SIP/2.0",
                 f"Via: SIP/2.0/TCP 127.0.0.1:{self.local};branch={branch or 'z9hG4bK' + uuid.uuid4().hex[:16]}",
                 "Max-Forwards: 70", f"From: <sip:caller@127.0.0.1:{self.local}>;tag={call_id[:8]}",
                 to or f"To: <{uri or self.uri}>", f"Call-ID: {call_id}", f"CSeq: {cseq} {method}",
                 f"Contact: <sip:caller@127.0.0.1:{self.local};transport=tcp>"]
        lines += ["Content-Type: application/sdp"] if body else []
        return ("\r\n".join([*lines, f"Content-Length: {len(body)}", "", ""]) + body).encode()

    def send(self, *requests: bytes) -> None:
        """Send the requests together, in one write."""
        self.sock.sendall(b"".join(requests))

    def final(self, call_id: str, method: str) -> tuple[str, str]:
        """(status, To header) of the next final response to `method` in call `call_id`; ('', '') if none."""
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            while (head_end := self.received.find("\r\n\r\n")) >= 0:
                head = self.received[:head_end]
                length = int(re.search(r"(?im)^(?:content-length|l):\s*(\d+)", head).group(1))
                self.received = self.received[head_end + 4 + length:]
                fields = {k.strip().lower(): v.strip() for k, v in re.findall(r"(?m)^([\w-]+):(.*?)\r?$", head)}
                if (head.startswith("SIP/2.0 ") and not head.startswith("SIP/2.0 1")  # a final response
                        and fields.get("call-id") == call_id and fields.get("cseq", "").endswith(method)):
                    return head[8:11], f"To: {fields['to']}"
            try:
                data = self.sock.recv(65535)
            except (TimeoutError, ConnectionError):
                data = b""
            if not data:
                return "", ""
            self.received += data.decode(errors="replace")
        return "", ""

    def close(self) -> None:
        self.sock.close()

