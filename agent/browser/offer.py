"""The browser phone's signalling: what a page's SDP offer must look like before aiortc parses it, and
what the answer chose. Pure.
"""

from __future__ import annotations

import re

MAX_SDP_CHARS = 16 * 1024
"""A browser's audio-and-data offer is 1-4 KB; anything much larger is not a browser phone."""
MAX_MEDIA_LINES = 4


class OfferError(ValueError):
    """The page's offer cannot be answered; the message says why (sent back as a 400)."""


def check_offer(offer: object) -> str:
    """The SDP of a signalling request `{"type": "offer", "sdp": "v=0..."}` with one audio stream at least."""
    if not isinstance(offer, dict) or offer.get("type") != "offer" or not isinstance(offer.get("sdp"), str):
        raise OfferError('expected {"type": "offer", "sdp": "..."}')
    sdp = offer["sdp"]
    if len(sdp) > MAX_SDP_CHARS:
        raise OfferError(f"the SDP offer is over {MAX_SDP_CHARS} characters")
    if not sdp.startswith("v=0"):
        raise OfferError("the SDP offer must start with v=0")
    media = re.findall(r"^m=(\w+) ", sdp, flags=re.MULTILINE)
    if "audio" not in media:
        raise OfferError("the offer has no audio stream")
    if len(media) > MAX_MEDIA_LINES:
        raise OfferError(f"the offer has {len(media)} media streams; at most {MAX_MEDIA_LINES}")
    return sdp


def answer_codec(sdp: str) -> tuple[str, int]:
    """The audio codec an answer chose (its first payload type on the audio line) and its clock rate."""
    audio = re.search(r"^m=audio \d+ \S+ (\d+)", sdp, flags=re.MULTILINE)
    if audio is None:
        return "", 0
    rtpmap = re.search(rf"^a=rtpmap:{audio.group(1)} ([\w-]+)/(\d+)", sdp, flags=re.MULTILINE)
    if rtpmap is None:
        return "", 0
    return rtpmap.group(1), int(rtpmap.group(2))
