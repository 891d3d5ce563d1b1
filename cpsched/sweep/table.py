"""The results table: one CSV line per solve, appended as solves finish.

Each line is written with one ``write`` call (unbuffered), and the rows that finished
together are then flushed to disk with one ``fsync``, so a sweep killed at any moment
leaves every finished row intact and at most a torn last line, which
the next run trims before it appends. Rows never span lines (newlines in messages become
spaces), so a torn line is always the last one. A ``.parquet`` output (needs pyarrow) is
written from the CSV journal beside it (``OUT.journal.csv``) at the end of each run.
"""

from __future__ import annotations

import csv
import io
import os
import re
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
        inputs = tuple(inputs)
        check_target(self.journal, inputs, "-o")
        if self.journal != path:
            check_target(path, inputs, "-o")
        self._read(write)
        if not write:
            return
        self._fd = os.open(self.journal, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        if os.fstat(self._fd).st_size == 0:
            self._write(HEADER)

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
        while data:
            n = os.write(self._fd, data)
            data = data[n:]
        if sync:
            self.sync()

    def sync(self) -> None:
        """Rows written so far survive a crash of the machine too (a killed process loses
        nothing that ``write`` returned)."""
        os.fsync(self._fd)

    def append(self, row: Mapping[str, Any], sync: bool = True) -> None:
        """Add one finished solve: one line, in one ``write``; on disk when this returns
        (``sync=False``: after the next ``sync``, for rows that finished together)."""
        values = _values(row)
        self._write(_line(values), sync)
        self.rows[values[0]] = dict(zip(COLUMNS, values))

    def close(self) -> None:
        if self._fd >= 0:
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
