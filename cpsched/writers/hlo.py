"""Write an HLO module back as text with new instruction orders (``is_scheduled=true``).

Everything but the order is copied verbatim from the parsed text: each instruction moves
together with the comments and blank lines written just before it. New instructions (an
inserted copy-start/copy-done pair, a cloned op) can be added per computation, and existing
instructions can be given a new text (e.g. to read the copy-done instead of the original);
both are parsed before they are written, so a typo fails here and not in XLA.
"""

from __future__ import annotations

import re
from typing import Mapping, Sequence

from cpsched.errors import InputError
from cpsched.readers.hlo_parser import HloComputation, HloInstruction, HloModule, _Parser


def _parse_snippet(text: str, what: str) -> HloInstruction:
    """Parse one instruction written on its own; it must be the whole snippet."""
    p = _Parser(text, None)
    try:
        ins = p.instruction()
    except InputError as e:
        raise InputError(f"{what}: {e.reason} (line {e.line} column {e.column} of the snippet)"
                         ) from None
    if p.toks[p.i][0] != "eof":
        raise InputError(f"{what}: text after the instruction: {text[p.toks[p.i][2]:][:40]!r}")
    return ins


def _indent(trivia: str) -> str:
    last = trivia.rsplit("\n", 1)[-1]
    return last if last.strip() == "" else "  "


def _resolve_order(comp: HloComputation, order: Sequence[str | int],
                   extra_names: list[str]) -> list[str]:
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
            raise InputError(f"order for {comp.name!r} names {n!r}, which is neither an "
                             "instruction of the computation nor an added one")
        if n in seen:
            raise InputError(f"order for {comp.name!r} lists {n!r} twice")
        seen.add(n)
    missing = [n for n in list(comp.index) + extra_names if n not in seen]
    if missing:
        raise InputError(f"order for {comp.name!r} leaves out {len(missing)} instruction(s): "
                         + ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else ""))
    return names


def _computation_text(module: HloModule, comp: HloComputation, order: Sequence[str | int],
                      extra: Sequence[str], replace: Mapping[str, str]) -> str:
    text = module.text
    extras: dict[str, str] = {}
    for k, snippet in enumerate(extra):
        ins = _parse_snippet(snippet.strip(), f"added instruction #{k} of {comp.name!r}")
        if ins.name in comp.index or ins.name in extras:
            raise InputError(f"added instruction {ins.name!r} clashes with an existing name in "
                             f"{comp.name!r}")
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
        trivia = text[prev_end:ins.span[0]]
        body = text[ins.span[0]:ins.span[1]]
        if ins.name in replace:
            new = replace[ins.name].strip()
            marked = new.startswith("ROOT")
            body = ("ROOT " + new) if ins.root_marked and not marked else new
        if ins is comp.root and not comp.root_explicit:
            body = "ROOT " + body   # the root stays the root wherever it lands
        if "\n" not in trivia:
            trivia = "\n" + _indent(trivia) + trivia.lstrip(" \t")
        chunks[ins.name] = trivia + body
        prev_end = ins.span[1]
    indent = _indent(text[comp.body_open:comp.instructions[0].span[0]])
    for name, snippet in extras.items():
        chunks[name] = "\n" + indent + snippet
    tail = text[comp.instructions[-1].span[1]:comp.span[1]]
    return text[comp.span[0]:comp.body_open] + "".join(chunks[n] for n in names) + tail


def write_hlo(module: HloModule, orders: Mapping[str, Sequence[str | int]],
              extra: Mapping[str, Sequence[str]] | None = None,
              replace: Mapping[str, Mapping[str, str]] | None = None,
              check: bool = True) -> str:
    """The module text with each computation in ``orders`` re-sequenced.

    ``orders``: computation name -> instruction names (or text positions) in the new order;
    computations not named keep their text order, which becomes their schedule too.
    ``extra``: computation name -> texts of new instructions (one each, XLA syntax), which
    the order must place. ``replace``: computation name -> {instruction name: new text}.
    With ``check`` the result is parsed and every scheduled computation is converted, so an
    order that breaks a dependence raises here.
    """
    extra = extra or {}
    replace = replace or {}
    for name in list(orders) + list(extra) + list(replace):
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
            pieces.append(text[:module.name_end] + ", is_scheduled=true")
            pos = module.name_end
    else:
        name = module.entry.name
        safe = re.sub(r"[^A-Za-z0-9_.\-]", "_", name) or "module"
        pieces.append(f"HloModule {safe}, is_scheduled=true\n\n")
    for comp in module.computations:
        pieces.append(text[pos:comp.span[0]])
        if comp.name in orders:
            pieces.append(_computation_text(module, comp, orders[comp.name],
                                            extra.get(comp.name, ()),
                                            replace.get(comp.name, {})))
        elif comp.name in replace:
            pieces.append(_computation_text(module, comp, [i.name for i in comp.instructions],
                                            (), replace[comp.name]))
        else:
            pieces.append(text[comp.span[0]:comp.span[1]])
        pos = comp.span[1]
    pieces.append(text[pos:])
    out = "".join(pieces)
    if check:
        from cpsched.readers.hlo import module_graphs
        from cpsched.readers.hlo_parser import parse_hlo_text
        try:
            module_graphs(parse_hlo_text(out))
        except InputError as e:
            raise InputError(f"the rewritten module does not hold together: {e}") from None
    return out


def write_hlo_file(path: str, module: HloModule, orders: Mapping[str, Sequence[str | int]],
                   inputs: tuple[str, ...] = (), **kwargs) -> None:
    from cpsched.writers import write_text
    write_text(path, write_hlo(module, orders, **kwargs), inputs + ((module.path,) if module.path else ()))


__all__ = ["write_hlo", "write_hlo_file"]
