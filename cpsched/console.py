"""The ``cpsched`` console script (and ``python -m cpsched``): what happens before anything
slow.

A command's ``--time-limit`` counts from the process's start, and a signal must end it
cleanly from the first moment. So this module, which imports only the standard library
and two small cpsched modules, first notes the start time and takes SIGINT and SIGTERM
(``cpsched.core.signals``: 130 / 143 and one line, never a traceback), answers
``--version`` on its own, and only then loads the command line proper (``cpsched.cli``,
which brings the readers, the solvers and OR-Tools).
"""

from __future__ import annotations

import importlib
import math
import os
import sys
import types

from cpsched.core import signals
from cpsched.core.process import process_start
from cpsched.version import version_line

# Commands whose helpers (worker pools, Ray) clean up at the interpreter's exit
SLOW_EXIT = ("sweep", "capture")
# Commands whose --time-limit bounds the whole command
SOLVING = ("schedule", "compare", "frontier", "pipeline")


def main() -> int:
    started = process_start()
    signals.install()
    _closed_streams_to_devnull()
    argv = sys.argv[1:]
    try:
        if argv == ["--version"]:
            print(version_line())
            return 0
        # a second of imports on a loaded machine counts too: the hard stop of a solving
        # command is armed now (the command line sets it again once it has parsed its
        # arguments, or takes it away where no limit applies)
        signals.arm(_early_stop(argv, started))
        _import_cp_model_without_pandas()
        # loaded here, after the handlers, rather than at the top of this module
        cli = importlib.import_module("cpsched.cli")
        signals.check()  # a signal an import turned into an ImportError (and we retried)
        code = int(cli.main(argv, started=started))
    except KeyboardInterrupt:
        code = signals.exit_code()
        print(
            f"cpsched: {'terminated' if code == 143 else 'interrupted'} before a result was "
            "returned; nothing written",
            file=sys.stderr,
        )
    except signals.TimeUp:  # while loading: the command line's own message, shorter
        code = 2
        print(
            "cpsched: error: the time limit ran out while cpsched was starting; nothing "
            "written; a longer --time-limit gives the solver time",
            file=sys.stderr,
        )
    if not argv or argv[0] not in SLOW_EXIT:
        _exit_now(code)
    return code


def _closed_streams_to_devnull() -> None:
    """A standard stream closed by the caller (``cpsched ... >&-``) is None here: the
    report is not wanted, the command's files still are, so it goes to the null device."""
    for name in ("stdout", "stderr"):
        if getattr(sys, name) is None:
            setattr(sys, name, open(os.devnull, "w"))  # noqa: SIM115 - lives as long as we do


def _early_stop(argv: list[str], started: float) -> float | None:
    """The hard stop of a solving command, from its ``--time-limit`` as typed (None when
    there is none to read, or limits are work units)."""
    if not argv or argv[0] not in SOLVING or "--deterministic" in argv:
        return None
    method = _option(argv, "--method")
    if method is not None and not (
        method in ("cp", "cp-memory", "all") or method.startswith("cp-")
    ):
        return None  # a heuristic: no time limit
    text = _option(argv, "--time-limit")
    if text is None:
        return None
    try:
        limit = float(text)
    except ValueError:
        return None  # the command line says what is wrong with it
    return started + signals.stop_after(limit) if 0 < limit < math.inf else None


def _option(argv: list[str], name: str) -> str | None:
    """The value of option ``name`` as typed (``--name V`` or ``--name=V``), else None."""
    for k, arg in enumerate(argv):
        if arg == name and k + 1 < len(argv):
            return argv[k + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return None


def _exit_now(code: int) -> None:
    """End the process without the interpreter's teardown, which frees every object one by
    one (0.9 s after a 100,000-op graph, counted against the time limit). The command's
    files are written and closed by now; only the standard streams need flushing."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    os._exit(code)


def _import_cp_model_without_pandas() -> None:
    """Import OR-Tools' ``cp_model`` without pandas where nothing has loaded it yet.

    ``cp_model`` imports pandas (about 0.3 s of a 2-core machine's time, a sixth of a
    2-second limit) only for its ``*_series`` helpers, which cpsched never calls; its module
    body reads two names of it. In this process, which runs no user code, a stand-in with
    those two names serves that import and is removed right after, so that anything that
    needs pandas (a Parquet table) imports the real one. Any failure falls back to the plain
    import."""
    if "pandas" in sys.modules or "ortools.sat.python.cp_model" in sys.modules:
        return
    stand_in = types.ModuleType("pandas")
    stand_in.Index = type("Index", (), {})  # type: ignore[attr-defined]
    stand_in.Series = type("Series", (), {})  # type: ignore[attr-defined]
    sys.modules["pandas"] = stand_in
    try:
        importlib.import_module("ortools.sat.python.cp_model")
    except Exception:  # noqa: BLE001 - another OR-Tools: the plain import below decides
        sys.modules.pop("ortools.sat.python.cp_model", None)
    finally:
        if sys.modules.get("pandas") is stand_in:
            del sys.modules["pandas"]


if __name__ == "__main__":
    sys.exit(main())
