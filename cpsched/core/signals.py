"""SIGINT and SIGTERM: what a signal does depends on whether work that can be kept is running.

Inside a ``keep_work()`` block (a solver pipeline, ``compare``'s rows, ``frontier``'s
points) the first signal only records itself: the work in progress sees ``received()``,
stops and returns the best it found, which the command writes marked ``interrupted``.
Anywhere else (start-up, reading the input, a heuristic) it raises ``Interrupted``, a
``KeyboardInterrupt``, and the command ends with nothing written. A second signal always
raises. The command line exits 130 after SIGINT and 143 after SIGTERM (``exit_code``).

``command()`` takes both signals for a whole command, so that a signal in one phase (a
method's first phase, a percentage budget's reference) still stops the phases after it; the command line's
entry point installs the handlers first of all (``install``), before anything slow is
imported. Outside a command (the Python API) ``keep_work()`` takes SIGINT for its own
duration and forgets it afterwards. Signals are handled in the main thread only, and a
signal ignored on entry (a shell's background job, ``nohup``) stays ignored.

The command's time limit ends it the same way (``time_limit``: a SIGALRM at its deadline
raises ``TimeUp`` outside ``keep_work``, where no solver watches the clock; reading a large
input, say).

This module imports nothing but the standard library: the command line loads it before
anything else.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections.abc import Iterator, Mapping
from typing import Any

__all__ = [
    "Interrupted",
    "TimeUp",
    "time_limit",
    "arm",
    "stop_after",
    "install",
    "note_early",
    "raise_early",
    "command",
    "keep_work",
    "received",
    "check",
    "exit_code",
    "SignalState",
    "HANDLED",
]

HANDLED = (signal.SIGINT, signal.SIGTERM)
_EXIT: dict[int, int] = {int(signal.SIGINT): 130, int(signal.SIGTERM): 143}


class Interrupted(KeyboardInterrupt):
    """A signal ended the command where no work could be kept; ``signum`` says which."""

    def __init__(self, signum: int = signal.SIGINT):
        super().__init__(signal.Signals(signum).name)
        self.signum = int(signum)


class TimeUp(BaseException):
    """The command's time limit passed where no work could be kept (reading the input).
    A ``BaseException``, so that no ``except Exception`` on the way turns it into an input
    error."""


_lock = threading.RLock()
_received: list[int] = []  # the signals taken so far, in order
_keep_depth = 0  # open keep_work() blocks
_command_depth = 0  # open command() blocks (and install())
_saved: dict[int, Any] = {}  # handlers to put back when the outermost block ends


def received() -> int | None:
    """The first signal taken in this command (or ``keep_work`` block), else None."""
    return _received[0] if _received else None


def check() -> None:
    """Raise ``Interrupted`` if a signal came (code that cannot keep work calls it where a
    signal may have been caught on the way, e.g. by an import)."""
    first = received()
    if first is not None:
        raise Interrupted(first)


def exit_code(signum: int | None = None) -> int:
    """130 for SIGINT, 143 for SIGTERM (the first signal taken, by default)."""
    s = received() if signum is None else signum
    return _EXIT.get(int(s) if s is not None else signal.SIGINT, 130)


class SignalState(Mapping):
    """``{"signal": the first signal taken, or None}``, read when asked (what a command hands
    to the parts that decide their own exit code)."""

    def __getitem__(self, key: str) -> int | None:
        if key != "signal":
            raise KeyError(key)
        return received()

    def __iter__(self) -> Iterator[str]:
        return iter(("signal",))

    def __len__(self) -> int:
        return 1


def _on_signal(signum: int, frame: Any) -> None:
    _received.append(int(signum))
    if _keep_depth == 0 or len(_received) > 1:
        raise Interrupted(_received[0])


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def _take(signums: tuple[int, ...]) -> None:
    for s in signums:
        # a signal ignored on entry stays ignored (a shell's background job, nohup)
        if s not in _saved and signal.getsignal(s) is not signal.SIG_IGN:
            _saved[s] = signal.signal(s, _on_signal)


def _give_back() -> None:
    for s, old in _saved.items():
        signal.signal(s, old if old is not None else signal.SIG_DFL)
    _saved.clear()


# signals noted while the package itself was being imported for the command line, before
# its handlers existed (``note_early``); the console ends the command on them at once
_early: list[int] = []


def _note(signum: int, frame: Any) -> None:
    _early.append(int(signum))


def note_early() -> None:
    """Until ``install``: SIGINT and SIGTERM are only noted. The package's import calls this
    when it starts the command line, so that a signal during that import (milliseconds, or
    much more on a loaded machine) gives the command's one line, not a traceback."""
    if not _main_thread():
        return
    for s in HANDLED:
        if signal.getsignal(s) is not signal.SIG_IGN:
            signal.signal(s, _note)


