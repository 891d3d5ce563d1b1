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
