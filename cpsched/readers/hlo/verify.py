"""Checks of a parsed HLO module that XLA's own verifier makes and the parser does not:
opcodes XLA knows, get-tuple-element indices inside their tuple, async dones fed by their
start, one parameter per number, elementwise ops on operands of one shape; and a module
to schedule marks its ENTRY.

``verify_module(module)`` raises ``InputError`` at ``file:line:col`` of the first offending
instruction. The readers call it once after parsing, before the graph is built, so that
a module XLA would refuse is not scheduled as if it were valid.
"""

from __future__ import annotations

from cpsched.core import opcodes
from cpsched.core.errors import InputError
from cpsched.core.symbolic import SIZE_LIMIT
from cpsched.readers.hlo.convert import _OPTIONS, HloConverter
from cpsched.readers.hlo.parser import (
    NATIVE_ASYNC,
    HloComputation,
    HloInstruction,
    HloModule,
    Shape,
    gc_paused,
    parse_hlo_text,
    read_hlo_module,
)

# Every opcode of XLA's HLO text format (HloOpcode names), async wrappers included.
KNOWN_OPCODES = (
    frozenset(
        """
abs add add-dependency after-all all-gather all-gather-done all-gather-start all-reduce
all-reduce-done all-reduce-start all-to-all and async-done async-start async-update atan2
batch-norm-grad batch-norm-inference batch-norm-training bitcast bitcast-convert broadcast
call cbrt ceil cholesky clamp clz collective-broadcast collective-permute
collective-permute-done collective-permute-start compare complex concatenate conditional
constant convert convolution copy copy-done copy-start cosine custom-call divide domain dot
dynamic-reshape dynamic-slice dynamic-update-slice erf exponential exponential-minus-one fft
floor fusion gather get-dimension-size get-tuple-element imag infeed iota is-finite log
log-plus-one logistic map maximum minimum multiply negate not opt-barrier
optimization-barrier or outfeed pad parameter partition-id popcnt power ragged-all-to-all
ragged-dot real recv recv-done reduce reduce-precision reduce-scatter reduce-window
remainder replica-id reshape reverse rng rng-bit-generator rng-get-and-update-state
round-nearest-afz round-nearest-even rsqrt scaled-dot scatter select select-and-scatter send
send-done set-dimension-size shift-left shift-right-arithmetic shift-right-logical sign sine
slice sort sqrt stochastic-convert subtract tan tanh top-k transpose triangular-solve tuple
while xor
""".split()
    )
    | NATIVE_ASYNC
)

# What feeds each done / update (operand 0).
DONE_SOURCES = {
    "all-reduce-done": {"all-reduce-start"},
    "all-gather-done": {"all-gather-start"},
    "collective-permute-done": {"collective-permute-start"},
    "copy-done": {"copy-start"},
    "send-done": {"send"},
    "recv-done": {"recv"},
    "async-done": {"async-start", "async-update"},
    "async-update": {"async-start", "async-update"},
}

# Elementwise ops: every array operand has the result's dimensions.
ELEMENTWISE_SAME_DIMS = opcodes.ELEMENTWISE_MATH
SCALAR_OPERANDS_OK = {"select", "clamp"}

# Operand counts XLA's parser requires of the fixed-arity ops.
OPERAND_COUNT = {
    **dict.fromkeys(
        """
abs cbrt ceil clz cosine erf exponential exponential-minus-one floor imag is-finite log
log-plus-one logistic negate not popcnt real round-nearest-afz round-nearest-even rsqrt sign
sine sqrt tan tanh convert reduce-precision bitcast-convert copy bitcast reshape transpose
broadcast reverse slice get-tuple-element copy-start copy-done all-reduce-done
all-gather-done collective-permute-done send-done recv-done
""".split(),
        1,
    ),
    **dict.fromkeys(
        """
add atan2 complex divide maximum minimum multiply and or xor power remainder shift-left
shift-right-arithmetic shift-right-logical subtract compare stochastic-convert
""".split(),
        2,
    ),
    "select": 3,
    "clamp": 3,
}


def _error(module: HloModule, ins: HloInstruction, reason: str) -> InputError:
    return InputError(f"{ins.name}: {reason}", path=module.path, line=ins.line, column=ins.column)


def _operand_shape(comp: HloComputation, ins: HloInstruction, k: int) -> Shape | None:
    other = comp.index.get(ins.operands[k])
    if other is not None and other.shape is not None:
        return other.shape
    return ins.operand_shapes[k] if k < len(ins.operand_shapes) else None


def _static(shape: Shape | None) -> bool:
    return shape is not None and shape.is_array and not any(shape.dynamic)


