"""INVITE and SDP screening on exact messages: what pjsip would assert on is refused first."""

import pytest

from agent.sip.screening import Refusal, screen_invite, screen_sdp

SDP = ("v=0\r\no=- 1 1 IN IP4 192.0.2.10\r\ns=-\r\nc=IN IP4 192.0.2.10\r\nt=0 0\r\n"
       "m=audio 40000 RTP/AVP 9 0 8 101\r\na=rtpmap:9 G722/8000\r\na=rtpmap:0 PCMU/8000\r\n"
       "a=rtpmap:101 telephone-event/8000\r\na=fmtp:101 0-16\r\na=ptime:20\r\na=rtcp:40001 IN IP4 192.0.2.10\r\n"
       "a=sendrecv\r\n")


def invite(sdp: str = SDP, extra: str = "", content_type: str = "application/sdp") -> str:
    return ("INVITE sip:100@192.0.2.1:5060 SIP/2.0\r\n"
            "Via: SIP/2.0/UDP 192.0.2.10:5060;branch=z9hG4bK776asdhds;rport\r\n"
            "Max-Forwards: 70\r\nFrom: \"Alice\" <sip:alice@pbx.example.com>;tag=1928301774\r\n"
            "To: <sip:100@192.0.2.1>\r\nCall-ID: a84b4c76e66710@pc33\r\nCSeq: 314159 INVITE\r\n"
            f"Contact: <sip:alice@192.0.2.10:5060>\r\n{extra}Content-Type: {content_type}\r\n"
            f"Content-Length: {len(sdp)}\r\n\r\n{sdp}")


def with_line(old: str, new: str) -> str:
    assert old in SDP
    return SDP.replace(old, new)


def test_a_well_formed_offer_from_a_pbx_is_accepted():
    assert screen_invite(invite()) is None
    assert screen_sdp(SDP.replace("\r\n", "\n")) is None  # bare LF bodies too


def test_the_overlong_connection_address_that_aborted_the_agent_is_refused_with_488():
    assert screen_invite(invite(with_line("c=IN IP4 192.0.2.10", "c=IN IP4 " + "%n" * 245))) == \
        Refusal(488, "bad connection address")


@pytest.mark.parametrize("address", ["pbx.example.com", "999.1.1.1", "1.2.3.4.5", "", "::1", "224.0.0.1",
                                     "255.255.255.255", "192.0.2.10/127"])
def test_a_connection_address_must_be_a_unicast_literal_of_its_family(address):
    assert screen_sdp(with_line("c=IN IP4 192.0.2.10", f"c=IN IP4 {address}")) == \
        Refusal(488, "bad connection address")


def test_an_ipv6_connection_and_the_old_style_hold_address_are_accepted():
    assert screen_sdp(with_line("c=IN IP4 192.0.2.10", "c=IN IP6 2001:db8::1")) is None
    assert screen_sdp(with_line("c=IN IP4 192.0.2.10", "c=IN IP4 0.0.0.0")) is None


def test_an_rtcp_attribute_address_is_screened_like_a_connection_line():
    assert screen_sdp(with_line("a=rtcp:40001 IN IP4 192.0.2.10", "a=rtcp:40001 IN IP4 " + "a" * 300)) == \
        Refusal(488, "bad attribute")


@pytest.mark.parametrize("line", ["m=audio 70000 RTP/AVP 0", "m=audio -1 RTP/AVP 0", "m=audio x RTP/AVP 0",
                                  "m=audio 40000 RTP/AVP 0 abc", "m=audio 40000 RTP/AVP 128",
                                  "m=audio 40000/99 RTP/AVP 0", "m=audio 40000 RTP/AVP",
                                  "m=audio 40000 RTP/AVP " + " ".join(["0"] * 40)])
def test_media_lines_need_a_port_and_payload_types_in_range(line):
    assert screen_sdp(with_line("m=audio 40000 RTP/AVP 9 0 8 101", line)) == Refusal(488, "bad media line")


