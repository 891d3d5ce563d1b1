"""Errors that reach the user as one line: where, and why."""

from __future__ import annotations


class CpschedError(Exception):
    """Base class: every error the command line turns into a one-line message."""


class InputError(CpschedError):
    """Bad input: malformed file, cycle, unknown op, impossible request.

    ``path``, ``line`` and ``column`` (1-based) say where, when known.
    """

    def __init__(
        self,
        reason: str,
        path: str | None = None,
        line: int | None = None,
        column: int | None = None,
    ):
        super().__init__(reason)
        self.reason = reason
        self.path = path
        self.line = line
        self.column = column

    def with_path(self, path: str) -> InputError:
        if self.path is None:
            self.path = path
        return self

    def __str__(self) -> str:
        where = ""
        if self.path:
            where = self.path
            if self.line is not None:
                where += f":{self.line}"
                if self.column is not None:
                    where += f":{self.column}"
            where += ": "
        return where + self.reason


class InfeasibleError(CpschedError):
    """A request that cannot be met (e.g. a memory budget below the proven minimum)."""


class ScheduleError(CpschedError):
    """An order that the validator rejects."""


class BudgetError(InfeasibleError):
    """A result over its memory budget, refused: nothing is written. Bytes per scenario:
    ``reached``, the least peak the method found; ``proven``, a peak no order (or plan)
    goes below; ``result`` the refused result, for the Python API."""

    def __init__(
        self,
        reason: str,
        *,
        reached: dict[str, int] | None = None,
        proven: dict[str, int] | None = None,
        result: object = None,
    ):
        super().__init__(reason)
        self.reached = dict(reached or {})
        self.proven = dict(proven or {})
        self.result = result
