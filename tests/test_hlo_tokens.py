"""HLO reader internals that exist for speed: the parser's coarse tokens must split into exactly
the fine tokens, errors must read as if the text were read token by token, the GC pause must
restore the collector's state, and in-place chains must not need whole-graph searches."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from cpsched.core.errors import InputError
from cpsched.readers.hlo.convert import read_hlo_text
from cpsched.readers.hlo.parser import (_BAD, _COARSE, _bad_token_error, _fine_tokens,
                                        _parser_tokens, gc_paused, parse_hlo_text, tokenize)

MODELS = Path(__file__).resolve().parents[1] / "models" / "hlo"

SNIPPETS = [
    "HloModule m, is_scheduled=true\nENTRY e {\n  p = f32[2,3]{1,0} parameter(0)\n"
    "  ROOT a = f32[2,3]{1,0} add(f32[2,3]{1,0} p, p), metadata={op_name=\"x{y}\" k=1}\n}\n",
    "x = f32[8]{0:T(8)(2,1)E(4)S(1)} fusion(%a, b.1), kind=kLoop, calls=%f, "
    "backend_config={\"a\":[1,{\"b\":2}]}, dim_labels=b01f_01io->b01f, k=a -> b\n",
    "ROOT = f32[] add(a), ENTRY=x, y={{0,1},{2,3}}, z=[2,4]<=[4,2]T(1,0) /* c */ // d\n",
    "a(b, c) d(e)f(g) T(8,128) {1,0:T(2)} x=(a, b) %y = token[] after-all()",
    "p = f32[2] parameter(0), x={a=\"unterminated}\n",
    "p = f32[2] parameter(0) /* open\n",
    "p = f32[2] parameter(0), x=a @ b\n",
    # single-quoted strings (mesh axes), '~' in layouts, braces inside quotes
    "g = f32[8]{0} all-gather(p), replica_groups=mesh['a'=2,'b'=4] {'b':(1)2}, x={'}', \"{\"}\n",
    "q = f32[4]{0:D(D,C~)T(2)} copy(p), y={a={'k'=1}, b=[1,{2}]}, z='it\\'s'\n",
    "r = f32[2] parameter(0), w={'open}\n",
]


def _expanded(text):
    out = []
    for t in _parser_tokens(text):
        if t[0] == _BAD:    # the parser reports these where it reads them; here at once
            raise _bad_token_error(text, None, t)
        if t[0] in _COARSE:
            out.extend(_fine_tokens(text, t[2], t[3]))
        else:
            out.append(t[:4])
    return out


def _outcome(f, text):
    try:
        return "ok", f(text)
    except InputError as e:
        return "error", str(e)


@pytest.mark.parametrize("text", SNIPPETS + [p.read_text() for p in sorted(MODELS.glob("*.hlo"))])
def test_coarse_tokens_split_into_the_fine_tokens(text):
    assert _outcome(_expanded, text) == _outcome(tokenize, text)


H = "HloModule m\nENTRY e {\n  p = f32[2]{0} parameter(0)\n"


@pytest.mark.parametrize("text, message", [
    (H + "  ROOT f32[2] = f32[2]{0} add(p, p)\n}\n",
     "4:11: expected '=' after instruction name 'f32', found '['"),
    (H + "  ROOT a = f32[2]{0} add(f32[2]{0} f32[2], p)\n}\n",
     "4:39: expected ',' or ')' after operand 'f32', found '['"),
    (H + "  ROOT a = f32[2]{0} add(p, p), metadata={op_name=\"x\"} f32[3]\n}\n",
     "4:56: expected ',' and an attribute, or the next instruction, after 'a', found 'f32'"),
    (H + "  ROOT a = f32[2]{0} add(p, p), k=b = f32[2]{0} abs(p)\n}\n",
     "4:37: expected ',' and an attribute, or the next instruction, after 'a', found '='"),
    (H + "  ROOT a = q32[2]{0} add(p, p)\n}\n", "4:12: unknown element type 'q32'"),
    (H + "  ROOT a = f32[2]{0} add(q32[2] p, p)\n}\n", "4:26: unknown element type 'q32'"),
    (H + "  ROOT a = f32[2]{0:T(2)E(x)} add(p, p)\n}\n", "4:27: bad E(...) in layout"),
    (H + "  a = f32[2]{0} parameter(1)\n  ROOT x = = f32[2]{0} add(p, a)\n}\n",
     "5:12: expected an opcode, found '='"),
    (H + "  ROOT a = f32[2]{0} add(p, q)\n}\n",
     "4:29: unknown operand 'q' of 'a' (no such instruction in computation 'e')"),
])
def test_errors_inside_coarse_tokens_read_as_token_by_token(text, message):
    with pytest.raises(InputError) as e:
        parse_hlo_text(text, "t.hlo")
    assert str(e.value) == "t.hlo:" + message


def test_attribute_values_joined_across_blanks_and_layout_items():
    m = parse_hlo_text(H + "  ROOT a = f32[2]{0:T(2)(1,1)E(4)S(5)} add(p, p), "
                       "dim_labels=b01f_01io -> b01f, g=[2]<=[2], k={a={b}}\n}\n")
    root = m.entry.root
    assert root.attrs == {"dim_labels": "b01f_01io -> b01f", "g": "[2]<=[2]", "k": "{a={b}}"}
    assert (root.shape.element_bits, root.shape.memory_space) == (4, 5)
    assert root.shape.layout == "{0:T(2)(1,1)E(4)S(5)}"


@pytest.mark.parametrize("enabled", [True, False])
def test_gc_paused_restores_the_collector_state(enabled):
    was = gc.isenabled()
    try:
        gc.enable() if enabled else gc.disable()
        with gc_paused():
            assert not gc.isenabled()
            with gc_paused():
                assert not gc.isenabled()
            assert not gc.isenabled()
        assert gc.isenabled() == enabled
        with pytest.raises(InputError):
            read_hlo_text("HloModule m\nENTRY e {\n}\n")
        assert gc.isenabled() == enabled
    finally:
        gc.enable() if was else gc.disable()


def test_chain_of_in_place_updates_shares_one_buffer():
    n = 400
    lines = ["HloModule dus, is_scheduled=true", "ENTRY main {",
             "  p0 = f32[1024]{0} parameter(0)", "  i = s32[] parameter(1)",
             "  u = f32[1]{0} parameter(2)", "  d0 = f32[1024]{0} copy(p0)",
             "  r0 = f32[1024]{0} negate(d0)"]
    for k in range(1, n):
        lines.append(f"  d{k} = f32[1024]{{0}} dynamic-update-slice(d{k - 1}, u, i)")
    lines += [f"  ROOT out = f32[1024]{{0}} add(d{n - 1}, r0)", "}"]
    g = read_hlo_text("\n".join(lines) + "\n")
    # p0, i, u, the chain d0..d{n-1} (one buffer: r0 reads d0 before d1 writes over it), r0, out
    assert g.n_buffers == 6
    assert g.meta["alias_order_edges"] == [("r0", "d1")]
