"""Network guard: any connection to an address outside loopback fails loudly.

Imported by tests/conftest.py for the test process, and put on PYTHONPATH for every
subprocess the tests start (`prdigest run`), so neither can reach Slack, Telegram or anything
else. Tests talk to loopback fakes only.
"""

from __future__ import annotations

import ipaddress
import socket

_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex
blocked: list[str] = []


class NetworkGuardError(OSError):
    """A test tried to reach a non-loopback address."""


def _check(sock: socket.socket, address: object) -> None:
    if sock.family not in (socket.AF_INET, socket.AF_INET6):
        return
    host = address[0] if isinstance(address, tuple) else str(address)
    try:
        allowed = ipaddress.ip_address(str(host).split("%", 1)[0]).is_loopback
    except ValueError:
        allowed = host == "localhost"
    if not allowed:
        blocked.append(str(host))
        raise NetworkGuardError(f"network guard: tests may only connect to loopback, not {host}")


def _connect(self: socket.socket, address: object) -> None:
    _check(self, address)
    _real_connect(self, address)  # type: ignore[arg-type]


def _connect_ex(self: socket.socket, address: object) -> int:
    _check(self, address)
    return _real_connect_ex(self, address)  # type: ignore[arg-type]


socket.socket.connect = _connect  # type: ignore[method-assign,assignment]
socket.socket.connect_ex = _connect_ex  # type: ignore[method-assign,assignment]
