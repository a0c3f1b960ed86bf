"""A kernel filter on pjsip's own SIP sockets, so a flooding source never reaches pjsua.

pjsua2 has no hook before pjsua turns an INVITE into a call with two RTP
sockets (see admission). What it cannot stop, the kernel can: a classic BPF
program attached to the SIP UDP socket and the TCP and TLS listeners (SO_ATTACH_FILTER,
no privileges needed) drops datagrams and connection attempts from blocked
addresses, or during a flood from everyone but the allowed networks.
Datagrams already queued when a filter changes are purged from the head of
the queue, and TCP connections from cut-off peers are shut down. Linux and
IPv4 only; elsewhere the firewall reports itself unavailable and the agent
relies on the proxy in front of it.

The sockets are found through /proc/self (the ones bound to the SIP address);
they stay pjsip's: only duplicates of their descriptors are used here, from
the SIP thread.
"""

from __future__ import annotations

import contextlib
import ctypes
import ipaddress
import logging
import os
import socket
import struct
import sys

from agent.logs import event
from agent.sip.admission import FilterState

log = logging.getLogger(__name__)

SO_ATTACH_FILTER = 26
SKF_NET_OFF = -0x100000  # loads relative to the IP header
_LD_W_ABS, _AND_K, _JEQ_K, _RET_K = 0x20, 0x54, 0x15, 0x06
_ACCEPT, _DROP = 0xFFFFFFFF, 0


class _Instruction(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class _Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_Instruction))]


def compile_filter(state: FilterState) -> list[tuple[int, int, int, int]]:
    """The BPF program for a filter state: (code, jt, jf, k) per instruction. Each test reloads the source
    address (IPv4, from the IP header) and jumps to the verdict when it matches."""
    if state.only is not None:
        tests, on_match, otherwise = [n for n in state.only if n.version == 4], _ACCEPT, _DROP
    else:
        tests = [ipaddress.ip_network(a) for a in sorted(state.blocked) if ipaddress.ip_address(a).version == 4]
        on_match, otherwise = _DROP, _ACCEPT
    program: list[tuple[int, int, int, int]] = []
    for n, network in enumerate(tests):
        left = 3 * (len(tests) - n - 1)  # instructions after this test's jump, before the two verdicts
        program += [(_LD_W_ABS, 0, 0, (SKF_NET_OFF + 12) & 0xFFFFFFFF),
                    (_AND_K, 0, 0, int(network.netmask)),
                    (_JEQ_K, left + 1, 0, int(network.network_address))]
    return program + [(_RET_K, 0, 0, otherwise), (_RET_K, 0, 0, on_match)]


def filtered(state: FilterState, address: str) -> bool:
    """Whether the compiled filter drops packets from `address` (the same rule, in Python)."""
    ip = ipaddress.ip_address(address)
    if state.only is not None:
        return not any(ip in network for network in state.only)
    return address in state.blocked


