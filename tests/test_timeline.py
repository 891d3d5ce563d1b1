"""Timeline simulator and trace writer: hand-computed small timelines, FIFO streams, sync
collectives, scenarios, XLA units, and a plain reference simulator on random graphs."""

from __future__ import annotations

import json

import numpy as np
import pytest

from cpsched.cost.model import Costs, Device, async_class, is_sync_collective
from cpsched.core.errors import InputError, ScheduleError
from cpsched.core.graph import Collective, GraphBuilder, OpKind
from cpsched.core.scenarios import from_dim_specs, static
from cpsched.core.symbolic import SymExpr
from cpsched.cost.timeline import simulate_timeline, timeline
from cpsched.writers.trace import timeline_to_trace, write_trace


class G:
    """Tiny builder: ops in program order with unit-free durations."""

    def __init__(self, name="t"):
        self.b = GraphBuilder(name)
        self.dur: dict[str, float] = {}
        self.lat: dict[str, float] = {}
        self.last: str | None = None

    def op(self, name, d, deps=(), opcode="fusion", kind=OpKind.COMPUTE, chain=True):
        operands = list(deps) + ([self.last] if chain and self.last and self.last not in deps
                                 else [])
        self.b.add_op(name, opcode, kind, operands=operands)
        self.dur[name] = d
        if kind == OpKind.COMPUTE:
            self.last = name
        return name

    def start(self, name, kind, latency, operand=None, p=2, sync=False, opcode=None):
        op = opcode or f"{kind}-start"
        deps = [operand or self.last] if (operand or self.last) else []
        self.b.add_op(name, op, OpKind.ASYNC_START, operands=deps)
        if kind not in ("copy", "fusion"):
            self.b.set_collective(name, Collective(kind, SymExpr.const(1000), p, is_sync=sync))
        self.dur[name] = 0.0
        self.lat[name] = latency
        return name

    def done(self, name, start, opcode=None):
        self.b.add_op(name, opcode or "done", OpKind.ASYNC_DONE, operands=[start])
        self.b.pair_async(start, name)
        self.dur[name] = 0.0
        self.last_done = name
        return name

    def sync(self, name, kind, latency, p=2):
        self.b.add_op(name, kind, operands=[self.last] if self.last else [])
        self.b.set_collective(name, Collective(kind, SymExpr.const(1000), p))
        self.dur[name] = 0.0
        self.lat[name] = latency
        self.last = name
        return name

    def build(self):
        g = self.b.build()
        op = np.array([[self.dur[n] for n in g.op_names]], dtype=float)
        tr = {g.op_index(n): np.array([v]) for n, v in self.lat.items()}
        return g, Costs(op, tr)


def spec_example():
    """compute A(2) -> start S of a 3-unit all-reduce -> B(1), C(1) -> done D -> E(1)."""
    t = G()
    t.op("A", 2)
    t.start("S", "all-reduce", 3)
    t.op("B", 1)
    t.op("C", 1)
    t.done("D", "S")
    t.op("E", 1, deps=["D"])
    return t.build()


def test_hand_computed_overlap():
    g, c = spec_example()
    tl = simulate_timeline(g, None, c)[0]
    assert tl.makespan == 6
    assert tl.exposed_comm == 1
    assert tl.idle == 1
    assert tl.compute_time == 5
    assert tl.comm_time == 3
    assert tl.n_pairs == 1
    assert tl.overlapped.tolist() == [2]
    assert tl.wait.tolist() == [1]
    assert (tl.pair_start_index[0], tl.pair_done_index[0], tl.distance[0]) == (1, 4, 3)
    assert (tl.transfer_begin[0], tl.transfer_end[0]) == (2, 5)
    start = dict(zip(g.op_names, tl.start.tolist()))
    end = dict(zip(g.op_names, tl.end.tolist()))
    assert start == {"A": 0, "S": 2, "B": 2, "C": 3, "D": 5, "E": 5}
    assert end == {"A": 2, "S": 2, "B": 3, "C": 4, "D": 5, "E": 6}
    row = tl.pair_rows()[0]
    assert row["start"] == "S" and row["done"] == "D" and row["distance"] == 3
    table = tl.format_pairs(scale=1)
    assert table.splitlines()[0].split()[:5] == ["start", "done", "start#", "done#", "distance"]
    assert table.splitlines()[1].split()[:5] == ["S", "D", "1", "4", "3"]


