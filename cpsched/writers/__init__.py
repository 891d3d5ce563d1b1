"""Back ends: graphs and schedules out of the IR.

Every file goes through ``write_bytes``: never over one of the user's inputs, only over a
regular file (a FIFO, device node or symlink is refused, so that ``-o /dev/sda`` or a link
into someone else's data cannot be followed), written to a temporary file in the target's
folder and renamed over the target, so an interrupted write leaves the old file intact.
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
from collections.abc import Iterable

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


def write_bytes(path: str, data: bytes, inputs: Iterable[str | None] = ()) -> None:
    """Write ``data`` to ``path`` atomically (temporary file in the same folder, then a
    rename), after ``check_target``."""
    check_target(path, tuple(inputs))
    folder = os.path.dirname(os.path.abspath(path))
    try:
        old_mode = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        old_mode = 0o666 & ~umask
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(path)}.", suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, old_mode)
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
