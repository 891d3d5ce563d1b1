"""Input files read safely: only regular files, no larger than a limit, UTF-8 (a BOM is
fine), JSON with strict numbers. Every failure is an ``InputError`` (one line, exit 2)."""

from __future__ import annotations

import gzip
import json
import math
import os
import stat
import zlib

from cpsched.core.errors import InputError

# A file larger than this is refused before reading (``CPSCHED_MAX_INPUT_BYTES`` overrides):
# HLO dumps of the largest models are a few hundred MB; 4 GiB is a mistake, not a graph.
MAX_INPUT_BYTES = 4 << 30
BOM = "\ufeff"


def max_input_bytes() -> int:
    text = os.environ.get("CPSCHED_MAX_INPUT_BYTES", "")
    try:
        return int(text) if text.strip() else MAX_INPUT_BYTES
    except ValueError:
        raise InputError(f"CPSCHED_MAX_INPUT_BYTES={text!r}: expected a number of bytes") from None


def check_input_file(path: str) -> int:
    """Refuse, before reading, what is not a regular file (``/dev/zero``, a FIFO, a folder)
    or is larger than ``max_input_bytes()``. Returns the size."""
    try:
        st = os.stat(path)
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror}", path=path) from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError("cannot read: Is a directory", path=path)
    if not stat.S_ISREG(st.st_mode):
        raise InputError("not a regular file (a device, FIFO or socket); give a file", path=path)
    limit = max_input_bytes()
    if st.st_size > limit:
        raise InputError(
            f"file is {st.st_size:,} bytes, over the {limit:,}-byte limit "
            "(set CPSCHED_MAX_INPUT_BYTES to raise it)",
            path=path,
        )
    return st.st_size


GZIP_MAGIC = b"\x1f\x8b"


def is_gzip(path: str) -> bool:
    """Whether ``path`` is gzip-compressed (by its first bytes, whatever its name)."""
    try:
        with open(path, "rb") as f:
            return f.read(2) == GZIP_MAGIC
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror}", path=path) from None


def read_bytes(path: str, limit: int | None = None) -> bytes:
    """An input file's bytes (at most ``limit`` of them), checked first
    (``check_input_file``) and gunzipped when it is gzip-compressed (``foo.hlo.gz``); the
    uncompressed size is held to the same limit as files."""
    check_input_file(path)
    cap = max_input_bytes()
    want = cap + 1 if limit is None else min(limit, cap + 1)
    try:
        if is_gzip(path):
            with gzip.open(path, "rb") as f:
                raw = f.read(want)
        else:
            with open(path, "rb") as f:
                raw = f.read(want)
    except (OSError, EOFError, zlib.error) as e:
        reason = getattr(e, "strerror", None) or str(e) or type(e).__name__
        raise InputError(f"cannot read: {reason}", path=path) from None
    if limit is None and len(raw) > cap:
        raise InputError(
            f"larger than {cap} bytes uncompressed (CPSCHED_MAX_INPUT_BYTES raises the limit)",
            path=path,
        )
    return raw


def read_text(path: str) -> str:
    """A text file's content, checked first (``check_input_file``); UTF-8, a BOM dropped."""
    raw = read_bytes(path)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise InputError(
            f"not UTF-8 text (byte 0x{raw[e.start]:02x}); is this a binary file?",
            path=path,
            line=line,
        ) from None


def load_json(path: str):
    """A JSON file's content: UTF-8 (a BOM is fine), strict numbers (``NaN``, ``Infinity``
    and numbers too large for a float are errors)."""
    return loads_json(read_text(path), path)


def _bad_constant(name: str):
    raise ValueError(f"{name} is not a number JSON allows")


def _finite_float(text: str) -> float:
    v = float(text)
    if not math.isfinite(v):
        raise ValueError(f"{text} is too large for a number")
    return v


def loads_json(text: str, path: str | None = None):
    """``json.loads`` with the checks of ``load_json``; errors are ``InputError``."""
    try:
        return json.loads(text.lstrip(BOM), parse_constant=_bad_constant, parse_float=_finite_float)
    except json.JSONDecodeError as e:
        raise InputError(f"bad JSON: {e.msg}", path=path, line=e.lineno, column=e.colno) from None
    except ValueError as e:  # from the number hooks
        raise InputError(f"bad JSON: {e}", path=path) from None
    except RecursionError:
        raise InputError("bad JSON: nested too deeply", path=path) from None
