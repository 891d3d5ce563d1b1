"""Parser for XLA HLO text (as XLA dumps it, before and after optimization).

A regex tokenizer feeds a recursive-descent parser that keeps the character span of every
module header, computation and instruction, so that ``cpsched.writers.hlo`` can re-emit the
text verbatim in a new order. Errors are ``InputError`` with path, line and column.

What is parsed structurally: the module header and its attributes, computations (with or
without ``ENTRY``, signature, ``execution_thread``, or written in place as an attribute value,
``to_apply={...}``), instructions (``ROOT``, ``%`` optional, result shape optional, operands
with or without shapes, nested instructions and ``t#1`` tuple-element operands, which become
instructions of their own), shapes (arrays, tuples, buffers ``b(...)``, bounded and unbounded
dynamic dims, layouts with tiles, ``E(n)`` element sizes and ``S(n)`` memory spaces, after the
dims or after blanks). Attribute values are kept as raw text, read as XLA's lexer reads them
(single- and double-quoted strings; ``backend_config`` and frontend attribute dicts taken raw,
any character inside); the helpers at the bottom interpret the ones cpsched needs (called
computations, control predecessors, metadata, backend_config, replica groups in all three
forms, aliasing, ...). Unknown attributes are kept and skipped; unknown opcodes are read as
generic ops with a note. Text XLA's parser rejects is an error where XLA reports it.
"""

from __future__ import annotations

import bisect
import gc
import json
import operator
import re
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from cpsched.core import opcodes
from cpsched.core.errors import InputError
from cpsched.core.inputs import read_text as read_input_text

# Bytes per element (``ceil(bits / 8)``, XLA's ByteSizeOfPrimitiveType). Sub-byte types take a
# whole byte unless a layout packs them with ``E(n)``.
ELEMENT_BYTES: dict[str, int] = {
    "pred": 1,
    "s1": 1,
    "u1": 1,
    "s2": 1,
    "u2": 1,
    "s4": 1,
    "u4": 1,
    "s8": 1,
    "u8": 1,
    "f4e2m1fn": 1,
    "f8e5m2": 1,
    "f8e4m3": 1,
    "f8e4m3fn": 1,
    "f8e4m3b11fnuz": 1,
    "f8e3m4": 1,
    "f8e5m2fnuz": 1,
    "f8e4m3fnuz": 1,
    "f8e8m0fnu": 1,
    "s16": 2,
    "u16": 2,
    "f16": 2,
    "bf16": 2,
    "s32": 4,
    "u32": 4,
    "f32": 4,
    "s64": 8,
    "u64": 8,
    "f64": 8,
    "c64": 8,
    "c128": 16,
    "token": 0,
}
# Bits per element, for ``E(n)``-less sub-byte bookkeeping and bit-exact notes.
ELEMENT_BITS: dict[str, int] = {
    "pred": 8,
    "s1": 1,
    "u1": 1,
    "s2": 2,
    "u2": 2,
    "s4": 4,
    "u4": 4,
    "f4e2m1fn": 4,
}
OPAQUE = "opaque"
TUPLE = "tuple"
POINTER_SIZE = 8

# Opcodes that really end in -start/-update/-done; any other ``<op>-start`` is the syntax
# sugar for an async-start wrapping ``<op>``.
NATIVE_ASYNC = {
    *opcodes.ASYNC_STARTS,
    *opcodes.ASYNC_DONES,
    "async-update",
    "send-done",
    "recv-done",
}
# The opcodes XLA's HLO parser knows (hlo_opcode.h, 2026). Others are read as generic ops with
# a note: a dump from a newer XLA may use one this list does not have yet.
XLA_OPCODES = frozenset(
    (
        "abs",
        "acos",
        "acosh",
        "add",
        "add-dependency",
        "after-all",
        "all-gather",
        "all-gather-done",
        "all-gather-start",
        "all-reduce",
        "all-reduce-done",
        "all-reduce-start",
        "all-to-all",
        "and",
        "asin",
        "asinh",
        "async-done",
        "async-start",
        "async-update",
        "atan2",
        "atanh",
        "batch-norm-grad",
        "batch-norm-inference",
        "batch-norm-training",
        "bitcast",
        "bitcast-convert",
        "broadcast",
        "call",
        "cbrt",
        "ceil",
        "cholesky",
        "clamp",
        "count-leading-zeros",
        "collective-broadcast",
        "collective-permute",
        "collective-permute-done",
        "collective-permute-start",
        "compare",
        "complex",
        "concatenate",
        "conditional",
        "constant",
        "convert",
        "convolution",
        "copy",
        "copy-done",
        "copy-start",
        "cosine",
        "cosh",
        "custom-call",
        "divide",
        "domain",
        "dot",
        "dynamic-reshape",
        "dynamic-slice",
        "dynamic-update-slice",
        "erf",
        "exponential",
        "exponential-minus-one",
        "fft",
        "floor",
        "fusion",
        "gather",
        "get-dimension-size",
        "get-tuple-element",
        "imag",
        "infeed",
        "iota",
        "is-finite",
        "log",
        "log-plus-one",
        "logistic",
        "map",
        "maximum",
        "minimum",
        "mulhi",
        "multiply",
        "negate",
        "not",
        "opt-barrier",
        "or",
        "outfeed",
        "pad",
        "parameter",
        "partition-id",
        "popcnt",
        "power",
        "ragged-all-to-all",
        "ragged-dot",
        "real",
        "recv",
        "recv-done",
        "reduce",
        "reduce-precision",
        "reduce-scatter",
        "reduce-window",
        "remainder",
        "replica-id",
        "reshape",
        "reverse",
        "rng",
        "rng-bit-generator",
        "rng-get-and-update-state",
        "round-nearest-afz",
        "round-nearest-even",
        "rsqrt",
        "scaled-dot",
        "scan",
        "scatter",
        "select",
        "select-and-scatter",
        "send",
        "send-done",
        "set-dimension-size",
        "shift-left",
        "shift-right-arithmetic",
        "shift-right-logical",
        "sign",
        "sine",
        "sinh",
        "slice",
        "sort",
        "sqrt",
        "stochastic-convert",
        "subtract",
        "tan",
        "tanh",
        "topk",
        "transpose",
        "triangular-solve",
        "tuple",
        "while",
        "xor",
    )
)
# Stack-frame tables some dumps write between the header and the computations (or after).
TRAILING_SECTIONS = {"FileNames", "FunctionNames", "FileLocations", "StackFrames"}


# ---------------------------------------------------------------------------------------------
# Shapes


@dataclass(frozen=True, slots=True)
class Shape:
    """An HLO shape: an array (``etype`` = element type), a tuple, ``token`` or ``opaque``."""

    etype: str
    dims: tuple[int, ...] = ()
    dynamic: tuple[bool, ...] = ()  # dim printed with ``<=`` (bounded) or ``?``
    unbounded: tuple[bool, ...] = ()  # dim printed as ``?`` (no bound known)
    elements: tuple[Shape, ...] = ()  # tuple elements
    element_bits: int | None = None  # ``E(n)`` in the layout
    memory_space: int = 0  # ``S(n)`` in the layout
    layout: str | None = None  # layout text, braces included
    is_buffer: bool = False  # written ``b(<array shape>)``: XLA's buffer type

    @property
    def is_tuple(self) -> bool:
        return self.etype == TUPLE

    @property
    def is_array(self) -> bool:
        return self.etype not in (TUPLE, "token", OPAQUE)

    @property
    def rank(self) -> int:
        return len(self.dims)

    def element_count(self) -> int:
        n = 1
        for d in self.dims:
            n *= d
        return n

    def is_effective_scalar(self) -> bool:
        return self.is_array and all(d == 1 for d in self.dims)

    def has_unbounded(self) -> bool:
        return any(self.unbounded) or any(e.has_unbounded() for e in self.elements)

    def byte_size(self, pointer_size: int = POINTER_SIZE) -> int:
        """XLA's ``ShapeUtil::ByteSizeOf``: a tuple is its index table only."""
        if self.etype == TUPLE:
            return pointer_size * len(self.elements)
        if self.etype == OPAQUE:
            return pointer_size
        if self.etype == "token":
            return 0
        count = self.element_count()  # bounded dims already hold their bound; ``?`` holds 1
        if self.element_bits is not None:
            return (count * self.element_bits + 7) // 8
        return count * ELEMENT_BYTES[self.etype]

    def leaf_bytes(self) -> int:
        """Bytes of all array leaves (no tuple tables): what an op reads or writes."""
        if self.etype == TUPLE:
            return sum(e.leaf_bytes() for e in self.elements)
        return self.byte_size()

    def subshape(self, index: tuple[int, ...]) -> Shape:
        s = self
        for k in index:
            s = s.elements[k]
        return s

    def subshapes(self, prefix: tuple[int, ...] = ()) -> Iterator[tuple[tuple[int, ...], Shape]]:
        """Every (index, subshape), tuple nodes included, in pre-order."""
        yield prefix, self
        for k, e in enumerate(self.elements):
            yield from e.subshapes(prefix + (k,))

    def __str__(self) -> str:
        if self.is_buffer:
            return "b(" + str(replace(self, is_buffer=False)) + ")"
        if self.etype == TUPLE:
            return "(" + ", ".join(str(e) for e in self.elements) + ")"
        dims = ",".join(
            ("?" if u else ("<=" if d else "") + str(n))
            for n, d, u in zip(self.dims, self.dynamic, self.unbounded)
        )
        return f"{self.etype}[{dims}]{self.layout or ''}"


TOKEN_SHAPE = Shape("token")


# ---------------------------------------------------------------------------------------------
# Module structure


