"""Virtual time for the running event loop: what waits on the loop's own clock (`loop.time`,
`asyncio.sleep`, `asyncio.wait_for`) runs without waiting.

Whenever the loop has nothing ready and would sleep until its next timer, the clock jumps to
that timer instead. Meant for code that waits on nothing but timers and other tasks: a reply
from a socket or a thread does not arrive in virtual time, so timers would run ahead of it.
"""

from __future__ import annotations

import asyncio
import contextlib
import selectors
from collections.abc import Callable, Iterator

Ready = list[tuple[selectors.SelectorKey, int]]
Select = Callable[[float | None], Ready]


class VirtualClock:
    def __init__(self, start: float) -> None:
        self.now = start

    def time(self) -> float:
        return self.now

    def select(self, real: Select, timeout: float | None) -> Ready:
        """The loop's wait for I/O: a wait for a timer becomes a jump to it. None (no timer
        at all) still waits for real: only I/O can wake the loop then."""
        if timeout is not None and timeout > 0:
            self.now += timeout
            timeout = 0
        return real(timeout)


@contextlib.contextmanager
def virtual_time() -> Iterator[VirtualClock]:
    """The running loop on a virtual clock until the block ends (a selector event loop's)."""
    loop = asyncio.get_running_loop()
    selector = getattr(loop, "_selector")  # noqa: B009  (private: the loop's wait for I/O)
    real: Select = selector.select
    clock = VirtualClock(loop.time())  # on from the real time: timers set before keep order
    setattr(loop, "time", clock.time)  # noqa: B010  (an instance attribute over the method)
    selector.select = lambda timeout=None: clock.select(real, timeout)
    try:
        yield clock
    finally:
        delattr(loop, "time")
        del selector.select