def test_fully_hidden_when_done_is_late_enough():
    t = G()
    t.op("A", 2)
    t.start("S", "all-gather", 3)
    for k in range(4):
        t.op(f"B{k}", 1)
    t.done("D", "S")
    t.op("E", 1, deps=["D"])
    g, c = t.build()
    tl = simulate_timeline(g, None, c)[0]
    assert tl.makespan == 7 and tl.exposed_comm == 0 and tl.overlapped.tolist() == [3]


def test_sync_collective_blocks_compute_stream():
    t = G()
    t.op("A", 2)
    t.sync("AR", "all-reduce", 3)
    t.op("B", 1)
    g, c = t.build()
    tl = simulate_timeline(g, None, c)[0]
    assert tl.makespan == 6
    assert tl.exposed_comm == 3 and tl.idle == 0
    assert tl.comm_time == 3 and tl.compute_time == 3
    assert tl.pair_sync.tolist() == [True] and tl.overlapped.tolist() == [0]
    assert tl.start[g.op_index("B")] == 5


def test_is_sync_async_pair_runs_on_the_compute_stream():
    t = G()
    t.op("A", 2)
    t.start("S", "all-reduce", 3, sync=True)
    t.op("B", 1)
    t.done("D", "S")
    t.op("E", 1, deps=["D"])
    g, c = t.build()
    tl = simulate_timeline(g, None, c)[0]
    # A 0-2, S blocks 2-5, B 5-6, D 6, E 6-7
    assert tl.makespan == 7 and tl.exposed_comm == 3 and tl.idle == 0


def _two_collectives(kind2):
    t = G()
    t.op("A", 1)
    t.start("S1", "all-reduce", 3)
    t.start("S2", kind2, 2, operand="A")
    t.op("B", 1)
    t.op("C", 1)
    t.done("D1", "S1")
    t.done("D2", "S2")
    t.op("E", 1, deps=["D1", "D2"])
    return t.build()


def test_fifo_on_one_shared_comm_stream():
    g, c = _two_collectives("all-gather")
    tl = simulate_timeline(g, None, c, comm_streams="shared")[0]
    # A 0-1; S1 on comm 1-4; S2 queued behind it 4-6; B 1-2, C 2-3; D1 waits to 4,
    # D2 waits to 6; E 6-7.
    assert tl.streams == ("compute", "comm")
    assert tl.transfer_begin.tolist() == [1, 4] and tl.transfer_end.tolist() == [4, 6]
    assert tl.makespan == 7
    assert tl.wait.tolist() == [1, 2] and tl.exposed_comm == 3
    # S1 overlaps B and C; S2 runs entirely while the compute stream waits at D2
    assert tl.overlapped.tolist() == [2, 0]


def test_per_kind_streams_run_concurrently():
    g, c = _two_collectives("all-gather")
    tl = simulate_timeline(g, None, c, comm_streams="per-kind")[0]
    assert tl.streams == ("compute", "comm:all-reduce", "comm:all-gather")
    assert tl.transfer_begin.tolist() == [1, 1] and tl.transfer_end.tolist() == [4, 3]
    assert tl.makespan == 5 and tl.exposed_comm == 1
    # S2 (1-3) is hidden by B and C entirely
    assert tl.overlapped.tolist() == [2, 2]
    # same kind: one stream even with per-kind streams, FIFO again
    g, c = _two_collectives("all-reduce")
    assert simulate_timeline(g, None, c, comm_streams="per-kind")[0].makespan == 7
    with pytest.raises(InputError, match="comm_streams"):
        simulate_timeline(g, None, c, comm_streams="many")


