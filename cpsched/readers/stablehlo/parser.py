"""MLIR text (StableHLO / MHLO / CHLO / func) -> a small op tree.

Reads what ``jax.jit(f).lower(...).as_text()`` and ``jax.export``'s ``mlir_module()``
print: pretty and generic op forms, nested regions (``cond { } do { }``, ``({ }, { })``,
``reducer(...) { }``), block labels, ``loc(...)`` annotations (dropped, except names of
function arguments), ``#loc`` alias lines and dialect resource blocks (skipped).

The parser is syntactic: an op is its results, its name, the SSA values it reads, its
regions, its result types and its attribute text (searched with small regexes by the
converter). Unknown op *names* are not an error here; the converter decides.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import NoReturn

from cpsched.core.errors import InputError
from cpsched.core.inputs import read_text

# -- tokens ------------------------------------------------------------------------------

NL, SSA, SYM, IDENT, STR, NUM, TYPE, PUNCT, LOC, LABEL, ATTR = (
    "nl",
    "ssa",
    "sym",
    "ident",
    "str",
    "num",
    "type",
    "punct",
    "loc",
    "label",
    "attr",
)


@dataclass(frozen=True)
class Tok:
    kind: str
    text: str
    line: int
    col: int


# ASCII only: str.isdigit / isalpha also hold for '²' or 'ÿ', which no pattern here reads
_DIGITS = frozenset("0123456789")
_IDENT_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.$]*")
_SSA_RE = re.compile(r"%[A-Za-z0-9_.$\-]+(?:#\d+)?")
_NUM_RE = re.compile(r"-?(?:0x[0-9A-Fa-f]+|\d+(?:\.\d*)?(?:[eE][+-]?\d+)?)")
_SYM_RE = re.compile(r"@(?:[A-Za-z0-9_.$\-]+|\"(?:[^\"\\]|\\.)*\")")
_STR_RE = re.compile(r"\"(?:[^\"\\\n]|\\.)*\"")
# dims (or ? or *) separated by x, then an element type, a dialect type or complex<...>
_TENSOR_START_RE = re.compile(r"tensor<\s*(?:(?:\?|\*|\d+)\s*x\s*)*[A-Za-z!]")
# a dimension of a shaped type below zero: tensor<-5x4xf32> (MLIR writes ? for dynamic)
_NEGATIVE_DIM_RE = re.compile(r"(?:tensor|vector|memref)<(?:(?:\?|\d+)\s*x\s*)*(-\d+)\s*x")


def _balanced(src: str, i: int, open_: str = "<", close: str = ">") -> int:
    """Index just past the ``close`` matching the ``open_`` at ``src[i]`` (strings and
    ``->`` inside are skipped); the end of ``src`` if none does."""
    depth = 0
    n = len(src)
    while i < n:
        c = src[i]
        if c == '"':
            m = _STR_RE.match(src, i)
            i = m.end() if m else i + 1
            continue
        if c == "-" and i + 1 < n and src[i + 1] == ">":
            i += 2
            continue
        if c == open_:
            depth += 1
        elif c == close:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return n


def _same(text: str) -> str:
    return text


# Tokens that one character opens and a pattern reads: (pattern, where it starts after the
# character, token kind, the token's text from the match, the error when it does not match).
_PREFIXED = {
    "%": (_SSA_RE, 0, SSA, _same, "expected an SSA value name after '%'"),
    "@": (_SYM_RE, 0, SYM, lambda t: t[1:].strip('"'), "expected a symbol name after '@'"),
    "^": (_IDENT_RE, 1, LABEL, _same, "expected a block label after '^'"),
    '"': (_STR_RE, 0, STR, lambda t: t[1:-1], "unterminated string"),
}

# Words followed by ``<...>`` that is part of the token: types and attributes.
_ANGLE_WORDS = frozenset(
    """
