"""Signals keep work: SIGINT / SIGTERM end every command with 130 / 143 and one line, from
the first moments of the process on; a solver's best result is written marked interrupted,
``compare`` keeps its finished rows and ``frontier`` its finished points, and a signal in a
percentage budget's reference solve stops the run instead of being swallowed."""

from __future__ import annotations

import importlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cpsched import api
from cpsched.cli import main
from cpsched.core import signals
from cpsched.core.scenarios import from_dim_specs
from cpsched.generators import layered, random_layered, transformer_parallel
from cpsched.writers.json_graph import graph_to_dict

REPO = Path(__file__).resolve().parents[1]
# the registry module (``cpsched.methods``, the name, is the API's listing function)
registry = importlib.import_module("cpsched.methods")

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="POSIX signals and /proc (Linux only)"
)


def write_graph(path: Path, g) -> Path:
    """``g`` as cpsched JSON; a symbolic graph with one scenario (b=2, s=256) inside."""
    sc = from_dim_specs([f"{d}={dict(b=2, s=256).get(d, 2)}" for d in g.dims]) if g.dims \
        else None
    path.write_text(json.dumps(graph_to_dict(g, sc)))
    return path


def caught(pid: int) -> int:
    """The mask of signals the process has handlers for (/proc/PID/status, SigCgt)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("SigCgt:"):
                return int(line.split()[1], 16)
    except (OSError, ValueError):
        pass
    return 0


def start(args: list[str]) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    # as from a terminal: a background job may inherit SIGINT ignored, restore the default
    return subprocess.Popen([sys.executable, "-m", "cpsched", *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def when_handled(p: subprocess.Popen, timeout: float = 60.0) -> None:
    """Wait until the child has its SIGINT and SIGTERM handlers (the console's first step)."""
    want = (1 << (signal.SIGINT - 1)) | (1 << (signal.SIGTERM - 1))
    end = time.monotonic() + timeout
    while caught(p.pid) & want != want:
        assert p.poll() is None and time.monotonic() < end, "the handlers never came"
        time.sleep(0.002)


@pytest.mark.parametrize("sig,code,word", [(signal.SIGINT, 130, "interrupted"),
                                           (signal.SIGTERM, 143, "terminated")])
def test_a_signal_while_starting_and_reading_ends_with_one_line(tmp_path, sig, code, word):
    src = write_graph(tmp_path / "g.json", layered(20000, seed=1))
    out = tmp_path / "o.json"
    p = start(["schedule", str(src), "-o", str(out), "--time-limit", "60"])
    when_handled(p)  # before the imports (a second of them) and the reading
    p.send_signal(sig)
    stdout, stderr = p.communicate(timeout=120)
    assert p.returncode == code, stderr
    assert "Traceback" not in stderr and len(stderr.strip().splitlines()) == 1
    assert word in stderr and "nothing written" in stderr
    assert not out.exists()


def test_the_console_takes_the_signals_before_anything_slow():
    code = ("import sys; import cpsched.console, cpsched.core.signals; "
            "print(sorted(m for m in ('numpy', 'ortools', 'pandas', 'networkx', 'cpsched.api')"
            " if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO,
                       env=dict(os.environ, PYTHONPATH=str(REPO)), timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "[]", r.stdout + r.stderr


def test_version_needs_nothing_heavy():
    r = subprocess.run([sys.executable, "-X", "importtime", "-m", "cpsched", "--version"],
                       capture_output=True, text=True, cwd=REPO, timeout=60,
                       env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert r.returncode == 0 and r.stdout.startswith("cpsched ")
    loaded = {line.split("|")[-1].strip() for line in r.stderr.splitlines() if "|" in line}
    assert not loaded & {"numpy", "ortools", "pandas", "cpsched.api", "cpsched.cli"}


@pytest.fixture
def signal_in_the_reference(monkeypatch):
    """The percentage budget's reference (``api.budget_reference``: the input order's peak)
    sends ``signal`` to the process once, then measures as usual."""
    real = api.budget_reference
    sent = {}

    def fn(graph, scenarios):
        if not sent.get("done"):
            sent["done"] = True
            os.kill(os.getpid(), sent["signal"])
        return real(graph, scenarios)

    monkeypatch.setattr(api, "budget_reference", fn)
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield sent
    signal.signal(signal.SIGINT, old)


@pytest.mark.parametrize("objective", ["remat", "time"])
@pytest.mark.parametrize("sig,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_in_the_budget_reference_stops_the_run(tmp_path, capsys, objective, sig, code,
                                                        signal_in_the_reference):
    signal_in_the_reference["signal"] = sig
    g = transformer_parallel(layers=1, dp=2, tp=2) if objective == "time" else \
        random_layered(n=60, seed=2)
    src = write_graph(tmp_path / "g.json", g)
    out = tmp_path / "o.json"
    t0 = time.perf_counter()
    rc = main(["schedule", str(src), "-o", str(out), "--objective", objective, "--budget",
               "90%", "--time-limit", "120"])
    err = capsys.readouterr().err
    assert rc == code and "nothing written" in err and "Traceback" not in err
    assert not out.exists() and not Path(str(out) + ".plan.json").exists()
    assert time.perf_counter() - t0 < 60  # the solve after the reference never ran its limit


@pytest.fixture
def signalling_method():
    """A memory heuristic that sends SIGINT while it runs (the row a signal cuts)."""

    def fn(graph, scenarios, **options):
        os.kill(os.getpid(), signal.SIGINT)
        return graph.default_order()

    registry.register("zz-test-signal", "test only", "memory")(fn)
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, old)
    registry._REGISTRY.pop("zz-test-signal", None)


def test_compare_keeps_the_finished_rows(tmp_path, capsys, signalling_method):
    src = write_graph(tmp_path / "g.json", random_layered(n=30, seed=1))
    rc = main(["compare", str(src), "--time-limit", "20", "--json"])
    captured = capsys.readouterr()
    assert rc == 130 and "interrupted" in captured.err
    d = json.loads(captured.out)
    rows = [r["method"] for r in d["rows"]]
    assert rows[-1] == "zz-test-signal" and "xla-dfs" in rows  # the rows before it
    assert "cp-memory" not in rows  # after the signal: not run
    assert "cp-memory" in d["reproduce"]["interrupted"]["not_run"]


def test_frontier_keeps_the_finished_points(tmp_path):
    src = write_graph(tmp_path / "g.json", transformer_parallel(layers=2, dp=2, tp=2))
    # four solves (the range's two, two points) share 16 s: the second point is cut
    p = start(["frontier", str(src), "--points", "2", "--time-limit", "16"])
    try:
        for line in p.stderr:  # progress: one line per point, once the range is known
            if line.startswith("point 2/"):
                break
        p.send_signal(signal.SIGINT)
        stdout, stderr = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 130 and "Traceback" not in stderr
    assert "the points solved so far were written" in stderr
    assert "memory-time frontier" in stdout


def test_keep_work_forgets_a_signal_outside_a_command():
    """In the Python API (no command), a SIGINT inside ``keep_work`` stops that work only."""
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with signals.keep_work():
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(1000):
                if signals.received() is not None:
                    break
                time.sleep(0.001)
            assert signals.received() == signal.SIGINT
        assert signals.received() is None
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, old)


def test_api_schedule_raises_when_a_signal_stops_the_reference(signal_in_the_reference):
    signal_in_the_reference["signal"] = signal.SIGINT
    g = random_layered(n=40, seed=3)
    with pytest.raises(KeyboardInterrupt):
        api.schedule(g, objective="remat", budget="90%", time_limit=60)


def _as_from_a_terminal():
    # a background job (CI, nohup) inherits SIGINT ignored, and Python then installs no
    # handler for it: the child starts as from a terminal
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("sig,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_while_the_package_imports_ends_the_command_in_one_line(tmp_path, sig, code):
    # the package's own import (before the console's handlers: the method registry, and on a
    # loaded machine a long time) notes a signal; the console then ends with its one line.
    # The signal is sent from inside that window: argv as ``python -m cpsched`` has it while
    # the package is imported, then the signal, then the console's main.
    src = (
        "import os, signal, sys\n"
        "sys.argv = ['-m', 'info', 'x.json']\n"
        "import cpsched\n"
        f"os.kill(os.getpid(), {int(sig)})\n"
        "sys.argv = ['cpsched', 'info', 'x.json']\n"
        "from cpsched.console import main\n"
        "sys.exit(main())\n"
    )
    r = subprocess.run([sys.executable, "-c", src], capture_output=True, text=True,
                       cwd=tmp_path, timeout=120, preexec_fn=_as_from_a_terminal)
    assert r.returncode == code
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "before a result was returned; nothing written" in lines[0]
    assert list(tmp_path.iterdir()) == []


def test_importing_the_package_as_a_library_leaves_the_signal_handlers_alone():
    r = subprocess.run([sys.executable, "-c", "import signal, cpsched\n"
                        "print(signal.getsignal(signal.SIGINT) is signal.default_int_handler,"
                        " signal.getsignal(signal.SIGTERM) == signal.SIG_DFL)"],
                       capture_output=True, text=True, cwd=REPO, timeout=120,
                       preexec_fn=_as_from_a_terminal)
    assert r.stdout.split() == ["True", "True"]