@dataclass(eq=False)
class HloInstruction:
    name: str
    opcode: str  # canonical opcode (``fusion-start`` -> ``async-start``)
    raw_opcode: str  # as written
    shape: Shape | None  # None when the text omits it and it could not be inferred
    operands: list[str]
    operand_shapes: list[Shape | None]
    attrs: dict[str, str]  # attribute name -> raw value text
    span: tuple[int, int]  # [start, end) in the module text, ``ROOT`` included
    name_offset: int  # where the name token starts (``%`` included)
    line: int
    column: int
    root_marked: bool = False
    literal: str | None = None  # constant literal text / parameter number text
    attr_offsets: dict[str, int] = field(default_factory=dict)
    operand_offsets: list[int] = field(default_factory=list)
    shape_inferred: bool = False
    wrapped_opcode: str | None = None  # for async sugar ``<op>-start``: ``<op>``
    synthetic: bool = False  # made by the reader: a nested instruction or ``t#1`` operand

    @property
    def parameter_number(self) -> int | None:
        if self.opcode == "parameter" and self.literal is not None:
            return int(self.literal)
        return None

    @property
    def control_predecessors(self) -> list[str]:
        raw = self.attrs.get("control-predecessors")
        return names_in(raw) if raw else []

    @property
    def tuple_index(self) -> int | None:
        raw = self.attrs.get("index")
        return int(raw) if raw is not None and raw.lstrip("-").isdigit() else None

    def called(self) -> list[tuple[str, str]]:
        """``(role, computation name)`` for every computation this instruction calls."""
        if _CALL_KEYS.isdisjoint(self.attrs):
            return []
        out = []
        for key in CALL_KEYS:
            raw = self.attrs.get(key)
            if raw is not None:
                for n in names_in(raw):
                    out.append((key, n))
        return out

    def metadata(self) -> dict[str, str]:
        raw = self.attrs.get("metadata")
        return parse_kv_strings(raw) if raw else {}

    def frontend_attributes(self) -> dict[str, str]:
        raw = self.attrs.get("frontend_attributes")
        return parse_kv_strings(raw) if raw else {}

    def backend_config(self):
        """The backend config as JSON (dict) when it parses, else its raw text, else None."""
        raw = self.attrs.get("backend_config")
        return parse_backend_config(raw) if raw is not None else None


# The attributes that name called computations: one each, then the lists.
_LIST_CALL_KEYS = frozenset(("branch_computations", "called_computations"))
CALL_KEYS = (
    "calls",
    "to_apply",
    "condition",
    "body",
    "true_computation",
    "false_computation",
    "select",
    "scatter",
    "comparator",
    "branch_computations",
    "called_computations",
)
_CALL_KEYS = frozenset(CALL_KEYS)


@dataclass(eq=False)
class HloComputation:
    name: str
    is_entry: bool
    instructions: list[HloInstruction]
    index: dict[str, HloInstruction]
    root: HloInstruction
    root_explicit: bool
    span: tuple[int, int]  # from ``ENTRY``/name to the closing brace (included)
    body_open: int  # offset just after ``{``
    body_close: int  # offset of ``}``
    line: int
    execution_thread: str | None = None
    inline: bool = False  # written in place as an attribute value (``to_apply={...}``)

    def parameters(self) -> dict[int | None, HloInstruction]:
        return {i.parameter_number: i for i in self.instructions if i.opcode == "parameter"}


@dataclass(eq=False)
class HloModule:
    name: str | None
    text: str
    path: str | None
    attrs: dict[str, str]
    attr_spans: dict[str, tuple[int, int]]
    header_span: tuple[int, int] | None  # ``HloModule`` .. last header attribute
    name_end: int | None  # offset after the module name token
    computations: list[HloComputation]
    by_name: dict[str, HloComputation]
    entry: HloComputation
    notes: list[str] = field(default_factory=list)
    # the trailing sections' entries by number (``FileNames``, ``FileLocations``, ...)
    sections: dict[str, dict[int, str]] = field(default_factory=dict)

    @property
    def is_scheduled(self) -> bool:
        return self.attrs.get("is_scheduled", "false").strip() == "true"

    @property
    def replica_count(self) -> int:
        return int(self.attrs.get("replica_count", "1"))

    @property
    def num_partitions(self) -> int:
        return int(self.attrs.get("num_partitions", "1"))

    def input_output_alias(self) -> list[tuple[tuple[int, ...], int, tuple[int, ...], str]]:
        """``(output index, parameter number, parameter index, kind)`` entries."""
        raw = self.attrs.get("input_output_alias")
        if not raw:
            return []
        out = []
        for m in _ALIAS_RE.finditer(raw):
            out.append(
                (
                    _int_tuple(m.group(1)),
                    int(m.group(2)),
                    _int_tuple(m.group(3)),
                    m.group(4) or "may-alias",
                )
            )
        return out

    def buffer_donors(self) -> list[tuple[int, tuple[int, ...]]]:
        raw = self.attrs.get("buffer_donor")
        if not raw:
            return []
        return [(int(m.group(1)), _int_tuple(m.group(2))) for m in _DONOR_RE.finditer(raw)]

    def location(self, offset: int) -> tuple[int, int]:
        return _location(self.text, offset, _line_starts(self.text))

    def source_of_frame(self, frame_id: int) -> tuple[str, int] | None:
        """``(file, line)`` of stack frame ``frame_id`` (an instruction's ``stack_frame_id``
        metadata: its innermost frame, numbered from 1 as in the ``StackFrames`` section),
        or None where the module does not say."""
        try:
            frame = parse_kv_strings(self.sections["StackFrames"][frame_id])
            loc = parse_kv_strings(self.sections["FileLocations"][int(frame["file_location_id"])])
            name = self.sections["FileNames"][int(loc["file_name_id"])]
            return _unquote(name.strip()), int(loc["line"])
        except (KeyError, ValueError):
            return None


_ALIAS_RE = re.compile(
    r"\{([\d,\s]*)\}\s*:\s*\(\s*(\d+)\s*,\s*\{([\d,\s]*)\}\s*(?:,\s*([\w-]+))?\s*\)"
)
_DONOR_RE = re.compile(r"\(\s*(\d+)\s*,\s*\{([\d,\s]*)\}\s*\)")


def _int_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"-?\d+", text))


# ---------------------------------------------------------------------------------------------
# Tokenizer

_TOKEN_RE = re.compile(
    r"""
   (?P<ws>\s+)
  |(?P<c>/\*.*?\*/|//[^\n]*)
  |(?P<badc>/\*)
  |(?P<s>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
  |(?P<bads>["'])
  |(?P<arrow>->)
  |(?P<le><=)
  |(?P<p>[{}()\[\],=:*\#~])
  |(?P<w>%?(?:[A-Za-z0-9_.$+?]|-(?!>))+)
  |(?P<bad>.)
""",
    re.X | re.S,
)

# token = (kind, text, start, end); kind is 'w' (word), 's' (string) or the punctuation text
EOF = "eof"


def _line_starts(text: str) -> list[int]:
    return [0] + [m.end() for m in re.finditer("\n", text)]


def _location(text: str, offset: int, starts: list[int]) -> tuple[int, int]:
    line = bisect.bisect_right(starts, offset)
    return line, offset - starts[line - 1] + 1


def tokenize(text: str, path: str | None = None) -> list[tuple[str, str, int, int]]:
    """Every token of ``text`` (whitespace and comments dropped), then an ``eof`` token."""
    toks: list[tuple[str, str, int, int]] = []
    append = toks.append
    for m in _TOKEN_RE.finditer(text):
        kind = m.lastgroup
        if kind == "ws" or kind == "c":
            continue
        if kind == "w" or kind == "s":
            append((kind, m.group(), m.start(), m.end()))
        elif kind == "p":
            g = m.group()
            append((g, g, m.start(), m.end()))
        elif kind == "arrow":
            append(("->", "->", m.start(), m.end()))
        elif kind == "le":
            append(("<=", "<=", m.start(), m.end()))
        else:
            line, col = _location(text, m.start(), _line_starts(text))
            reason = {"badc": "unterminated /* comment", "bads": "unterminated string"}.get(
                kind or "", f"unexpected character {m.group()!r}"
            )
            raise InputError(reason, path, line, col)
    append((EOF, "", len(text), len(text)))
    return toks


