"""The exceptions cpsched raises on purpose (see ``cpsched.core.errors`` for the tree).

>>> import cpsched
>>> from cpsched.errors import InputError
>>> try:
...     cpsched.schedule(cpsched.generators.random_layered(n=10), time_limit=-1)
... except InputError as e:
...     print(e)
time_limit must be a finite number above 0 (got -1)
"""

from cpsched.core.errors import (
    CpschedError,
    InfeasibleError,
    InputError,
    InputTypeError,
    LimitError,
    ScheduleError,
)
from cpsched.remat.skeleton import PlanError

__all__ = [
    "CpschedError",
    "InputError",
    "InputTypeError",
    "LimitError",
    "InfeasibleError",
    "ScheduleError",
    "PlanError",
]
