"""Overlap schedules of modules with synchronous collectives go back as XLA's async pairs."""

import json
from pathlib import Path

import pytest

from cpsched.cli import main
from cpsched.core.errors import InputError
from cpsched.core.scenarios import static
from cpsched.core.transforms import convert_sync_collectives, pair_names
from cpsched.readers import read_graph
from cpsched.readers.hlo.convert import module_graphs, read_hlo_module
from cpsched.readers.hlo.parser import parse_hlo_text
from cpsched.writers.hlo import async_module_text, verify_async_module

DATA = Path(__file__).parent / "data" / "hlo"
SYNC = DATA / "collectives_sync.hlo"
KINDS = {"ar": "all-reduce", "ag": "all-gather", "cp": "collective-permute",
         "rs": "reduce-scatter", "a2a": "all-to-all"}


def _written(path=SYNC, order=None):
    g = convert_sync_collectives(read_graph(str(path)))
    order = list(g.default_order()) if order is None else order
    return g, async_module_text(read_hlo_module(str(path)), g, order)


def test_each_kind_gets_xla_async_form():
    g, w = _written()
    mod = parse_hlo_text(w.text)
    entry = mod.entry
    assert set(w.pairs) == set(KINDS)
    for name, kind in KINDS.items():
        start, done = entry.index[f"{name}-start"], entry.index[name]
        assert done.operands == [start.name]
        if kind in ("all-reduce", "all-gather", "collective-permute"):
            assert (start.opcode, done.opcode) == (f"{kind}-start", f"{kind}-done")
        else:
            # wrapped generically: the called computation holds the collective alone
            assert (start.opcode, done.opcode) == ("async-start", "async-done")
            callee = mod.by_name[start.attrs["calls"].lstrip("%")]
            assert [i.opcode for i in callee.instructions] == ["parameter", kind]
            assert str(callee.root.shape) == str(done.shape)
    # shapes as XLA's AsyncCollectiveCreator gives them
    e = entry.index
    assert str(e["ar-start"].shape) == str(e["ar"].shape)
    assert str(e["ag-start"].shape) == "(f32[64,32]{1,0}, f32[256,32]{1,0})"
    assert str(e["cp-start"].shape) == "(f32[64,32]{1,0}, f32[64,32]{1,0}, u32[], u32[])"
    assert str(e["rs-start"].shape) == "((f32[64,32]{1,0}), f32[16,32]{1,0})"
    # the collective's control predecessor moves to the start; readers keep the done's name
    assert e["cp-start"].control_predecessors == ["ar"]
    assert "cp" not in e["cp"].attrs.get("control-predecessors", "")
    assert e["out"].operands == ["rs", "a2a", "ag", "e"]


def test_text_order_is_the_schedule_with_starts_and_dones_apart():
    g, _ = _written()
    # XLA's GPU post-processor: starts as early and dones as late as dependences allow
    from cpsched.heuristics.gpu_postprocess import gpu_postprocess
    order = list(gpu_postprocess(g, static()))
    _, w = _written(order=order)
    back, peaks = verify_async_module(w.text, w, static())
    written = [back.op_names[i] for i in back.original_order]
    renamed = {}
    for orig, (start, done) in w.pairs.items():
        s, d = pair_names(g, orig)
        renamed[s], renamed[d] = start, done
    assert written == [renamed.get(g.op_names[i], g.op_names[i]) for i in order]
    apart = [written.index(n) - written.index(f"{n}-start") for n in KINDS]
    assert min(apart) > 0 and max(apart) > 1     # some collective overlaps other work
    assert peaks[0] > 0


def test_a_broken_order_is_refused():
    g, _ = _written()
    order = list(g.default_order())
    s = g.op_index("ar-start")
    d = int(g.async_done[s])
    i, j = order.index(s), order.index(d)
    order[i], order[j] = order[j], order[i]          # done before its start
    with pytest.raises(InputError):
        _written(order=order)


def test_graph_without_split_collectives_is_refused():
    path = DATA.parent.parent.parent / "models" / "hlo" / "mlp_train.hlo"
    g = read_graph(str(path))
    with pytest.raises(InputError, match="no collective split"):
        async_module_text(read_hlo_module(str(path)), g, list(g.default_order()))