tensor dense array tuple vector memref complex dense_resource sparse opaque affine_map
distinct strided
""".split()
)


def _past(text: str, i: int, line: int, line_start: int) -> tuple[int, int]:
    """The line and the offset of its start after the token ``text`` read at ``i``."""
    if "\n" not in text:
        return line, line_start
    return line + text.count("\n"), i + text.rfind("\n") + 1


def tokenize(src: str, path: str | None = None) -> list[Tok]:
    toks: list[Tok] = []
    i, n = 0, len(src)
    line, line_start = 1, 0

    def err(msg: str, at: int) -> NoReturn:
        raise InputError(msg, path=path, line=line, column=at - line_start + 1)

    while i < n:
        c = src[i]
        if c == "\n":
            toks.append(Tok(NL, "\n", line, i - line_start + 1))
            line += 1
            i += 1
            line_start = i
            continue
        if c in " \t\r":
            i += 1
            continue
        col = i - line_start + 1
        if src.startswith("//", i):
            j = src.find("\n", i)
            i = n if j < 0 else j
            continue
        if src.startswith("{-#", i):  # dialect resources: skipped whole
            j = src.find("#-}", i)
            j = n if j < 0 else j + 3
            line += src.count("\n", i, j)
            if src.rfind("\n", i, j) >= 0:
                line_start = src.rfind("\n", i, j) + 1
            i = j
            continue
        prefixed = _PREFIXED.get(c)
        if prefixed is not None:
            pattern, skip, kind, text_of, what = prefixed
            m = pattern.match(src, i + skip)
            if not m:
                err(what, i)
            toks.append(Tok(kind, text_of(m.group()), line, col))
            i = m.end()
            continue
        if c == "#" or c == "!":
            m = _IDENT_RE.match(src, i + 1)
            if not m:
                err(f"unexpected character {c!r}", i)
            j = m.end()
            if j < n and src[j] == "<":
                j = _balanced(src, j)
            text = src[i:j]
            line, line_start = _past(text, i, line, line_start)
            toks.append(Tok(ATTR if c == "#" else TYPE, text, line, col))
            i = j
            continue
        if c == "-" and src.startswith("->", i):
            toks.append(Tok(PUNCT, "->", line, col))
            i += 2
            continue
        if c in _DIGITS or (c == "-" and i + 1 < n and src[i + 1] in _DIGITS):
            m = _NUM_RE.match(src, i)
            assert m is not None  # c starts a number
            j = m.end()
            # shapes such as 4x128 outside a type (slice bounds print as [0:3, 0:64])
            toks.append(Tok(NUM, m.group(), line, col))
            i = j
            continue
        if c in _IDENT_START:
            m = _IDENT_RE.match(src, i)
            assert m is not None  # c starts an identifier
            word = m.group()
            j = m.end()
            if word == "loc" and j < n and src[j] == "(":
                k = _balanced(src, j, "(", ")")
                text = src[i:k]
                toks.append(Tok(LOC, text, line, col))
                line, line_start = _past(text, i, line, line_start)
                i = k
                continue
            if j < n and src[j] == "<" and word in _ANGLE_WORDS:
                k = _balanced(src, j)
                text = src[i:k]
                kind = TYPE if word in ("tensor", "tuple", "vector", "memref", "complex") else ATTR
                if kind == TYPE:
                    for dm in _NEGATIVE_DIM_RE.finditer(text):
                        err(f"negative dimension {dm.group(1)} in {text}", i)
                    if word == "tensor" and not _TENSOR_START_RE.match(text):
                        err(f"bad tensor type {text}: dims (or ?) then an element type", i)
                toks.append(Tok(kind, text, line, col))
                line, line_start = _past(text, i, line, line_start)
                i = k
                continue
            toks.append(Tok(IDENT, word, line, col))
            i = j
            continue
        if c in "()[]{}<>,=:*?+|":
            toks.append(Tok(PUNCT, c, line, col))
            i += 1
            continue
        err(f"unexpected character {c!r}", i)
    toks.append(Tok(NL, "\n", line, 1))
    return toks


# -- op tree -------------------------------------------------------------------------------


@dataclass
class Block:
    args: list[tuple[str, str]] = field(default_factory=list)  # (name, type text)
    ops: list[Op] = field(default_factory=list)


@dataclass
class Op:
    name: str  # e.g. stablehlo.add, func.call, func.return
    results: list[str]  # %0, or %0#0 %0#1 for %0:2
    operands: list[str]
    regions: list[list[Block]]
    result_types: list[str]
    attrs: str  # the op's text without regions, for attribute regexes
    line: int
    col: int
    binders: list[str] = field(default_factory=list)  # %iterArg names of a pretty while
    callee: str | None = None  # first @symbol (call target, custom_call target)


@dataclass
class FuncArg:
    name: str
    type: str
    attrs: str
    loc_name: str | None


@dataclass
class Func:
    name: str
    args: list[FuncArg]
    result_types: list[str]
    result_attrs: list[str]
    body: Block
    visibility: str
    line: int
    col: int


@dataclass
class Module:
    name: str
    attrs: str
    funcs: dict[str, Func]
    path: str | None = None

    @property
    def main(self) -> Func:
        if "main" in self.funcs:
            return self.funcs["main"]
        public = [f for f in self.funcs.values() if f.visibility == "public"]
        if len(public) == 1:
            return public[0]
        if len(self.funcs) == 1:
            return next(iter(self.funcs.values()))
        raise InputError("no @main function and no single public function to read", path=self.path)


_CONTINUATION = {"cond", "do", "reducer", "applies", "across", "init", "else", "then"}
_BARE_OPS = {"call", "return", "func"}


class _Parser:
    def __init__(self, toks: list[Tok], path: str | None, loc_alias: dict[str, str]):
        self.t = toks
        self.i = 0
        self.path = path
        self.loc_alias = loc_alias

    # -- helpers
    def peek(self, k: int = 0) -> Tok:
        if self.i >= len(self.t):
            # a loop went past the final newline: the text ends inside a construct
            last = self.t[-1]
            raise InputError(
                "unexpected end of the file (truncated?)",
                path=self.path,
                line=last.line,
                column=last.col,
            )
        return self.t[min(self.i + k, len(self.t) - 1)]

    def err(self, msg: str, tok: Tok | None = None) -> NoReturn:
        tok = tok or self.peek()
        raise InputError(msg, path=self.path, line=tok.line, column=tok.col)

    def skip_nl(self) -> None:
        while self.i < len(self.t) - 1 and self.t[self.i].kind in (NL, LOC):
            self.i += 1

    def at_end(self) -> bool:
        return self.i >= len(self.t) - 1

    def expect(self, text: str) -> Tok:
        tok = self.peek()
        if tok.text != text or tok.kind not in (PUNCT, IDENT):
            self.err(f"expected {text!r}, found {tok.text.strip() or 'end of line'!r}")
        self.i += 1
        return tok

    # -- top level
    def module(self) -> Module:
        funcs: dict[str, Func] = {}
        name, attrs = "module", ""
        self.skip_nl()
        while self.peek().kind == ATTR:  # alias lines before the module: #loc1 = loc(...)
            self.skip_line()
            self.skip_nl()
        wrapped = False
        if self.peek().kind == IDENT and self.peek().text in ("module", "builtin.module"):
            self.i += 1
            if self.peek().kind == SYM:
                name = self.peek().text
                self.i += 1
            if self.peek().text == "attributes":
                self.i += 1
                attrs = self.raw_group()
            self.skip_nl()
            self.expect("{")
            wrapped = True
        while True:
            self.skip_nl()
            tok = self.peek()
            if self.at_end():
                if wrapped:
                    self.err("missing '}' at the end of the module")
                break
            if tok.text == "}" and wrapped:
                self.i += 1
                break
            if tok.kind == IDENT and tok.text in ("func.func", "func"):
                f = self.func()
                funcs[f.name] = f
                continue
            if tok.kind == ATTR:  # alias definition line: #loc3 = loc(...)
                self.skip_line()
                continue
            # other module-level ops (sdy.mesh, ...): one statement, ignored
            self.skip_line()
        self.skip_nl()
        while not self.at_end():  # trailing alias lines after the module
            self.skip_line()
            self.skip_nl()
        if not funcs:
            self.err("no function in this MLIR module")
        return Module(name, attrs, funcs, self.path)

    def skip_line(self) -> None:
        depth = 0
        while not self.at_end():
            tok = self.t[self.i]
            if tok.kind == PUNCT and tok.text in "([{":
                depth += 1
            elif tok.kind == PUNCT and tok.text in ")]}":
                depth -= 1
            elif tok.kind == NL and depth <= 0:
                return
            self.i += 1

    def raw_group(self) -> str:
        """Text of one balanced ``{...}``/``(...)``/``[...]`` group (or one token)."""
        start = self.i
        depth = 0
        while not self.at_end():
            tok = self.t[self.i]
            self.i += 1
            if tok.kind == PUNCT and tok.text in "([{":
                depth += 1
            elif tok.kind == PUNCT and tok.text in ")]}":
                depth -= 1
            if depth == 0 and tok.kind != NL:
                break
        return " ".join(
            ('"' + x.text + '"') if x.kind == STR else x.text
            for x in self.t[start : self.i]
            if x.kind not in (NL, LOC)
        )

    def func(self) -> Func:
        head = self.peek()
        self.i += 1
        vis = "public"
        while self.peek().kind == IDENT and self.peek().text in ("public", "private", "nested"):
            vis = self.peek().text
            self.i += 1
        if self.peek().kind != SYM:
            self.err("expected the function's @name")
        fname = self.peek().text
        self.i += 1
        self.expect("(")
        args: list[FuncArg] = []
        while self.peek().text != ")":
            self.skip_nl()
            if self.peek().kind != SSA:
                self.err("expected a function argument %name")
            aname = self.peek().text
            self.i += 1
            self.expect(":")
            atype = self.type_text()
            aattrs = ""
            if self.peek().text == "{":
                aattrs = self.raw_group()
            loc_name = None
            if self.peek().kind == LOC:
                loc_name = self.loc_name(self.peek().text)
                self.i += 1
            args.append(FuncArg(aname, atype, aattrs, loc_name))
            self.skip_nl()
            if self.peek().text == ",":
                self.i += 1
        self.expect(")")
        rtypes: list[str] = []
        rattrs: list[str] = []
        if self.peek().text == "->":
            self.i += 1
            if self.peek().text == "(":
                self.i += 1
                while self.peek().text != ")":
                    self.skip_nl()
                    rtypes.append(self.type_text())
                    rattrs.append(self.raw_group() if self.peek().text == "{" else "")
                    if self.peek().kind == LOC:
                        self.i += 1
                    if self.peek().text == ",":
                        self.i += 1
                self.i += 1
            else:
                rtypes.append(self.type_text())
                attr_dict = self.peek().text == "{" and self.peek(1).kind != NL
                rattrs.append(self.raw_group() if attr_dict else "")
        if self.peek().text == "attributes":
            self.i += 1
            self.raw_group()
        self.skip_nl()
        if self.peek().text != "{":
            # a declaration without body
            return Func(fname, args, rtypes, rattrs, Block(), vis, head.line, head.col)
        self.i += 1
        body = self.block_ops(Block([(a.name, a.type) for a in args]))
        self.expect("}")
        while self.peek().kind == LOC:
            self.i += 1
        func = Func(fname, args, rtypes, rattrs, body, vis, head.line, head.col)
        self.check_func(func)
        return func

    def check_func(self, func: Func) -> None:
        """What MLIR's parser refuses and the op tree would carry on with: an SSA value
        defined twice in one function, a body that does not end in its return (a truncated
        function), a return with another number of values than the signature."""

        # names are scoped as in MLIR: a region sees (and may not redefine) what its
        # enclosing blocks defined before it; sibling regions may reuse names
        def walk(block: Block, outer: set[str], binders: frozenset[str] = frozenset()) -> None:
            # ``binders``: the op's %iterArg / (%arg: type) names, which the region's
            # block arguments may repeat
            local: set[str] = set(binders)

            def define(name: str, line: int, col: int) -> None:
                base = name.split("#", 1)[0]
                if base in outer or base in local:
                    raise InputError(
                        f"redefinition of SSA value {base} (in @{func.name})",
                        path=self.path,
                        line=line,
                        column=col,
                    )
                local.add(base)

            for name, _ in block.args:
                if name not in binders:
                    define(name, func.line, func.col)
            for op in block.ops:
                seen = set()
                for region in op.regions:
                    for b in region:
                        walk(b, outer | local, frozenset(op.binders))
                for r in op.results:
                    base = r.split("#", 1)[0]
                    if base not in seen:  # %0:2 gives %0#0 and %0#1
                        seen.add(base)
                        define(r, op.line, op.col)

        walk(func.body, set())
        last = func.body.ops[-1] if func.body.ops else None
        if last is None or last.name not in ("return", "func.return"):
            where = last or func
            raise InputError(
                f"function @{func.name} does not end in a return (truncated?)",
                path=self.path,
                line=where.line,
                column=where.col,
            )
        if len(last.operands) != len(func.result_types):
            raise InputError(
                f"return of @{func.name} gives {len(last.operands)} value(s), its signature "
                f"{len(func.result_types)}",
                path=self.path,
                line=last.line,
                column=last.col,
            )

    def loc_name(self, text: str) -> str | None:
        m = re.match(r'loc\(\s*"((?:[^"\\]|\\.)*)"\s*(?:\)|\()', text)
        if m and not re.search(r'":\d+:\d+', text):
            return m.group(1)
        m = re.match(r"loc\((#loc\w*)\)", text)
        if m:
            return self.loc_alias.get(m.group(1))
        return None

    def type_text(self) -> str:
        tok = self.peek()
        if tok.kind in (TYPE, IDENT):
            self.i += 1
            return tok.text
        self.err(f"expected a type, found {tok.text!r}")

    # -- blocks and ops
    def block_ops(self, block: Block) -> Block:
        """Ops until the closing ``}`` of the enclosing region (not consumed)."""
        while True:
            self.skip_nl()
            tok = self.peek()
            if tok.text == "}" and tok.kind == PUNCT:
                return block
            if self.at_end():
                self.err("missing '}' at the end of a region")
            if tok.kind == LABEL:
                # a new block of the same region: ^bb1(%a: type, ...):
                return block
            block.ops.append(self.op())

    def region(self) -> list[Block]:
        """``{`` blocks ``}``; the ``{`` is current."""
        self.expect("{")
        blocks: list[Block] = []
        cur = Block()
        while True:
            self.skip_nl()
            tok = self.peek()
            if tok.kind == LABEL:
                self.i += 1
                args = self.block_args(typed=True)
                self.expect(":")
                if cur.ops or cur.args:
                    blocks.append(cur)
                cur = Block(args)
                continue
            if tok.text == "}" and tok.kind == PUNCT:
                self.i += 1
                blocks.append(cur)
                return blocks
            self.block_ops(cur)

    def block_args(self, typed: bool) -> list[tuple[str, str]]:
        """``(%a: type loc(...), ...)`` if it comes next: the (name, type text) pairs. With
        ``typed`` each name needs its type; else a name without one is skipped."""
        args: list[tuple[str, str]] = []
        if self.peek().text != "(":
            return args
        self.i += 1
        while self.peek().text != ")":
            self.skip_nl()
            name = self.peek().text
            self.i += 1
            has_type = typed or self.peek().text == ":"
            if typed:
                self.expect(":")
            elif has_type:
                self.i += 1
            if has_type:
                args.append((name, self.type_text()))
            while self.peek().kind == LOC:
                self.i += 1
            if self.peek().text == ",":
                self.i += 1
        self.i += 1
        return args

    def _starts_op(self, tok: Tok) -> bool:
        if tok.kind in (SSA, STR):
            return True
        if tok.kind == IDENT:
            return "." in tok.text or tok.text in _BARE_OPS
        return False

    def op_results(self) -> list[str]:
        """``%a, %b:2 =`` before an op: its result names (``%b#0``, ``%b#1`` for a pack)."""
        results: list[str] = []
        if self.peek().kind == SSA:
            while self.peek().kind == SSA:
                name = self.peek().text
                self.i += 1
                if self.peek().text == ":" and self.peek(1).kind == NUM:
                    k = int(self.peek(1).text)
                    self.i += 2
                    results.extend(f"{name}#{j}" for j in range(k))
                else:
                    results.append(name)
                if self.peek().text == ",":
                    self.i += 1
            self.expect("=")
        return results

    def header_region(self) -> list[Block] | None:
        """``reducer(%a: type, %b: type) {`` (or ``cond``/``do``), the keyword current: the
        region with the header's arguments first; None where no region follows."""
        self.i += 1
        args = self.block_args(typed=False)
        self.skip_nl()
        if self.peek().text != "{":
            return None
        r = self.region()
        if args and r:
            r[0].args = args + r[0].args
        return r

    def op(self) -> Op:
        first = self.peek()
        results = self.op_results()
        tok = self.peek()
        if tok.kind not in (IDENT, STR):
            self.err(f"expected an op name, found {tok.text!r}")
        name = tok.text
        self.i += 1
        operands: list[str] = []
        binders: list[str] = []
        binder_types: list[str] = []
        regions: list[list[Block]] = []
        text: list[str] = []
        sig_start: int | None = None  # index into ``text`` of the last top-level ':'
        callee: str | None = None
        depth = 0
        prev_ssa: str | None = None
        while True:
            tok = self.peek()
            if tok.kind == NL:
                # the op goes on after a newline inside brackets, or when the next line
                # continues it (``cond {``, ``do {``, ``reducer(...)``)
                j = self.i
                while j < len(self.t) - 1 and self.t[j].kind in (NL, LOC):
                    j += 1
                if j >= len(self.t) - 1 and depth > 0:
                    # the text ends inside the op's brackets (a truncated file)
                    self.err("unexpected end of the file inside an op (truncated?)")
                nxt = self.t[j]
                if (
                    depth > 0
                    or (nxt.kind == IDENT and nxt.text in _CONTINUATION)
                    or (
                        nxt.kind == PUNCT
                        and nxt.text in ("{",)
                        and depth == 0
                        and text
                        and text[-1] in ("->",)
                    )
                ):
                    self.i = j
                    continue
                break
            if self.at_end():
                break
            if tok.kind == LOC:
                self.i += 1
                continue
            if tok.kind == PUNCT and tok.text == "{" and self.peek(1).kind in (NL, LABEL):
                if prev_ssa is not None:
                    operands.append(prev_ssa)
                    prev_ssa = None
                regions.append(self.region())
                text.append("{region}")
                continue
            if tok.kind == PUNCT and tok.text == "}" and depth == 0:
                break
            if tok.kind == IDENT and tok.text in ("reducer", "cond", "do") and depth == 0:
                # ``reducer(%a: type, %b: type) {`` block header of a pretty reduce
                r = self.header_region()
                if r is not None:
                    regions.append(r)
                    text.append("{region}")
                continue
            self.i += 1
            if tok.kind == SSA:
                if prev_ssa is not None:
                    operands.append(prev_ssa)
                prev_ssa = tok.text
                text.append(tok.text)
                continue
            if prev_ssa is not None:
                if tok.kind == PUNCT and tok.text == "=":
                    binders.append(prev_ssa)
                elif (
                    tok.kind == PUNCT
                    and tok.text == ":"
                    and depth > 0
                    and self.peek().kind in (TYPE, IDENT)
                ):
                    # ``(%arg: type, ...)`` before a region: the region's arguments
                    binders.append(prev_ssa)
                    binder_types.append(self.peek().text)
                else:
                    operands.append(prev_ssa)
                prev_ssa = None
            if tok.kind == SYM and callee is None:
                callee = tok.text
            if tok.kind == PUNCT:
                if tok.text in "([{<":
                    depth += 1
                elif tok.text in ")]}>":
                    depth -= 1
                elif tok.text == ":" and depth == 0:
                    sig_start = len(text) + 1
            text.append(tok.text if tok.kind != STR else '"' + tok.text + '"')
        if prev_ssa is not None:
            operands.append(prev_ssa)
        rtypes = _result_types(text, sig_start, len(results))
        attrs = " ".join(text[:sig_start] if sig_start is not None else text)
        if binder_types and regions and regions[0] and not regions[0][0].args:
            regions[0][0].args = list(zip(binders, binder_types))
        return Op(
            name, results, operands, regions, rtypes, attrs, first.line, first.col, binders, callee
        )


# How a result type in an op's signature starts.
_TYPE_PREFIXES = ("tensor", "tuple", "!", "i", "f", "bf", "ui", "si", "index", "complex", "none")


def _result_types(text: list[str], sig_start: int | None, n_results: int) -> list[str]:
    """The result types of an op's signature (``text`` from ``sig_start``, after its last
    top-level ``:``): those after ``->``, or the whole signature's types; at most one per
    result (the last ones)."""
    rtypes: list[str] = []
    if sig_start is not None:
        sig = [x for x in text[sig_start:] if x != "{region}"]
        if "->" in sig:
            after = sig[sig.index("->") + 1 :]
            rtypes = [x for x in after if x.startswith(_TYPE_PREFIXES) and x not in ("(", ")", ",")]
        else:
            rtypes = [x for x in sig if x not in ("(", ")", ",")]
        if n_results and len(rtypes) > n_results:
            rtypes = rtypes[len(rtypes) - n_results :]
    return rtypes


_LOC_ALIAS_RE = re.compile(r'^(#loc\w*)\s*=\s*loc\(\s*"((?:[^"\\]|\\.)*)"\s*\)\s*$', re.M)


def parse_mlir_text(src: str, path: str | None = None) -> Module:
    aliases = {m.group(1): m.group(2) for m in _LOC_ALIAS_RE.finditer(src)}
    toks = tokenize(src, path)
    return _Parser(toks, path, aliases).module()


def read_mlir_module(path: str) -> Module:
    """Parse an MLIR file (checked and read like every input: size limit, gzip, UTF-8)."""
    return parse_mlir_text(read_text(path), path)
