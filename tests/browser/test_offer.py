"""The browser phone's signalling checks and the answer's codec, on SDP text."""

import pytest

from agent.browser.offer import MAX_SDP_CHARS, OfferError, answer_codec, check_offer

OFFER = ("v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\n"
         "m=audio 9 UDP/TLS/RTP/SAVPF 111 0\r\nc=IN IP4 0.0.0.0\r\na=rtpmap:111 opus/48000/2\r\n"
         "a=rtpmap:0 PCMU/8000\r\nm=application 9 UDP/DTLS/SCTP webrtc-datachannel\r\n")


def test_a_browser_offer_with_audio_is_taken():
    assert check_offer({"type": "offer", "sdp": OFFER}) == OFFER


@pytest.mark.parametrize("offer, why", [
    ({"type": "answer", "sdp": OFFER}, "expected"),
    ({"sdp": OFFER}, "expected"),
    ({"type": "offer", "sdp": 5}, "expected"),
    ([OFFER], "expected"),
    ({"type": "offer", "sdp": "hello"}, "v=0"),
    ({"type": "offer", "sdp": OFFER.replace("m=audio", "m=video")}, "no audio"),
    ({"type": "offer", "sdp": OFFER + "m=audio 9 RTP/AVP 0\r\n" * 4}, "media streams"),
    ({"type": "offer", "sdp": OFFER + "a=x\r\n" * MAX_SDP_CHARS}, "characters"),
])
def test_an_offer_that_is_not_a_browser_call_is_refused_with_the_reason(offer, why):
    with pytest.raises(OfferError, match=why):
        check_offer(offer)


def test_the_answer_codec_is_the_first_payload_of_the_audio_line():
    answer = OFFER.replace("111 0", "0 111")
    assert answer_codec(OFFER) == ("opus", 48000)
    assert answer_codec(answer) == ("PCMU", 8000)
    assert answer_codec("v=0\r\n") == ("", 0)
