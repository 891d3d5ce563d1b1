"""Write an HLO module back as text with new instruction orders (``is_scheduled=true``).

Everything but the order is copied verbatim from the parsed text: each instruction moves
together with the comments and blank lines written just before it. New instructions (an
inserted copy-start/copy-done pair, a cloned op) can be added per computation, and existing
instructions can be given a new text (e.g. to read the copy-done instead of the original);
both are parsed before they are written, so a typo fails here and not in XLA.

``remat_module_text`` writes a remat / offload plan (``cpsched.remat.plan``) into the module:
clones of recomputed instructions, host (``S(5)``) copy-start/copy-done pairs for evictions
and prefetches, readers renamed to the newest copy; ``verify_remat_module`` reads the result
back and checks it like any schedule.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from cpsched.analysis.memory import peak
from cpsched.analysis.validate import validate_schedule
from cpsched.core.errors import InputError, ScheduleError
from cpsched.core.graph import Graph, OpKind
from cpsched.core.units import format_bytes_exact
from cpsched.readers.hlo.convert import HloConverter, _follow, module_graphs, scheduled_computations
from cpsched.readers.hlo.parser import (
    HloComputation,
    HloInstruction,
    HloModule,
    Shape,
    _Parser,
    parse_hlo_text,
)
from cpsched.remat.plan import COMPUTE, EVICT, FREE, PREFETCH
from cpsched.writers import write_text


def _computation(module: HloModule, name: str) -> HloComputation:
    comp = module.by_name.get(name)
    if comp is None:
        raise InputError(f"no computation named {name!r} in the module")
    return comp


def fresh_names(module: HloModule, sep: str = "") -> Callable[[str], str]:
    """A function giving names no computation or instruction of ``module`` has yet (nor an
    earlier call): ``base``, else ``base<sep>2``, ``base<sep>3`` ..."""
    taken: set[str] = {c.name for c in module.computations}
    for c in module.computations:
        taken.update(c.index)

    def fresh(base: str) -> str:
        base = re.sub(r"[^\w.\-]", "_", base)
        name, k = base, 1
        while name in taken:
            k += 1
            name = f"{base}{sep}{k}"
        taken.add(name)
        return name

    return fresh


def _parse_snippet(text: str, what: str) -> HloInstruction:
    """Parse one instruction written on its own; it must be the whole snippet."""
    p = _Parser(text, None)
    try:
        ins = p.instruction()
    except InputError as e:
        raise InputError(
            f"{what}: {e.reason} (line {e.line} column {e.column} of the snippet)"
        ) from None
    if p.toks[p.i][0] != "eof":
        raise InputError(f"{what}: text after the instruction: {text[p.toks[p.i][2] :][:40]!r}")
    return ins


def _indent(trivia: str) -> str:
    last = trivia.rsplit("\n", 1)[-1]
    return last if last.strip() == "" else "  "


def _resolve_order(
    comp: HloComputation, order: Sequence[str | int], extra_names: list[str]
) -> list[str]:
    names = []
    for x in order:
        if isinstance(x, int):
            if not 0 <= x < len(comp.instructions):
                raise InputError(f"order for {comp.name!r}: index {x} is out of range")
            names.append(comp.instructions[x].name)
        else:
            names.append(x[1:] if x.startswith("%") else x)
    known = set(comp.index) | set(extra_names)
    seen: set[str] = set()
    for n in names:
        if n not in known:
            raise InputError(
                f"order for {comp.name!r} names {n!r}, which is neither an "
                "instruction of the computation nor an added one"
            )
        if n in seen:
            raise InputError(f"order for {comp.name!r} lists {n!r} twice")
        seen.add(n)
    missing = [n for n in list(comp.index) + extra_names if n not in seen]
    if missing:
        raise InputError(
            f"order for {comp.name!r} leaves out {len(missing)} instruction(s): "
            + ", ".join(missing[:5])
            + (" ..." if len(missing) > 5 else "")
        )
    return names


def _computation_text(
    module: HloModule,
    comp: HloComputation,
    order: Sequence[str | int],
    extra: Sequence[str],
    replace: Mapping[str, str],
) -> str:
    text = module.text
    extras: dict[str, str] = {}
    for k, snippet in enumerate(extra):
        ins = _parse_snippet(snippet.strip(), f"added instruction #{k} of {comp.name!r}")
        if ins.name in comp.index or ins.name in extras:
            raise InputError(
                f"added instruction {ins.name!r} clashes with an existing name in {comp.name!r}"
            )
        if ins.root_marked:
            raise InputError(f"added instruction {ins.name!r} may not be ROOT")
        extras[ins.name] = snippet.strip()
    for name, new in replace.items():
        if name not in comp.index:
            raise InputError(f"cannot replace {name!r}: no such instruction in {comp.name!r}")
        ins = _parse_snippet(new.strip(), f"replacement for {name!r}")
        if ins.name != name:
            raise InputError(f"replacement for {name!r} names its instruction {ins.name!r}")
    names = _resolve_order(comp, order, list(extras))

    # text of each instruction with the comments/blank lines written just before it
    chunks: dict[str, str] = {}
    prev_end = comp.body_open
    for ins in comp.instructions:
        if ins.synthetic:
            # Written inside its user's operands (a nested instruction, or the
            # get-tuple-element of a ``t#i`` operand, as newer XLA prints them): it has no
            # line of its own and goes wherever its user goes, after its operands.
            continue
        trivia = text[prev_end : ins.span[0]]
        body = text[ins.span[0] : ins.span[1]]
        if ins.name in replace:
            new = replace[ins.name].strip()
            marked = new.startswith("ROOT")
            body = ("ROOT " + new) if ins.root_marked and not marked else new
        if ins is comp.root and not comp.root_explicit:
            body = "ROOT " + body  # the root stays the root wherever it lands
        if "\n" not in trivia:
            trivia = "\n" + _indent(trivia) + trivia.lstrip(" \t")
        chunks[ins.name] = trivia + body
        prev_end = ins.span[1]
    first = min(i.span[0] for i in comp.instructions if not i.synthetic)
    indent = _indent(text[comp.body_open : first])
    for name, snippet in extras.items():
        chunks[name] = "\n" + indent + snippet
    last = max(i.span[1] for i in comp.instructions if not i.synthetic)
    tail = text[last : comp.span[1]]
    body = "".join(chunks[n] for n in names if n in chunks)
    return text[comp.span[0] : comp.body_open] + body + tail


def write_hlo(
    module: HloModule,
    orders: Mapping[str, Sequence[str | int]],
    extra: Mapping[str, Sequence[str]] | None = None,
    replace: Mapping[str, Mapping[str, str]] | None = None,
    check: bool = True,
    computations_before: Mapping[str, Sequence[str]] | None = None,
) -> str:
    """The module text with each computation in ``orders`` re-sequenced.

    ``orders``: computation name -> instruction names (or text positions) in the new order;
    computations not named keep their text order, which becomes their schedule too.
    ``extra``: computation name -> texts of new instructions (one each, XLA syntax), which
    the order must place. ``replace``: computation name -> {instruction name: new text}.
    ``computations_before``: computation name -> texts of whole new computations (e.g. the
    fused computation of a cloned fusion), written just before that computation.
    With ``check`` the result is parsed and every scheduled computation is converted, so an
    order that breaks a dependence raises here.
    """
    extra = extra or {}
    replace = replace or {}
    computations_before = computations_before or {}
    for name in list(orders) + list(extra) + list(replace) + list(computations_before):
        if name not in module.by_name:
            raise InputError(f"no computation named {name!r} in the module")
    for name in extra:
        if name not in orders:
            raise InputError(f"instructions added to {name!r} need an order that places them")
    text = module.text
    pieces: list[str] = []
    pos = 0
    # header: is_scheduled=true
    if module.header_span is not None:
        if "is_scheduled" in module.attr_spans:
            s, e = module.attr_spans["is_scheduled"]
            pieces.append(text[:s] + "true")
            pos = e
        else:
            assert module.name_end is not None  # read with the header
            pieces.append(text[: module.name_end] + ", is_scheduled=true")
            pos = module.name_end
    else:
        name = module.entry.name
        safe = re.sub(r"[^A-Za-z0-9_.\-]", "_", name) or "module"
        pieces.append(f"HloModule {safe}, is_scheduled=true\n\n")
    for comp in module.computations:
        if comp.inline:  # written inside an instruction (``to_apply={...}``): kept there
            continue
        pieces.append(text[pos : comp.span[0]])
        for new in computations_before.get(comp.name, ()):
            pieces.append(new.strip() + "\n\n")
        if comp.name in orders:
            pieces.append(
                _computation_text(
                    module,
                    comp,
                    orders[comp.name],
                    extra.get(comp.name, ()),
                    replace.get(comp.name, {}),
                )
            )
        elif comp.name in replace:
            pieces.append(
                _computation_text(
                    module, comp, [i.name for i in comp.instructions], (), replace[comp.name]
                )
            )
        else:
            pieces.append(text[comp.span[0] : comp.span[1]])
        pos = comp.span[1]
    pieces.append(text[pos:])
    out = "".join(pieces)
    if check:
        _check_holds(out, "the rewritten module")
    return out


def _check_holds(text: str, what: str) -> None:
    """Parse ``text`` and convert every computation: a rewrite that breaks a dependence or
    does not parse raises ``InputError`` here, naming ``what``."""
    try:
        module_graphs(parse_hlo_text(text))
    except InputError as e:
        raise InputError(f"{what} does not hold together: {e}") from None


def _write_computation(module: HloModule, comp: HloComputation, *rewrite) -> str:
    """``write_hlo`` of one rewritten computation, unchecked (the caller checks): ``rewrite``
    is its order, its new instructions, its replaced ones and its new computations."""
    order, extra, replace, new_comps = rewrite
    return write_hlo(
        module,
        {comp.name: order},
        extra={comp.name: extra},
        replace={comp.name: replace},
        check=False,
        computations_before={comp.name: new_comps} if new_comps else None,
    )


def write_module_schedule(
    module: HloModule,
    orders: Mapping[str, Sequence[str]],
    scenarios=None,
    expected_peak: Sequence[int] | np.ndarray | None = None,
) -> str:
    """The module with a sequence for every computation that gets one (entry, while bodies
    and conditions, branches, called computations), ``is_scheduled=true``. ``orders`` must
    name each of them. The text is read back before it is returned: every computation's
    sequence must be its order, and the module's simulated peak (the entry with its
    callees' peaks under their orders) must be ``expected_peak`` when given."""
    need = scheduled_computations(module)
    missing = [n for n in need if n not in orders]
    if missing:
        raise ScheduleError(
            f"no order for {', '.join(missing[:4])}"
            + (" ..." if len(missing) > 4 else "")
            + ": is_scheduled=true needs a sequence for every computation"
        )
    text = write_hlo(module, {n: list(orders[n]) for n in need})
    back = parse_hlo_text(text)
    for n in need:
        # Instructions written inside another's operands have no line of their own: the
        # reader places them just before their user, so only the others are compared.
        inline = {i.name for i in back.by_name[n].instructions if i.synthetic}
        got = [i.name for i in back.by_name[n].instructions if i.name not in inline]
        if got != [str(x).lstrip("%") for x in orders[n] if str(x).lstrip("%") not in inline]:
            raise ScheduleError(f"the written module's sequence of {n!r} is not the order given")
    if expected_peak is not None:
        g = HloConverter(back).graph(back.entry.name)
        assert g.original_order is not None  # the module was written with is_scheduled=true
        sim = peak(g, g.original_order, scenarios)
        if [int(x) for x in sim] != [int(x) for x in expected_peak]:
            raise ScheduleError(
                f"the written module simulates to {[int(x) for x in sim]} "
                f"bytes, the schedule claims {[int(x) for x in expected_peak]}"
            )
    return text


