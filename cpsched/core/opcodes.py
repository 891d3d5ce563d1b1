"""The HLO opcode vocabulary, written once.

XLA's spelling (``all-reduce``, ``round-nearest-even``). The readers, the cost model, the
remat policy and the heuristics each need a slightly different class of ops (elementwise
for shape inference, elementwise for buffer sharing, ops that must run once); they derive
theirs from these sets with a visible difference instead of a copy of the list. StableHLO
names are the same words with ``_`` (:func:`stablehlo_names`).
"""

from __future__ import annotations

from collections.abc import Iterable

# ``HloInstruction::IsOpElementwise``'s unary and binary math, plus the conversions:
# every array operand has the result's dimensions (select's predicate and clamp's bounds
# may be scalars).
ELEMENTWISE_MATH = frozenset(
    """
abs add and atan2 cbrt ceil clamp clz compare complex convert cosine divide erf exponential
exponential-minus-one floor imag is-finite log log-plus-one logistic maximum minimum multiply
negate not or popcnt power real reduce-precision remainder round-nearest-afz
round-nearest-even rsqrt select shift-left shift-right-arithmetic shift-right-logical sign
sine sqrt stochastic-convert subtract tan tanh xor
""".split()
)

# The synchronous collectives (the communication kinds a schedule can overlap).
COLLECTIVES = tuple(
    """
all-reduce all-gather reduce-scatter all-to-all collective-permute collective-broadcast
ragged-all-to-all
""".split()
)
# The collectives XLA splits into a native start/done pair.
ASYNC_COLLECTIVE_STARTS = ("all-reduce-start", "all-gather-start", "collective-permute-start")
ASYNC_COLLECTIVE_DONES = ("all-reduce-done", "all-gather-done", "collective-permute-done")
# Start and done halves of XLA's own async ops (send/recv aside: their pair is send and
# send-done, recv and recv-done).
ASYNC_STARTS = (*ASYNC_COLLECTIVE_STARTS, "copy-start", "async-start")
ASYNC_DONES = (*ASYNC_COLLECTIVE_DONES, "copy-done", "async-done")
SEND_RECV = ("send", "send-done", "recv", "recv-done")

# Ops whose result is (part of) an operand: no new buffer.
FORWARDING = tuple(
    """
get-tuple-element bitcast tuple add-dependency domain opt-barrier optimization-barrier
""".split()
)
CONTROL_FLOW = ("while", "conditional", "call")


def stablehlo_names(opcodes: Iterable[str]) -> set[str]:
    """The StableHLO spelling of HLO opcodes (``round-nearest-even`` -> ``round_nearest_even``)."""
    return {op.replace("-", "_") for op in opcodes}
