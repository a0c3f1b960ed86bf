"""The owner's webhook: signed, each event once and in order through a receiver that goes away and comes back,
and kept on disk across a restart of the agent (a real HTTP server on loopback)."""

import time

import pytest

from agent.side.notify.events import Event
from agent.side.notify.outbox import Courier
from agent.side.notify.webhook import Webhook, signature, verify
from eval.kit.owner import WebhookReceiver

SECRET = "webhook-secret-0123456789"
FAST = (0.05, 0.1, 0.2)


def notice(n: int) -> Event:
    return Event(f"message.left:{n}", "message.left", {"id": f"message.left:{n}", "n": n})


@pytest.fixture
def receiver():
    receiver = WebhookReceiver(SECRET).start()
    yield receiver
    receiver.stop()


def test_the_signature_is_the_hex_hmac_sha256_of_the_body():
    # RFC 4231 test case 2's key and data.
    assert signature(b"what do ya want for nothing?", "Jefe") == \
        "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
    assert not verify(b"what do ya want for nothing!", "Jefe", signature(b"what do ya want for nothing?", "Jefe"))


def test_each_event_arrives_signed_with_its_idempotency_key(receiver, tmp_path):
    courier = Courier("webhook", tmp_path / "outbox.sqlite3", Webhook(receiver.url, SECRET), backoff_s=FAST)
    courier.put(notice(1))
    (got,) = receiver.wait_for(1)
    courier.stop()
    assert got == {"body": {"id": "message.left:1", "n": 1}, "key": "message.left:1", "signed": True}


def test_a_receiver_down_for_a_while_gets_every_event_once_in_order_after_it_is_back(receiver, tmp_path):
    results = []
    courier = Courier("webhook", tmp_path / "outbox.sqlite3", Webhook(receiver.url, SECRET),
                      on_result=lambda channel, result: results.append(result), backoff_s=FAST)
    courier.put(notice(0))
    receiver.wait_for(1)
    receiver.stop()
    for n in range(1, 6):
        courier.put(notice(n))
    while results.count("retried") < 3:
        time.sleep(0.05)
    receiver.start()
    got = receiver.wait_for(6)
    courier.stop()
    assert [r["body"]["n"] for r in got] == list(range(6))


def test_events_an_agent_stopped_before_sending_are_sent_by_the_next_one(receiver, tmp_path):
    receiver.stop()
    first = Courier("webhook", tmp_path / "outbox.sqlite3", Webhook(receiver.url, SECRET), backoff_s=(30.0,))
    for n in range(3):
        first.put(notice(n))
    first.stop()
    receiver.start()
    second = Courier("webhook", tmp_path / "outbox.sqlite3", Webhook(receiver.url, SECRET), backoff_s=FAST)
    got = receiver.wait_for(3)
    second.stop()
    assert [r["body"]["n"] for r in got] == [0, 1, 2] and second.pending == 0


def test_an_event_the_receiver_refuses_for_good_does_not_hold_up_the_ones_behind_it(tmp_path):
    refusing = WebhookReceiver(SECRET, status=400).start()
    results = []
    courier = Courier("webhook", tmp_path / "outbox.sqlite3", Webhook(refusing.url, SECRET),
                      on_result=lambda channel, result: results.append(result), backoff_s=FAST)
    courier.put(notice(1))
    courier.put(notice(2))
    refusing.wait_for(2)
    courier.stop()
    refusing.stop()
    assert results == ["refused", "refused"]


def test_a_server_error_is_retried_until_the_receiver_takes_it(receiver, tmp_path):
    receiver.status = 503
    results = []
    courier = Courier("webhook", tmp_path / "outbox.sqlite3", Webhook(receiver.url, SECRET),
                      on_result=lambda channel, result: results.append(result), backoff_s=FAST)
    courier.put(notice(1))
    receiver.wait_for(2)
    receiver.status = 204
    while "delivered" not in results:
        time.sleep(0.05)
    courier.put(notice(2))  # what comes next goes out after it, so nothing of the first is still being retried
    receiver.wait_for(len(results) + 1)
    courier.stop()
    assert results[-2:] == ["delivered", "delivered"] and set(results[:-2]) == {"retried"}
    assert [r["key"] for r in receiver.received][-2:] == ["message.left:1", "message.left:2"]


def test_events_wait_in_memory_while_the_outbox_cannot_be_written_and_go_out_once_it_can(receiver, tmp_path):
    blocked = tmp_path / "outbox.sqlite3"
    blocked.mkdir()  # a directory where the outbox's file should be: SQLite cannot open it, whoever runs this
    courier = Courier("webhook", blocked, Webhook(receiver.url, SECRET), backoff_s=FAST)
    courier.put(notice(1))
    time.sleep(0.3)
    assert not receiver.received
    blocked.rmdir()
    got = receiver.wait_for(1)
    courier.stop()
    assert [r["key"] for r in got] == ["message.left:1"]