# The parser reads a coarser token stream: the same tokens as ``tokenize``, except that three
# frequent runs come as one token each (far fewer tokens on big modules):
# - ``S``: an array shape with plain dims and an optional layout of plain dims and items
#   with plain arguments, ``f32[8,128]{1,0}``, ``bf16[8,128]{1,0:T(8,128)(2,1)}`` (dynamic
#   dims and other layouts are read token by token);
# - ``g``: a brace group written right after ``=`` (an attribute value such as
#   ``metadata={...}``) with at most two levels of brackets inside;
# - ``o``: a parenthesized list of plain operands (names, each maybe after an ``S`` shape)
#   written right after a word, as after an opcode: ``add(f32[8]{0} %a, %b)``.
# A coarse token only covers text that the fine tokenizer splits without error (no comments,
# no stray characters, strings closed) and ends where a fine token ends, so token boundaries
# and tokenizing errors are the same. The grammar reads ``g`` and ``o`` as balanced groups
# wherever it skips one; where it wants the fine tokens of a coarse one (malformed input, a
# layout item), the token is split back; error messages name a coarse token by its first
# fine token.
# inside a group: a maximal run of plain characters (maximal, so that a failing match has
# one way to try only), ``->``, ``<=``, ``%`` before a word, or a string
_GROUP_PLAIN = r"(?:[A-Za-z0-9_.$+?,=:*\#~\s]|-(?!>))"
_GROUP_ATOM = (
    "(?:"
    + _GROUP_PLAIN
    + "+(?!"
    + _GROUP_PLAIN
    + ")"
    + r"""|->|<=|%(?=[A-Za-z0-9_.$+?]|-(?!>))|"[^"\\]*(?:\\.[^"\\]*)*\""""
    + r"""|'[^'\\{}"]*(?:\\.[^'\\{}"]*)*')"""
)
_GROUP = (
    r"\{(?:"
    + _GROUP_ATOM
    + r"|\{"
    + _GROUP_ATOM
    + r"*\}|\["
    + _GROUP_ATOM
    + r"*\]|\("
    + _GROUP_ATOM
    + r"*\))*\}"
)
_PLAIN_DIMS = r"(?:[0-9]+(?:,[0-9]+)*)?"
_LAYOUT_ITEMS = r"(?::(?:[A-Za-z]+(?:\([0-9]+(?:,[0-9]+)*\))+)*)?"  # :T(8,128)(2,1)E(4)S(1)
_PLAIN_SHAPE = (
    r"[a-z][a-z0-9]*\[" + _PLAIN_DIMS + r"\](?:\{" + _PLAIN_DIMS + _LAYOUT_ITEMS + r"\}|(?!\{))"
)
_WORD_CHAR = r"(?:[A-Za-z0-9_.$+?]|-(?!>))"
_WORD = r"%?" + _WORD_CHAR + "+"
_STRING = r'"[^"\\]*(?:\\.[^"\\]*)*"'
_SQ_STRING = r"'[^'\\]*(?:\\.[^'\\]*)*'"
_PLAIN_OPERAND = r"(?:" + _PLAIN_SHAPE + r"\s*)?" + _WORD
_PLAIN_OPERANDS = r"\((?:\s*" + _PLAIN_OPERAND + r"(?:\s*,\s*" + _PLAIN_OPERAND + r")*)?\s*\)"
# an attribute ``, key=value`` whose value is one word, string or group, not continued
_PLAIN_ATTR = (
    r"\s*,\s*"
    + _WORD
    + r"\s*=\s*(?:"
    + _WORD
    + "|"
    + _STRING
    + "|"
    + _GROUP
    + r")(?![{(\[%]|"
    + _WORD_CHAR
    + r")(?!(?:\s|/\*.*?\*/|//[^\n]*)*(?:->|<=))"
)
# words the grammar looks for by their text: never the name of an ``I`` token
_KEYWORDS = (
    r"(?:ROOT|ENTRY|HloModule|execution_thread|FileNames|FunctionNames|FileLocations"
    r"|StackFrames)(?!" + _WORD_CHAR + ")"
)
_FAST_TOKEN_RE = re.compile(
    r"""
  (?:\s+|/\*.*?\*/|//[^\n]*)*
  (?:
     (?P<I>(?!"""
    + _KEYWORDS
    + r""")(?P<Iname>"""
    + _WORD
    + r""")\s*=\s*(?:(?P<Ishape>"""
    + _PLAIN_SHAPE
    + r""")\s*)?(?P<Iop>"""
    + _WORD
    + r""")(?P<Iargs>"""
    + _PLAIN_OPERANDS
    + r""")(?:"""
    + _PLAIN_ATTR
    + r""")*)
    |(?P<S>"""
    + _PLAIN_SHAPE
    + r""")
    |(?P<g>(?<==)"""
    + _GROUP
    + r""")
    |(?P<o>(?<=[A-Za-z0-9_.$+?\-])\(\s*"""
    + _PLAIN_OPERAND
    + r"(?:\s*,\s*"
    + _PLAIN_OPERAND
    + r""")*\s*\))
    |(?P<w>"""
    + _WORD
    + r""")
    |(?P<s>"""
    + _STRING
    + "|"
    + _SQ_STRING
    + r""")
    |(?P<p>[{}()\[\],=:*\#~])
    |(?P<arrow>->)
    |(?P<le><=)
    |(?P<bad>/\*|"|'|.)
    |(?P<eof>\Z)
  )""",
    re.X | re.S,
)
# the items of a plain layout, one match each: (name, first argument)
_LAYOUT_ITEM_RE = re.compile(r"([A-Za-z]+)\(([0-9]+)")
# The two patterns below only read text the token pattern has already checked (the operand
# list of an ``o``/``I`` token, the attributes of an ``I`` token, with the end of the token as
# ``endpos``), so they can be loose about what they accept.
# the operands, one match each: (plain shape or None, name)
_OPERAND_RE = re.compile(
    r"(?:([a-z][a-z0-9]*\[[^\]]*\](?:\{[^{}]*\})?)\s*)?(%?[A-Za-z0-9_.$+?\-]+)"
)
# the attributes, one match each: (key, value)
_ATTR_RE = re.compile(
    r"\s*,\s*([A-Za-z0-9_.$+?%\-]+)\s*=\s*("
    + _STRING
    + r"|\{(?:[^{}\"]+(?![^{}\"])|"
    + _STRING
    + r"|\{(?:[^{}\"]+(?![^{}\"])|"
    + _STRING
    + r")*\})*\}|[^\s,{}\"]+)",
    re.S,
)
_BAD = "!"
_FAST_KINDS: list = [None] * (_FAST_TOKEN_RE.groups + 1)
for _name, _k in {
    "I": "I",
    "S": "S",
    "g": "g",
    "o": "o",
    "w": "w",
    "s": "s",
    "p": None,
    "arrow": "->",
    "le": "<=",
    "bad": _BAD,
    "eof": EOF,
}.items():
    _FAST_KINDS[_FAST_TOKEN_RE.groupindex[_name]] = _k
del _name, _k
_I = _FAST_TOKEN_RE.groupindex["I"]
_I_NAME, _I_SHAPE, _I_OP, _I_ARGS = (
    _FAST_TOKEN_RE.groupindex[g] for g in ("Iname", "Ishape", "Iop", "Iargs")
)
_COARSE = ("S", "g", "o", "I")
_WORDLIKE = ("S", "I")  # coarse tokens that start with a word
_KIND_OF = operator.itemgetter(0)


def _last_group(m: re.Match[str]) -> int:
    return m.lastindex  # type: ignore[return-value]  # every match sets a group


def _parser_tokens(text: str, pos: int = 0) -> list[tuple[Any, ...]]:
    """The parser's tokens of ``text[pos:]``. Characters that start no token stay in the
    stream as ``_BAD`` tokens: the parser reports them when it reads them, except inside
    the text it takes raw (a JSON dict), where XLA allows any character."""
    kinds = _FAST_KINDS
    # an ``I`` token keeps its match (5th item) for the parts of the instruction
    # every match sets a group (the pattern ends in ``(?P<eof>\Z)``): lastindex is an int
    toks = [
        (kinds[i] or m[i], m[i], m.start(i), m.end(i))
        if i != _I
        else ("I", m[i], m.start(i), m.end(i), m)
        for m in _FAST_TOKEN_RE.finditer(text, pos)
        for i in (_last_group(m),)
    ]
    if len(toks) > 1 and toks[-2][0] == EOF:  # trailing blanks, then the empty match at the end
        toks.pop()
    return toks


def _bad_token_error(text: str, path: str | None, t) -> InputError:
    line, col = _location(text, t[2], _line_starts(text))
    reason = {
        "/*": "unterminated /* comment",
        '"': "unterminated string",
        "'": "unterminated string",
    }.get(t[1], f"unexpected character {t[1]!r}")
    return InputError(reason, path, line, col)


# the end of a JSON dict as XLA's lexer reads one (backend_config, frontend attribute
# values): braces balance, double-quoted strings are skipped, anything else is raw text
_JSON_STEP_RE = re.compile(r'[^"{}]+|"(?:[^"\\]|\\.)*"|[{}]|"')
_SKIP_RE = re.compile(r"(?:\s+|/\*.*?\*/|//[^\n]*)*", re.S)
# attributes whose ``{...}`` value is a JSON dict, taken raw
_JSON_DICT_ATTRS = frozenset(("backend_config", "frontend_attributes"))


def _json_dict_end(text: str, start: int) -> int:
    """Offset after the ``}`` that closes the ``{`` at ``start``; -1 if there is none."""
    depth = 0
    pos = start
    match = _JSON_STEP_RE.match
    while True:
        m = match(text, pos)
        if m is None:
            return -1
        g = m.group()
        pos = m.end()
        if g == "{":
            depth += 1
        elif g == "}":
            depth -= 1
            if depth == 0:
                return pos
        elif g == '"':  # an unterminated string
            return -1


def _fine_tokens(text: str, start: int, end: int) -> list[tuple[Any, ...]]:
    """The fine tokens of ``text[start:end]`` (a coarse token: no errors, no comments)."""
    out: list[tuple[Any, ...]] = []
    for m in _TOKEN_RE.finditer(text, start, end):
        kind = m.lastgroup
        if kind == "ws":
            continue
        g = m.group()
        if kind == "p":
            out.append((g, g, m.start(), m.end()))
        elif kind == "arrow" or kind == "le":
            out.append((g, g, m.start(), m.end()))
        else:
            out.append((kind, g, m.start(), m.end()))
    return out


def _strip(name: str) -> str:
    return name[1:] if name.startswith("%") else name


# ---------------------------------------------------------------------------------------------
# Parser

_OPEN = {"{": "}", "(": ")", "[": "]"}
_CLOSE = {"}", ")", "]"}
_ATOMS = {"w", "s", "S", "g", "o"}  # one-token attribute values
_JOINED = {"{", "(", "[", "w", "S", "g", "o", "I"}  # continue a value when written right after it
_NAME_FOLLOW = {"=", "{", "(", "o"}  # after a word that starts the next instruction
_MESH_WORDS = frozenset(("mesh", "maximal_mesh"))


