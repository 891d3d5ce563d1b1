"""Shape scenarios: named dim values with weights, one per shape bucket.

A bucket is sized at its upper bound: memory is non-decreasing in every dim, so the bound
is the safe value for every concrete shape that falls into the bucket.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from cpsched.core.errors import InputError, InputTypeError, LimitError
from cpsched.core.inputs import load_json
from cpsched.core.units import parse_bytes


@dataclass(frozen=True)
class Scenarios:
    names: tuple[str, ...]
    dims: tuple[str, ...]
    values: np.ndarray  # [n_scenarios, n_dims] int64
    weights: np.ndarray  # [n_scenarios] float64, sums to 1
    # Inclusive lower bound of each bucket per dim ([n_scenarios, n_dims]); the upper bound is
    # ``values``. Used to pick a bucket for a concrete shape at run time.
    lower: np.ndarray | None = None

    def __post_init__(self):
        if len(self.names) > MAX_SCENARIOS:
            raise LimitError(
                f"{len(self.names):,} scenarios, over the limit of {MAX_SCENARIOS:,}; "
                "give fewer values (buckets) per dim"
            )
        if len(set(self.names)) != len(self.names):
            dup = next(n for k, n in enumerate(self.names) if n in self.names[:k])
            raise InputError(f"scenario name {dup!r} is given twice")
        if len(set(self.dims)) != len(self.dims):
            dup = next(d for k, d in enumerate(self.dims) if d in self.dims[:k])
            raise InputError(f"dim {dup!r} is given twice")
        v = np.asarray(self.values, dtype=np.int64).reshape(len(self.names), len(self.dims))
        object.__setattr__(self, "values", v)
        w = np.asarray(self.weights, dtype=np.float64).reshape(len(self.names))
        object.__setattr__(self, "weights", w)
        if self.lower is not None:
            object.__setattr__(
                self, "lower", np.asarray(self.lower, dtype=np.int64).reshape(v.shape)
            )

    def __len__(self) -> int:
        return len(self.names)

    def only(self, k: int) -> Scenarios:
        """Scenario ``k`` alone (weight 1, its bucket bounds kept)."""
        return Scenarios(
            (self.names[k],),
            self.dims,
            self.values[k : k + 1],
            np.ones(1),
            None if self.lower is None else self.lower[k : k + 1],
        )

    def as_dicts(self) -> list[dict[str, int]]:
        return [dict(zip(self.dims, map(int, row))) for row in self.values]

    def box(self) -> dict[str, tuple[int, int]]:
        """Smallest box holding every bucket (lower bounds where known, else 1)."""
        lo = self.lower if self.lower is not None else np.ones_like(self.values)
        return {
            d: (int(lo[:, i].min()), int(self.values[:, i].max())) for i, d in enumerate(self.dims)
        }

    def to_json(self) -> dict:
        out: dict[str, Any] = {
            "dims": list(self.dims),
            "scenarios": [
                {"name": n, "values": dict(zip(self.dims, map(int, row))), "weight": float(w)}
                for n, row, w in zip(self.names, self.values, self.weights)
            ],
        }
        if self.lower is not None:
            for sc, row in zip(out["scenarios"], self.lower):
                sc["lower"] = dict(zip(self.dims, map(int, row)))
        return out


# A dim value past this is an input error (sizes are products of dims; see SIZE_LIMIT).
DIM_LIMIT = 1 << 62
# Every figure is computed per scenario, and one order serves them all: past this many the
# run takes hours, so it is refused up front (several --dim give the product of their values).
MAX_SCENARIOS = 1024
_DIM_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")


def static() -> Scenarios:
    """The one scenario of a graph without symbolic dims."""
    return Scenarios(("static",), (), np.zeros((1, 0), dtype=np.int64), np.ones(1))


def _name(dims: Sequence[str], row: Sequence[int]) -> str:
    return ",".join(f"{d}={v}" for d, v in zip(dims, row))


def from_dim_specs(specs: Sequence[str], weights: Sequence[float] | str | None = None) -> Scenarios:
    """From ``['s=128,512,2048', 'b=8']``: the cartesian product of the listed values.

    ``weights`` (one per scenario, any positive scale) default to uniform.
    """
    dims: list[str] = []
    lists: list[list[int]] = []
    for spec in specs:
        if "=" not in spec:
            raise InputError(f"--dim {spec!r}: expected NAME=V1,V2,...")
        name, vals = spec.split("=", 1)
        name = name.strip()
        try:
            values = [int(v) for v in vals.split(",") if v.strip()]
        except ValueError:
            raise InputError(f"--dim {spec!r}: values must be integers") from None
        if not values or min(values) < 1:
            raise InputError(f"--dim {spec!r}: give at least one value, each >= 1")
        if max(values) > DIM_LIMIT:
            raise InputError(f"--dim {name.strip()}={max(values)}: past the 2^62 limit")
        if not _DIM_NAME.match(name.strip()):
            raise InputError(f"--dim {spec!r}: {name.strip()!r} is not a dim name")
        if name in dims:
            raise InputError(f"--dim {name} given twice")
        dims.append(name)
        lists.append(values)
    count = math.prod(len(v) for v in lists)
    if count > MAX_SCENARIOS:
        raise LimitError(
            f"--dim {' x '.join(str(len(v)) for v in lists)} values give {count:,} scenarios, "
            f"over the limit of {MAX_SCENARIOS:,}; give fewer values (buckets) per dim"
        )
    rows = list(itertools.product(*lists))
    if isinstance(weights, str):
        try:
            weights = [float(w) for w in weights.split(",") if w.strip()]
        except ValueError:
            raise InputError(f"--weights {weights!r}: expected numbers") from None
    if weights is None or len(weights) == 0:
        w = np.ones(len(rows))
    else:
        if len(weights) != len(rows):
            raise InputError(f"--weights has {len(weights)} values for {len(rows)} scenarios")
        w = np.asarray(weights, dtype=float)
        if not np.isfinite(w).all() or (w < 0).any() or w.sum() <= 0:
            raise InputError("--weights must be finite, non-negative and not all zero")
    return Scenarios(
        tuple(_name(dims, r) for r in rows),
        tuple(dims),
        np.asarray(rows, dtype=np.int64).reshape(len(rows), len(dims)),
        w / w.sum(),
    )


def from_json(data: Mapping | str) -> Scenarios:
    """``{"dims": ["s"], "scenarios": [{"name": .., "values": {"s": 512}, "weight": 0.3}]}``."""
    if isinstance(data, str):
        data = load_json(data)
    if (
        not isinstance(data, Mapping)
        or not isinstance(data.get("scenarios"), list)
        or not isinstance(data.get("dims", []), list)
    ):
        raise InputError('scenarios JSON: expected {"dims": [...], "scenarios": [...]}')
    for k, sc in enumerate(data["scenarios"]):
        values = sc.get("values") if isinstance(sc, Mapping) else None
        if not isinstance(values, Mapping):
            raise InputError(f'scenarios JSON: scenario #{k} needs "values": {{dim: int}}')
        for d, v in values.items():
            if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= DIM_LIMIT:
                raise InputError(
                    f"scenarios JSON: scenario #{k}: {d}={v!r} must be an integer from 1 to 2^62"
                )
    try:
        dims = tuple(data["dims"])
        scs = data["scenarios"]
        names = tuple(
            str(s.get("name") or _name(dims, [s["values"][d] for d in dims])) for s in scs
        )
        vals = np.array([[int(s["values"][d]) for d in dims] for s in scs], dtype=np.int64)
        w = np.array([float(s.get("weight", 1.0)) for s in scs])
        lower = None
        if all("lower" in s for s in scs) and scs:
            lower = np.array([[int(s["lower"][d]) for d in dims] for s in scs], dtype=np.int64)
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as e:
        raise InputError(f"scenarios JSON: missing or bad field {e}") from None
    if len(names) == 0:
        raise InputError("scenarios JSON lists no scenario")
    if vals.size and (vals.min() < 1 or vals.max() > DIM_LIMIT):
        raise InputError("scenarios JSON: dim values must be between 1 and 2^62")
    if not np.isfinite(w).all() or (w < 0).any() or w.sum() <= 0:
        raise InputError("scenarios JSON: weights must be finite, non-negative, not all zero")
    return Scenarios(names, dims, vals.reshape(len(names), len(dims)), w / w.sum(), lower)


def buckets_from_lengths(dim: str, lengths: Sequence[int], k: int, round_to: int = 1) -> Scenarios:
    """Turn observed lengths (e.g. a dataset's sequence lengths) into ``k`` buckets.

    Boundaries are quantiles of the data, rounded up to ``round_to``; each bucket is sized at
    its upper bound and weighted by the share of observations in it.
    """
    arr = np.sort(np.asarray(lengths, dtype=np.int64))
    if arr.size == 0 or k < 1:
        raise InputError("need at least one observed length and k >= 1")
    qs = np.quantile(arr, np.linspace(0, 1, k + 1)[1:], method="higher")
    uppers = sorted({int(-(-int(q) // round_to) * round_to) for q in qs})
    rows, weights, lows = [], [], []
    prev = 0
    for u in uppers:
        count = int(((arr > prev) & (arr <= u)).sum())
        if count:
            rows.append([u])
            weights.append(count)
            lows.append([prev + 1])
        prev = u
    w = np.asarray(weights, dtype=float)
    return Scenarios(
        tuple(f"{dim}<={r[0]}" for r in rows),
        (dim,),
        np.asarray(rows, dtype=np.int64),
        w / w.sum(),
        np.asarray(lows, dtype=np.int64),
    )


def pick_bucket(scenarios: Scenarios, values: Mapping[str, int]) -> int:
    """Index of the smallest bucket whose upper bounds hold ``values`` (run-time choice)."""
    point = np.array([int(values[d]) for d in scenarios.dims], dtype=np.int64)
    fits = (scenarios.values >= point).all(axis=1)
    if scenarios.lower is not None:
        fits &= (scenarios.lower <= point).all(axis=1)
    if not fits.any():
        raise InputError(f"no bucket holds {dict(values)}")
    cand = np.flatnonzero(fits)
    return int(cand[np.argmin(scenarios.values[cand].sum(axis=1))])


# -- memory budgets -------------------------------------------------------------------------


@dataclass(frozen=True)
class Budget:
    """A memory budget as stated: per scenario, bytes (``int``) or a share of a reference
    peak (``float``, 0.9 for ``90%``). One part applies to every scenario.

    The reference is the caller's (``cpsched.api`` and the command line take the peak of the
    input's own order, ``cpsched.api.budget_reference``)."""

    parts: tuple[int | float, ...]
    text: str = ""

    @property
    def relative(self) -> bool:
        """True when some part is a share of the reference peak."""
        return any(isinstance(p, float) for p in self.parts)

    def resolve(
        self, scenarios: Scenarios | int, reference: Sequence[int] | np.ndarray | None = None
    ) -> np.ndarray:
        """Bytes per scenario, ``[len(scenarios)]`` int64 (``scenarios`` or their count)."""
        n = scenarios if isinstance(scenarios, int) else len(scenarios)
        parts = self.parts * n if len(self.parts) == 1 else self.parts
        if len(parts) != n:
            raise InputError(
                f"budget {self.text or list(self.parts)}: {len(self.parts)} values "
                f"for {n} scenarios"
            )
        if self.relative and reference is None:
            raise InputError(f"budget {self.text}: a percentage needs a reference peak")
        # a float part makes the budget relative, so reference is set (checked above)
        out = [
            int(p * int(reference[s])) if isinstance(p, float) else int(p)  # type: ignore[index]
            for s, p in enumerate(parts)
        ]
        return np.asarray(out, dtype=np.int64)


def parse_budget(value, scenarios: Scenarios | None = None) -> Budget:
    """The one budget parser: ``8GiB``, ``512MB``, ``1000000``, ``90%`` (of a reference peak),
    a comma list or sequence (one per scenario), or a ``{scenario: value}`` mapping (needs
    ``scenarios``). Numbers are bytes.

    >>> parse_budget("8GiB").parts, parse_budget("90%").parts, parse_budget([100, "1KiB"]).parts
    ((8589934592,), (0.9,), (100, 1024))
    """

    if isinstance(value, Budget):
        return value
    if isinstance(value, Mapping):
        if scenarios is None:
            raise InputError("a budget by scenario name needs the scenarios")
        try:
            items = [value[n] for n in scenarios.names]
        except KeyError as e:
            raise InputError(f"budget names no value for scenario {e}") from None
        return Budget(tuple(parse_budget(v).parts[0] for v in items), str(dict(value)))
    if isinstance(value, str):
        items = [p.strip() for p in value.split(",") if p.strip()]
        text = value
    elif isinstance(value, (int, float, np.integer, np.floating)):
        items, text = [value], str(value)
    elif isinstance(value, (Sequence, np.ndarray)) and not isinstance(value, (bytes, bytearray)):
        items, text = list(value), ",".join(map(str, value))
    else:
        raise InputTypeError(
            f"budget must be bytes, a size such as '8GiB', a percentage or one per "
            f"scenario, not {type(value).__name__}"
        )
    if not items:
        raise InputError(f"budget {value!r}: give bytes (8GiB, 512MB) or a percentage (90%)")
    parts: list[int | float] = []
    for item in items:
        if isinstance(item, str) and item.endswith("%"):
            try:
                share = float(item[:-1]) / 100.0
            except ValueError:
                raise InputError(f"budget {item!r}: expected a percentage such as 90%") from None
            if not (share > 0 and math.isfinite(share)):
                raise InputError(f"budget {item!r}: the percentage must be finite and above 0")
            parts.append(share)
        else:
            v = item.item() if isinstance(item, np.generic) else item
            parts.append(_budget_bytes(v))
    return Budget(tuple(parts), text)


def _budget_bytes(value) -> int:
    """Bytes of one budget value; a bare number below 1 (``0.9``) is refused as the
    percentage it surely meant, and a budget of 0 bytes as impossible."""
    if isinstance(value, bool):
        raise InputError(f"budget {value!r}: give bytes (8GiB, 512MB) or a percentage (90%)")
    bare = value
    if isinstance(value, str):
        try:
            bare = float(value.strip().replace("_", ""))
        except ValueError:
            bare = None  # has a unit (or is not a number): parse_bytes says which
    # an int past a float's range (10**400) is whole; parse_bytes refuses its size
    if isinstance(bare, int) or (isinstance(bare, float) and math.isfinite(bare)):
        if 0 < bare < 1:
            raise InputError(
                f"budget {value!r}: a bare number is bytes; did you mean {100 * bare:g}%?"
            )
        if bare != int(bare):
            raise InputError(
                f"budget {value!r}: a number of bytes is whole (or give a unit: 1.5MiB, "
                "or a percentage: 90%)"
            )
    out = parse_bytes(value, what="budget")
    if out <= 0:
        raise InputError(f"budget {value!r}: must be above 0 bytes")
    return out


def resolve_budget(
    value, scenarios: Scenarios, reference: Sequence[int] | np.ndarray | None = None
) -> np.ndarray:
    """Bytes per scenario of any budget ``parse_budget`` reads (``reference``: the peaks a
    percentage is of)."""
    return parse_budget(value, scenarios).resolve(scenarios, reference)
