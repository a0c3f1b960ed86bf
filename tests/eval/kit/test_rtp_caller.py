"""The light caller's packets and messages, read back as a receiver would."""

import struct

import numpy as np

from eval.kit.rtp_caller import FRAME, answer_media, event_payload, parse_message, place, rtp_packet, rtp_payload


def test_an_rtp_packet_reads_back_with_its_payload_type_and_payload():
    packet = rtp_packet(0, 70000, 160, 0xABCDEF, b"\xff" * FRAME, marker=True)
    assert struct.unpack("!H", packet[2:4])[0] == 70000 & 0xFFFF
    assert rtp_payload(packet) == (0, b"\xff" * FRAME)
    assert rtp_payload(b"\x00" * 12) is None  # not version 2


def test_a_telephone_event_carries_its_code_end_bit_and_duration():
    assert event_payload("#", 320, end=True) == bytes([11, 0x80 | 10]) + struct.pack("!H", 320)
    assert event_payload("7", 160, end=False)[:2] == bytes([7, 10])


def test_packets_read_in_one_tick_are_placed_one_after_another():
    one, two = np.full(FRAME, 1, np.int16), np.full(FRAME, 2, np.int16)
    received = place([(3, one), (3, two), (7, one)])
    assert len(received) == 8 * FRAME
    assert received[3 * FRAME] == 1 and received[4 * FRAME] == 2 and received[5 * FRAME] == 0
    assert received[7 * FRAME] == 1


def test_the_answers_media_address_is_the_last_connection_line_and_the_audio_port():
    sdp = "v=0\r\nc=IN IP4 10.0.0.1\r\nm=audio 4002 RTP/AVP 0\r\nc=IN IP4 127.0.0.7\r\n"
    assert answer_media(sdp) == ("127.0.0.7", 4002)


def test_a_response_and_a_request_are_told_apart():
    reply = parse_message(b"SIP/2.0 486 Busy Here\r\nCSeq: 1 INVITE\r\nTo: <sip:a@b>;tag=x\r\n\r\n")
    assert reply.status == 486 and reply.headers["cseq"] == "1 INVITE"
    assert parse_message(b"BYE sip:c@d SIP/2.0\r\nCall-ID: q\r\n\r\n").status == 0


def test_a_script_sends_each_utterance_from_its_tick_and_silence_elsewhere():
    from eval.kit.rtp_caller import SILENCE, Script

    loud = np.full(FRAME + 10, 8000, np.int16)
    script = Script(ticks=10, says=((2, loud), (6, loud)))
    assert script.frame(1) == SILENCE and script.frame(4) == SILENCE
    assert script.frame(2) != SILENCE and script.frame(3)[:10] != SILENCE[:10] and script.frame(3)[10:] == SILENCE[10:]
    assert script.frame(6) == script.frame(2)


def test_together_every_caller_asks_at_once_and_staggered_they_spread_over_a_period():
    from eval.load import question_ticks

    assert question_ticks(0, 4, 2, 10.0, "together") == question_ticks(3, 4, 2, 10.0, "together")
    spread = [question_ticks(c, 4, 2, 10.0, "staggered")[0] for c in range(4)]
    assert spread == [300, 425, 550, 675] and question_ticks(0, 4, 2, 10.0, "staggered")[1] == 800
