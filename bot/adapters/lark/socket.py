"""Feishu/Lark events over the SDK's long connection (a WebSocket; no public URL needed).

lark-oapi's `ws.Client` owns the protocol: it POSTs AppID/AppSecret to
`{domain}/callback/ws/endpoint`, connects to the URL it gets, pings, reassembles split frames,
reconnects, and hands each event's JSON to `event_handler._do_without_validation(payload)`,
sending back whatever that returns (JSON, base64) as the answer, which is how a card action's
toast or new card reaches Feishu. Three things about it shape this module:

- `start()` blocks forever in `loop.run_until_complete`, on a loop that is a *module global*
  of `lark_oapi.ws.client` (created when the SDK is imported, perhaps in our service loop's
  thread). So the client runs in a daemon thread with a fresh loop, assigned to that global
  (one long connection per process). It is built inside that thread too: its constructor
  schedules a cache-cleaning task on the thread's current loop.
- The handler is called synchronously inside that loop. It runs our `dispatch` on the
  service's loop and waits for its answer at most `answer_timeout` (Feishu wants one within
  3 s); a late or failed dispatch is logged and answered empty, never breaking the connection.
  A late dispatch is not cancelled: it finishes on the service loop, its answer is dropped.
- Stopping: the SDK has no stop. `stop()` cancels every task of the thread's loop through
  `call_soon_threadsafe`, which ends `start()` with CancelledError (the SDK catches only
  Exception, so it neither logs it nor reconnects); the thread then closes the WebSocket and
  the loop. The SDK fetches its endpoint with a blocking `requests.post` (no timeout): a stop
  during it waits for it; after `STOP_JOIN_SECONDS` it is logged and the daemon thread left.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import logging
import threading
from collections.abc import Callable, Coroutine
from typing import Any

import lark_oapi.ws.client as ws_client
from lark_oapi.core.enum import LogLevel
from lark_oapi.ws.exception import ClientException

from bot.logs import log

logger = logging.getLogger("prdigest.lark")

Dispatch = Callable[[dict[str, Any]], Coroutine[Any, Any, dict[str, Any] | None]]
STOP_JOIN_SECONDS = 5.0
CLOSE_SECONDS = 2.0  # for the WebSocket's closing handshake


class _Handler:
    """What `ws.Client` calls for each event (the one method of EventDispatcherHandler it uses)."""

    def __init__(self, socket: LarkSocket) -> None:
        self._socket = socket

    def _do_without_validation(self, payload: bytes) -> dict[str, Any] | None:
        """The event's answer, or None (the SDK then answers 200 with no data)."""
        return self._socket.answer(payload)