def test_copy_stream_is_separate_from_comm():
    t = G()
    t.op("A", 1)
    t.start("S", "all-reduce", 4)
    t.start("CS", "copy", 2, operand="A", opcode="copy-start")
    t.op("B", 1)
    t.done("CD", "CS")
    t.done("D", "S")
    t.op("E", 1, deps=["D", "CD"])
    g, c = t.build()
    tl = simulate_timeline(g, None, c)[0]
    # S on comm 1-5, CS on copy 1-3; B 1-2; CD waits to 3; D waits to 5; E 5-6
    assert set(tl.streams) == {"compute", "comm", "copy"}
    assert tl.makespan == 6
    assert tl.exposed_copy == 1 and tl.exposed_comm == 2
    assert tl.copy_time == 2 and tl.comm_time == 4
    # during S (1-5) compute runs B (1-2) only; the copy's wait (2-3) and S's own wait
    # (3-5) hide nothing
    ov = dict(zip([g.op_names[i] for i in tl.pair_start], tl.overlapped.tolist()))
    assert ov == {"S": 1, "CS": 1}


def test_invalid_order_is_rejected():
    g, c = spec_example()
    with pytest.raises(ScheduleError):
        simulate_timeline(g, [0, 4, 1, 2, 3, 5], c)
    with pytest.raises(InputError, match="cover"):
        simulate_timeline(g, None, Costs(np.zeros((1, 3)), {}))


def test_symbolic_scenarios_give_different_makespans():
    b = GraphBuilder("sym")
    b.add_op("x", "parameter", OpKind.PARAMETER)
    b.add_op("mm", "dot", operands=["x"], flops="2*s*1000000000000")
    s = b.add_op("ag", "all-gather-start", OpKind.ASYNC_START, operands=["mm"])
    b.set_collective(s, Collective("all-gather", SymExpr.parse("s*1000000000"), 2))
    b.add_op("mm2", "dot", operands=["mm"], flops="2000000000000")
    d = b.add_op("agd", "all-gather-done", OpKind.ASYNC_DONE, operands=[s])
    b.pair_async(s, d)
    b.add_op("y", "add", operands=["agd", "mm2"], bytes_accessed=0)
    g = b.build()
    dev = Device("plain", peak_flops_bf16=100e12, peak_flops_fp32=10e12, hbm_bandwidth=1e12,
                 nvlink_bandwidth=100e9, network_bandwidth=10e9, pcie_bandwidth=10e9)
    sc = from_dim_specs(["s=1,2,8"])
    tls = timeline(g, None, dev, sc)
    # mm: 0.02*s, transfer 0.5*s*1e9/1e11 = 0.005*s, mm2: 0.02 (hides it up to s = 4);
    # y does no work
    assert tls.makespan == pytest.approx([0.04, 0.06, 0.16 + 0.04])
    assert tls.exposed_comm == pytest.approx([0, 0, 0.02])
    assert len({round(x, 9) for x in tls.makespan}) == 3
    assert tls[2].scenario == "s=8" and tls["s=8"].makespan == pytest.approx(0.2)
    w = sc.weights
    assert tls.expected_makespan == pytest.approx(float(w @ np.array([0.04, 0.06, 0.2])))
    # vectorised over scenarios = one scenario at a time
    for k in range(3):
        one = from_dim_specs([f"s={sc.values[k, 0]}"])
        assert timeline(g, None, dev, one)[0].makespan == pytest.approx(tls.makespan[k])


def test_xla_approx_five_loop_fusions_hide_one_async_op():
    # XLA's comment: latency 5000 overlaps 5 loop fusions (1000 each).
    for n_fusions, exposed in ((5, 0), (4, 1000)):
        b = GraphBuilder("lhs")
        b.add_op("p", "parameter", OpKind.PARAMETER)
        s = b.add_op("cp-start", "collective-permute-start", OpKind.ASYNC_START, operands=["p"])
        b.set_collective(s, Collective("collective-permute", SymExpr.const(8), 2))
        prev = "p"
        for k in range(n_fusions):
            prev = b.add_op(f"f{k}", "fusion", operands=[prev], attrs={"kind": "kLoop"})
        d = b.add_op("cp-done", "collective-permute-done", OpKind.ASYNC_DONE, operands=[s])
        b.pair_async(s, d)
        g = b.build()
        tl = timeline(g, None, "xla-approx")[0]
        assert tl.unit == "xla"
        # p(1) start(1) then the fusions; the transfer runs 2 .. 5002
        assert tl.exposed_comm == exposed
        assert tl.makespan == 2 + max(1000 * n_fusions, 5000) + 1


