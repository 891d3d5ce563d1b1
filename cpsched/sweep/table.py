"""The results table: one CSV line per solve, appended as solves finish.

Each line is written with one ``write`` call (unbuffered), and the rows that finished
together are then flushed to disk with one ``fsync``, so a sweep killed at any moment
leaves every finished row intact and at most a torn last line, which
the next run trims before it appends. A write that fails (a full disk) is cut back to the
last whole row before the error is reported, and a new table starts as a whole header
line, so no run leaves a torn or empty table. One sweep at a time writes a table: the
writer holds an exclusive lock on it, and a second one is refused. Rows never span lines (newlines in messages become
spaces), so a torn line is always the last one. A ``.parquet`` output (needs pyarrow) is
written from the CSV journal beside it (``OUT.journal.csv``) at the end of each run.
"""

from __future__ import annotations

import contextlib
import csv
import io
import os
import re
import tempfile
from collections.abc import Iterable, Mapping
from typing import Any

from cpsched.core.errors import InputError
from cpsched.writers import check_target, write_bytes

COLUMNS = (
    "key",
    "graph",
    "n_ops",
    "method",
    "options",
    "scenario",
    "seed",
    "time_limit",
    "status",
    "peak_bytes",
    "bound",
    "gap",
    "makespan",
    "wall_s",
    "error",
)
HEADER = ",".join(COLUMNS) + "\n"
ERROR = "ERROR"  # the status of a solve that failed (its message is in ``error``)


def journal_path(path: str) -> str:
    """The CSV the rows are appended to: ``path`` itself, or beside a Parquet output."""
    return path + ".journal.csv" if is_parquet(path) else path


def is_parquet(path: str) -> bool:
    return path.lower().endswith((".parquet", ".pq"))


def require_pyarrow(path: str) -> None:
    import importlib.util

    if is_parquet(path) and importlib.util.find_spec("pyarrow") is None:
        raise InputError(
            "a .parquet table needs pyarrow (pip install pyarrow); or give a .csv path",
            path=path,
        )


def _create_with_header(path: str) -> bool:
    """Make the table with its header line in one step (a temporary file linked into
    place), so that it never exists empty; False when it exists already."""
    if os.path.lexists(path):
        return False
    folder = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(path)}.", suffix=".tmp")
    except OSError as e:
        raise InputError(f"cannot write: {e.strerror}", path=path) from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(HEADER.encode())
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.link(tmp, path)  # fails if another run made it meanwhile: then theirs is used
        return True
    except FileExistsError:
        return False
    except OSError as e:
        raise InputError(f"cannot write: {e.strerror}", path=path) from None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def _lock(fd: int, path: str) -> None:
    """An exclusive lock on the table for this run, or an ``InputError`` when another
    sweep holds it (two writers would both run and append every row twice)."""
    try:
        import fcntl
    except ImportError:  # no advisory locks on this platform
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise InputError(
            "another sweep is writing this table; wait for it to finish or give another -o",
            path=path,
        ) from None
    except OSError:  # a file system without locks (some network mounts): go on unlocked
        return


def _values(row: Mapping[str, Any]) -> list[str]:
    values = []
    for c in COLUMNS:
        v = row.get(c)
        text = "" if v is None else str(v)
        # one row, one line: no line breaks inside a field
        values.append(" ".join(text.split()) if c == "error" else re.sub(r"[\r\n]", " ", text))
    return values


def _line(values: list[str]) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(values)
    return buf.getvalue()


