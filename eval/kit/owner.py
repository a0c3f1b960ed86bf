"""Real receivers on loopback for the owner's notifications (eval.notify and the tests): an HTTP server for the
webhook that can be stopped and started again on its port, and an SMTP server (aiosmtpd) with STARTTLS and login."""

from __future__ import annotations

import email
import email.policy
import json
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from agent.side.notify.webhook import SIGNATURE_HEADER, verify
from agent.sip.security import make_self_signed
from eval.kit.ports import free_port_block


class WebhookReceiver:
    """Keeps every POST (body, whether its signature checks out, idempotency key); answers `status`."""

    def __init__(self, secret: str, status: int = 204) -> None:
        self.secret, self.status = secret, status
        self.port = free_port_block(1)
        self.url = f"http://127.0.0.1:{self.port}/hook"
        self.received: list[dict] = []
        self._server: ThreadingHTTPServer | None = None

    def start(self) -> WebhookReceiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (http.server's name)
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.received.append({"body": json.loads(body), "key": self.headers["Idempotency-Key"],
                                          "signed": verify(body, receiver.secret, self.headers[SIGNATURE_HEADER])})
                self.send_response(receiver.status)
                self.end_headers()

            def log_message(self, *args):
                pass

        ThreadingHTTPServer.allow_reuse_address = True
        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def wait_for(self, count: int, timeout: float = 60) -> list[dict]:
        deadline = time.monotonic() + timeout
        while len(self.received) < count and time.monotonic() < deadline:
            time.sleep(0.05)
        return self.received


class SmtpReceiver:
    """aiosmtpd on loopback that offers STARTTLS (with a certificate of its own, the client's CA file) and needs
    a login before it takes mail; keeps each mail parsed."""

    USER, PASSWORD = "agent", "mail-password-123"

    def __init__(self, folder: Path) -> None:
        from aiosmtpd.controller import Controller
        from aiosmtpd.smtp import AuthResult

        self.port = free_port_block(1)
        self.ca_file, key = folder / "smtp-cert.pem", folder / "smtp-key.pem"
        make_self_signed(self.ca_file, key, ["127.0.0.1"])
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(self.ca_file, key)
        self.mails: list[email.message.EmailMessage] = []
        receiver = self

        class Keep:
            async def handle_DATA(self, server, session, envelope):  # noqa: N802 (aiosmtpd's name)
                receiver.mails.append(email.message_from_bytes(envelope.content, policy=email.policy.default))
                return "250 OK"

        def login(server, session, envelope, mechanism, data):
            ok = (data.login, data.password) == (self.USER.encode(), self.PASSWORD.encode())
            return AuthResult(success=ok, handled=False)  # not handled: aiosmtpd answers a failure with 535

        self._controller = Controller(Keep(), hostname="127.0.0.1", port=self.port, tls_context=context,
                                      require_starttls=True, authenticator=login, auth_require_tls=True)

    def start(self) -> SmtpReceiver:
        self._controller.start()
        return self

    def stop(self) -> None:
        self._controller.stop()

    def wait_for(self, count: int, timeout: float = 60) -> list:
        deadline = time.monotonic() + timeout
        while len(self.mails) < count and time.monotonic() < deadline:
            time.sleep(0.05)
        return self.mails
