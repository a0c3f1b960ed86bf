"""One SIP call as pjsua2 sees it (SipCall). Its callbacks run on the SIP thread (signalling) and the media
clock thread (frames); they only translate pjsua2 state into CallObserver calls, for the CallLeg it makes.
"""

from __future__ import annotations

import concurrent.futures
import logging

import pjsua2 as pj

from agent.audio.playout import Playout
from agent.logs import event
from agent.sip.headers import uri_user
from agent.sip.leg import CallLeg, CallObserver, LegHost
from agent.sip.port import FRAME_SAMPLES, BridgePort
from agent.sip.screening import Refusal, screen_sdp

log = logging.getLogger(__name__)


class SipCall(pj.Call):
    """pjsua2's call object for one inbound call."""

    def __init__(self, account: pj.Account, call_id: int, endpoint: LegHost) -> None:
        super().__init__(account, call_id)
        self._endpoint = endpoint
        self._pj_id = call_id
        self.observer: CallObserver | None = None
        self.playout = Playout(FRAME_SAMPLES)
        self.port: BridgePort | None = None
        self._audio_index = -1
        self._ended = False
        self.sip_call_id = ""
        self._handing_over: concurrent.futures.Future | None = None
        self.source = ""
        """The caller's IP address once the call is admitted (counted per source until it ends)."""

    def set_id(self, call_id: int) -> None:
        """The id pjsua gave an outbound call once placed."""
        self._pj_id = call_id

    def make_leg(self, kind: str = "sip", takes_replaces: bool = False) -> CallLeg:
        info = self.getInfo()
        self.sip_call_id = info.callIdString
        return CallLeg(info.callIdString, info.remoteUri, uri_user(info.localUri), self.playout, self._endpoint,
                       self._pj_id, kind, takes_replaces)

    def _op(self, status: int) -> pj.CallOpParam:
        prm = pj.CallOpParam()
        prm.statusCode = status
        return prm

    def reject(self, status: int, retry_after_s: int | None = None) -> None:
        prm = self._op(status)
        if retry_after_s is not None:
            header = pj.SipHeader()
            header.hName, header.hValue = "Retry-After", str(retry_after_s)
            prm.txOption.headers.append(header)
        self.hangup(prm)

    def ring_and_answer(self) -> None:
        self.answer(self._op(180))
        self.answer(self._op(200))

    def hang_up_now(self) -> None:
        if not self._ended:
            try:
                self.hangup(self._op(200))
            except pj.Error as exc:
                event(log, "call.hangup_failed", logging.WARNING, reason=exc.reason)

    def refer(self, target: str) -> None:
        try:
            self.xfer(target, pj.CallOpParam(True))
        except pj.Error as exc:  # the REFER could not even be sent: a failed transfer, not a broken call
            event(log, "call.transfer_failed", logging.WARNING, call=self.sip_call_id, reason=exc.reason)
            if self.observer is not None:
                self.observer.on_transfer(500, exc.reason, True)

    def refer_replacing(self, other: SipCall, status: concurrent.futures.Future) -> None:
        """REFER with Replaces toward this call's phone; the final status of its new call resolves `status`."""
        try:
            self.xferReplaces(other, pj.CallOpParam(True))
        except pj.Error as exc:
            event(log, "call.hand_over_failed", logging.WARNING, call=self.sip_call_id, reason=exc.reason)
            status.set_result(500)
            return
        self._handing_over = status

    def audio_media(self) -> pj.AudioMedia | None:
        """The call's audio in the conference bridge, once its media is up."""
        return self.getAudioMedia(self._audio_index) if self._audio_index >= 0 and not self._ended else None

    def rtp_packets_received(self) -> int | None:
        """RTP packets received on the audio stream so far (for dead-call detection); None once the
        call has ended (its stream is gone)."""
        if self._ended:
            return None
        if self._audio_index < 0:
            return 0
        # Hold each SWIG temporary in a name: members of a dropped temporary point at freed memory.
        stat = self.getStreamStat(self._audio_index)
        rtcp = stat.rtcp
        received = rtcp.rxStat
        return int(received.pkt)

    # --- pjsua2 callbacks (SIP thread)
    def onCallState(self, prm: pj.OnCallStateParam) -> None:  # noqa: N802
        info = self.getInfo()
        if info.state != pj.PJSIP_INV_STATE_DISCONNECTED or self._ended:
            return
        self._ended = True
        if self._handing_over is not None:
            self._handing_over.set_result(None)
            self._handing_over = None
        if self.port is not None:
            self.port.detach()
            self._endpoint.calls.release_port(self.port)
            self.port = None
        if self.observer is not None:
            self.observer.on_ended(f"{info.lastStatusCode} {info.lastReason}".strip())
            self.observer = None
        self._endpoint.forget(self._pj_id, self)

    def onCallMediaState(self, prm: pj.OnCallMediaStateParam) -> None:  # noqa: N802
        info = self.getInfo()
        for index, media in enumerate(info.media):
            if media.type != pj.PJMEDIA_TYPE_AUDIO:
                continue
            if media.status == pj.PJSUA_CALL_MEDIA_ACTIVE:
                self._connect(index)
                if self.observer is not None:
                    stream = self.getStreamInfo(index)
                    self.observer.on_media(stream.codecName, int(stream.codecClockRate))
                    self.observer.on_hold(False)
            elif self.observer is not None and media.status in (pj.PJSUA_CALL_MEDIA_LOCAL_HOLD,
                                                                 pj.PJSUA_CALL_MEDIA_REMOTE_HOLD):
                self.observer.on_hold(True)

    def _connect(self, index: int) -> None:
        if self.port is None and self.observer is not None and not self._ended:
            self.port = self._endpoint.calls.acquire_port()
            self.port.attach(self.playout, self.observer.on_frame)
        if self.port is None:
            return
        audio = self.getAudioMedia(index)
        audio.startTransmit(self.port)
        self.port.startTransmit(audio)
        self._audio_index = index
        self._lock_media(index)

    def _lock_media(self, index: int) -> None:
        """Only the peer the offer names (or the signalling came from) may send this call's RTP."""
        transport = self.getMedTransportInfo(index)  # held in names: SWIG temporaries die with the line
        stream = self.getStreamInfo(index)
        ports = [int(transport.localRtpName.rsplit(":", 1)[1]), int(transport.localRtcpName.rsplit(":", 1)[1])]
        peers = {host for host in (stream.remoteRtpAddress.rsplit(":", 1)[0].strip("[]"), self.source) if host}
        locked = self._endpoint.gate.firewall.lock_media(ports, peers)
        event(log, "call.media_locked", call=self.sip_call_id, rtp_port=ports[0], peers=",".join(sorted(peers)),
              locked=locked)

    def onCallRxOffer(self, prm: pj.OnCallRxOfferParam) -> None:  # noqa: N802
        """A re-INVITE or UPDATE with a new offer: screened like the first one (see screening); a refused
        offer gets 488 and the call keeps its current media."""
        try:
            offer = prm.offer
            refusal = screen_sdp(offer.wholeSdp)
        except Exception:
            log.exception("call.offer_check_failed")
            refusal = Refusal(488, "unreadable offer")
        if refusal is not None:
            event(log, "call.offer_refused", call=self.sip_call_id, status=refusal.status, reason=refusal.reason)
            prm.statusCode = refusal.status

    def onCallTxOffer(self, prm: pj.OnCallTxOfferParam) -> None:  # noqa: N802
        """A re-INVITE without an offer: ours would be answered in the ACK, which pjsip turns into media
        before anything can screen it. So offer no audio at all (nothing in the answer becomes a socket
        address) and end the call."""
        try:
            event(log, "call.offer_refused", call=self.sip_call_id, status=200, reason="re-INVITE without offer")
            opt = prm.opt
            opt.audioCount = 0
            self._endpoint.call_soon(self.hang_up_now)
        except Exception:
            log.exception("call.offer_check_failed")

    def onCallTransferStatus(self, prm: pj.OnCallTransferStatusParam) -> None:  # noqa: N802
        """The REFER's answer, then the NOTIFYs of the caller's call to the transfer target."""
        event(log, "call.transfer_status", call=self.sip_call_id, status=prm.statusCode, final=prm.finalNotify)
        if self._handing_over is not None:  # a warm transfer's hand-over: its own waiter, not the call core
            if prm.finalNotify or prm.statusCode >= 300:
                self._handing_over.set_result(prm.statusCode)
                self._handing_over = None
                prm.cont = False
            return
        if self.observer is not None:
            self.observer.on_transfer(prm.statusCode, prm.reason, prm.finalNotify)
        if prm.statusCode >= 200 and prm.finalNotify:
            prm.cont = False

    def onDtmfDigit(self, prm: pj.OnDtmfDigitParam) -> None:  # noqa: N802
        if self.observer is not None:
            self.observer.on_dtmf(prm.digit)
