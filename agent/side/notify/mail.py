"""The e-mail channel: a message left (its transcript in the text, its recording attached), a transfer that
failed, and the day's digest of unanswered questions, sent over SMTP with STARTTLS (or implicit TLS) and
login. Building a mail is pure; `Mailer` only sends.
"""

from __future__ import annotations

import smtplib
import ssl
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from pathlib import Path

from agent.side.notify.events import DIGEST, MESSAGE_LEFT, TRANSFER_FAILED, Event
from agent.side.notify.outbox import Refused

SECURITY = ("starttls", "tls", "none")
TIMEOUT_S = 20.0


@dataclass(frozen=True)
class SmtpConfig:
    host: str
    port: int
    security: str
    """starttls, tls (implicit, as on port 465) or none (a relay on this host or network only)."""
    sender: str
    recipients: tuple[str, ...]
    user: str = ""
    password: str = ""
    ca_file: Path | None = None
    """Certificates the server's is checked against instead of the system's (a private CA)."""


def compose(notice: Event, sender: str, recipients: tuple[str, ...]) -> EmailMessage:
    """The mail for one event."""
    body, mail = notice.body, EmailMessage()
    call = body.get("call", {})
    if notice.kind == MESSAGE_LEFT:
        message = body["message"]
        mail["Subject"] = f"Message from {call.get('caller', 'a caller')} ({message['seconds']:.0f} s)"
        transcript = message["transcript"] or "(the message could not be transcribed: listen to the recording)"
        mail.set_content(f"{transcript}\n\n{_call_lines(call)}\nEnded by: {message['ended_by']}\n")
        if notice.attachment:
            mail.add_attachment(notice.attachment, maintype="audio", subtype="wav",
                                filename=f"message-{message['id']}.wav")
    elif notice.kind == TRANSFER_FAILED:
        mail["Subject"] = f"Missed: {call.get('caller', 'a caller')} asked for a person"
        transfer = body["transfer"]
        mail.set_content(f"The caller asked for a person and was not put through to {transfer['to']} "
                         f"({transfer['result']}); they were offered a message.\n\n{_call_lines(call)}")
    elif notice.kind == DIGEST:
        groups = body["groups"]
        mail["Subject"] = f"Unanswered questions on {body['day']}: {sum(g['count'] for g in groups)}"
        lines = [f"{g['count']:>3} x {g['question']}" + "".join(f"\n      also: {v}" for v in g.get("variants", [])
                                                             if v != g["question"]) for g in groups]
        mail.set_content("What callers asked that the KB could not answer, most asked first:\n\n"
                         + ("\n".join(lines) or "Nothing unanswered.") + "\n")
    else:
        mail["Subject"] = f"Agent event: {notice.kind}"
        mail.set_content(str(body))
    mail["From"], mail["To"] = sender, ", ".join(recipients)
    mail["Date"], mail["Message-ID"] = formatdate(localtime=True), make_msgid(domain="offline-phone-agent")
    mail["X-Agent-Event"] = notice.key
    return mail


def _call_lines(call: dict) -> str:
    return f"Caller: {call.get('caller', '')}\nDialled: {call.get('dialed', '')}\nCall started: " \
           f"{call.get('started', '')}\nCall: {call.get('id', '')}\n"


class Mailer:
    """Sends one event's mail per call (a connection each: events are few, and a held one goes stale)."""

    def __init__(self, config: SmtpConfig) -> None:
        self.config = config
        self._tls = ssl.create_default_context(cafile=str(config.ca_file) if config.ca_file else None)

    def __call__(self, notice: Event) -> None:
        c = self.config
        mail = compose(notice, c.sender, c.recipients)
        smtp_class = smtplib.SMTP_SSL if c.security == "tls" else smtplib.SMTP
        kwargs = {"context": self._tls} if c.security == "tls" else {}
        with smtp_class(c.host, c.port, timeout=TIMEOUT_S, **kwargs) as smtp:
            if c.security == "starttls":
                smtp.starttls(context=self._tls)
            if c.user:
                try:
                    smtp.login(c.user, c.password)
                except smtplib.SMTPAuthenticationError as exc:
                    raise ConnectionError(f"login refused: {exc.smtp_code}") from None  # fixable: retried
            try:
                smtp.send_message(mail)
            except smtplib.SMTPRecipientsRefused as exc:
                raise Refused(f"recipients refused: {sorted(exc.recipients)}") from None
