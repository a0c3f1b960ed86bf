import numpy as np

from agent.audio.pcm import rms
from agent.audio.playout import Playout
from agent.call.listening.echo import EchoGate
from agent.sip.headers import uri_user


def test_playout_frames_audio_and_pads_the_end():
    playout = Playout(4)
    playout.push(np.arange(1, 11, dtype=np.int16))
    assert playout.pending_frames == 2
    playout.finish()
    frames = [playout.pop() for _ in range(4)]
    assert [f.tolist() for f, _ in frames] == [[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 0, 0], [0, 0, 0, 0]]
    assert [speech for _, speech in frames] == [True, True, True, False]


def test_clear_makes_the_next_frame_silence():
    playout = Playout(4)
    playout.push(np.ones(40, dtype=np.int16))
    playout.pop()
    assert playout.clear() == 9
    frame, speech = playout.pop()
    assert not speech and not frame.any()


def test_a_shutdown_lets_the_sentence_being_played_end_and_drops_the_next_ones():
    playout = Playout(320)
    for value in (1, 2, 3):  # three sentences of three frames each
        playout.push(np.full(3 * 320, value, np.int16))
        playout.finish()
    playout.pop()  # the first sentence is on the line
    assert playout.finish_current() == 6
    heard = [playout.pop() for _ in range(3)]
    assert [int(frame[0]) for frame, speech in heard] == [1, 1, 0] and [s for _, s in heard] == [True, True, False]


def test_a_shutdown_before_anything_plays_keeps_only_the_first_sentence():
    playout = Playout(320)
    for value in (1, 2):
        playout.push(np.full(320, value, np.int16))
        playout.finish()
    assert playout.finish_current() == 1 and playout.pending_frames == 1 and playout.pop()[0][0] == 1


def test_rms():
    assert rms(np.array([3, -3, 3, -3], dtype=np.int16)) == 3.0 and rms(np.zeros(0)) == 0.0


def test_echo_gate_rejects_an_echo_12_db_down_and_admits_a_caller_at_the_same_level():
    gate = EchoGate(ratio_db=-9.0, memory_frames=30)
    for _ in range(10):
        gate.played(4000.0)
    assert not gate.admits(4000.0 * 10 ** (-12 / 20))
    assert gate.admits(4000.0)


def test_echo_gate_forgets_after_its_memory_and_admits_anything_in_silence():
    gate = EchoGate(memory_frames=3)
    gate.played(4000.0)
    for _ in range(3):
        gate.played(0.0)
    assert gate.reference == 0.0 and gate.admits(10.0)


def test_uri_user():
    assert uri_user('"Bob" <sip:200@pbx.example;transport=tcp>') == "200"
    assert uri_user("sip:agent@127.0.0.1:5060") == "agent"
    assert uri_user("<sip:127.0.0.1>") == ""


def test_request_uri_host():
    from agent.sip.headers import request_uri_host

    assert request_uri_host("INVITE sip:vivekg@chair-dnrc.example.com;unknownparam SIP/2.0\r\n") == \
        "chair-dnrc.example.com"
    assert request_uri_host("INVITE sip:agent@127.0.0.1:5060 SIP/2.0") == "127.0.0.1"
    assert request_uri_host("INVITE sip:[2001:db8::10]:5070 SIP/2.0") == "[2001:db8::10]"
    assert request_uri_host("garbage") == ""


def test_forgetting_admits_the_caller_at_once():
    gate = EchoGate()
    gate.played(8000.0)
    gate.forget()
    assert gate.reference == 0.0 and gate.admits(100.0)
