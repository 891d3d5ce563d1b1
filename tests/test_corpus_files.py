"""The captured dumps agree with their manifests: the corpus captured with the newest jax
(models/hlo/corpus/), the jax 0.10 corpus kept as a second syntax corpus
(models/hlo/corpus-jax0.10/), and the bundled dumps of both (models/hlo/*.hlo and
models/hlo/corpus-jax0.10/bundled/).

No jax needed: the files are read as text (gzip-compressed in the corpora). Checks that every
program a manifest lists has all its files in both XLA:CPU orders, that they decompress,
that each module's ENTRY is the one the manifest names, that the manifest's counts (control
flow, instructions, XLA's peak) match what the files say, and that no file is left over.
"""

import json
import re
from collections import Counter

import pytest

from helpers import BUNDLED, CORPORA, read_text

KINDS = (".hlo.gz", ".live-range.txt.gz", ".buffer-assignment.txt.gz")
NEWEST = CORPORA["newest"] / "manifest.json"

pytestmark = pytest.mark.skipif(not NEWEST.exists(), reason="models/hlo/corpus not present")


def _manifest(corpus):
    with open(CORPORA[corpus] / "manifest.json") as f:
        return json.load(f)


def _programs():
    return [(c, p) for c in CORPORA if (CORPORA[c] / "manifest.json").exists()
            for p in sorted(_manifest(c)["programs"])]


def test_manifest_headers():
    for corpus in CORPORA:
        m = _manifest(corpus)
        assert m["jax"] and m["jaxlib"]
        assert set(m["variants"]) == {"default", "memopt"}
        assert m["variants"]["default"]["suffix"] == ""
        assert any("MEMORY_OPTIMIZED" in f for f in m["variants"]["memopt"]["extra_xla_flags"])
        assert len(m["programs"]) >= 20
    # the newest capture is newer than the one it replaced, and says so
    versions = [tuple(int(x) for x in _manifest(c)["jax"].split(".")[:3]) for c in CORPORA]
    assert versions[0] > versions[1] and _manifest("jax0.10")["jax"].startswith("0.10.")
    # the same programs in both, plus what the newest capture added
    assert set(_manifest("jax0.10")["programs"]) <= set(_manifest("newest")["programs"])


@pytest.mark.parametrize("corpus", list(CORPORA))
def test_no_stray_files(corpus):
    m = _manifest(corpus)
    listed = {f for p in m["programs"].values() for v in p["variants"].values()
              for f in v["files"]}
    present = {p.name for p in CORPORA[corpus].iterdir()
               if p.name != "manifest.json" and p.is_file()}
    assert present == listed


@pytest.mark.parametrize("corpus,program", _programs(), ids=lambda x: x)
def test_program_files(corpus, program):
    folder = CORPORA[corpus]
    m = _manifest(corpus)
    p = m["programs"][program]
    assert p["description"] and p["family"] and p["devices"] >= 1
    assert p["jax"] == m["jax"]
    orders = []
    for label, v in p["variants"].items():
        stem = program + m["variants"][label]["suffix"]
        # the newest capture also keeps XLA's memory-usage report (allocations by size)
        kinds = KINDS + ((".memory-usage-report.txt.gz",) if corpus == "newest" else ())
        assert sorted(v["files"]) == sorted(stem + k for k in kinds)
        hlo = read_text(folder / (stem + ".hlo.gz"))
        live = read_text(folder / (stem + ".live-range.txt.gz"))
        ba = read_text(folder / (stem + ".buffer-assignment.txt.gz"))

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
        texts = [hlo, live, ba]
        if corpus == "newest":
            report = read_text(folder / (stem + ".memory-usage-report.txt.gz"))
            total = re.search(r"Total bytes: (\d+)", report)
            assert total and int(total.group(1)) == \
                v["xla_memory"]["buffer_assignment_total_bytes"]
            texts.append(report)

        # No machine path survived the capture.
        for text in texts:
            assert not re.search(r'"/(?:home|root|tmp|work|usr)/', text), stem
        orders.append([ln.split(":", 1)[1] for ln in
                       re.findall(r"^    \d+:\S+$", live.split("BufferLiveRange:")[0], re.M)])
    # Both orders schedule the same instructions.
    assert len(orders) == 2 and sorted(orders[0]) == sorted(orders[1])


@pytest.mark.parametrize("which", list(BUNDLED))
def test_bundled_dumps_agree_with_their_manifest(which):
    folder = BUNDLED[which]
    with open(folder / "manifest.json") as f:
        m = json.load(f)
    assert {"mlp_train", "gpt2l_train", "cnn_train", "sharded_dp_tp"} <= set(m)
    listed = set()
    for name, e in m.items():
        listed.update(e["files"])
        hlo = read_text(folder / next(f for f in e["files"] if ".hlo" in f))
        assert f"jit_{e['function']}" in hlo.splitlines()[0]
        assert "is_scheduled=true" in hlo.splitlines()[0]
        live = read_text(folder / next(f for f in e["files"] if ".live-range" in f))
        peak = re.search(r"Live ranges at (\d+) \(peak\):\n((?:    .*\n)*)", live)
        assert int(peak.group(1)) == e["xla_memory"]["live_range_peak_step"]
        assert int(re.findall(r"cumulative: (\d+) bytes", peak.group(2))[-1]) == \
            e["xla_memory"]["live_range_peak_bytes"]
        if which == "newest":
            assert e["jax"] == _manifest("newest")["jax"]
            report = read_text(folder / f"{name}.memory-usage-report.txt")
            assert f"{name}.memory-usage-report.txt" in e["files"]
            assert int(re.search(r"Total bytes: (\d+)", report).group(1)) == \
                e["xla_memory"]["buffer_assignment_total_bytes"]
        else:
            assert e["jax"] == "0.10.2"
    present = {p.name for p in folder.iterdir() if p.is_file()
               and p.name not in ("manifest.json", "README.md", "demo.hlo")}
    assert present == listed