def write_hlo_file(
    path: str,
    module: HloModule,
    orders: Mapping[str, Sequence[str | int]],
    inputs: tuple[str, ...] = (),
    **kwargs,
) -> None:
    write_text(
        path, write_hlo(module, orders, **kwargs), inputs + ((module.path,) if module.path else ())
    )


# -- remat / offload plans as HLO -----------------------------------------------------------

HOST_SPACE = 5  # XLA's host memory space: ``S(5)`` in a layout


def host_shape_text(shape: Shape) -> str:
    """``shape`` (an array) written with memory space ``S(5)`` in its layout: the layout as
    written (or the default descending one) with ``S(5)`` set or added to its items."""
    if not shape.is_array:
        raise InputError(f"only arrays can be copied to the host, not {shape}")
    layout = shape.layout
    if not layout:
        layout = "{" + ",".join(str(k) for k in reversed(range(shape.rank))) + "}"
    inner = layout[1:-1]
    if ":" in inner:
        dims, items = inner.split(":", 1)
        if re.search(r"S\(\d+\)", items):
            items = re.sub(r"S\(\d+\)", f"S({HOST_SPACE})", items)
        else:
            items += f"S({HOST_SPACE})"
        inner = dims + ":" + items
    else:
        inner += f":S({HOST_SPACE})"
    return str(
        Shape(
            shape.etype,
            shape.dims,
            shape.dynamic,
            shape.unbounded,
            (),
            shape.element_bits,
            HOST_SPACE,
            "{" + inner + "}",
        )
    )