def raise_early() -> None:
    """Raise ``Interrupted`` for a signal ``note_early`` noted (after ``install``)."""
    if _early:
        _received.append(_early[0])
        raise Interrupted(_early[0])


def install() -> None:
    """Take SIGINT and SIGTERM for the rest of the process (the console script's first
    step). Equivalent to entering a ``command()`` block that never ends."""
    global _command_depth
    if not _main_thread():
        return
    with _lock:
        _command_depth += 1
        _take(HANDLED)


@contextlib.contextmanager
def command() -> Iterator[None]:
    """One command's run: SIGINT and SIGTERM taken, a signal remembered until it ends."""
    global _command_depth
    if not _main_thread():
        yield
        return
    with _lock:
        if _command_depth == 0:
            _received.clear()
        _command_depth += 1
        _take(HANDLED)
    try:
        yield
    finally:
        with _lock:
            _command_depth -= 1
            if _command_depth == 0:
                if _keep_depth == 0:
                    _give_back()
                _received.clear()


def _on_alarm(signum: int, frame: Any) -> None:
    if _keep_depth == 0:
        raise TimeUp()
    # work in progress watches the deadline itself and returns its best in time


def stop_after(limit: float) -> float:
    """Seconds after its start at which a command with time limit ``limit`` stops if no
    solver is running (reading a large input, say): the limit and half its tolerance,
    max(1 s, 5 %) (a long read, one JSON parse of seconds, ends before the alarm is seen)."""
    return float(limit) + 0.5 * max(1.0, 0.05 * float(limit))


def arm(at: float | None) -> None:
    """From now on the command's hard stop is ``at`` (``time.perf_counter()``; None: none):
    past it, outside ``keep_work``, ``TimeUp`` is raised."""
    if not _main_thread() or not hasattr(signal, "setitimer"):
        return
    if at is None:
        signal.setitimer(signal.ITIMER_REAL, 0)
        return
    signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, max(1e-3, at - time.perf_counter()))


@contextlib.contextmanager
def time_limit(at: float | None) -> Iterator[None]:
    """Until the block ends the command's hard stop is ``at`` (``arm``; None disarms one
    set earlier). Inside ``keep_work`` the work itself stops in time and nothing is
    raised. No-op outside the main thread."""
    if not _main_thread() or not hasattr(signal, "setitimer"):
        yield
        return
    old = signal.getsignal(signal.SIGALRM)
    arm(at)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old if old is not None else signal.SIG_DFL)


@contextlib.contextmanager
def keep_work() -> Iterator[None]:
    """Work whose best result so far is worth keeping: inside, the first signal only sets
    ``received()``. Blocks nest. Outside a ``command()``, SIGINT is taken for the block's
    duration and the state is cleared when the outermost block ends."""
    global _keep_depth
    if not _main_thread():
        yield
        return
    with _lock:
        if _keep_depth == 0 and _command_depth == 0:
            _received.clear()
            _take((signal.SIGINT,))
        _keep_depth += 1
    try:
        yield
    finally:
        with _lock:
            _keep_depth -= 1
            if _keep_depth == 0 and _command_depth == 0:
                _give_back()
                _received.clear()
