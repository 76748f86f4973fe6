"""How a long command stops when it is told to: SIGTERM (a process manager, `timeout`) and
SIGHUP (the terminal or SSH session closing) unwind like Ctrl-C, so that what a run set up (the
emulator's namespaces, a campaign's workers and provenance record) is taken down; and the
taking down itself is not cut short by a second signal (Ctrl-C pressed twice, `timeout`
signalling the process and then its group)."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType

__all__ = ["signals_held", "termination_as_interrupt"]

_TERMINATION = (signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def termination_as_interrupt() -> Iterator[None]:
    """SIGTERM and SIGHUP raise KeyboardInterrupt meanwhile (in the main thread, the only one
    Python runs handlers in; elsewhere this does nothing)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(_signum: int, _frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = {s: signal.signal(s, handler) for s in _TERMINATION}
    try:
        yield
    finally:
        for s, old in previous.items():
            signal.signal(s, old)


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """Ctrl-C, SIGTERM and SIGHUP wait until the block ends (they are blocked, not lost: one
    that came meanwhile takes effect then)."""
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, *_TERMINATION})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
