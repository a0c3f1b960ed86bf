"""Chat servers on loopback for the optional LLM's tests: llama.cpp's real server (eval.kit.llm_server) in its own
process, and a scripted one for what a real server cannot be made to do on cue (accept and never answer,
answer garbage, write a given wrong fact, die after a given sentence)."""

from __future__ import annotations

import json
import socket
import socketserver
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.conftest import REPO


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LlamaServer:
    """`python -m eval.kit.llm_server` with the pinned SmolLM2 model; `kill()` ends it at once (SIGKILL)."""

    def __init__(self, log: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.log_path = log
        with log.open("w") as stderr:  # llama.cpp's own log: each request's prompt and decode timings
            self.process = subprocess.Popen([sys.executable, "-m", "eval.kit.llm_server", "--port", str(self.port)],
                                            cwd=REPO, stdout=subprocess.PIPE, stderr=stderr, text=True)
        line = self.process.stdout.readline()  # "listening on URL" once it answers, or EOF if it failed
        if "listening on" not in line:
            self.process.kill()
            raise RuntimeError(f"eval.kit.llm_server did not start (exit {self.process.wait()})")

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)


@pytest.fixture(scope="session")
def llm_server(tmp_path_factory):
    server = LlamaServer(tmp_path_factory.mktemp("llm") / "llama-server.log")
    yield server
    server.kill()


def chunk(text: str) -> bytes:
    body = json.dumps({"choices": [{"index": 0, "delta": {"content": text}}], "object": "chat.completion.chunk"})
    return f"data: {body}\n\n".encode()


class ScriptedServer:
    """Answers every chat request as `mode` says: "stream" (each of `pieces` as a chunk, then [DONE]), "cut"
    (the pieces, then the connection closed mid-stream), "silent" (the request read, nothing ever sent),
    "garbage" (200 with an HTML page), "error" (500). `requests` counts the requests seen; `hung_up` says the
    client closed a stream before its end; `headers`, the last request's."""

    def __init__(self, mode: str, pieces: tuple[str, ...] = (), delay_s: float = 0.0) -> None:
        self.mode, self.pieces, self.delay_s, self.requests = mode, pieces, delay_s, 0
        self.hung_up = False
        self.headers: dict[str, str] = {}
        self._release = threading.Event()
        server = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                length, headers = 0, {}
                while (line := self.rfile.readline()) not in (b"\r\n", b""):
                    name, _, value = line.decode("latin-1").partition(":")
                    headers[name.strip().lower()] = value.strip()
                    if name.strip().lower() == "content-length":
                        length = int(value)
                server.headers = headers
                self.rfile.read(length)
                server.requests += 1
                server.answer(self.wfile)

        self._server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def answer(self, out) -> None:
        if self.mode == "silent":
            self._release.wait(60)
            return
        if self.mode == "error":
            out.write(b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 5\r\nConnection: close\r\n\r\nboom!")
            return
        if self.mode == "garbage":
            page = b"<html><body>It works!</body></html>"
            out.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n%s" % (len(page), page))
            return
        # Chunked, as real servers stream: a connection closed before the last chunk is a broken answer.
        out.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
        events = [chunk(piece) for piece in self.pieces] + ([b"data: [DONE]\n\n"] if self.mode == "stream" else [])
        for data in events:
            try:
                out.write(b"%x\r\n%s\r\n" % (len(data), data))
                out.flush()
            except OSError:
                self.hung_up = True  # the client closed the stream (a barge-in)
                return
            time.sleep(self.delay_s)
        if self.mode == "stream":
            out.write(b"0\r\n\r\n")

    def close(self) -> None:
        self._release.set()
        self._server.shutdown()
        self._server.server_close()