class ResultsTable:
    """Rows already in the table (by key) and an append handle for new ones."""

    def __init__(self, path: str, inputs: Iterable[str] = (), write: bool = True):
        """``write=False`` only reads (a torn last line is skipped, not trimmed)."""
        self.path = path
        self.journal = journal_path(path)
        self.trimmed = 0  # bytes of a torn last line removed on opening
        self.rows: dict[str, dict[str, str]] = {}
        self.duplicates = 0
        self._fd = -1
        self.created = False  # this run made the table (and takes it away if no row lands)
        self.appended = 0
        self.lines_at_open = 0
        inputs = tuple(inputs)
        check_target(self.journal, inputs, "-o")
        if self.journal != path:
            check_target(path, inputs, "-o")
        if not write:
            self._read(write)
            return
        self.created = _create_with_header(self.journal)
        try:
            self._fd = os.open(self.journal, os.O_WRONLY | os.O_APPEND)
        except OSError as e:
            raise InputError(f"cannot write: {e.strerror}", path=self.journal) from None
        try:
            _lock(self._fd, self.journal)
            self._read(write)  # under the lock: no other run appends meanwhile
            if os.fstat(self._fd).st_size == 0:  # a table left empty by an old version
                self._write(HEADER)
            self.lines_at_open = self.lines()
        except BaseException:
            self.close()
            raise

    def _read(self, write: bool) -> None:
        try:
            with open(self.journal, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            return
        except OSError as e:
            raise InputError(
                f"cannot read the results table: {e.strerror}", path=self.journal
            ) from None
        if not data:
            return
        end = data.rfind(b"\n") + 1
        if end < len(data):
            # a torn last line (the sweep was killed while writing it): cut it off
            self.trimmed = len(data) - end
            data = data[:end]
        if self.trimmed and write:
            with open(self.journal, "r+b") as f:
                f.truncate(end)
                f.flush()
                os.fsync(f.fileno())
        if not data:
            return
        text = data.decode("utf-8", errors="replace")
        lines = [ln + "\n" for ln in text[:-1].split("\n")]
        if lines[0] != HEADER:
            raise InputError(
                "not a cpsched sweep table (its header differs); give another output path",
                path=self.journal,
                line=1,
            )
        for lineno, line in enumerate(lines[1:], start=2):
            fields = next(csv.reader([line]))
            if len(fields) != len(COLUMNS):
                raise InputError(
                    f"not a sweep row ({len(fields)} fields, expected {len(COLUMNS)})",
                    path=self.journal,
                    line=lineno,
                )
            row = dict(zip(COLUMNS, fields))
            if row["key"] in self.rows:
                self.duplicates += 1
            self.rows[row["key"]] = row

    def _write(self, text: str, sync: bool = True) -> None:
        data = text.encode("utf-8")
        size = os.fstat(self._fd).st_size
        try:
            while data:
                n = os.write(self._fd, data)
                data = data[n:]
        except OSError as e:
            # a full disk: cut the part of this line that made it, so the table ends on a
            # whole row, and stop the sweep (its rows so far are kept; a rerun goes on)
            os.ftruncate(self._fd, size)
            raise InputError(
                f"cannot append to the results table: {e.strerror}; "
                f"{self.appended} new row(s) kept, run the same command again to go on",
                path=self.journal,
            ) from None
        if sync:
            self.sync()

    def sync(self) -> None:
        """Rows written so far survive a crash of the machine too (a killed process loses
        nothing that ``write`` returned)."""
        try:
            os.fsync(self._fd)
        except OSError as e:
            raise InputError(
                f"cannot write the results table to disk: {e.strerror}", path=self.journal
            ) from None

    def append(self, row: Mapping[str, Any], sync: bool = True) -> None:
        """Add one finished solve: one line, in one ``write``; on disk when this returns
        (``sync=False``: after the next ``sync``, for rows that finished together)."""
        values = _values(row)
        self._write(_line(values), sync)
        self.appended += 1
        self.rows[values[0]] = dict(zip(COLUMNS, values))

    def lines(self) -> int:
        """Whole lines in the table now (the header included)."""
        try:
            with open(self.journal, "rb") as f:
                return f.read().count(b"\n")
        except OSError:
            return 0

    def close(self) -> None:
        """Release the table (and its lock); a table this run made and wrote no row to
        is taken away again."""
        if self._fd >= 0:
            if self.created and self.lines() <= 1:  # the header alone
                with contextlib.suppress(OSError):
                    os.unlink(self.journal)
            os.close(self._fd)
            self._fd = -1

    def write_parquet(self, inputs: Iterable[str] = ()) -> None:
        """The whole table as Parquet at ``path`` (atomically), when ``path`` asks for it."""
        if not is_parquet(self.path):
            return
        import pyarrow as pa
        import pyarrow.parquet as pq

        rows = list(self.rows.values())
        ints, floats = (
            ("n_ops", "seed", "peak_bytes", "bound"),
            ("time_limit", "gap", "makespan", "wall_s"),
        )
        arrays = {}
        for c in COLUMNS:
            values = [r[c] for r in rows]
            if c in ints:
                arrays[c] = pa.array([int(v) if v else None for v in values], type=pa.int64())
            elif c in floats:
                arrays[c] = pa.array([float(v) if v else None for v in values], type=pa.float64())
            else:
                arrays[c] = pa.array(values, type=pa.string())
        sink = pa.BufferOutputStream()
        pq.write_table(pa.table(arrays), sink)
        write_bytes(self.path, sink.getvalue().to_pybytes(), tuple(inputs))