class SipFirewall:
    """Applies filter states to the SIP sockets pjsip opened on (host, port)."""

    def __init__(self, host: str, port: int, tls_port: int = 0) -> None:
        self._host, self._port, self._tls_port = host, port, tls_port
        self._udp: socket.socket | None = None
        self._tcp: socket.socket | None = None
        self._tls: socket.socket | None = None
        self.state = FilterState(frozenset(), None)

    @property
    def available(self) -> bool:
        return self._udp is not None

    def attach(self) -> None:
        """Find pjsip's sockets (after the transports exist)."""
        if not sys.platform.startswith("linux") or ipaddress.ip_address(self._host).version != 4:
            event(log, "sip.firewall_unavailable", logging.WARNING, reason="needs Linux and an IPv4 SIP address")
            return
        self._udp = _socket_for("udp", self._host, self._port, socket.SOCK_DGRAM)
        self._tcp = _socket_for("tcp", self._host, self._port, socket.SOCK_STREAM)
        if self._tls_port:
            self._tls = _socket_for("tcp", self._host, self._tls_port, socket.SOCK_STREAM)
        if self._udp is None:
            event(log, "sip.firewall_unavailable", logging.WARNING, reason="SIP UDP socket not found")

    def apply(self, state: FilterState) -> int:
        """Load the filter for `state` when it changed; return how many queued datagrams it purged."""
        if self._udp is None or state == self.state:
            return 0
        self.state = state
        compiled = _Compiled(compile_filter(state))
        for sock in (self._udp, self._tcp, self._tls):
            if sock is not None:
                sock.setsockopt(socket.SOL_SOCKET, SO_ATTACH_FILTER, compiled.raw)
        event(log, "sip.firewall", blocked=len(state.blocked), flood=state.only is not None)
        self._shut_down_connections(state)
        return self.purge()

    def purge(self) -> int:
        """Drop datagrams from filtered sources at the head of the UDP queue (queued before the filter)."""
        if self._udp is None:
            return 0
        dropped = 0
        while True:
            try:
                _, (address, _port) = self._udp.recvfrom(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)
            except (BlockingIOError, InterruptedError):
                return dropped
            except OSError:
                return dropped
            if not filtered(self.state, address):
                return dropped
            self._udp.recvfrom(65535, socket.MSG_DONTWAIT)
            dropped += 1

    def lock_media(self, local_ports: list[int], peers: set[str]) -> bool:
        """Let a call's RTP and RTCP sockets (bound to `local_ports` on the SIP address) take packets only from
        `peers` (the addresses its offer and its signalling came from): pjsip would otherwise switch a call's
        audio to whoever sprays its port long enough. True when every socket was found and locked."""
        if not self.available:
            return False
        compiled = _Compiled(compile_filter(FilterState(frozenset(), tuple(
            ipaddress.ip_network(p) for p in peers if ipaddress.ip_address(p).version == 4))))
        locked = 0
        for port in local_ports:
            sock = _socket_for("udp", self._host, port, socket.SOCK_DGRAM)
            if sock is not None:
                with sock:
                    sock.setsockopt(socket.SOL_SOCKET, SO_ATTACH_FILTER, compiled.raw)
                locked += 1
        return locked == len(local_ports)

    def _shut_down_connections(self, state: FilterState) -> None:
        """TCP and TLS connections keep the filter they were accepted with: end those of cut-off peers."""
        connections = _tcp_connections(self._host, self._port)
        if self._tls_port:
            connections.update(_tcp_connections(self._host, self._tls_port))
        for inode, remote in connections.items():
            if filtered(state, remote):
                fd = _fd_for_inode(inode)
                if fd is not None:
                    with socket.socket(fileno=os.dup(fd)) as sock, contextlib.suppress(OSError):
                        sock.shutdown(socket.SHUT_RDWR)


class _Compiled:
    """A sock_fprog for SO_ATTACH_FILTER. It points at the instruction array, which must stay alive until
    setsockopt has copied it into the kernel: hold this object across the call."""

    def __init__(self, program: list[tuple[int, int, int, int]]) -> None:
        self._array = (_Instruction * len(program))(*[_Instruction(*i) for i in program])
        self._fprog = _Program(len(program), self._array)
        self.raw = ctypes.string_at(ctypes.addressof(self._fprog), ctypes.sizeof(self._fprog))


def _hex_address(host: str, port: int) -> str:
    """/proc/net's spelling of an IPv4 address and port ('0100007F:13C4' on little-endian machines)."""
    return f"{struct.unpack('=I', socket.inet_aton(host))[0]:08X}:{port:04X}"


def _proc_entries(kind: str) -> list[list[str]]:
    with open(f"/proc/self/net/{kind}") as table:
        return [line.split() for line in table.read().splitlines()[1:]]


def _socket_for(kind: str, host: str, port: int, family_type: int) -> socket.socket | None:
    local = _hex_address(host, port)
    for fields in _proc_entries(kind):
        # A TCP listener is state 0A; the UDP socket is the one bound to our address.
        if fields[1] == local and (kind == "udp" or fields[3] == "0A"):
            fd = _fd_for_inode(fields[9])
            if fd is not None:
                return socket.socket(socket.AF_INET, family_type, fileno=os.dup(fd))
    return None


def _tcp_connections(host: str, port: int) -> dict[str, str]:
    """inode -> remote IPv4 address of the established TCP connections to (host, port)."""
    local, out = _hex_address(host, port), {}
    for fields in _proc_entries("tcp"):
        if fields[1] == local and fields[3] == "01":
            remote = socket.inet_ntoa(struct.pack("=I", int(fields[2].split(":")[0], 16)))
            out[fields[9]] = remote
    return out


def _fd_for_inode(inode: str) -> int | None:
    target = f"socket:[{inode}]"
    for name in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{name}") == target:
                return int(name)
        except OSError:
            continue
    return None
