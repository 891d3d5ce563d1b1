import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
# The generators under models/ are plain scripts next to the package, not part of it.
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


@pytest.fixture
def shared_dir():
    if not SHARED.is_dir():
        pytest.skip("shared peer cases are not next to the checkout")
    return SHARED


@pytest.fixture(autouse=True)
def _signal_handlers_restored():
    """Every test leaves SIGINT, SIGTERM and SIGALRM as it found them (and no alarm armed).
    Several tests signal the test process itself to check that work is kept; a handler left
    at SIG_DFL by an earlier test (a command entered and left in-process) would make such a
    signal end the whole run with exit 130 and no report."""
    import signal

    kept = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGALRM)}
    yield
    if hasattr(signal, "setitimer"):
        signal.setitimer(signal.ITIMER_REAL, 0)
    for s, handler in kept.items():
        if handler is not None and signal.getsignal(s) is not handler:
            signal.signal(s, handler)


# CPSCHED_TEST_TIMES=FILE: one line per test, "wall_s cpu_s nodeid" (cpu: this process and
# the children it waited for, user + system), to find where the suite's time goes on a
# shared machine, where wall times say more about the load than about the test.
_TIMES = os.environ.get("CPSCHED_TEST_TIMES")


def _cpu_seconds() -> float:
    import resource

    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(
        resource.RUSAGE_CHILDREN
    )
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


if _TIMES:

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(item, nextitem):
        import time

        wall, cpu = time.perf_counter(), _cpu_seconds()
        yield
        with open(_TIMES, "a") as out:
            out.write(f"{time.perf_counter() - wall:.3f} {_cpu_seconds() - cpu:.3f} {item.nodeid}\n")


@pytest.fixture
def loaded_clock(monkeypatch):
    """A loaded machine simulated: once ``loaded_clock()`` is called, every
    ``time.perf_counter()`` call reads a second later than the last one did."""
    import time

    def start() -> None:
        real = time.perf_counter
        calls = [0]

        def fast() -> float:
            calls[0] += 1
            return real() + 1.0 * calls[0]

        monkeypatch.setattr(time, "perf_counter", fast)

    return start
