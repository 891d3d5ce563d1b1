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
import os
import sys
import types

from cpsched.core import signals
from cpsched.core.process import process_start
from cpsched.version import version_line

# Commands whose helpers (worker pools, Ray) clean up at the interpreter's exit
SLOW_EXIT = ("sweep", "capture")


def main() -> int:
    started = process_start()
    signals.install()
    argv = sys.argv[1:]
    try:
        if argv == ["--version"]:
            print(version_line())
            return 0
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
    if not argv or argv[0] not in SLOW_EXIT:
        _exit_now(code)
    return code


def _exit_now(code: int) -> None:
    """End the process without the interpreter's teardown, which frees every object one by
    one (0.9 s after a 100,000-op graph, counted against the time limit). The command's
    files are written and closed by now; only the standard streams need flushing."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
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
