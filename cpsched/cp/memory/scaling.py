"""Byte scaling for CP-SAT: moderate integers, with a stated rounding.

Per scenario ``s`` a unit ``u_s`` (bytes) is chosen:

1. ``u_s`` = the gcd of every size, transient, ``base`` and ``floor`` value of the problem in
   that scenario. Dividing by it is exact.
2. If the total (everything live at once) is still above ``max_units`` units (default
   ``2**24``), ``u_s`` is raised to ``ceil(total / max_units)`` and every size is **rounded
   up** to a whole number of units. The model then over-counts each live buffer by less than
   one unit, so a model usage ``U`` means at most ``U * u_s`` true bytes: budget constraints
   in units are safe, and an order's true peak is re-computed with the exact simulator
   (that is what is reported). A model lower bound ``L`` (units) only proves
   ``L * u_s - (u_s - 1) * k`` true bytes, with ``k`` the number of model items (buffers plus
   one transient) that can be live at one step; ``true_lower_bound`` applies that.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import gcd

import numpy as np

from cpsched.cp.memory.problem import Problem

DEFAULT_MAX_UNITS = 1 << 24


@dataclass(frozen=True)
class Scale:
    unit: np.ndarray  # [S] bytes per unit
    exact: np.ndarray  # [S] bool: the division is exact (no rounding)
    sizes: np.ndarray  # [S, nb] units (rounded up)
    transient: np.ndarray  # [S, n]
    base: np.ndarray  # [S]
    floor: np.ndarray  # [S]
    max_items: int  # buffers + 1: the most items live at one step

    def units(self, s: int, nbytes: int) -> int:
        """Bytes to units, rounded up."""
        u = int(self.unit[s])
        return -(-int(nbytes) // u)

    def units_floor(self, s: int, nbytes: int) -> int:
        return int(nbytes) // int(self.unit[s])

    def true_lower_bound(self, s: int, units: int) -> int:
        """A valid lower bound in bytes from a lower bound in model units."""
        u = int(self.unit[s])
        if self.exact[s]:
            return int(units) * u
        return max(0, int(units) * u - (u - 1) * self.max_items)


def _gcd_all(values: np.ndarray) -> int:
    g = 0
    for v in np.unique(values[values > 0]):
        g = gcd(g, int(v))
        if g == 1:
            break
    return g or 1


def make_scale(p: Problem, max_units: int = DEFAULT_MAX_UNITS) -> Scale:
    S = p.n_scenarios
    units = np.ones(S, dtype=np.int64)
    exact = np.ones(S, dtype=bool)
    for s in range(S):
        vals = np.concatenate([p.sizes[s], p.transient[s], [p.base[s], p.floor[s]]])
        u = _gcd_all(np.asarray(vals, dtype=np.int64))
        total = int(p.base[s] + p.sizes[s].sum() + (p.transient[s].max() if p.n else 0))
        total = max(total, int(p.floor[s]))
        if total // u > max_units:
            u2 = -(-total // max_units)
            # keep a multiple of the exact unit so that sizes that are multiples stay exact
            u2 = -(-u2 // u) * u
            if u2 != u:
                u = u2
                exact[s] = bool(all(int(v) % u == 0 for v in np.unique(vals)))
        units[s] = u
    up = lambda a: (
        -(-np.asarray(a, dtype=np.int64) // units.reshape((-1,) + (1,) * (np.ndim(a) - 1)))
    )
    return Scale(
        unit=units,
        exact=exact,
        sizes=up(p.sizes),
        transient=up(p.transient),
        base=up(p.base),
        floor=up(p.floor),
        max_items=p.nb + 1,
    )