def test_tables_pjmedia_holds_in_fixed_sizes_are_never_overfilled():
    many_media = SDP + "".join(f"m=audio {40002 + 2 * i} RTP/AVP 0\r\n" for i in range(8))
    many_attributes = SDP + "".join(f"a=x-{i}\r\n" for i in range(60))
    many_bandwidths = SDP + "b=AS:64\r\n" * 5
    assert screen_sdp(many_media) == Refusal(488, "too many media lines")
    assert screen_sdp(many_attributes) == Refusal(488, "bad attribute")
    assert screen_sdp(many_bandwidths) == Refusal(488, "bad bandwidth line")


@pytest.mark.parametrize(("old", "new"), [("a=rtpmap:0 PCMU/8000", "a=rtpmap:0 PCMU/0"),
                                          ("a=rtpmap:0 PCMU/8000", "a=rtpmap:300 PCMU/8000"),
                                          ("a=ptime:20", "a=ptime:0"), ("a=ptime:20", "a=ptime:99999999999"),
                                          ("a=sendrecv", "a=sendrecv:yes"),
                                          ("a=fmtp:101 0-16", "a=fmtp:101 " + ";".join(["k=v"] * 20))])
def test_attributes_pjsip_turns_into_numbers_are_screened(old, new):
    assert screen_sdp(with_line(old, new)) == Refusal(488, "bad attribute")


def test_malformed_and_oversized_offers_are_refused():
    assert screen_sdp(SDP.replace("v=0\r\n", "")) == Refusal(488, "offer does not start with v=0")
    two_at_one_level = SDP + "c=IN IP4 192.0.2.11\r\nc=IN IP4 192.0.2.12\r\n"
    assert screen_sdp(two_at_one_level) == Refusal(488, "bad connection address")
    assert screen_sdp(SDP + "a=x:" + "y" * 600 + "\r\n") == Refusal(488, "malformed offer line")
    assert screen_sdp(SDP + "garbage\r\n") == Refusal(488, "malformed offer line")
    assert screen_sdp(SDP + "a=x:\x00\r\n") == Refusal(488, "malformed offer line")
    assert screen_sdp(SDP + ("a=y:" + "z" * 400 + "\r\n") * 30) == Refusal(488, "offer too large")
    assert screen_sdp("v=0\r\no=- 1 1 IN IP4 192.0.2.10\r\ns=-\r\n") == Refusal(488, "offer has no media")


def test_an_invite_without_an_offer_is_refused_because_its_answer_would_come_unscreened():
    assert screen_invite(invite("")) == Refusal(488, "no offer")
    assert screen_invite(invite(content_type="multipart/mixed;boundary=x")) == \
        Refusal(488, "offer is not application/sdp")


@pytest.mark.parametrize("extra", ["Contact: <sip:alice@" + "a" * 300 + ">\r\n",
                                   "Record-Route: <sip:" + "%n" * 200 + ";lr>\r\n",
                                   "Contact: <sip:alice@192.0.2.10:99999>\r\n"])
def test_addresses_pjsip_would_route_to_are_screened(extra):
    refusal = screen_invite(invite(extra=extra))
    assert refusal is not None and refusal.status == 400


def test_an_overlong_via_host_or_header_is_refused_with_400():
    long_via = invite().replace("Via: SIP/2.0/UDP 192.0.2.10:5060", "Via: SIP/2.0/UDP " + "h" * 300 + ":5060")
    assert screen_invite(long_via) == Refusal(400, "bad via address")
    assert screen_invite(invite(extra="Subject: " + "s" * 3000 + "\r\n")) == Refusal(400, "header too long")
    assert screen_invite(invite(extra="not a header\r\n")) == Refusal(400, "malformed header")


def test_refusal_reasons_never_carry_the_peers_bytes():
    refusal = screen_invite(invite(with_line("c=IN IP4 192.0.2.10", "c=IN IP4 %n%n\x1b[31m")))
    assert refusal is not None and "%n" not in refusal.reason and "\x1b" not in refusal.reason
