"""The fakes' one way to serve: an aiohttp app on a free loopback port."""

from __future__ import annotations

from aiohttp import web


async def serve(app: web.Application, shutdown_timeout: float = 60.0) -> tuple[web.AppRunner, int]:
    """`app` listening on 127.0.0.1 at a port the system picks: its runner (`cleanup()` stops
    it) and that port."""
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=shutdown_timeout)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    return runner, int(runner.addresses[0][1])
