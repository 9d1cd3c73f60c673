"""The process's HTTP server: uvicorn with prdigest's limits, its socket bound first, and
signals that stop the service cleanly (exit 0, chat work no longer taken from the first one)."""

from __future__ import annotations

import asyncio
import errno
import gc
import signal
import socket
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Literal

import uvicorn
from starlette.applications import Starlette

from bot.service.app import Service
from bot.web.lingering import LingeringH11Protocol

# uvicorn's limits, so slow or idle clients cannot pin the server (a slow *body* is cut by
# web.BODY_DEADLINE_SECONDS: 408).
KEEP_ALIVE_SECONDS = 5  # an idle keep-alive connection is closed after this
MAX_CONCURRENCY = 1000  # connections and tasks at once; beyond it uvicorn answers 503
MAX_HEADER_BYTES = 16 * 1024  # h11's incomplete event: a request line and headers
# After SIGTERM, requests in flight (acks, webhook answers, ingests) may finish this long;
# the adapters' answers running get a grace of their own (bot/adapters/work.py), counted
# from SIGTERM too: together well within the 10 s a supervisor waits before SIGKILL.
GRACEFUL_SHUTDOWN_SECONDS = 3


class _Server(uvicorn.Server):
    """uvicorn re-raises SIGTERM after a graceful shutdown (exit status -15); a clean stop
    should exit 0, so the signals only ask the server to stop. The first signal also tells
    the service to stop taking chat work (`on_exit`), before uvicorn waits for requests."""

    def __init__(self, config: uvicorn.Config, on_exit: Callable[[], None] = lambda: None) -> None:
        super().__init__(config)
        self.on_exit = on_exit

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if not self.should_exit:
            self.on_exit()
        super().handle_exit(sig, frame)

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        # What start-up built (modules, templates, tables, clients) lives as long as the
        # process: keep it out of the collector's full passes, which would walk all of it
        # every time and stall every request in flight.
        gc.collect()
        gc.freeze()

    @contextmanager
    def capture_signals(self) -> Iterator[None]:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, self.handle_exit, sig, None)
        try:
            yield
        finally:
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(sig)


def server_config(
    app: Starlette, host: str, port: int, lifespan: Literal["on", "off"] = "on"
) -> uvicorn.Config:
    """uvicorn's settings for prdigest: no access log, the limits above, and h11 with a
    lingering close (bot.web.lingering), so an answer that cuts a body short is not lost."""
    return uvicorn.Config(
        app,
        http=LingeringH11Protocol,
        host=host,
        port=port,
        log_config=None,
        access_log=False,
        lifespan=lifespan,
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_SECONDS,
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
        limit_concurrency=MAX_CONCURRENCY,
        h11_max_incomplete_event_size=MAX_HEADER_BYTES,
    )


class ListenError(Exception):
    """The HTTP address cannot be listened on (port taken, host not local): one line."""


def listen_socket(host: str, port: int) -> socket.socket:
    """The server's socket, bound before anything else starts, so a port that is taken stops
    `prdigest run` with one line instead of a service started and torn down again. Made as
    uvicorn makes it (SO_REUSEADDR: a restart does not wait for old connections' TIME_WAIT)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family=family)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        reason = (exc.strerror or str(exc)).lower()
        setting = (
            "BOT_HTTP_PORT" if exc.errno in (errno.EADDRINUSE, errno.EACCES) else "BOT_HTTP_HOST"
        )
        raise ListenError(f"cannot listen on {host}:{port}: {reason}; set {setting}") from None
    sock.set_inheritable(True)
    return sock


async def serve(service: Service, sock: socket.socket | None = None) -> None:
    """Run the web server (and with it the service) until SIGTERM/SIGINT, on `sock` when the
    caller bound it already (`listen_socket`)."""
    env = service.ctx.env
    sock = sock or listen_socket(env.http_host, env.http_port)
    config = server_config(service.web(), env.http_host, env.http_port)
    await _Server(config, service.stop_taking_work).serve(sockets=[sock])