def _token_len(text: str, offset: int, name: str) -> int:
    return len(name) + (1 if text.startswith("%", offset) else 0)


def _splice(text: str, start: int, end: int, edits: Sequence[tuple[int, int, str]]) -> str:
    """``text[start:end]`` with each ``(offset, length, new)`` edit (module offsets) applied."""
    out, pos = [], start
    for off, length, new in sorted(edits):
        out.append(text[pos:off])
        out.append(new)
        pos = off + length
    out.append(text[pos:end])
    return "".join(out)


def _renamed(text: str, offset: int, old: str, new: str) -> tuple[int, int, str]:
    pct = "%" if text.startswith("%", offset) else ""
    return offset, _token_len(text, offset, old), pct + new


def _instruction_text(
    module: HloModule,
    ins: HloInstruction,
    name: str | None = None,
    operands: Mapping[int, str] | None = None,
    attrs: Mapping[str, str] | None = None,
) -> str:
    """One instruction's text (without ``ROOT``) with its name, some operands (by position)
    and some attribute values replaced, everything else verbatim."""
    text = module.text
    start = ins.name_offset
    edits = []
    if name is not None:
        edits.append(_renamed(text, ins.name_offset, ins.name, name))
    for k, new in (operands or {}).items():
        edits.append(_renamed(text, ins.operand_offsets[k], ins.operands[k], new))
    for key, value in (attrs or {}).items():
        off = ins.attr_offsets[key]
        edits.append((off, len(ins.attrs[key]), value))
    return _splice(text, start, ins.span[1], edits)


