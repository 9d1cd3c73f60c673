"""A lingering close for uvicorn: an answer that ends the connection while the client is still
sending its body (the 408 for a trickled body, a 413 past the drain bound) reaches the client.

uvicorn closes the socket as soon as a `Connection: close` response is written. Request bytes
still arriving then get a TCP reset from the kernel, and a client that reads while it writes
loses the answer it had already received (ConnectionResetError instead of the 408). Here the
answer goes out, then only our side is shut (a FIN: the client reads the answer, then EOF), and
what the client still sends is read and dropped within the bounds web's drain of an oversized
body keeps (BODY_DEADLINE_SECONDS, DRAIN_MAX_BYTES) before the socket closes.
"""

from __future__ import annotations

import asyncio
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from bot.adapters import http_body as web


class LingeringH11Protocol(H11Protocol):
    """uvicorn's h11 protocol, but closing a connection whose request body is still coming
    lingers (see the module docstring); every other close is uvicorn's own."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lingering = False
        self._socket: asyncio.Transport | None = None
        self._dropped = 0
        self._linger_end: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._socket = transport
        super().connection_made(_ClosingThrough(transport, self))

    def close_connection(self) -> None:
        """What uvicorn's `transport.close()` does here: linger if the client is mid-body and
        the transport can shut its write side alone, else close now."""
        socket = self._socket
        assert socket is not None
        mid_body = self.conn.their_state is h11.SEND_BODY
        if self.lingering or socket.is_closing() or not mid_body or not socket.can_write_eof():
            socket.close()
            return
        self.lingering = True
        socket.write_eof()  # after the answer still buffered, if any
        socket.resume_reading()  # uvicorn may have paused it (flow control)
        self._linger_end = self.loop.call_later(web.BODY_DEADLINE_SECONDS, socket.close)

    def data_received(self, data: bytes) -> None:
        if not self.lingering:
            super().data_received(data)
            return
        self._dropped += len(data)
        if self._dropped > web.DRAIN_MAX_BYTES and self._socket is not None:
            self._socket.close()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._linger_end is not None:
            self._linger_end.cancel()
        super().connection_lost(exc)

    def shutdown(self) -> None:
        if self.lingering and self._socket is not None:
            self._socket.close()  # the server is stopping: the answer had its chance
            return
        super().shutdown()


class _ClosingThrough(asyncio.Transport):
    """The socket's transport as uvicorn sees it: everything passes through, except that
    `close` asks the protocol (which may linger) and a lingering connection counts as closing,
    so uvicorn neither writes to it again nor arms its keep-alive timer."""

    def __init__(self, inner: asyncio.Transport, protocol: LingeringH11Protocol) -> None:
        super().__init__()
        self._inner = inner
        self._protocol = protocol

    def close(self) -> None:
        self._protocol.close_connection()

    def is_closing(self) -> bool:
        return self._protocol.lingering or self._inner.is_closing()

    def abort(self) -> None:
        self._inner.abort()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self._inner.get_extra_info(name, default)

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        self._inner.set_protocol(protocol)

    def get_protocol(self) -> asyncio.BaseProtocol:
        return self._inner.get_protocol()

    def is_reading(self) -> bool:
        return self._inner.is_reading()

    def pause_reading(self) -> None:
        self._inner.pause_reading()

    def resume_reading(self) -> None:
        self._inner.resume_reading()

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self._inner.write(data)

    def write_eof(self) -> None:
        self._inner.write_eof()

    def can_write_eof(self) -> bool:
        return self._inner.can_write_eof()

    def get_write_buffer_size(self) -> int:
        return self._inner.get_write_buffer_size()

    def get_write_buffer_limits(self) -> tuple[int, int]:
        return self._inner.get_write_buffer_limits()

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        self._inner.set_write_buffer_limits(high, low)