def test_profile_changes_the_timeline():
    g, _ = spec_example()
    base = timeline(g, None, "xla-approx")[0]
    prof = timeline(g, None, "xla-approx", profile={"S": 1.0, "B": 7})[0]
    assert base.transfer_time.tolist() == [5000]
    assert prof.transfer_time.tolist() == [1.0] and prof.exposed_comm == 0
    assert prof.end[g.op_index("B")] - prof.start[g.op_index("B")] == 7


# -- a plain reference simulator ----------------------------------------------------------

def reference(g, order, costs, streams="shared"):
    op = costs.op[0]
    t = 0.0
    free: dict[str, float] = {}
    tend: dict[int, float] = {}
    tbeg: dict[int, float] = {}
    idle: list[tuple[float, float]] = []
    exposed = 0.0
    for i in order:
        if is_sync_collective(g, i):
            L = float(costs.transfer[i][0])
            idle.append((t + op[i], t + op[i] + L))
            exposed += L
            t += op[i] + L
            continue
        begin = t
        if g.kinds[i] == OpKind.ASYNC_DONE:
            s = int(g.async_start[i])
            begin = max(t, tend[s])
            if begin > t:
                idle.append((t, begin))
                if async_class(g, s).startswith("collective:"):
                    exposed += begin - t
        t = begin + op[i]
        if g.kinds[i] == OpKind.ASYNC_START:
            cls = async_class(g, i)
            q = ("comm" if streams == "shared" else cls) if cls.startswith("collective:") else cls
            b = max(t, free.get(q, 0.0))
            tbeg[i] = b
            tend[i] = b + float(costs.transfer.get(i, [0.0])[0])
            free[q] = tend[i]
    overl = {}
    for i in tbeg:
        lost = sum(max(0.0, min(e, tend[i]) - max(s, tbeg[i])) for s, e in idle)
        overl[i] = tend[i] - tbeg[i] - lost
    return t, exposed, overl


def random_async_graph(seed, n=60):
    rng = np.random.default_rng(seed)
    t = G(f"r{seed}")
    open_: list[tuple[str, str]] = []
    kinds = ["all-reduce", "all-gather", "reduce-scatter", "copy", "fusion"]
    for k in range(n):
        r = rng.random()
        if r < 0.15:
            kind = kinds[rng.integers(len(kinds))]
            opcode = "copy-start" if kind == "copy" else None
            t.start(f"s{k}", kind, float(rng.integers(0, 12)), opcode=opcode)
            open_.append((f"s{k}", f"d{k}"))
        elif r < 0.3 and open_:
            s, d = open_.pop(int(rng.integers(len(open_))))
            t.done(d, s)
            t.op(f"u{k}", float(rng.integers(0, 4)), deps=[d])
        elif r < 0.35:
            t.sync(f"y{k}", "all-reduce", float(rng.integers(1, 5)))
        else:
            t.op(f"c{k}", float(rng.integers(0, 5)))
    for s, d in open_:
        t.done(d, s)
    return t.build()


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("streams", ["shared", "per-kind"])
def test_matches_reference_simulator(seed, streams):
    g, c = random_async_graph(seed)
    order = g.default_order()
    tl = simulate_timeline(g, order, c, comm_streams=streams)[0]
    makespan, exposed, overl = reference(g, order, c, streams)
    assert tl.makespan == pytest.approx(makespan)
    assert tl.exposed_comm == pytest.approx(exposed)
    got = dict(zip(tl.pair_start.tolist(), tl.overlapped.tolist()))
    for i, v in overl.items():
        assert got[i] == pytest.approx(v, abs=1e-9)
    # invariants
    assert (tl.overlapped <= tl.transfer_time + 1e-12).all()
    assert tl.makespan == pytest.approx(tl.compute_time + tl.idle +
                                        tl.transfer_time[tl.pair_sync].sum())