class LarkSocket:
    name = "lark-socket"

    def __init__(
        self,
        app_id: str,
        app_secret: str,
        api_url: str,
        dispatch: Dispatch,
        *,
        answer_timeout: float = 2.5,
    ) -> None:
        self.app_id, self._secret = app_id, app_secret
        self.api_url = api_url.rstrip("/")
        self.dispatch = dispatch
        self.answer_timeout = answer_timeout
        self._service_loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None  # the thread's, while it runs
        self._guard = threading.Lock()  # orders `_loop` against `_stopping`
        self._stopping = threading.Event()

    @property
    def running(self) -> bool:
        """The connection's thread is alive (connected, connecting or reconnecting)."""
        return self._thread is not None and self._thread.is_alive()

    async def start(self) -> None:
        """Start the connection in its thread and return at once."""
        if self.running:
            return
        self._service_loop = asyncio.get_running_loop()
        self._stopping.clear()
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self._thread.start()
        log(logger, "lark.socket_starting", app_id=self.app_id)

    async def stop(self) -> None:
        """Close the connection; wait for the thread in an executor (never blocking the loop)."""
        thread = self._thread
        if thread is None:
            return
        with self._guard:
            self._stopping.set()
            loop = self._loop
        if loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                loop.call_soon_threadsafe(_cancel_all, loop)
        await asyncio.to_thread(thread.join, STOP_JOIN_SECONDS)
        if thread.is_alive():
            log(logger, "lark.socket_stop_timeout", logging.WARNING, seconds=STOP_JOIN_SECONDS)
        else:
            log(logger, "lark.socket_stopped")
        self._thread = None

    # -- the connection's thread -------------------------------------------------------------
    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        ws_client.loop = loop  # the SDK's client runs on this module global (see above)
        client: Any = None  # lark_oapi.ws.Client; the SDK is untyped
        try:
            with self._guard:
                if self._stopping.is_set():
                    return
                self._loop = loop
            client = ws_client.Client(
                self.app_id,
                self._secret,
                log_level=LogLevel.WARNING,
                event_handler=_Handler(self),  # shaped like EventDispatcherHandler
                domain=self.api_url,
                auto_reconnect=True,
            )
            client.on_reconnecting = lambda: log(logger, "lark.socket_reconnecting")
            client.on_reconnected = lambda: log(logger, "lark.socket_reconnected")
            client.start()
        except asyncio.CancelledError:
            pass  # stop()
        except ClientException as exc:  # Feishu refused: wrong credentials, no long connection
            log(logger, "lark.socket_refused", logging.ERROR, code=exc.code, msg=str(exc))
        except Exception as exc:
            log(logger, "lark.socket_failed", logging.ERROR, error=repr(exc)[:500])
        finally:
            with self._guard:
                self._loop = None
            _wind_down(loop, client)

    def answer(self, payload: bytes) -> dict[str, Any] | None:
        """Run `dispatch` for one event on the service loop; its answer, or None when it fails,
        is too late or the socket is stopping. Called in the connection's thread."""
        service = self._service_loop
        if service is None or self._stopping.is_set():
            return None
        try:
            body = json.loads(payload)
            if not isinstance(body, dict):
                raise TypeError("the event is not a JSON object")
            future = asyncio.run_coroutine_threadsafe(self.dispatch(body), service)
        except Exception as exc:  # unreadable payload; the service loop is closed
            log(logger, "lark.socket_unreadable", logging.WARNING, error=repr(exc)[:200])
            return None
        event_type = _event_type(body)
        try:
            return future.result(self.answer_timeout)
        except concurrent.futures.TimeoutError:
            future.add_done_callback(lambda done: _log_late(done, event_type))
            log(logger, "lark.socket_answer_late", logging.WARNING, event_type=event_type)
        except Exception as exc:
            log(
                logger,
                "lark.socket_dispatch_failed",
                logging.ERROR,
                event_type=event_type,
                error=repr(exc)[:500],
            )
        return None


def _event_type(body: dict[str, Any]) -> str:
    header = body.get("header")
    return str(header.get("event_type", "")) if isinstance(header, dict) else ""


def _log_late(done: concurrent.futures.Future[dict[str, Any] | None], event_type: str) -> None:
    """A dispatch that outlived its answer and then failed still leaves a trace."""
    if not done.cancelled() and done.exception() is not None:
        log(
            logger,
            "lark.socket_dispatch_failed",
            logging.ERROR,
            event_type=event_type,
            error=repr(done.exception())[:500],
        )


def _cancel_all(loop: asyncio.AbstractEventLoop) -> None:
    """In the connection's loop: cancel its tasks, which ends the SDK's `start()`."""
    for task in asyncio.all_tasks(loop):
        task.cancel()


def _wind_down(loop: asyncio.AbstractEventLoop, client: Any) -> None:
    """After `start()` ended: finish every task, close the WebSocket, close the loop."""

    async def finish() -> None:
        # Tasks first: a receive loop still running would see the close and reconnect.
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        conn = getattr(client, "_conn", None)  # the SDK's websockets connection, if any
        if conn is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(conn.close(), CLOSE_SECONDS)

    try:
        loop.run_until_complete(finish())
        loop.run_until_complete(loop.shutdown_asyncgens())
    finally:
        loop.close()