def _check_instruction(
    module: HloModule, comp: HloComputation, ins: HloInstruction, params: dict[int, str]
) -> None:
    op = ins.opcode
    if ins.shape is not None:
        for _, sub in ins.shape.subshapes():
            if sub.is_array and sub.byte_size() > SIZE_LIMIT:
                raise _error(
                    module,
                    ins,
                    f"shape {sub} holds {sub.byte_size():.4g} bytes, past the 2^62-byte limit",
                )
    if op not in KNOWN_OPCODES:
        raise _error(module, ins, f"unknown opcode {ins.raw_opcode!r} (not an XLA HLO opcode)")
    if ins.wrapped_opcode and ins.wrapped_opcode not in KNOWN_OPCODES:
        raise _error(
            module,
            ins,
            f"unknown opcode {ins.raw_opcode!r} (async form of "
            f"{ins.wrapped_opcode!r}, which XLA does not have)",
        )
    want = OPERAND_COUNT.get(op)
    if want is not None and len(ins.operands) != want and not ins.wrapped_opcode:
        raise _error(
            module,
            ins,
            f"{ins.raw_opcode} takes {want} operand{'s' if want > 1 else ''}, "
            f"found {len(ins.operands)}",
        )
    if op == "parameter":
        text = (ins.literal or "").strip()
        if text.lstrip("-").isdigit():
            number = int(text)
            if number < 0:
                raise _error(module, ins, f"parameter number {number} is negative")
            if number in params:
                raise _error(
                    module,
                    ins,
                    f"parameter({number}) is also {params[number]!r} in computation {comp.name!r}",
                )
            params[number] = ins.name
    elif op == "get-tuple-element" and ins.operands:
        src = _operand_shape(comp, ins, 0)
        index_text = ins.attrs.get("index", "").strip()
        if not index_text.lstrip("-").isdigit():
            raise _error(module, ins, f"index={index_text!r} is not a tuple index")
        if int(index_text) < 0:
            raise _error(module, ins, f"index={index_text} is negative")
        if src is not None:
            index = int(index_text)
            if not src.is_tuple:
                raise _error(
                    module,
                    ins,
                    f"get-tuple-element of {ins.operands[0]!r}, which is not a tuple ({src})",
                )
            if index >= len(src.elements):
                raise _error(
                    module,
                    ins,
                    f"index={index} past the {len(src.elements)} elements of {ins.operands[0]!r}",
                )
    elif op in DONE_SOURCES and ins.operands:
        feeder = comp.index.get(ins.operands[0])
        if feeder is not None and feeder.opcode not in DONE_SOURCES[op]:
            raise _error(
                module,
                ins,
                f"{ins.raw_opcode} is fed by {feeder.name!r}, a "
                f"{feeder.raw_opcode}, not by "
                f"{' or '.join(sorted(DONE_SOURCES[op]))}",
            )
    elif op in ELEMENTWISE_SAME_DIMS and _static(ins.shape):
        assert ins.shape is not None
        for k in range(len(ins.operands)):
            shape = _operand_shape(comp, ins, k)
            if not _static(shape):
                continue
            assert shape is not None
            if op in SCALAR_OPERANDS_OK and shape.rank == 0:
                continue
            if shape.dims != ins.shape.dims:
                raise _error(
                    module,
                    ins,
                    f"{op} of shape {ins.shape} has operand "
                    f"{ins.operands[k]!r} of shape {shape}; "
                    "elementwise operands have the result's dimensions",
                )


def verify_module(module: HloModule) -> HloModule:
    """Raise ``InputError`` on the first instruction XLA's verifier would refuse (see the
    module docstring), or for a module without ``ENTRY``; return ``module`` unchanged
    otherwise."""
    if not module.entry.is_entry:
        # XLA's parser takes the last computation then (the parser does too, for tools
        # that only read); a module to schedule is a dump, and every dump marks its entry:
        # without one it is a fragment, and its last computation may be a reducer
        comp = module.entry
        raise InputError(
            f"no ENTRY computation (mark the one to schedule, e.g. 'ENTRY {comp.name}')",
            path=module.path,
            line=comp.line,
        )
    for comp in module.computations:
        params: dict[int, str] = {}
        for ins in comp.instructions:
            _check_instruction(module, comp, ins, params)
        # parameters are numbered 0..N-1 (XLA's computation builder aborts otherwise)
        for number, name in params.items():
            if number >= len(params):
                raise _error(
                    module,
                    comp.index[name],
                    f"parameter({number}) in computation {comp.name!r}, which has "
                    f"{len(params)} parameter(s): numbers run from 0 to {len(params) - 1}",
                )
    return module


def read_verified_graph(
    source: str, computation: str | None = None, *, text: bool = False, **options
):
    """The ``Graph`` of an HLO file (or, with ``text=True``, HLO text), verified first:
    what ``read_hlo_graph`` / ``read_hlo_text`` give, for a module XLA would accept."""
    unknown = set(options) - _OPTIONS
    if unknown:
        raise InputError(
            f"unknown option(s) for the HLO reader: {', '.join(sorted(unknown))}",
            path=None if text else source,
        )
    with gc_paused():
        module = parse_hlo_text(source) if text else read_hlo_module(source)
        verify_module(module)
        return HloConverter(module, options.get("orders"), options.get("pointer_size", 8)).graph(
            computation
        )


__all__ = ["verify_module", "read_verified_graph", "KNOWN_OPCODES"]