def _clone_computation(
    module: HloModule, comp: HloComputation, new_name: str, fresh: Callable[[str], str]
) -> str:
    """The text of ``comp`` as a new computation ``new_name``, each instruction renamed with
    ``fresh`` (module-wide unique names, as XLA's name uniquer keeps them)."""
    text = module.text
    names = {i.name: fresh(i.name + ".remat") for i in comp.instructions}
    edits = []
    for ins in comp.instructions:
        edits.append(_renamed(text, ins.name_offset, ins.name, names[ins.name]))
        for off, o in zip(ins.operand_offsets, ins.operands):
            if o in names:
                edits.append(_renamed(text, off, o, names[o]))
        if "control-predecessors" in ins.attrs:
            raw = ins.attrs["control-predecessors"]
            new = re.sub(
                r"(%?)([\w.\-]+)", lambda m: m.group(1) + names.get(m.group(2), m.group(2)), raw
            )
            edits.append((ins.attr_offsets["control-predecessors"], len(raw), new))
    # the header: name, then the signature's parameter names (they name the parameters)
    head_start = comp.span[0]
    m = re.compile(r"%?" + re.escape(comp.name)).match(text, head_start)
    if m is None:
        raise InputError(f"cannot find the name of computation {comp.name!r} in its header")
    edits.append(
        (m.start(), m.end() - m.start(), ("%" if text[m.start()] == "%" else "") + new_name)
    )
    sig_end = comp.body_open - 1
    for p in comp.parameters().values():
        pat = re.compile(r"(?<![\w.\-%])(%?)" + re.escape(p.name) + r"(?=\s*:)")
        for pm in pat.finditer(text, m.end(), sig_end):
            edits.append((pm.start(), pm.end() - pm.start(), pm.group(1) + names[p.name]))
    return _splice(text, head_start, comp.span[1], edits)


@dataclass
class RematHlo:
    """An HLO module with a remat / offload plan written in, and what was added to it."""

    text: str
    computation: str
    clones: dict[str, str] = field(default_factory=dict)  # clone -> original
    evictions: list[tuple[str, str, str]] = field(default_factory=list)  # (buffer, start, done)
    prefetches: list[tuple[str, str, str]] = field(default_factory=list)  # (buffer, start, done)
    helpers: list[str] = field(default_factory=list)  # added get-tuple-element / bitcast