class _Parser:
    def __init__(self, text: str, path: str | None):
        self.text = text
        self.path = path
        # (kind, text, start, end), and the match as a 5th item for an ``I`` token
        self.toks: list[tuple[Any, ...]] = _parser_tokens(text)
        self._bad = (
            [t for t in self.toks if t[0] == _BAD] if _BAD in map(_KIND_OF, self.toks) else []
        )
        self._raw: list[tuple[int, int]] = []  # spans taken as raw text (JSON dicts)
        self._pending: list[HloInstruction] = []  # nested / compact-GTE operands to insert
        self._inline: list[HloComputation] = []  # computations written in place
        self._inline_names: set[str] = set()
        self._nested = 0
        self.i = 0
        self._starts: list[int] | None = None
        self.notes: list[str] = []
        self.sections: dict[str, dict[int, str]] = {}
        self._shapes: dict[str, Shape] = {}  # text of an ``S`` token -> its shape

    # -- helpers ------------------------------------------------------------------------------
    def loc(self, offset: int) -> tuple[int, int]:
        if self._starts is None:
            self._starts = _line_starts(self.text)
        return _location(self.text, offset, self._starts)

    def error(self, reason: str, offset: int | None = None) -> InputError:
        if offset is None:
            offset = self.toks[self.i][2]
        bad = self._first_bad()
        if bad is not None and bad[2] <= offset:  # a bad character before: that is the error
            return _bad_token_error(self.text, self.path, bad)
        line, col = self.loc(offset)
        return InputError(reason, self.path, line, col)

    def _first_bad(self):
        """The first bad character outside the raw (JSON dict) spans, or None."""
        for t in self._bad:
            if not any(s <= t[2] < e for s, e in self._raw):
                return t
        return None

    def raw_json_dict(self) -> int:
        """Take the ``{...}`` at the current token as XLA's lexer takes a JSON dict; return
        its end offset and go on with the first token after it."""
        start = self.toks[self.i][2]
        end = _json_dict_end(self.text, start)
        if end < 0:
            raise self.error("unbalanced '{' or unterminated string in a JSON dict", start)
        self._raw.append((start, end))
        toks = self.toks
        k = self.i
        while toks[k][3] <= end and toks[k][0] != EOF:
            k += 1
        t = toks[k]
        # _SKIP_RE matches the empty string, so match() is never None
        if t[2] < end or _SKIP_RE.match(self.text, end).end() != t[2]:  # type: ignore[union-attr]
            # a token (a string, a comment) crosses the end of the raw text: read again from it
            toks[k:] = _parser_tokens(self.text, end)
            self._bad = [t for t in toks if t[0] == _BAD]
        self.i = k
        return end

    def peek(self, k: int = 0):
        j = self.i + k
        return self.toks[j] if j < len(self.toks) else self.toks[-1]

    def next(self):
        t = self.toks[self.i]
        if t[0] != EOF:
            self.i += 1
        return t

    def _describe(self, t) -> str:
        k = t[0]
        if k == EOF:
            return "end of file (truncated input?)"
        text = t[1]
        if k in _COARSE:  # a coarse token reads as its first fine token
            text = _fine_tokens(self.text, t[2], t[3])[0][1]
        return repr(text if len(text) <= 40 else text[:37] + "...")

    def _split(self) -> tuple[str, str, int, int]:
        """Replace the coarse token at ``self.i`` by its fine tokens; return the first."""
        t = self.toks[self.i]
        self.toks[self.i : self.i + 1] = _fine_tokens(self.text, t[2], t[3])
        return self.toks[self.i]

    def expect(self, kind: str, what: str):
        t = self.toks[self.i]
        if t[0] != kind:
            if t[0] in _WORDLIKE and kind == "w":
                t = self._split()
            else:
                raise self.error(f"expected {what}, found {self._describe(t)}", t[2])
        self.i += 1
        return t

    def list_end(self, close: str, where: str):
        """After an element of a list: step past a ``,`` (None: more follow) or past
        ``close`` (its token: the list ends); anything else is an error."""
        n = self.toks[self.i]
        if n[0] != "," and n[0] != close:
            raise self.error(
                f"expected ',' or '{close}' in {where}, found {self._describe(n)}", n[2]
            )
        self.i += 1
        return n if n[0] == close else None

    def accept(self, word: str) -> bool:
        """Step past the next token if it is the word ``word``; whether it was."""
        t = self.toks[self.i]
        if t[0] == "w" and t[1] == word:
            self.i += 1
            return True
        return False

    def skip_group(self) -> int:
        """Skip a balanced ``{...}``, ``(...)`` or ``[...]``; return the end offset."""
        toks = self.toks
        open_tok = toks[self.i]
        stack = [open_tok]
        self.i += 1
        while True:
            t = toks[self.i]
            k = t[0]
            if k in _OPEN:
                stack.append(t)
            elif k in _CLOSE:
                top = stack[-1]
                if _OPEN[top[0]] != k:
                    line, _ = self.loc(top[2])
                    raise self.error(
                        f"unbalanced brackets: {k!r} does not close "
                        f"{top[0]!r} opened at line {line}",
                        t[2],
                    )
                stack.pop()
                if not stack:
                    self.i += 1
                    return t[3]
            elif k == EOF:
                top = stack[-1]
                line, col = self.loc(top[2])
                raise self.error(
                    f"unexpected end of file: {top[0]!r} opened at line {line} "
                    f"column {col} is never closed",
                    t[2],
                )
            self.i += 1

    def value(self, key: str = "") -> tuple[int, int]:
        """An attribute value: atoms (words, strings, bracket groups) joined by ``->``/``<=``
        or written back to back (``[2,4]<=[4,2]T(1,0)``, ``0fb_0io->0fb``); a JSON dict for
        ``backend_config`` / ``frontend_attributes``; a shape and a literal for ``literal``;
        a mesh and its axes for replica groups."""
        toks = self.toks
        t = toks[self.i]
        start = t[2]
        if t[0] == "{" and key in _JSON_DICT_ATTRS:
            return start, self.raw_json_dict()
        end: int | None
        if key == "literal" and t[0] == "(":  # a tuple: ``( s32[2] {1, 2}, f32[] 0 )``
            end = self.skip_group()
            if toks[self.i][0] == "(":
                end = self.skip_group()
            return start, end
        if key == "literal" and self._starts_shape():
            self.shape()
            return start, self._literal_value()
        if t[0] == "w" and t[1] in _MESH_WORDS:
            return start, self._mesh_value()
        end = None
        while True:
            t = toks[self.i]
            k = t[0]
            if k == "I":
                t = self._split()
                k = t[0]
            if k in _OPEN:
                end = self.skip_group()
            elif k == "w" or k == "s" or k in _COARSE:
                self.i += 1
                end = t[3]
            else:
                if end is None:
                    raise self.error(
                        f"expected an attribute value, found {self._describe(t)}", t[2]
                    )
                raise self.error(f"expected a value after {t[1]!r}", t[2])
            n = toks[self.i]
            if n[0] == "->" or n[0] == "<=":
                self.i += 1
                continue
            if n[2] == end and n[0] in _JOINED:
                continue
            return start, end

    def _literal_value(self) -> int:
        """A literal after its shape: ``{1, 2}``, ``(1, {2})``, ``0.1``, ``-inf``, ``nan``."""
        t = self.toks[self.i]
        if t[0] in _OPEN:
            return self.skip_group()
        if t[0] in ("w", "g", "o", "s"):
            self.i += 1
            return t[3]
        raise self.error(f"expected a literal, found {self._describe(t)}", t[2])

    def _mesh_value(self) -> int:
        """``mesh['a'=2,'b'=4] {'b'}``, ``mesh[...], device_ids=(...) {...}``,
        ``maximal_mesh[device_id=0] {}``: XLA's mesh-axes replica groups."""
        toks = self.toks
        self.i += 1
        if toks[self.i][0] != "[":
            raise self.error(f"expected '[' after {toks[self.i - 1][1]!r}")
        self.skip_group()
        if (
            toks[self.i][0] == ","
            and toks[self.i + 1][1] == "device_ids"
            and toks[self.i + 2][0] == "="
        ):
            self.i += 3
            t = toks[self.i]
            if t[0] == "o":
                self.i += 1
                t[3]
            elif t[0] == "(":
                self.skip_group()
            else:
                raise self.error(f"expected '(' after device_ids=, found {self._describe(t)}")
        t = toks[self.i]
        if t[0] == "g":
            self.i += 1
            return t[3]
        if t[0] == "{":
            return self.skip_group()
        raise self.error(
            f"expected the mesh axes '{{...}}' after the mesh, found {self._describe(t)}", t[2]
        )

    # -- shapes -------------------------------------------------------------------------------
    def shape(self) -> Shape:
        toks = self.toks
        t = toks[self.i]
        if t[0] == "I":
            t = self._split()
        if t[0] == "S":
            self.i += 1
            shape = self._shapes.get(t[1])
            if shape is None:
                shape = self._plain_shape(t)
            n = toks[self.i]
            if n[0] == "{" and shape.layout is None and self._layout_follows():
                # ``f32[2] {0}``: a layout after blanks
                lstart = n[2]
                bits, space = self._layout()
                shape = replace(
                    shape,
                    element_bits=bits,
                    memory_space=space,
                    layout=self.text[lstart : toks[self.i - 1][3]],
                )
            return shape
        if t[0] == "w" and t[1] == "b" and toks[self.i + 1][0] in ("(", "o"):
            # ``b(f32[16])``: a buffer holding an array
            self.i += 1
            if toks[self.i][0] == "o":
                self._split()
            self.i += 1
            inner = self.shape()
            self.expect(")", "')' at the end of a buffer shape b(...)")
            if not inner.is_array:
                raise self.error(f"a buffer shape b(...) holds an array, not {inner}", t[2])
            return replace(inner, is_buffer=True)
        if t[0] == "(":
            self.i += 1
            elems = []
            if toks[self.i][0] == ")":
                self.i += 1
                return Shape(TUPLE)
            while True:
                elems.append(self.shape())
                if self.list_end(")", "a tuple shape"):
                    return Shape(TUPLE, elements=tuple(elems))
        if t[0] != "w":
            raise self.error(f"expected a shape, found {self._describe(t)}", t[2])
        et = t[1]
        if et not in ELEMENT_BYTES and et != OPAQUE:
            raise self.error(f"unknown element type {et!r}", t[2])
        self.i += 1
        dims: list[int] = []
        dyn: list[bool] = []
        unb: list[bool] = []
        end = t[3]
        if toks[self.i][0] == "[":
            self.i += 1
            if toks[self.i][0] == "]":
                end = toks[self.i][3]
                self.i += 1
            else:
                while True:
                    d = toks[self.i]
                    bounded = False
                    if d[0] == "<=":
                        bounded = True
                        self.i += 1
                        d = toks[self.i]
                    if d[0] == "I":
                        d = self._split()
                    if d[0] == "w" and d[1] == "?":
                        dims.append(1)
                        dyn.append(True)
                        unb.append(True)
                    elif d[0] == "w" and d[1].isdigit():
                        dims.append(int(d[1]))
                        dyn.append(bounded)
                        unb.append(False)
                    else:
                        raise self.error(
                            f"expected a dimension size, found {self._describe(d)}", d[2]
                        )
                    self.i += 1
                    closing = self.list_end("]", "dimensions")
                    if closing:
                        end = closing[3]
                        break
        bits = None
        space = 0
        layout = None
        n = toks[self.i]
        if n[0] == "{" and (n[2] == end and toks[self.i + 1][0] == "}" or self._layout_follows()):
            lstart = n[2]
            bits, space = self._layout()
            layout = self.text[lstart : toks[self.i - 1][3]]
        return Shape(et, tuple(dims), tuple(dyn), tuple(unb), (), bits, space, layout)

    def _plain_shape(self, t) -> Shape:
        """The shape of an ``S`` token: ``etype[d,...]`` and maybe ``{m,...[:items]}``."""
        text = t[1]
        k = text.index("[")
        et = text[:k]
        if et not in ELEMENT_BYTES and et != OPAQUE:
            raise self.error(f"unknown element type {et!r}", t[2])
        close = text.index("]", k)
        dims = tuple(int(d) for d in text[k + 1 : close].split(",")) if close > k + 1 else ()
        flags = (False,) * len(dims)
        layout = text[close + 1 :] or None
        bits = None
        space = 0
        if layout is not None and ":" in layout:
            for item, first_arg in _LAYOUT_ITEM_RE.findall(layout, layout.index(":")):
                if item == "E":
                    bits = int(first_arg)
                elif item == "S":
                    space = int(first_arg)
        shape = Shape(et, dims, flags, flags, (), bits, space, layout)
        self._shapes[text] = shape
        return shape

    def _layout_follows(self) -> bool:
        """At a ``{`` after a shape: is it a layout? As in XLA, when an integer or ``:``
        follows (``-> f32[2] {`` opens a computation body)."""
        n = self.toks[self.i + 1]
        k = n[0]
        if k == ":":
            return True
        if k == "w" or k == "S" or k == "I":
            c = n[1][:1]
            return c.isdigit()
        return False

    def _layout(self) -> tuple[int | None, int]:
        """``{minor_to_major[:items]}``; returns (E(n) bits, S(n) memory space)."""
        toks = self.toks
        self.i += 1  # '{'
        bits = None
        space = 0
        while toks[self.i][0] not in (":", "}"):
            t = toks[self.i]
            if t[0] in _WORDLIKE:
                t = self._split()
            if t[0] not in ("w", ","):
                raise self.error(f"bad layout: unexpected {self._describe(t)}", t[2])
            self.i += 1
        if toks[self.i][0] == ":":
            self.i += 1
            while toks[self.i][0] != "}":
                t = toks[self.i]
                if t[0] in _WORDLIKE:
                    t = self._split()
                if t[0] not in ("w", "#", "*"):
                    raise self.error(f"bad layout item {self._describe(t)}", t[2])
                self.i += 1
                n = toks[self.i]
                if n[0] == "o":  # T(8,128): its first fine token is the first argument
                    first_arg = _fine_tokens(self.text, n[2] + 1, n[3])[0]
                elif n[0] == "(":
                    first_arg = toks[self.i + 1]
                    if first_arg[0] in _COARSE:
                        first_arg = _fine_tokens(self.text, first_arg[2], first_arg[3])[0]
                else:
                    raise self.error(f"expected '(' after layout item {t[1]!r}", n[2])
                while toks[self.i][0] in ("(", "o"):
                    if toks[self.i][0] == "o":
                        self.i += 1
                    else:
                        self.skip_group()
                if t[1] in ("E", "S"):
                    if first_arg[0] != "w" or not first_arg[1].isdigit():
                        raise self.error(f"bad {t[1]}(...) in layout", first_arg[2])
                    if t[1] == "E":
                        bits = int(first_arg[1])
                    else:
                        space = int(first_arg[1])
        self.i += 1  # '}'
        return bits, space

    def _starts_shape(self) -> bool:
        t = self.toks[self.i]
        k = t[0]
        if k == "S" or k == "(":
            return True
        if k != "w":
            return False
        n = self.toks[self.i + 1]
        if n[0] == "[":
            return True
        if t[1] == "b" and n[0] in ("(", "o") and n[2] == t[3]:
            return True
        return t[1] in ("token", OPAQUE) and (n[0] == "w" or n[0] in _WORDLIKE)

    # -- module -------------------------------------------------------------------------------
    def module(self) -> HloModule:
        toks = self.toks
        name = None
        attrs: dict[str, str] = {}
        spans: dict[str, tuple[int, int]] = {}
        header = None
        name_end = None
        t = toks[self.i]
        if t[0] == "w" and t[1] == "HloModule":
            self.i += 1
            nt = self.expect("w", "a module name")
            name = _strip(nt[1])
            name_end = nt[3]
            end = nt[3]
            if toks[self.i][0] == ":" and toks[self.i][2] == end:  # old form ``HloModule m:``
                self.i += 1
                end = toks[self.i - 1][3]
            while toks[self.i][0] == ",":
                self.i += 1
                k = self.expect("w", "a module attribute name")
                self.expect("=", f"'=' after {k[1]!r}")
                s, e = self.value(k[1])
                attrs[k[1]] = self.text[s:e]
                spans[k[1]] = (s, e)
                end = e
            header = (t[2], end)
        comps: list[HloComputation] = []
        while toks[self.i][0] != EOF:
            t = toks[self.i]
            if t[0] == "w" and t[1] in TRAILING_SECTIONS:
                self.skip_section()
                continue
            if t[0] == "}":
                raise self.error("unbalanced brackets: '}' outside any computation", t[2])
            comps.append(self.computation())
        bad = self._first_bad()
        if bad is not None:
            raise _bad_token_error(self.text, self.path, bad)
        if not comps:
            raise self.error("no computation found (truncated or empty HLO module?)")
        by_name: dict[str, HloComputation] = {}
        for c in comps:
            if c.name in by_name:
                raise self.error(
                    f"computation {c.name!r} is defined twice (first at line "
                    f"{by_name[c.name].line})",
                    c.span[0],
                )
            by_name[c.name] = c
        entries = [c for c in comps if c.is_entry]
        if len(entries) > 1:
            raise self.error(
                f"more than one ENTRY computation ({entries[0].name!r}, {entries[1].name!r})",
                entries[1].span[0],
            )
        entry = entries[0] if entries else comps[-1]
        if not entries:
            self.notes.append(f"no ENTRY computation: using the last one, {entry.name!r}")
        for c in self._inline:
            if c.name in by_name:
                raise self.error(f"computation {c.name!r} is defined twice", c.span[0])
            by_name[c.name] = c
        comps = comps + self._inline
        unknown = {i.wrapped_opcode or i.opcode for c in comps for i in c.instructions}
        unknown -= XLA_OPCODES
        if unknown:
            self.notes.append(
                "opcode(s) XLA's parser does not know (read as generic ops): "
                + ", ".join(sorted(unknown))
            )
        mod = HloModule(
            name,
            self.text,
            self.path,
            attrs,
            spans,
            header,
            name_end,
            comps,
            by_name,
            entry,
            self.notes,
        )
        mod.sections = self.sections
        _check_module(self, mod)
        return mod

    def skip_section(self) -> None:
        """``FileNames`` / ``FunctionNames`` / ``FileLocations`` / ``StackFrames``: numbered
        entries (``1 "file.py"``, ``1 {file_name_id=1 ...}``) before or after the
        computations; each entry's text is kept in ``self.sections`` (source lines of the
        instructions' ``stack_frame_id`` metadata)."""
        toks = self.toks
        entries = self.sections.setdefault(toks[self.i][1], {})
        self.i += 1
        while True:
            t = toks[self.i]
            if t[0] == "I":
                t = self._split()
            if t[0] != "w" or not t[1][:1].isdigit():
                return
            self.i += 1
            n = toks[self.i]
            if n[0] == "s" or n[0] == "o":
                self.i += 1
                end = n[3]
            elif n[0] in _OPEN:
                end = self.skip_group()
            else:
                raise self.error(f"bad {t[1]!r} entry in a FileNames/StackFrames section", n[2])
            if t[1].isdigit():
                entries[int(t[1])] = self.text[n[2] : end]

    def computation(self) -> HloComputation:
        toks = self.toks
        start_tok = toks[self.i]
        is_entry = self.accept("ENTRY")
        nt = self.expect("w", "a computation name")
        name = _strip(nt[1])
        if toks[self.i][0] in ("(", "o"):  # signature: (p: shape, ...) -> shape
            if toks[self.i][0] == "o":
                self.i += 1
            else:
                self.skip_group()
            self.expect("->", "'->' after the computation's parameter list")
            self.shape()
        open_tok = self.expect("{", f"'{{' to open computation {name!r}")
        instrs, index, close_tok = self._body(name, open_tok)
        end = close_tok[3]
        thread = None
        if toks[self.i][0] == "," and toks[self.i + 1][1] == "execution_thread":
            self.i += 2
            self.expect("=", "'=' after execution_thread")
            st = self.expect("s", "a string")
            thread = _unquote(st[1])
            end = st[3]
        return self._make_computation(
            name, is_entry, instrs, index, start_tok, open_tok, close_tok, end, thread
        )

    def _make_computation(
        self,
        name,
        is_entry,
        instrs,
        index,
        start_tok,
        open_tok,
        close_tok,
        end,
        thread,
        inline=False,
    ) -> HloComputation:
        if not instrs:
            raise self.error(f"computation {name!r} has no instructions", open_tok[2])
        roots = [i for i in instrs if i.root_marked]
        if len(roots) > 1:
            raise self.error(
                f"computation {name!r} has two ROOT instructions "
                f"({roots[0].name!r}, {roots[1].name!r})",
                roots[1].span[0],
            )
        line, _ = self.loc(start_tok[2])
        return HloComputation(
            name,
            is_entry,
            instrs,
            index,
            roots[0] if roots else instrs[-1],
            bool(roots),
            (start_tok[2], end),
            open_tok[3],
            close_tok[2],
            line,
            thread,
            inline,
        )

    def inline_computation(self, owner: str, key: str) -> str:
        """``to_apply={ x = ... ROOT y = ... }``: a computation written in place (XLA's
        parser takes these; its printer never writes them). Returns the name given to it."""
        open_tok = self.expect("{", "'{' to open a computation")
        name = f"_inline.{owner}.{key}"
        k = 1
        while name in self._inline_names:
            k += 1
            name = f"_inline.{owner}.{key}.{k}"
        self._inline_names.add(name)
        saved = self._pending
        self._pending = []
        instrs, index, close_tok = self._body(name, open_tok)
        self._pending = saved
        self._inline.append(
            self._make_computation(
                name,
                False,
                instrs,
                index,
                open_tok,
                open_tok,
                close_tok,
                close_tok[3],
                None,
                inline=True,
            )
        )
        return name

    def _body(self, name: str, open_tok):
        """The instructions of a computation, up to and including its ``}``."""
        toks = self.toks
        instrs: list[HloInstruction] = []
        index: dict[str, HloInstruction] = {}
        pending = self._pending
        while True:
            t = toks[self.i]
            if t[0] == "}":
                break
            if t[0] == EOF:
                line, col = self.loc(open_tok[2])
                raise self.error(
                    f"unexpected end of file: computation {name!r} opened with "
                    f"'{{' at line {line} column {col} is never closed",
                    t[2],
                )
            if t[0] == "w" and (
                t[1] == "ENTRY" or (t[1] != "ROOT" and toks[self.i + 1][0] in ("{", "(", "o"))
            ):
                line, col = self.loc(open_tok[2])
                raise self.error(
                    f"unbalanced braces: computation {name!r} opened with '{{' at "
                    f"line {line} column {col} is not closed before this "
                    "computation",
                    t[2],
                )
            ins = self.instruction()
            if pending:  # nested instructions and compact GTEs in its operands come first
                for extra in pending:
                    if extra.name not in index:
                        index[extra.name] = extra
                        instrs.append(extra)
                pending.clear()
            if ins.name in index:
                raise self.error(
                    f"instruction name {ins.name!r} is defined twice in "
                    f"{name!r} (first at line {index[ins.name].line})",
                    ins.name_offset,
                )
            index[ins.name] = ins
            instrs.append(ins)
        return instrs, index, self.next()

    def _plain_operands(
        self,
        raw_op: str,
        start: int,
        end: int,
        operands: list[str],
        oshapes: list[Shape | None],
        offsets: list[int],
    ) -> str | None:
        """Read ``text[start:end]``, a parenthesized list of plain operands (or the literal
        of a constant/parameter); returns the literal."""
        if raw_op in ("constant", "parameter"):
            inner = self.text[start + 1 : end - 1]
            literal = inner.strip()
            if raw_op == "parameter" and not literal.isdigit():
                s = start + 1 + len(inner) - len(inner.lstrip())
                raise self.error(f"parameter number must be an integer, found {literal!r}", s)
            return literal
        cache = self._shapes
        for m in _OPERAND_RE.finditer(self.text, start + 1, end - 1):
            name = m[2]
            operands.append(name[1:] if name[0] == "%" else name)
            st = m[1]
            if st is None:
                oshapes.append(None)
            else:
                sh = cache.get(st)
                if sh is None:
                    sh = self._plain_shape(("S", st, m.start(1), m.end(1)))
                oshapes.append(sh)
            offsets.append(m.start(2))
        return None

    def instruction(self) -> HloInstruction:
        toks = self.toks
        first = toks[self.i]
        root = self.accept("ROOT")
        nt = toks[self.i]
        operands: list[str] = []
        oshapes: list[Shape | None] = []
        offsets: list[int] = []
        attrs: dict[str, str] = {}
        aoffs: dict[str, int] = {}
        text = self.text
        fast = nt[0] == "I"
        if fast:  # name, shape, opcode, plain operands, plain attributes
            self.i += 1
            m = nt[4]
            name = m[_I_NAME]
            st = m[_I_SHAPE]
            if st is None:
                shape = None
            else:
                shape = self._shapes.get(st)
                if shape is None:
                    shape = self._plain_shape(("S", st, m.start(_I_SHAPE), m.end(_I_SHAPE)))
            raw_op = m[_I_OP]
            args_start, args_end = m.span(_I_ARGS)
            literal = self._plain_operands(raw_op, args_start, args_end, operands, oshapes, offsets)
            end = nt[3]
            for am in _ATTR_RE.finditer(text, args_end, end):
                attrs[am[1]] = am[2]
                aoffs[am[1]] = am.start(2)
            if not _CALL_KEYS.isdisjoint(attrs) and any(
                attrs[key][:1] == "{"
                and key not in _LIST_CALL_KEYS
                or attrs[key][:1] == "{"
                and attrs[key][1:].lstrip()[:1] == "{"
                for key in _CALL_KEYS.intersection(attrs)
            ):
                # a computation written in place: read this instruction token by token
                self.i -= 1
                nt = self._split()
                operands.clear()
                oshapes.clear()
                offsets.clear()
                attrs.clear()
                aoffs.clear()
                fast = False
        if not fast:
            if nt[0] == "S":
                nt = self._split()
            if nt[0] != "w":
                raise self.error(f"expected an instruction name, found {self._describe(nt)}", nt[2])
            name = nt[1]
            self.i += 1
            if toks[self.i][0] == "=":
                self.i += 1
            else:
                self.expect("=", f"'=' after instruction name {name!r}")
            if toks[self.i][0] == "S":
                shape = self.shape()
            else:
                shape = self.shape() if self._starts_shape() else None
            ot = toks[self.i]
            if ot[0] == "w":
                self.i += 1
            else:
                ot = self.expect("w", "an opcode")
            raw_op = ot[1]
            ct = toks[self.i]
            if ct[0] == "o":  # plain operands (or a plain literal) in one token
                self.i += 1
                end = ct[3]
                literal = self._plain_operands(raw_op, ct[2], end, operands, oshapes, offsets)
            else:
                literal = self._operands(raw_op, name, operands, oshapes, offsets)
                end = toks[self.i - 1][3]
        while toks[self.i][0] == ",":
            self.i += 1
            k = toks[self.i]
            if k[0] == "w" and toks[self.i + 1][0] == "=":
                self.i += 2
            else:
                k = self.expect("w", "an attribute name")
                self.expect("=", f"'=' after attribute {k[1]!r}")
            v = toks[self.i]
            if (v[0] == "{" or v[0] == "g") and k[1] in _CALL_KEYS and self._inline_follows(k[1]):
                s = v[2]
                attrs[k[1]] = self._called_value(name, k[1])
                aoffs[k[1]] = s
                end = toks[self.i - 1][3]
                continue
            n = toks[self.i + 1] if v[0] in _ATOMS else None
            if (
                n is not None
                and n[0] != "->"
                and n[0] != "<="
                and (n[2] != v[3] or n[0] not in _JOINED)
                and v[1] not in _MESH_WORDS
                and k[1] != "literal"
            ):
                self.i += 1  # a value of one token
                s, e = v[2], v[3]
            else:
                s, e = self.value(k[1])
            attrs[k[1]] = text[s:e]
            aoffs[k[1]] = s
            end = e
        n = toks[self.i]
        if not (
            n[0] in ("}", EOF, "I")
            or (n[0] == "w" and (n[1] in ("ROOT", "ENTRY") or toks[self.i + 1][0] in _NAME_FOLLOW))
        ):
            raise self.error(
                f"expected ',' and an attribute, or the next instruction, after "
                f"{_strip(name)!r}, found {self._describe(n)}",
                n[2],
            )
        canon = _CANONICAL.get(raw_op)
        if canon is None:
            canon = _CANONICAL[raw_op] = canonical_opcode(raw_op)
        opcode, wrapped = canon
        starts = self._starts
        if starts is None:
            starts = self._starts = _line_starts(text)
        line = bisect.bisect_right(starts, first[2])  # as loc()
        col = first[2] - starts[line - 1] + 1
        return HloInstruction(
            name[1:] if name[0] == "%" else name,
            opcode,
            raw_op,
            shape,
            operands,
            oshapes,
            attrs,
            (first[2], end),
            nt[2],
            line,
            col,
            root,
            literal,
            aoffs,
            offsets,
            wrapped_opcode=wrapped,
        )

    def _operands(
        self,
        raw_op: str,
        name: str,
        operands: list[str],
        oshapes: list[Shape | None],
        offsets: list[int],
    ) -> str | None:
        """``(`` operands or literal ``)`` token by token; returns the literal."""
        toks = self.toks
        self.expect("(", f"'(' after opcode {raw_op!r}")
        if raw_op in ("constant", "parameter"):
            # the literal / parameter number, kept as text
            s = toks[self.i][2]
            depth = 1
            while True:
                t = toks[self.i]
                if t[0] in _OPEN:
                    depth += 1
                elif t[0] in _CLOSE:
                    depth -= 1
                    if depth == 0:
                        break
                elif t[0] == EOF:
                    raise self.error(
                        f"unexpected end of file inside {raw_op}(...) of {_strip(name)!r}", t[2]
                    )
                self.i += 1
            literal = self.text[s : toks[self.i][2]].strip()
            self.i += 1
            if raw_op == "parameter" and not literal.isdigit():
                raise self.error(f"parameter number must be an integer, found {literal!r}", s)
            return literal
        if toks[self.i][0] != ")":
            while True:
                ostart = toks[self.i][2]
                oshape = self.shape() if self._starts_shape() else None
                on = toks[self.i]
                if on[0] in _WORDLIKE:
                    on = self._split()
                if on[0] != "w":
                    raise self.error(f"expected an operand name, found {self._describe(on)}", on[2])
                self.i += 1
                k = toks[self.i][0]
                if k == "(" or k == "o":
                    operands.append(self._nested_instruction(on, oshape, ostart))
                elif k == "#":
                    operands.append(self._compact_gte(on))
                else:
                    operands.append(_strip(on[1]))
                oshapes.append(oshape)
                offsets.append(on[2])
                n = toks[self.i]
                if n[0] == ",":
                    self.i += 1
                    continue
                if n[0] == ")":
                    break
                raise self.error(
                    f"expected ',' or ')' after operand {on[1]!r}, found {self._describe(n)}", n[2]
                )
        self.i += 1  # ')'
        return None

    def _nested_instruction(self, op_tok, shape: Shape | None, start: int) -> str:
        """``add(f32[] parameter(0), f32[] constant(1))``: an instruction written as an
        operand (no name, no attributes). It goes before its user under a made-up name."""
        toks = self.toks
        raw_op = op_tok[1]
        ops: list[str] = []
        oshapes: list[Shape | None] = []
        offs: list[int] = []
        ct = toks[self.i]
        if ct[0] == "o":
            self.i += 1
            literal = self._plain_operands(raw_op, ct[2], ct[3], ops, oshapes, offs)
        else:
            literal = self._operands(raw_op, raw_op, ops, oshapes, offs)
        end = toks[self.i - 1][3]
        self._nested += 1
        name = f"_nested.{self._nested}.{raw_op}"
        opcode, wrapped = canonical_opcode(raw_op)
        line, col = self.loc(start)
        self._pending.append(
            HloInstruction(
                name,
                opcode,
                raw_op,
                shape,
                ops,
                oshapes,
                {},
                (start, end),
                op_tok[2],
                line,
                col,
                False,
                literal,
                {},
                offs,
                wrapped_opcode=wrapped,
                synthetic=True,
            )
        )
        return name

    def _compact_gte(self, base_tok) -> str:
        """``%t#1#0``: element 1, then 0, of ``t``: get-tuple-elements XLA's parser makes
        (named ``t#1``, ``t#1#0``), put before their user."""
        toks = self.toks
        cur = _strip(base_tok[1])
        line, col = self.loc(base_tok[2])
        while toks[self.i][0] == "#":
            self.i += 1
            t = toks[self.i]
            if t[0] in _WORDLIKE:
                t = self._split()
            if t[0] != "w" or not t[1].isdigit():
                raise self.error(
                    f"expected a tuple index after '#', found {self._describe(t)}", t[2]
                )
            self.i += 1
            name = f"{cur}#{t[1]}"
            self._pending.append(
                HloInstruction(
                    name,
                    "get-tuple-element",
                    "get-tuple-element",
                    None,
                    [cur],
                    [None],
                    {"index": t[1]},
                    (base_tok[2], t[3]),
                    base_tok[2],
                    line,
                    col,
                    False,
                    None,
                    {"index": t[2]},
                    [base_tok[2]],
                    synthetic=True,
                )
            )
            cur = name
        return cur

    def _inline_follows(self, key: str) -> bool:
        """At the ``{`` (or group token) of a computation attribute: is a computation
        written in place (``to_apply={...}``, ``branch_computations={{...}, b}``)?"""
        t = self.toks[self.i]
        inner = self.text[t[2] + 1 : t[3] if t[0] == "g" else t[2] + 4096].lstrip()
        if key in _LIST_CALL_KEYS:
            return inner[:1] == "{"
        return True

    def _called_value(self, owner: str, key: str) -> str:
        """A computation attribute holding computations written in place: reads them and
        returns the value with their made-up names (``{_inline.x.to_apply}`` for a list)."""
        toks = self.toks
        if toks[self.i][0] == "g":
            self._split()
        if key not in _LIST_CALL_KEYS:
            return self.inline_computation(_strip(owner), key)
        self.i += 1  # '{'
        names = []
        while toks[self.i][0] != "}":
            t = toks[self.i]
            if t[0] == "{" or t[0] == "g":
                if t[0] == "g":
                    self._split()
                names.append(self.inline_computation(_strip(owner), key))
            elif t[0] in ("w",) + _WORDLIKE:
                if t[0] != "w":
                    t = self._split()
                names.append(_strip(t[1]))
                self.i += 1
            else:
                raise self.error(
                    f"expected a computation in {key}, found {self._describe(t)}", t[2]
                )
            if toks[self.i][0] == ",":
                self.i += 1
            elif toks[self.i][0] != "}":
                raise self.error(
                    f"expected ',' or '}}' in {key}, found {self._describe(toks[self.i])}"
                )
        self.i += 1
        return "{" + ", ".join(names) + "}"


