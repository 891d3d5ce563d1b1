"""Errors that reach the user as one line: where, and why.

The hierarchy (importable as ``cpsched.errors``)::

    CpschedError                     every error cpsched raises on purpose
    +-- InputError (ValueError)      bad input: a file, an option, an argument of the API
    |   +-- InputTypeError (TypeError)   an argument of the wrong type (``time_limit="5"``)
    |   +-- LimitError               a request past a resource limit (10^6 scenarios, ...)
    +-- InfeasibleError              a request that cannot be met (a budget below the minimum)
    +-- ScheduleError                an order that the validator rejects
        +-- PlanError                a remat plan that does not replay

``InputError`` is a ``ValueError`` and ``InputTypeError`` also a ``TypeError``, so code
written against the built-in exceptions keeps catching them.
"""

from __future__ import annotations


class CpschedError(Exception):
    """Base class: every error the command line turns into a one-line message."""


class InputError(CpschedError, ValueError):
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


class InputTypeError(InputError, TypeError):
    """An argument of the wrong type (a string where a number belongs, ...)."""


class LimitError(InputError):
    """A request past one of cpsched's resource limits: refused up front, not run for hours."""
