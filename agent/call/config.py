"""What one call's shell needs from the settings and its dialplan profile (app.py builds it per call)."""

from __future__ import annotations

from dataclasses import dataclass, field

from agent.call.listening.endpointing import EndpointConfig
from agent.call.listening.turns import TurnConfig
from agent.call.understanding.message import MessageConfig
from agent.call.warm_transfer import WarmTransferConfig


@dataclass(frozen=True)
class CallConfig:
    turns: TurnConfig = field(default_factory=TurnConfig)
    endpointing: EndpointConfig | None = None
    """When a pause ends a turn, judged by what was said; None: always after `turns.hangover_ms`."""
    messages: MessageConfig = field(default_factory=MessageConfig)
    echo_gate_db: float = -9.0
    """How far below the agent's own level the caller's audio must stay to be taken for its echo (see echo)."""
    inactivity_s: float = 60.0
    max_call_s: float = 600.0
    dead_call_s: float = 600.0
    """Calls end after this long without RTP (limits)."""
    model_deadline_s: float = 10.0
    transfer_to: str = ""
    """Who "a person, please" is put through to; empty: nobody (a message is offered)."""
    transfer_digit: str = ""
    warm_transfer: WarmTransferConfig | None = None
    """Who the agent calls itself when the caller asks for a person; None: the caller is REFERred to
    `transfer_to` (a blind transfer)."""