_CANONICAL: dict[str, tuple[str, str | None]] = {}  # canonical_opcode of opcodes seen


def canonical_opcode(raw: str) -> tuple[str, str | None]:
    """``fusion-start`` -> (``async-start``, ``fusion``); native opcodes map to themselves."""
    if raw in NATIVE_ASYNC:
        return raw, None
    for suffix in ("-start", "-update", "-done"):
        if raw.endswith(suffix) and len(raw) > len(suffix):
            return "async" + suffix, raw[: -len(suffix)]
    return raw, None


# ---------------------------------------------------------------------------------------------
# Module-level checks: operand names, called computations, cycles; shape inference


def _check_module(p: _Parser, mod: HloModule) -> None:
    for comp in mod.computations:
        index = comp.index
        known = index.__contains__
        for ins in comp.instructions:
            if not all(map(known, ins.operands)):
                for name, off in zip(ins.operands, ins.operand_offsets):
                    if name not in index:
                        raise p.error(
                            f"unknown operand {name!r} of {ins.name!r} (no such "
                            f"instruction in computation {comp.name!r})",
                            off,
                        )
            raw = ins.attrs.get("replica_groups")
            if raw is not None:
                problem = replica_groups_problem(raw)
                if problem:
                    raise p.error(
                        f"replica_groups of {ins.name!r}: {problem}",
                        ins.attr_offsets["replica_groups"],
                    )
            raw = ins.attrs.get("control-predecessors")
            if raw is not None:
                base = ins.attr_offsets["control-predecessors"]
                for m in _NAME_RE.finditer(raw):
                    if _strip(m.group()) not in index:
                        raise p.error(
                            f"unknown control predecessor {_strip(m.group())!r} of {ins.name!r}",
                            base + m.start(),
                        )
            missing = _missing_computation(ins)
            if missing:
                raise p.error(f"{ins.name!r}: {ins.opcode} without {missing}", ins.name_offset)
            for key, cname in ins.called():
                if cname not in mod.by_name:
                    raw = ins.attrs[key]
                    off = ins.attr_offsets[key] + max(raw.find(cname), 0)
                    raise p.error(f"{ins.name!r} calls unknown computation {cname!r} ({key})", off)
        _check_acyclic(p, comp)
    _infer_shapes(mod)