class _RematRewriter:
    """``remat_module_text``'s walk over a plan's events: where each buffer's value lives
    now (the original instruction, a clone, a prefetched copy), the lines written so far,
    and the order they go in."""

    def __init__(self, module: HloModule, comp: HloComputation, graph: Graph):
        self.module, self.comp, self.graph = module, comp, graph
        self.fresh = fresh_names(module)
        self.pct = "%" if module.text.startswith("%", comp.instructions[0].name_offset) else ""
        self.bindex = {n: j for j, n in enumerate(graph.buffer_names)}
        # where each buffer's original value lives: (instruction, shape index)
        self.orig: dict[int, tuple[str, tuple[int, ...]]] = {}
        for ins in comp.instructions:
            if ins.shape is None:
                continue
            if not ins.shape.is_tuple:
                b = self.bindex.get(ins.name)
                if b is not None and graph.op_names[int(graph.buffer_def[b])] == ins.name:
                    self.orig[b] = (ins.name, ())
                continue
            for idx, _sub in ins.shape.subshapes():
                b = self.bindex.get(ins.name + "{" + ",".join(map(str, idx)) + "}")
                if b is not None and graph.op_names[int(graph.buffer_def[b])] == ins.name:
                    self.orig[b] = (ins.name, idx)
        self.value_cache: dict[str, int | None] = {}
        self.result = RematHlo("", comp.name)
        self.order: list[str] = []
        self.after: dict[str, list[str]] = {}  # helpers placed right after an instruction
        self.extra: list[str] = []
        self.replace: dict[str, str] = {}
        self.new_comps: list[str] = []
        # rerouted buffer -> (producer, index)
        self.cur: dict[int, tuple[str, tuple[int, ...]]] = {}
        self.handles: dict[tuple[str, tuple[int, ...]], str] = {}
        self.producer_shape: dict[str, Shape | None] = {}
        self.host_of: dict[int, str] = {}  # buffer -> copy-done holding its host copy
        self.pending_out: dict[int, tuple[str, str]] = {}  # buffer -> (done name, done text)
        self.pending_in: dict[int, tuple[str, str]] = {}
        self.n_done = np.zeros(graph.n_ops, dtype=bool)

    def ref(self, n: str) -> str:
        """A name in a new line, written as the computation writes its names."""
        return self.pct + n

    def value_buffer(self, name: str) -> int | None:
        """The buffer holding instruction ``name``'s whole value, if it is one buffer."""
        if name not in self.value_cache:
            comp = self.comp
            src, idx = _follow(comp, comp.index[name], ())
            b = None
            if src.shape is not None:
                sub = src.shape.subshape(idx)
                key = (
                    src.name
                    if not idx and not sub.is_tuple and not src.shape.is_tuple
                    else src.name + "{" + ",".join(map(str, idx)) + "}"
                )
                b = self.bindex.get(key)
                if b is not None and self.orig.get(b) != (src.name, idx):
                    b = None
            self.value_cache[name] = b
        return self.value_cache[name]

    def shape_of(self, b: int) -> Shape:
        src, idx = self.orig[b]
        shape = self.comp.index[src].shape
        assert shape is not None  # a buffer is defined by an instruction with a shape
        return shape.subshape(idx)

    def handle(self, producer: str, idx: tuple[int, ...]) -> str:
        """An instruction whose whole value is ``producer``'s element ``idx``."""
        if not idx:
            return producer
        key = (producer, idx)
        if key not in self.handles:
            parent = self.handle(producer, idx[:-1])
            pshape = self.producer_shape.get(producer) or self.comp.index[producer].shape
            assert pshape is not None  # it has elements: a tuple shape
            sub = pshape.subshape(idx)
            name = self.fresh(f"{producer}.gte{'.'.join(map(str, idx))}")
            self.extra.append(
                f"{self.ref(name)} = {sub} get-tuple-element({self.ref(parent)}), index={idx[-1]}"
            )
            self.after.setdefault(parent, []).append(name)
            self.result.helpers.append(name)
            self.handles[key] = name
        return self.handles[key]

    def emit_done(self, pending: dict[int, tuple[str, str]], b: int) -> None:
        name, line = pending.pop(b)
        self.extra.append(line)
        self.order.append(name)

    def routed_text(self, x: int, name: str | None) -> str | None:
        """The text of op ``x`` reading the newest copies (None: unchanged)."""
        module, comp, ref, cur = self.module, self.comp, self.ref, self.cur
        ins = comp.index[self.graph.op_names[x]]
        ops: dict[int, str] = {}
        for k, o in enumerate(ins.operands):
            b = self.value_buffer(o)
            if b is None or b not in cur:
                continue
            h = self.handle(*cur[b])
            oshape = comp.index[o].shape
            if oshape is not None and str(oshape) != str(self.shape_of(b)):
                if oshape.is_tuple:
                    continue  # read through a tuple: left to the check
                cast = self.fresh(f"{h}.bitcast")
                self.extra.append(f"{ref(cast)} = {oshape} bitcast({ref(h)})")
                self.order.append(cast)
                self.result.helpers.append(cast)
                h = cast
            ops[k] = h
        attrs: dict[str, str] = {}
        if name is not None and ins.opcode == "fusion" and "calls" in ins.attrs:
            callee = module.by_name.get(ins.attrs["calls"].lstrip("%"))
            if callee is not None:
                new = self.fresh(f"{callee.name}.remat")
                self.new_comps.append(_clone_computation(module, callee, new, self.fresh))
                attrs["calls"] = ("%" if ins.attrs["calls"].startswith("%") else "") + new
        if name is None and not ops:
            # a get-tuple-element / bitcast whose value now lives elsewhere
            b = self.value_buffer(ins.name)
            if (
                b is not None
                and b in cur
                and ins.opcode in ("get-tuple-element", "bitcast")
                and ins.shape is not None
            ):
                return f"{ref(ins.name)} = {ins.shape} bitcast({ref(self.handle(*cur[b]))})"
            return None
        return _instruction_text(module, ins, name, ops, attrs)

    def compute(self, x: int) -> None:
        """Op ``x`` runs: the first time in place, later as a clone."""
        graph = self.graph
        for b in graph.uses(x):
            if int(b) in self.pending_in:
                self.emit_done(self.pending_in, int(b))
        opname = graph.op_names[x]
        if not self.n_done[x]:
            self.n_done[x] = True
            new = self.routed_text(x, None)
            if new is not None:
                self.replace[opname] = new
            self.order.append(opname)
            for b in graph.defines(x):
                self.cur.pop(int(b), None)
            return
        if int(graph.kinds[x]) != OpKind.COMPUTE:
            raise InputError(f"the plan computes {opname!r} twice, which cannot be cloned")
        clone = self.fresh(f"{opname}.remat")
        line = self.routed_text(x, clone)
        assert line is not None  # given a name, routed_text always writes the op
        self.extra.append(line)
        self.order.append(clone)
        self.result.clones[clone] = opname
        self.producer_shape[clone] = self.comp.index[opname].shape
        for b in graph.defines(x):
            b = int(b)
            if b in self.orig:
                self.cur[b] = (clone, self.orig[b][1])

    def evict(self, x: int) -> None:
        """Buffer ``x`` goes to the host: a copy-start now, its done where the plan frees it."""
        graph, cur, orig, ref = self.graph, self.cur, self.orig, self.ref
        src = self.handle(*cur[x]) if x in cur else self.handle(*orig[x]) if x in orig else None
        if src is None:
            raise InputError(f"cannot evict {graph.buffer_names[x]!r}: no instruction holds it")
        sh = self.shape_of(x)
        base = self.fresh(f"{graph.buffer_names[x]}.evict")
        start, done = self.fresh(base + ".start"), self.fresh(base + ".done")
        hs = host_shape_text(sh)
        self.extra.append(f"{ref(start)} = ({hs}, {sh}, u32[]) copy-start({ref(src)})")
        self.order.append(start)
        self.pending_out[x] = (done, f"{ref(done)} = {hs} copy-done({ref(start)})")
        self.host_of[x] = done
        self.result.evictions.append((graph.buffer_names[x], start, done))

    def free(self, x: int) -> None:
        if x in self.pending_out:
            self.emit_done(self.pending_out, x)
        if x in self.pending_in:
            self.emit_done(self.pending_in, x)

    def prefetch(self, x: int) -> None:
        """Buffer ``x`` comes back from the host; its done goes before its first reader."""
        graph, ref = self.graph, self.ref
        if x not in self.host_of or x in self.pending_out:
            raise InputError(
                f"the plan prefetches {graph.buffer_names[x]!r} before its copy to the host is done"
            )
        sh = self.shape_of(x)
        base = self.fresh(f"{graph.buffer_names[x]}.prefetch")
        start, done = self.fresh(base + ".start"), self.fresh(base + ".done")
        self.extra.append(
            f"{ref(start)} = ({sh}, {host_shape_text(sh)}, u32[]) "
            f"copy-start({ref(self.host_of[x])})"
        )
        self.order.append(start)
        self.pending_in[x] = (done, f"{ref(done)} = {sh} copy-done({ref(start)})")
        self.producer_shape[done] = sh
        self.cur[x] = (done, ())
        self.result.prefetches.append((graph.buffer_names[x], start, done))

    def sequence(self) -> list[str]:
        """The computation's new order, once every event is played: the copies still in
        flight done, each helper right after the instruction it reads."""
        for pend in (self.pending_out, self.pending_in):
            for b in list(pend):
                self.emit_done(pend, b)
        missing = [n for k, n in enumerate(self.graph.op_names) if not self.n_done[k]]
        if missing:
            raise InputError(f"the plan never computes {missing[0]!r}")
        full: list[str] = []

        def place(name: str) -> None:
            full.append(name)
            for h in self.after.get(name, ()):
                place(h)

        for name in self.order:
            place(name)
        return full


