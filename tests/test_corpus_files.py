"""The captured corpus (models/hlo/corpus/) agrees with its manifest.

No jax needed: the files are read as gzip-compressed text. Checks that every program the
manifest lists has all its files in both XLA:CPU orders, that they decompress, that each
module's ENTRY is the one the manifest names, and that the manifest's counts (control
flow, instructions, XLA's peak) match what the files say.
"""

import gzip
import json
import re
from collections import Counter
from pathlib import Path

import pytest

CORPUS = Path(__file__).resolve().parent.parent / "models" / "hlo" / "corpus"
MANIFEST = CORPUS / "manifest.json"
KINDS = (".hlo.gz", ".live-range.txt.gz", ".buffer-assignment.txt.gz")

pytestmark = pytest.mark.skipif(not MANIFEST.exists(), reason="models/hlo/corpus not present")


def _manifest():
    with open(MANIFEST) as f:
        return json.load(f)


def _programs():
    return sorted(_manifest()["programs"]) if MANIFEST.exists() else []


def _read(name):
    with gzip.open(CORPUS / name, "rt") as f:
        return f.read()


def test_manifest_header():
    m = _manifest()
    assert m["jax"] and m["jaxlib"]
    assert set(m["variants"]) == {"default", "memopt"}
    assert m["variants"]["default"]["suffix"] == ""
    assert any("MEMORY_OPTIMIZED" in f for f in m["variants"]["memopt"]["extra_xla_flags"])
    assert len(m["programs"]) >= 20


def test_no_stray_files():
    m = _manifest()
    listed = {f for p in m["programs"].values() for v in p["variants"].values()
              for f in v["files"]}
    present = {p.name for p in CORPUS.iterdir() if p.name != "manifest.json"}
    assert present == listed


@pytest.mark.parametrize("program", _programs())
def test_program_files(program):
    m = _manifest()
    p = m["programs"][program]
    assert p["description"] and p["family"] and p["devices"] >= 1
    orders = []
    for label, v in p["variants"].items():
        stem = program + m["variants"][label]["suffix"]
        assert sorted(v["files"]) == sorted(stem + k for k in KINDS)
        hlo = _read(stem + ".hlo.gz")
        live = _read(stem + ".live-range.txt.gz")
        ba = _read(stem + ".buffer-assignment.txt.gz")

        # The module's ENTRY is the one the manifest names, and it is scheduled.
        assert hlo.startswith("HloModule ")
        assert "is_scheduled=true" in hlo.splitlines()[0]
        entries = re.findall(r"^ENTRY %?([\w.\-]+)", hlo, re.M)
        assert entries == [v["entry"]]
        assert f"jit_{p['function']}" in hlo.splitlines()[0]

        # Control-flow counts and the instruction count are those of the text.
        ops = Counter(re.findall(r"^\s*(?:ROOT )?%?[\w.\-]+ = .*? ([a-z][a-z0-9\-]*)\(",
                                 hlo, re.M))
        for op in ("while", "conditional", "call"):
            assert ops[op] == v["control_flow"][op], (stem, op)
        assert sum(ops.values()) == v["instructions"]

        # XLA's figures in the manifest are the ones in its own files.
        peak = re.search(r"Live ranges at (\d+) \(peak\):\n((?:    .*\n)*)", live)
        assert peak, stem
        assert int(peak.group(1)) == v["xla_memory"]["live_range_peak_step"]
        cum = re.findall(r"cumulative: (\d+) bytes", peak.group(2))
        assert int(cum[-1]) == v["xla_memory"]["live_range_peak_bytes"]
        sizes = [int(s) for s in re.findall(r"^allocation \d+: size (\d+)", ba, re.M)]
        assert sum(sizes) == v["xla_memory"]["allocations_total_bytes"]

        # No machine path survived the capture.
        for text in (hlo, live, ba):
            assert not re.search(r'"/(?:home|root|tmp|work|usr)/', text), stem
        orders.append([ln.split(":", 1)[1] for ln in
                       re.findall(r"^    \d+:\S+$", live.split("BufferLiveRange:")[0], re.M)])
    # Both orders schedule the same instructions.
    assert len(orders) == 2 and sorted(orders[0]) == sorted(orders[1])
