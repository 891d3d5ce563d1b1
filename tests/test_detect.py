"""The one format detector (readers/detect.py): files and text in memory get the same answer."""

from __future__ import annotations

import pytest

import cpsched
from cpsched.readers import sniff_format
from cpsched.readers.detect import is_text, text_format

# A StableHLO module whose opening lines are comments, and whose first 2 KiB hold no
# ``stablehlo.`` op (a function of many parameters): only the module line says MLIR.
_ARGS = ", ".join(f"%arg{k}: tensor<4xf32>" for k in range(120))
COMMENTED_MLIR = (
    "// exported by a test; the module follows\n"
    + "// "
    + "-" * 90
    + "\n"
    + "module @commented {\n"
    + f"  func.func public @main({_ARGS}) -> tensor<4xf32> {{\n"
    + "    %0 = stablehlo.add %arg0, %arg1 : tensor<4xf32>\n"
    + "    return %0 : tensor<4xf32>\n"
    + "  }\n"
    + "}\n"
)
HLO = "// a comment\nHloModule m\n\nENTRY e {\n  p = f32[4] parameter(0)\n  ROOT a = f32[4] add(p, p)\n}\n"


def test_comment_lines_before_an_mlir_module_do_not_make_it_hlo(tmp_path):
    assert "stablehlo." not in COMMENTED_MLIR[:2048]
    assert text_format(COMMENTED_MLIR) == "mlir"
    g = cpsched.read(COMMENTED_MLIR)
    assert "stablehlo.add" in g.opcodes
    path = tmp_path / "exported.txt"  # no .mlir suffix: the content decides
    path.write_text(COMMENTED_MLIR)
    assert sniff_format(str(path)) == "mlir"
    assert cpsched.read(str(path)).opcodes == g.opcodes


def test_hlo_after_a_comment_is_still_hlo(tmp_path):
    assert text_format(HLO) == "hlo"
    path = tmp_path / "m.txt"
    path.write_text(HLO)
    assert sniff_format(str(path)) == "hlo"
    assert cpsched.read(HLO).opcodes == cpsched.read(str(path)).opcodes


def test_json_text_with_a_byte_order_mark_is_text_not_a_path():
    text = '\ufeff{"nodes": [{"id": 0, "size": 100}, {"id": 1, "size": 8}], "links": [{"source": 0, "target": 1}]}'
    assert is_text(text)
    assert cpsched.read(text).n_ops == 2


@pytest.mark.parametrize(
    "source, text",
    [
        ("model.hlo", False),
        ("", False),
        ("HloModule m, is_scheduled=true", True),
        ('{"nodes": []}', True),
        ("a\nb", True),
    ],
)
def test_path_or_text(source, text):
    assert is_text(source) is text