def remat_module_text(
    module: HloModule,
    graph: Graph,
    events: Sequence[tuple[int, int]],
    computation: str | None = None,
    comment: str | None = None,
    check: bool = True,
) -> RematHlo:
    """Write a remat plan (the event list of one scenario, ``cpsched.remat.plan``) into the
    computation ``graph`` was read from (default: the one named like the graph).

    The computation gets the plan's order (``is_scheduled=true``); a recompute is a copy of
    the instruction with a fresh name (``name.remat``, ``name.remat2``, ...; a cloned fusion
    calls a clone of its fused computation, as XLA's rematerialization does); an eviction is
    a ``copy-start`` to the host (``(T{...:S(5)}, T, u32[])``) and its ``copy-done`` where the
    plan frees the device copy; a prefetch is a ``copy-start`` back (``(T, T{...:S(5)},
    u32[])``) and its ``copy-done`` just before the first reader. Every later reader of a
    buffer reads its newest copy: operands naming the old copy (directly, or through
    get-tuple-element / bitcast) are renamed, with a bitcast where the operand's shape
    differs and a get-tuple-element where the copy is an element of a cloned tuple. A
    ``comment`` becomes a ``//`` line above the header. Everything else is verbatim.
    """

    comp = _computation(module, computation or graph.name)
    if len(graph.op_names) != len(comp.instructions) or set(graph.op_names) != set(comp.index):
        raise InputError(
            f"the graph {graph.name!r} was not read from computation {comp.name!r} of this module"
        )
    rw = _RematRewriter(module, comp, graph)
    steps = {COMPUTE: rw.compute, EVICT: rw.evict, FREE: rw.free, PREFETCH: rw.prefetch}
    for code, x in events:
        step = steps.get(int(code))
        if step is not None:
            step(int(x))
    full = rw.sequence()
    extra, replace, new_comps, result = rw.extra, rw.replace, rw.new_comps, rw.result
    out = _write_computation(module, comp, full, extra, replace, new_comps)
    if comment:
        out = "".join(f"// {line}\n" for line in comment.splitlines()) + out
    if check:
        _check_holds(out, "the module with the plan written in")
    result.text = out
    return result