def test_scenarios_broadcast_single_row_costs():
    g, c = spec_example()
    sc = from_dim_specs(["s=1,2"])
    tls = simulate_timeline(g, None, c, sc)
    assert tls.makespan.tolist() == [6, 6]


# -- trace writer -------------------------------------------------------------------------

def _check_trace(data, n_processes):
    ev = data["traceEvents"]
    json.dumps(data)                                   # serialisable
    meta = [e for e in ev if e["ph"] == "M"]
    assert len({e["pid"] for e in meta}) == n_processes
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in meta if e["name"] == "thread_name"}
    xs = [e for e in ev if e["ph"] == "X"]
    for e in xs:
        assert {"name", "ts", "dur", "pid", "tid", "cat"} <= set(e)
        assert e["dur"] >= 0 and (e["pid"], e["tid"]) in threads
    # each flow: s, t, f with one id, bound to slices of the same cat/pid/tid/ts
    slices = {(e["cat"], e["pid"], e["tid"], e["ts"]) for e in xs}
    flows: dict[int, list[str]] = {}
    for e in ev:
        if e["ph"] in "stf":
            flows.setdefault(e["id"], []).append(e["ph"])
            assert (e["cat"], e["pid"], e["tid"], e["ts"]) in slices
            if e["ph"] == "f":
                assert e["bp"] == "e"
    assert all(v == ["s", "t", "f"] for v in flows.values())
    return ev, threads, flows


def test_trace_structure(tmp_path):
    g, c = spec_example()
    tl = simulate_timeline(g, None, c)[0]
    data = timeline_to_trace(tl, g)
    ev, threads, flows = _check_trace(data, 1)
    assert set(threads.values()) == {"compute", "comm"}
    assert len(flows) == 1
    by_name = {(e["name"], e["tid"]): e for e in ev if e["ph"] == "X"}
    # seconds -> microseconds
    assert by_name[("A", 1)]["dur"] == 2e6
    transfer = by_name[("S", 2)]
    assert (transfer["ts"], transfer["dur"]) == (2e6, 3e6)
    assert transfer["args"]["distance"] == 3 and transfer["args"]["exposed"] == 1e6
    assert by_name[("wait D", 1)]["dur"] == 1e6
    out = tmp_path / "t.json"
    write_trace(str(out), tl)
    assert json.loads(out.read_text())["traceEvents"]


def test_trace_of_all_scenarios_and_xla_units():
    g, _ = spec_example()
    tls = timeline(g, None, "xla-approx", from_dim_specs(["s=1,2"]))
    ev, threads, flows = _check_trace(timeline_to_trace(tls), 2)
    assert len(flows) == 2
    a = [e for e in ev if e["ph"] == "X" and e["name"] == "A"]
    assert [e["dur"] for e in a] == [1, 1]             # abstract units are written as is


# -- peer cases (XLA test modules), when the HLO reader is present -------------------------

def test_xla_host_offload_copies_use_the_copy_stream(shared_dir):
    pytest.importorskip("cpsched.readers.hlo.convert")
    from cpsched.readers import read_graph
    g = read_graph(str(shared_dir / "peer-cases" / "xla" /
                       "gpu_hlo_schedule_test__CopyStartDoneScheduled.hlo"))
    tl = timeline(g, None, "h100")[0]
    assert set(tl.pair_class) == {"copy"} and "copy" in tl.streams
    # f32[512,1024] = 2 MiB each way over PCIe 5 (64 GB/s) plus 2 us
    assert tl.transfer_time == pytest.approx([2e-6 + 2**21 / 64e9] * 2)
    _check_trace(timeline_to_trace(tl), 1)


def test_xla_lhs_module_in_abstract_units(shared_dir):
    pytest.importorskip("cpsched.readers.hlo.convert")
    from cpsched.readers import read_graph
    g = read_graph(str(shared_dir / "peer-cases" / "xla" /
                       "latency_hiding_scheduler_test__AllGatherAsyncBalance.hlo"))
    tl = timeline(g, None, "xla-approx")[0]
    ag = [k for k, c in enumerate(tl.pair_class) if c == "collective:all-gather"]
    assert len(ag) == 2 and tl.transfer_time[ag].tolist() == [5000, 5000]
    assert tl.makespan >= 5000
