"""Back ends: graphs and schedules out of the IR.

Every file goes through ``write_bytes``: never over one of the user's inputs, only over a
regular file (a FIFO, device node or symlink is refused, so that ``-o /dev/sda`` or a link
into someone else's data cannot be followed), written to a temporary file in the target's
folder and renamed over the target, so an interrupted write leaves the old file intact.

A command writes several files (``-o`` and ``--trace``; a remat module, its bucket modules
and the plan JSON): inside ``all_or_nothing()`` every file is only staged under a
temporary name, and all of them are renamed into place together when the block ends
without an error. A failure on any file (a full disk, a folder made read-only) leaves
every older output as it was and no new file behind.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import os
import signal
import stat
import tempfile
import threading
from collections.abc import Iterable, Iterator

from cpsched.core.errors import InputError


def _same(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def check_target(path: str, inputs: Iterable[str | None] = (), option: str = "") -> None:
    """Refuse ``path`` as an output if it is (or links to) one of ``inputs``, is not a
    regular file, is a symlink, or its folder does not exist or cannot be written."""
    what = f"{option}: " if option else ""
    for src in inputs:
        if src and os.path.lexists(src) and os.path.lexists(path) and _same(path, src):
            raise InputError(f"{what}refusing to overwrite the input file {src}", path=path)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise InputError(f"{what}cannot write: {e.strerror}", path=path) from None
    if st is not None:
        if stat.S_ISDIR(st.st_mode):
            raise InputError(f"{what}is a directory", path=path)
        if stat.S_ISLNK(st.st_mode):
            raise InputError(
                f"{what}is a symbolic link; give the file itself or a new path", path=path
            )
        if not stat.S_ISREG(st.st_mode):
            raise InputError(
                f"{what}is not a regular file (a device, FIFO or socket); "
                "only a regular file or a new path is replaced",
                path=path,
            )
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise InputError(
            f"{what}directory {os.path.dirname(path) or folder} does not exist", path=path
        )
    if not os.access(folder, os.W_OK | os.X_OK) or (
        st is not None and not os.access(path, os.W_OK)
    ):
        raise InputError(f"{what}not writable", path=path)


# The files staged by the innermost active ``all_or_nothing`` block: target -> temporary.
_STAGED: contextvars.ContextVar[dict[str, str] | None] = contextvars.ContextVar(
    "cpsched_staged_outputs", default=None
)


def _unlink(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """SIGINT and SIGTERM wait while the staged files are renamed (a handful of renames):
    a signal then finds either none or all of them in place."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held = {signal.SIGINT, signal.SIGTERM}
    old = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _commit(staged: dict[str, str]) -> None:
    """Rename every staged file over its target; on a failure, put back what was there."""
    done: list[tuple[str, str | None]] = []  # (target, hard link to its old content)
    try:
        with _signals_held():
            for path, tmp in staged.items():
                backup = None
                if len(staged) > 1 and os.path.lexists(path):
                    backup = tmp + ".old"
                    os.link(path, backup)
                done.append((path, backup))
                os.replace(tmp, path)
    except OSError as e:
        for path, backup in reversed(done):
            if backup is not None:
                with contextlib.suppress(OSError):
                    os.replace(backup, path)
            elif not os.path.exists(staged[path]):  # renamed, and new: take it away again
                _unlink(path)
        for tmp in staged.values():
            _unlink(tmp)
        raise InputError(f"cannot write: {e.strerror}; no output was changed", path=path) from None
    for _, backup in done:
        if backup is not None:
            _unlink(backup)


@contextlib.contextmanager
def all_or_nothing() -> Iterator[None]:
    """Files written inside appear together when the block ends without an exception, and
    not at all otherwise (see the module docstring). Nested blocks join the outer one."""
    if _STAGED.get() is not None:
        yield
        return
    staged: dict[str, str] = {}
    token = _STAGED.set(staged)
    try:
        yield
    except BaseException:
        for tmp in staged.values():
            _unlink(tmp)
        raise
    finally:
        _STAGED.reset(token)
    _commit(staged)


def write_bytes(path: str, data: bytes, inputs: Iterable[str | None] = ()) -> None:
    """Write ``data`` to ``path`` atomically (temporary file in the same folder, then a
    rename), after ``check_target``; inside ``all_or_nothing`` the rename waits for the
    block's end."""
    check_target(path, tuple(inputs))
    folder = os.path.dirname(os.path.abspath(path))
    try:
        old_mode = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        old_mode = 0o666 & ~umask
    staged = _STAGED.get()
    key = os.path.abspath(path)
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(path)}.", suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())  # a full disk shows up here, not after the rename
        os.chmod(tmp, old_mode)
        if staged is not None:
            if key in staged:  # written twice in one command: the last one counts
                _unlink(staged[key])
            staged[key] = tmp
        else:
            os.replace(tmp, path)
        tmp = None
    except OSError as e:
        raise InputError(f"cannot write: {e.strerror}", path=path) from None
    finally:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)


def write_text(path: str, text: str, inputs: Iterable[str | None] = ()) -> None:
    """Write ``text`` (UTF-8) to ``path``, refusing to clobber any of the user's ``inputs``."""
    write_bytes(path, text.encode("utf-8"), inputs)


def write_json(path: str, data, inputs: Iterable[str | None] = ()) -> None:
    write_text(path, json.dumps(data, indent=1) + "\n", inputs)