def verify_remat_module(
    text: str,
    computation: str,
    scenarios,
    budget: int,
    evicted: Sequence[str] = (),
    plan_peak: int | None = None,
) -> tuple[Graph, int]:
    """Read a written remat module back and check it as every schedule is checked: the
    computation's text order passes the validator, its simulated peak (host ``S(5)`` copies
    count 0) is within ``budget``, and each ``copy-start`` in ``evicted`` puts its copy in
    host memory. Returns the graph read back and its peak; raises ``ScheduleError``."""
    try:
        g = module_graphs(parse_hlo_text(text))[computation]
    except InputError as e:
        raise ScheduleError(f"the written module does not read back: {e}") from None
    if g.original_order is None:
        raise ScheduleError("the written module is not marked is_scheduled=true")
    peak = int(validate_schedule(g, g.original_order, scenarios, what="written remat module")[0])
    for start in evicted:
        i = g.op_index(start)
        host = [int(b) for b in g.defines(i) if int(g.buffer_space[b]) == HOST_SPACE]
        if not host:
            raise ScheduleError(f"written remat module: {start!r} does not copy to host memory")
    if peak > int(budget):
        why = (
            f"the plan itself needs {format_bytes_exact(plan_peak)}"
            if plan_peak is not None and int(plan_peak) > int(budget)
            else "it counts each copy-start's tuple table and context (28 B while in flight), "
            "which the plan does not"
        )
        raise ScheduleError(
            f"the written module's simulated peak {format_bytes_exact(peak)} exceeds the budget "
            f"{format_bytes_exact(budget)} ({why})"
        )
    return g, peak


# -- synchronous collectives written in XLA's async form ------------------------------------

# XLA has dedicated start/done opcodes for these three; the others are wrapped generically
# (``async-start`` calling a one-instruction computation, ``async-done``).
_DEDICATED_ASYNC = ("all-reduce", "all-gather", "collective-permute")


def _closing_paren(text: str, open_at: int) -> int:
    """Position of the ``)`` matching the ``(`` at ``open_at`` (strings skipped)."""
    depth, i, n = 0, open_at, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise InputError("unbalanced parentheses in an instruction")


def _call_parts(module: HloModule, ins: HloInstruction) -> tuple[str, str]:
    """``(operand list text, attribute text)`` of an instruction as written: the text
    between the opcode's parentheses, and everything after them (``, key=value ...``)."""
    text = module.text
    end = ins.operand_offsets[0] if ins.operand_offsets else ins.span[1]
    at = text.rfind(ins.raw_opcode + "(", ins.name_offset, end)
    if at < 0:
        raise InputError(f"cannot find the opcode of {ins.name!r} in its text")
    open_at = at + len(ins.raw_opcode)
    close = _closing_paren(text, open_at)
    return text[open_at + 1 : close], text[close + 1 : ins.span[1]]


_CONTROL_PREDS = re.compile(r",\s*control-predecessors=\{[^}]*\}")


def _attr_text(ins: HloInstruction, key: str) -> str:
    return f", {key}={ins.attrs[key]}" if key in ins.attrs else ""


def _tuple_text(shapes: Sequence[Shape]) -> str:
    return "(" + ", ".join(str(s) for s in shapes) + ")"


@dataclass
class AsyncHlo:
    """A module whose synchronous collectives were written as async start/done pairs."""

    text: str
    computation: str
    pairs: dict[str, tuple[str, str]] = field(default_factory=dict)  # original -> (start, done)
    wrapped: dict[str, str] = field(default_factory=dict)  # original -> computation


