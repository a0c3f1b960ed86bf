"""The owner's mail through a real SMTP server on loopback (STARTTLS, login), read back with its attachment;
and the notification settings checked at start-up."""

import time

import pytest

from agent.call.record import CallRecord
from agent.call.understanding.message import Message
from agent.settings import SettingsError, parse
from agent.side.notify import events
from agent.side.notify.config import notify_config
from agent.side.notify.mail import Mailer, SmtpConfig
from agent.side.notify.notifier import next_digest
from agent.side.notify.outbox import Courier
from eval.kit.owner import SmtpReceiver

CALL = CallRecord("c1", "sip-call-1", "sip:+15551234@pbx", "100", 1_700_000_000.0)
MESSAGE = Message("0123456789abcdef", "c1", CALL.remote, "100", 1_700_000_010.0, 6.2, "silence")
WAV = b"RIFF\x24\x00\x00\x00WAVEfmt " + bytes(28)


@pytest.fixture
def smtp(tmp_path):
    receiver = SmtpReceiver(tmp_path).start()
    yield receiver
    receiver.stop()


def mailer(smtp: SmtpReceiver, password: str = SmtpReceiver.PASSWORD) -> Mailer:
    return Mailer(SmtpConfig("127.0.0.1", smtp.port, "starttls", "agent@example.com", ("owner@example.com",),
                             SmtpReceiver.USER, password, smtp.ca_file))


def test_a_message_is_mailed_with_its_transcript_and_its_recording_attached(smtp):
    mailer(smtp)(events.message_left(CALL, MESSAGE, "Please call Sam back.", WAV, "agent-a", 1_700_000_020.0))
    (mail,) = smtp.wait_for(1)
    assert mail["Subject"] == "Message from sip:+15551234@pbx (6 s)" and mail["To"] == "owner@example.com"
    assert mail.get_body(("plain",)).get_content().startswith("Please call Sam back.")
    (attachment,) = mail.iter_attachments()
    assert attachment.get_filename() == "message-0123456789abcdef.wav" and attachment.get_content() == WAV


def test_a_wrong_password_is_retried_not_given_up(smtp, tmp_path):
    results = []
    courier = Courier("mail", tmp_path / "outbox.sqlite3", mailer(smtp, "wrong"),
                      on_result=lambda channel, result: results.append(result), backoff_s=(0.05,))
    courier.put(events.transfer_failed(CALL, 1, "sip:6002@pbx", "transfer failed", "agent-a", 1_700_000_030.0))
    while len(results) < 2:
        time.sleep(0.05)
    courier.stop()
    assert set(results) == {"retried"} and courier.pending == 1 and not smtp.mails


def test_the_digest_lists_the_days_unanswered_questions_most_asked_first(smtp):
    groups = [{"question": "Do you fit heat pumps?", "count": 3, "variants": ["Do you fit heat pumps?",
                                                                            "Can you install a heat pump?"]},
              {"question": "Do you sell pizza?", "count": 1, "variants": ["Do you sell pizza?"]}]
    mailer(smtp)(events.digest("2026-12-05", groups, "agent-a", 1_700_000_040.0))
    (mail,) = smtp.wait_for(1)
    text = mail.get_body(("plain",)).get_content()
    assert mail["Subject"] == "Unanswered questions on 2026-12-05: 4"
    assert text.index("3 x Do you fit heat pumps?") < text.index("also: Can you install a heat pump?") < \
        text.index("1 x Do you sell pizza?")


def test_the_digest_is_due_at_the_next_local_hour():
    import datetime

    now = datetime.datetime(2026, 12, 5, 18, 30).astimezone()
    due = datetime.datetime.fromtimestamp(next_digest(now.timestamp(), 18)).astimezone()
    assert (due.day, due.hour, due.minute) == (6, 18, 0)
    assert datetime.datetime.fromtimestamp(next_digest(now.timestamp(), 19)).astimezone().hour == 19


@pytest.mark.parametrize("flags, complaint", [
    (["--webhook-url", "ftp://crm.example.com"], "AGENT_WEBHOOK_URL"),
    (["--webhook-url", "https://crm.example.com/hook", "--webhook-secret", "short"], "AGENT_WEBHOOK_SECRET"),
    (["--smtp-host", "mail.example.com", "--smtp-from", "agent@example.com"], "AGENT_SMTP_TO"),
    (["--smtp-host", "mail.example.com", "--smtp-to", "owner", "--smtp-from", "a@example.com"], "AGENT_SMTP_TO"),
    (["--smtp-host", "mail.example.com", "--smtp-to", "o@example.com", "--smtp-from", "a@example.com",
      "--smtp-user", "agent"], "AGENT_SMTP_USER and AGENT_SMTP_PASSWORD"),
    (["--smtp-host", "mail.example.com", "--smtp-to", "o@example.com", "--smtp-from", "a@example.com",
      "--smtp-user", "agent", "--smtp-password", "x", "--smtp-security", "none"], "in the clear"),
    (["--smtp-to", "o@example.com"], "AGENT_SMTP_HOST"),
])
def test_bad_notification_settings_stop_start_up_naming_what_to_fix(flags, complaint):
    with pytest.raises(SettingsError, match=complaint):
        notify_config(parse(flags, {}))


def test_with_no_notification_settings_nobody_is_told():
    assert not notify_config(parse([], {})).any