# the computations an op cannot run without (XLA's parser requires them too)
_REQUIRED_CALLS = {
    "while": ("condition", "body"),
    "call": ("to_apply",),
    "fusion": ("calls",),
    "reduce": ("to_apply",),
}


def _missing_computation(ins) -> str:
    """The attribute naming a computation that ``ins`` needs but lacks, else ''."""
    for key in _REQUIRED_CALLS.get(ins.opcode, ()):
        if key not in ins.attrs:
            return f"{key}="
    if (
        ins.opcode == "conditional"
        and "branch_computations" not in ins.attrs
        and not ("true_computation" in ins.attrs and "false_computation" in ins.attrs)
    ):
        return "branch_computations= (or true_computation= and false_computation=)"
    return ""


def in_text_order(instrs: Sequence[HloInstruction]) -> bool:
    """Whether every instruction comes after its operands and control predecessors (the
    usual case, checked in one pass before anything slower)."""
    seen: set[str] = set()
    add = seen.add
    for ins in instrs:
        if (
            not seen.issuperset(ins.operands)
            or "control-predecessors" in ins.attrs
            and not seen.issuperset(ins.control_predecessors)
        ):
            return False
        add(ins.name)
    return True


def _check_acyclic(p: _Parser, comp: HloComputation) -> None:
    index = comp.index
    if in_text_order(comp.instructions):
        return
    preds = {
        ins.name: list(dict.fromkeys(ins.operands + ins.control_predecessors))
        for ins in comp.instructions
    }
    state: dict[str, int] = {}  # 1 = on stack, 2 = done
    for ins in comp.instructions:
        if ins.name in state:
            continue
        stack = [(ins.name, iter(preds[ins.name]))]
        state[ins.name] = 1
        path = [ins.name]
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                stack.pop()
                path.pop()
                state[node] = 2
                continue
            s = state.get(nxt)
            if s == 1:
                cyc = path[path.index(nxt) :] + [nxt]
                at = index[nxt]
                raise p.error(
                    f"cycle through operands/control-predecessors in {comp.name!r}: "
                    + " <- ".join(cyc)
                    + " (each waits for the next)",
                    at.span[0],
                )
            if s is None:
                state[nxt] = 1
                path.append(nxt)
                stack.append((nxt, iter(preds[nxt])))