def async_module_text(
    module: HloModule,
    graph: Graph,
    order: Sequence[int],
    computation: str | None = None,
    check: bool = True,
) -> AsyncHlo:
    """Write ``order`` of ``graph`` (made by ``convert_sync_collectives`` from a computation
    of ``module``) into the module, each collective the graph split written in XLA's async
    form at the start's and the done's positions of the order.

    all-reduce, all-gather and collective-permute get their dedicated opcodes, with the
    shapes XLA's AsyncCollectiveCreator gives them (``all-reduce-start``: the all-reduce's
    shape; ``all-gather-start``: ``(operand, result)``, a tuple of operands when there are
    several; ``collective-permute-start``: ``(operand, result, u32[], u32[])``, for the
    in-place form ``(input, output, u32[], u32[])``, for a combined one the operand tuple
    twice); every other
    kind (reduce-scatter, all-to-all) becomes an ``async-start`` calling a new computation
    that holds the collective alone (``calls=``), shape ``((operands...), result)``, and an
    ``async-done``. The start is named like the graph's start (``<name>-start``) and takes
    the collective's operands, attributes and control predecessors; the done keeps the
    collective's name, so its readers and ``ROOT`` need no change.
    """
    comp = _computation(module, computation or graph.name)
    text = module.text
    fresh = fresh_names(module, sep=".")

    pct = "%" if text.startswith("%", comp.instructions[0].name_offset) else ""
    result = AsyncHlo("", comp.name)
    names: dict[int, str] = {}  # graph op -> instruction name in the written module
    extra: list[str] = []
    replace: dict[str, str] = {}
    new_comps: list[str] = []
    for i, a in graph.op_attrs.items():
        if int(graph.kinds[i]) != OpKind.ASYNC_START or "converted_from" not in a:
            continue
        orig = str(a["converted_from"])
        ins = comp.index.get(orig)
        if ins is None:
            raise InputError(
                f"the graph's {graph.op_names[i]!r} comes from {orig!r}, which is "
                f"not an instruction of {comp.name!r}"
            )
        done = int(graph.async_done[i])
        if done < 0 or ins.shape is None:
            raise InputError(f"cannot write {orig!r} as an async pair")
        kind = ins.opcode
        maybe_shapes = [comp.index[o].shape for o in ins.operands]
        if any(s is None for s in maybe_shapes):
            raise InputError(f"an operand of {orig!r} has no known shape")
        op_shapes = [s for s in maybe_shapes if s is not None]
        operands, attrs = _call_parts(module, ins)
        start = fresh(graph.op_names[i])
        names[i], names[done] = start, orig
        meta = _attr_text(ins, "metadata")
        if kind in _DEDICATED_ASYNC:
            if kind == "all-reduce":
                shape = str(ins.shape)
            elif kind == "all-gather":
                src = op_shapes[0] if len(op_shapes) == 1 else _tuple_text(op_shapes)
                shape = f"({src}, {ins.shape})"
            elif len(op_shapes) == 1:
                shape = f"({op_shapes[0]}, {ins.shape}, u32[], u32[])"
            elif "slice_sizes" in ins.attrs and len(op_shapes) == 4:
                # in place (input, output, input offsets, output offsets)
                shape = f"({op_shapes[0]}, {op_shapes[1]}, u32[], u32[])"
            else:  # combined: a tuple of the operands, sent and received
                both = _tuple_text(op_shapes)
                shape = f"({both}, {both}, u32[], u32[])"
            extra.append(f"{pct}{start} = {shape} {kind}-start({operands}){attrs}")
            replace[orig] = f"{pct}{orig} = {ins.shape} {kind}-done({pct}{start}){meta}"
        else:
            wname = fresh(f"{orig}.async_wrapped")
            params = [fresh(f"{orig}.param_{k}") for k in range(len(op_shapes))]
            inner = fresh(f"{orig}.wrapped")
            body = [
                f"  {pct}{p} = {s} parameter({k})"
                for k, (p, s) in enumerate(zip(params, op_shapes))
            ]
            body.append(
                f"  ROOT {pct}{inner} = {ins.shape} {kind}("
                + ", ".join(pct + p for p in params)
                + ")"
                + _CONTROL_PREDS.sub("", attrs)
            )
            sig = ", ".join(f"{p}: {s}" for p, s in zip(params, op_shapes))
            new_comps.append(f"{pct}{wname} ({sig}) -> {ins.shape} {{\n" + "\n".join(body) + "\n}")
            shape = f"({_tuple_text(op_shapes)}, {ins.shape})"
            extra.append(
                f"{pct}{start} = {shape} async-start({operands}), "
                f"calls={pct}{wname}{_attr_text(ins, 'control-predecessors')}{meta}"
            )
            replace[orig] = f"{pct}{orig} = {ins.shape} async-done({pct}{start}){meta}"
            result.wrapped[orig] = wname
        result.pairs[orig] = (start, orig)
    if not result.pairs:
        raise InputError(
            f"the graph has no collective split into a start/done pair in {comp.name!r}"
        )
    written = [names.get(int(i), graph.op_names[int(i)]) for i in order]
    out = _write_computation(module, comp, written, extra, replace, new_comps)
    if check:
        _check_holds(out, "the module with async collectives")
    result.text = out
    return result


def verify_async_module(text: str, written: AsyncHlo, scenarios) -> tuple[Graph, np.ndarray]:
    """Read a module written by ``async_module_text`` back and check it as every schedule
    is checked: the computation is scheduled, its text order passes the validator (each
    start before its done, dependences kept) and is re-simulated; every pair is a real
    async pair in the module read back. Returns the graph read back and its peaks."""
    try:
        g = module_graphs(parse_hlo_text(text))[written.computation]
    except InputError as e:
        raise ScheduleError(f"the written module does not read back: {e}") from None
    if g.original_order is None:
        raise ScheduleError("the written module is not marked is_scheduled=true")
    peaks = validate_schedule(g, g.original_order, scenarios, what="written async module")
    for _orig, (start, done) in written.pairs.items():
        s, d = g.op_index(start), g.op_index(done)
        if int(g.async_done[s]) != d:
            raise ScheduleError(
                f"written async module: {start!r} and {done!r} do not read back as an async pair"
            )
    return g, peaks


__all__ = [
    "write_hlo",
    "write_hlo_file",
    "remat_module_text",
    "verify_remat_module",
    "host_shape_text",
    "RematHlo",
    "async_module_text",
    "verify_async_module",
    "AsyncHlo",
]