def test_cli_overlap_async_collectives_writes_hlo(tmp_path, capsys):
    out = tmp_path / "out.hlo"
    rc = main(["schedule", str(SYNC), "--objective", "overlap", "--async-collectives",
               "--time-limit", "2", "-o", str(out)])
    assert rc == 0, capsys.readouterr().err
    text = out.read_text()
    assert "is_scheduled=true" in text
    graphs = module_graphs(parse_hlo_text(text))
    g = graphs["main"]
    assert int((g.async_done >= 0).sum()) == len(KINDS)
    assert "written as async start/done pairs" in capsys.readouterr().out


def test_cli_convert_async_collectives(tmp_path, capsys):
    out = tmp_path / "g.json"
    assert main(["convert", str(SYNC), "--async-collectives", "-o", str(out)]) == 0
    d = json.loads(out.read_text())
    starts = [op["opcode"] for op in d["ops"] if str(op.get("opcode", "")).endswith("-start")]
    assert len(starts) == len(KINDS) and starts.count("async-start") == 2


def test_cli_remat_with_async_collectives_on_hlo_writes_async_pairs(tmp_path, capsys):
    out = tmp_path / "r.hlo"
    rc = main(["schedule", str(SYNC), "--objective", "remat", "--budget", "100000",
               "--async-collectives", "-o", str(out)])
    assert rc == 0, capsys.readouterr().err
    text = out.read_text()
    # every split kind is written in XLA's async form, and the plan JSON records the pairs
    assert "all-reduce-start" in text and "async-start" in text
    plan = json.loads((tmp_path / "r.hlo.plan.json").read_text())
    assert len(plan["hlo_module"]["async_pairs"]) == len(KINDS)

# a module whose collectives XLA already wrote as async pairs (what XLA:GPU gives)
ALREADY_ASYNC = """HloModule already_async, is_scheduled=true

%sum (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

ENTRY %main (p: f32[64,32], w: f32[32,32]) -> (f32[256,32], f32[64,32]) {
  %p = f32[64,32]{1,0} parameter(0)
  %w = f32[32,32]{1,0} parameter(1)
  %h = f32[64,32]{1,0} dot(%p, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %ags = (f32[64,32]{1,0}, f32[256,32]{1,0}) all-gather-start(%h), channel_id=1, replica_groups={{0,1,2,3}}, dimensions={0}, use_global_device_ids=true
  %t = f32[64,32]{1,0} tanh(%p)
  %ars = f32[64,32]{1,0} all-reduce-start(%t), channel_id=2, replica_groups={{0,1,2,3}}, to_apply=%sum
  %e = f32[64,32]{1,0} exponential(%t)
  %ag = f32[256,32]{1,0} all-gather-done(%ags)
  %ar = f32[64,32]{1,0} all-reduce-done(%ars)
  %o = f32[64,32]{1,0} add(%ar, %e)
  ROOT %out = (f32[256,32]{1,0}, f32[64,32]{1,0}) tuple(%ag, %o)
}
"""


@pytest.mark.parametrize("args", [["--method", "xla-list"], ["--objective", "overlap"],
                                  ["--objective", "remat", "--budget", "100%"],
                                  ["--objective", "time", "--budget", "100%"]],
                         ids=["heuristic", "overlap", "remat", "joint"])
def test_async_collectives_accepts_a_module_already_in_async_form(args, tmp_path, capsys):
    """``--async-collectives`` means: treat collectives as async. A module whose collectives
    already are start/done pairs is scheduled as it is (a note says so), by every objective,
    and written back with the same pairs."""
    src = tmp_path / "async.hlo"
    src.write_text(ALREADY_ASYNC)
    out = tmp_path / "out.hlo"
    rc = main(["schedule", str(src), "--async-collectives", *args, "--time-limit", "5",
               "-o", str(out)])
    err = capsys.readouterr().err
    assert rc == 0, err
    assert "already async start/done pairs" in err and "2 collective(s)" in err
    back = parse_hlo_text(out.read_text())
    ops = [i.opcode for i in back.entry.instructions]
    assert ops.count("all-gather-start") == ops.count("all-reduce-start") == 1
    assert "all-gather" not in ops and "all-reduce" not in ops
    g = read_graph(str(out))
    assert int((g.async_start >= 0).sum()) == 2


def test_compare_notes_an_already_async_module(tmp_path, capsys):
    src = tmp_path / "async.hlo"
    src.write_text(ALREADY_ASYNC)
    assert main(["compare", str(src), "--async-collectives", "--no-solver"]) == 0
    assert "already async start/done pairs" in capsys.readouterr().err
    # a module with sync collectives is split as before: no note
    assert main(["compare", str(SYNC), "--async-collectives", "--no-solver"]) == 0
    assert "note:" not in capsys.readouterr().err