# Ops whose result has their first operand's shape (dtype aside: compare, complex and the
# conversions change it).
_SAME_SHAPE_OPS = (
    opcodes.ELEMENTWISE_MATH - {"clz", "compare", "complex", "convert", "stochastic-convert"}
) | {
    "copy",
    "opt-barrier",
    "optimization-barrier",
    "bitcast",
    "add-dependency",
    "domain",
    "all-reduce",
    "all-reduce-start",
    "all-reduce-done",
    "collective-permute",
    "collective-permute-done",
    "copy-done",
    "dynamic-update-slice",
}


def _infer_shapes(mod: HloModule) -> None:
    """Fill in omitted result shapes where the rule is simple; note the others."""
    for comp in mod.computations:
        for ins in comp.instructions:
            if ins.shape is not None:
                continue
            ops = [comp.index[o] for o in ins.operands]
            shape = None
            op = ins.opcode
            if (
                op == "get-tuple-element"
                and ops
                and ops[0].shape is not None
                and ops[0].shape.is_tuple
                and ins.tuple_index is not None
                and 0 <= ins.tuple_index < len(ops[0].shape.elements)
            ):
                shape = ops[0].shape.elements[ins.tuple_index]
            elif op == "tuple" and all(o.shape is not None for o in ops):
                shape = Shape(TUPLE, elements=tuple(o.shape for o in ops if o.shape is not None))
            elif op == "after-all":
                shape = TOKEN_SHAPE
            elif op == "compare" and ops and ops[0].shape is not None and ops[0].shape.is_array:
                s = ops[0].shape
                shape = Shape("pred", s.dims, s.dynamic, s.unbounded)
            elif op in _SAME_SHAPE_OPS and ops:
                src = ops[1] if op == "select" and len(ops) > 1 else ops[0]
                shape = src.shape
                if op == "copy-done" and shape is not None and shape.is_tuple:
                    shape = shape.elements[0]
            if shape is not None:
                ins.shape = shape
                ins.shape_inferred = True
            else:
                mod.notes.append(
                    f"{comp.name}/{ins.name}: result shape omitted and not inferred; sized 0"
                )


# ---------------------------------------------------------------------------------------------
# Attribute helpers

_NAME_RE = re.compile(r"%?[A-Za-z_][A-Za-z0-9_.\-$]*")
_KV_RE = re.compile(r'([A-Za-z_][\w.\-]*)\s*=\s*("[^"\\]*(?:\\.[^"\\]*)*"|[^\s,{}]+)')


def names_in(raw: str) -> list[str]:
    return [_strip(m.group()) for m in _NAME_RE.finditer(raw)]


def _unquote(s: str) -> str:
    if len(s) >= 2 and s[0] == '"' and s[-1] == '"':
        body = s[1:-1]
        if "\\" not in body:
            return body
        try:
            return json.loads(s)
        except ValueError:
            with warnings.catch_warnings():  # stray escapes such as ``\~`` stay as written
                warnings.simplefilter("ignore", DeprecationWarning)
                return body.encode("utf-8").decode("unicode_escape", errors="replace")
    return s


_KV_HEAD_RE = re.compile(r"([A-Za-z_][\w.\-]*)\s*=\s*")
_KV_VALUE_RE = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|\'[^\'\\]*(?:\\.[^\'\\]*)*\'|[^\s,{}]+')


def parse_kv_strings(raw: str) -> dict[str, str]:
    """``{op_type="x" op_name="y" source_line=3}`` or ``{k="v",k2='v2',k3={json dict}}``
    -> dict (strings unquoted, dict values as their text)."""
    body = raw.strip()
    if body.startswith("{") and body.endswith("}"):
        body = body[1:-1]
    if "{" not in body and "'" not in body:
        return {
            k: (v[1:-1] if "\\" not in v else _unquote(v))
            if len(v) >= 2 and v[0] == '"' and v[-1] == '"'
            else v
            for k, v in _KV_RE.findall(body)
        }
    out: dict[str, str] = {}
    pos = 0
    while True:
        m = _KV_HEAD_RE.search(body, pos)
        if m is None:
            return out
        pos = m.end()
        if body[pos : pos + 1] == "{":
            end = _json_dict_end(body, pos)
            end = len(body) if end < 0 else end
            out[m.group(1)] = body[pos:end]
        else:
            vm = _KV_VALUE_RE.match(body, pos)
            if vm is None:
                continue
            v = vm.group()
            end = vm.end()
            if len(v) >= 2 and v[0] == v[-1] and v[0] in "\"'":
                v = _unquote('"' + v[1:-1] + '"') if v[0] == "'" else _unquote(v)
            out[m.group(1)] = v
        pos = end


def parse_backend_config(raw: str):
    text = _unquote(raw.strip()) if raw.strip().startswith('"') else raw.strip()
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text


def parse_int_list(raw: str | None) -> list[int]:
    return [int(x) for x in re.findall(r"-?\d+", raw)] if raw else []


def parse_groups(raw: str | None) -> list[list[int]]:
    """``{{0,1},{2,3}}`` -> [[0, 1], [2, 3]]; ``{}`` -> []."""
    if not raw:
        return []
    inner = raw.strip()
    if inner.startswith("{") and inner.endswith("}"):
        inner = inner[1:-1]
    return [[int(x) for x in re.findall(r"-?\d+", g)] for g in re.findall(r"\{([^{}]*)\}", inner)]


_IOTA_RE = re.compile(r"\[([\d,\s]+)\]\s*<=\s*\[([\d,\s]+)\](?:\s*T\(([\d,\s]+)\))?")


_MESH_RE = re.compile(
    r"mesh\[(?P<axes>[^\]]*)\]\s*(?:,\s*device_ids\s*=\s*\((?P<ids>[^)]*\)?"
    r"[^)]*)\))?\s*\{(?P<refs>[^}]*)\}",
    re.S,
)
_MESH_AXIS_RE = re.compile(r"""(['"])(.*?)\1\s*=\s*(\d+)""")
_AXIS_REF_RE = re.compile(r"""(['"])(.*?)\1(?:\s*:\s*\(\s*(\d+)\s*\)\s*(\d+))?""")


def _mesh_groups(m: re.Match, max_devices: int) -> list[list[int]]:
    """The device groups of ``mesh[axes] {axis refs}``: devices that differ only along the
    named axes (or sub-axes ``'a':(pre)size``, ``pre`` = the product of the sizes before it,
    major to minor) form a group, ordered as the refs are written."""
    import numpy as np

    axes = _MESH_AXIS_RE.findall(m.group("axes"))
    names = [a[1] for a in axes]
    sizes = [int(a[2]) for a in axes]
    if not sizes or min(sizes) < 1:
        raise _BadGroups("a mesh needs axes of size 1 or more")
    total = _product(sizes)
    refs = []  # (axis, pre, size); a whole axis is (axis, 1, n)
    for r in _AXIS_REF_RE.findall(m.group("refs")):
        name = r[1]
        axis = names.index(name) if name in names else int(name) if name.isdigit() else -1
        if not 0 <= axis < len(sizes):
            raise _BadGroups(f"axis {name!r} is not an axis of the mesh")
        pre, size = (int(r[2]), int(r[3])) if r[2] else (1, sizes[axis])
        if pre < 1 or size < 1 or sizes[axis] % (pre * size):
            raise _BadGroups(f"sub-axis {name!r}:({pre}){size} does not divide its axis")
        refs.append((axis, pre, size))
    # split each axis, major to minor, at the borders of its sub-axes
    cuts = [{1, n} for n in sizes]
    for axis, pre, size in refs:
        cuts[axis] |= {pre, pre * size}
    factors: list[int] = []
    where: dict[tuple[int, int, int], int] = {}
    for axis, points in enumerate(cuts):
        pts = sorted(points)
        if any(b % a for a, b in zip(pts, pts[1:])):
            raise _BadGroups(f"sub-axes of axis {names[axis]!r} overlap")
        for a, b in zip(pts, pts[1:]):
            where[axis, a, b // a] = len(factors)
            factors.append(b // a)
    chosen = [where.get(ref, -1) for ref in refs]
    if -1 in chosen or len(set(chosen)) != len(chosen):
        raise _BadGroups("the axes of the groups overlap")
    ids_text = m.group("ids")
    perm = None
    if ids_text is not None and ids_text.strip()[:1] == "[":
        im = _IOTA_RE.fullmatch(f"[{total}]<=" + ids_text.strip())
        if im is None or _product(_int_tuple(im.group(2))) != total:
            raise _BadGroups(f"mesh device_ids do not hold the {total} devices of the mesh")
        perm = _int_tuple(im.group(3)) if im.group(3) else None
        if perm is not None and sorted(perm) != list(range(len(_int_tuple(im.group(2))))):
            raise _BadGroups(f"T{perm} is not a permutation of the device_ids dims")
    elif ids_text is not None and len(_int_tuple(ids_text)) != total:
        raise _BadGroups(
            f"mesh device_ids list {len(_int_tuple(ids_text))} devices, the mesh has {total}"
        )
    if total > max_devices:
        return []
    ids: np.ndarray
    if ids_text is None:
        ids = np.arange(total)
    elif ids_text.strip()[:1] == "[":
        assert im is not None  # matched above for the same ids_text
        ids = np.arange(total).reshape(_int_tuple(im.group(2)))
        if perm is not None:
            ids = ids.transpose(perm)
        ids = ids.reshape(-1)
    else:
        ids = np.array(_int_tuple(ids_text))
    rest = [k for k in range(len(factors)) if k not in chosen]
    grid = ids.reshape(factors).transpose(rest + chosen)
    return grid.reshape(-1, _product(factors[k] for k in chosen)).tolist()


class _BadGroups(ValueError):
    """Replica groups XLA's parser rejects (sizes that do not match, unknown axes)."""


_GROUP = r"\{\s*(?:\d+\s*(?:,\s*\d+\s*)*)?\}"
_EXPLICIT_GROUPS_RE = re.compile(rf"\{{\s*(?:{_GROUP}\s*(?:,\s*{_GROUP}\s*)*)?\}}")


def replica_groups_problem(raw: str) -> str | None:
    """Why XLA's parser or verifier would reject these replica groups, or None."""
    text = raw.strip()
    if text[:1] == "{":
        if not _EXPLICIT_GROUPS_RE.fullmatch(text):
            return f"expected groups of device ids such as {{{{0,1}},{{2,3}}}}, found {text!r}"
        seen: set[int] = set()
        for group in parse_groups(text):
            for d in group:
                if d in seen:
                    return f"device {d} is in more than one group"
                seen.add(d)
        return None
    try:
        parse_replica_groups(raw, max_devices=0, strict=True)
    except _BadGroups as e:
        return str(e)
    return None


def _product(xs) -> int:
    n = 1
    for x in xs:
        n *= x
    return n


def parse_replica_groups(
    raw: str | None, max_devices: int = 1 << 20, strict: bool = False
) -> list[list[int]]:
    """Explicit ``{{0,1},{2,3}}``, iota ``[2,4]<=[8]`` / ``[2,4]<=[4,2]T(1,0)``, or mesh axes
    ``mesh['x'=2,'y'=4] {'y'}`` groups; [] for groups it cannot expand (more than
    ``max_devices``, or inconsistent; with ``strict`` those raise ``_BadGroups``)."""
    try:
        return _replica_groups(raw, max_devices)
    except _BadGroups:
        if strict:
            raise
        return []


def _replica_groups(raw: str | None, max_devices: int) -> list[list[int]]:
    if not raw:
        return []
    text = raw.strip()
    if text.startswith("maximal_mesh"):
        return []
    if text.startswith("mesh"):
        mm = _MESH_RE.match(text)
        if mm is None:
            raise _BadGroups("bad mesh replica groups")
        return _mesh_groups(mm, max_devices)
    m = _IOTA_RE.fullmatch(text)
    if m:
        shape = _int_tuple(m.group(1))
        reshape = _int_tuple(m.group(2))
        total = _product(reshape)
        if len(shape) != 2 or _product(shape) != total:
            raise _BadGroups(
                f"iota replica groups {list(shape)} must be 2-D and hold the "
                f"{total} devices of {list(reshape)}"
            )
        perm = _int_tuple(m.group(3)) if m.group(3) else None
        if perm is not None and sorted(perm) != list(range(len(reshape))):
            raise _BadGroups(f"T{perm} is not a permutation of the {len(reshape)} iota dims")
        if total > max_devices:
            return []
        ids = np.arange(total).reshape(reshape)
        if m.group(3):
            ids = ids.transpose(_int_tuple(m.group(3)))
        return ids.reshape(shape[0], -1).tolist() if len(shape) >= 1 and shape[0] else []
    return parse_groups(raw)


_ALIASING_RE = re.compile(r"\{([\d,\s]*)\}\s*:\s*\(\s*(\d+)\s*,\s*\{([\d,\s]*)\}\s*\)")


def parse_output_operand_aliasing(
    raw: str | None,
) -> list[tuple[tuple[int, ...], int, tuple[int, ...]]]:
    """``{{}: (0, {}), {1}: (2, {0})}`` -> [(output index, operand number, operand index)]."""
    if not raw:
        return []
    return [
        (_int_tuple(m.group(1)), int(m.group(2)), _int_tuple(m.group(3)))
        for m in _ALIASING_RE.finditer(raw)
    ]


def parse_window(raw: str | None) -> dict[str, list[int]]:
    """``{size=3x3 stride=2x2 pad=1_1x1_1}`` -> {'size': [3, 3], 'stride': [2, 2], ...}."""
    out: dict[str, list[int]] = {}
    if not raw:
        return out
    for m in re.finditer(r"(\w+)=([\d_x\-]+)", raw):
        out[m.group(1)] = [int(x) for x in re.findall(r"-?\d+", m.group(2))]
    return out


# ---------------------------------------------------------------------------------------------
# Entry points


class gc_paused:
    """Context manager: the cyclic garbage collector is off inside (if it was on).

    Reading a big module allocates millions of small containers that live on; the
    collector's passes over them find nothing (the reader makes no reference cycles) and,
    as the heap grows, make the reader slower than linear. Nested uses are fine.
    """

    def __enter__(self) -> gc_paused:
        self._was_enabled = gc.isenabled()
        gc.disable()
        return self

    def __exit__(self, *exc) -> None:
        if self._was_enabled:
            gc.enable()


def parse_hlo_text(text: str, path: str | None = None) -> HloModule:
    with gc_paused():
        return _Parser(text, path).module()


def read_hlo_module(path_or_text: str) -> HloModule:
    """Parse an HLO module from a file path or from HLO text itself."""
    if "\n" in path_or_text or "{" in path_or_text:
        return parse_hlo_text(path_or_text, None)
    text = read_input_text(path_or_text)  # gunzips ``.hlo.gz``
    if not text.strip():
        raise InputError("file is empty", path=path_or_text)
    return parse_hlo_text(text, path_or_text)


__all__ = [
    "Shape",
    "HloInstruction",
    "HloComputation",
    "HloModule",
    "ELEMENT_BYTES",
    "parse_hlo_text",
    "read_hlo_module",
    "tokenize",
    "canonical_opcode",
    "parse_replica_groups",
    "parse_groups",
    "parse_output_operand_aliasing",
    "parse_kv_strings",
    "parse_backend_config",
    "parse_int_list",
    "parse_window",
    "names_in",
]
