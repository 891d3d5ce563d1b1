"""Fitting device presets to measured times, the figures the fit sets, and the default preset."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from cpsched.core.scenarios import static
from cpsched.cost.model import default_device, estimate, load_device, op_times, preset_names
from cpsched.cost.timeline import timeline
from cpsched.generators import random_layered
from cpsched.measure.fit import (
    Sample,
    Step,
    SumProgram,
    fit_roofline,
    fit_steps,
    fit_sum,
    op_samples,
    predicted,
    step_terms,
    sum_predict,
    sum_program,
)
from cpsched.readers import read_graph
from cpsched.readers.hlo.convert import read_hlo_text
from tests.test_hlo_control_flow import WHILE

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRIP4 = WHILE.replace("TRIP", '{"known_trip_count":{"n":"4"}}')


def _samples(peak, bw, launch, rng, n=200):
    out = []
    for k in range(n):
        f = float(rng.choice([0.0, 10 ** rng.uniform(3, 9)]))
        b = float(10 ** rng.uniform(2, 8))
        t = max(f / peak, b / bw) + launch
        out.append(Sample(f"p{k % 5}", f"op{k}", "fusion", f, b, None, t, 1.0))
    return out


def test_roofline_fit_recovers_the_figures_that_made_the_times():
    rng = np.random.default_rng(0)
    fit = fit_roofline(_samples(1.2e11, 3e10, 4e-6, rng))
    assert fit.peak_flops_fp32 == pytest.approx(1.2e11, rel=0.05)
    assert fit.bandwidth == pytest.approx(3e10, rel=0.05)
    assert fit.launch_overhead == pytest.approx(4e-6, rel=0.05)
    assert fit.median_abs_log_ratio < 0.02
    assert fit.programs == 5 and fit.samples == 200


def test_roofline_fit_is_not_pulled_off_by_a_few_slowed_down_ops():
    """A busy machine slows some ops down by orders of magnitude; the fit is an absolute
    (not squared) log error, so a few of them do not move it far."""
    rng = np.random.default_rng(1)
    clean = _samples(1.2e11, 3e10, 4e-6, rng)
    noisy = [
        Sample(s.program, s.op, s.opcode, s.flops, s.bytes, s.fp32, s.seconds * 300, s.calls)
        if k % 25 == 0
        else s
        for k, s in enumerate(clean)
    ]
    fit = fit_roofline(noisy)
    assert fit.peak_flops_fp32 == pytest.approx(1.2e11, rel=0.2)
    assert fit.bandwidth == pytest.approx(3e10, rel=0.2)


def test_step_fit_recovers_launch_and_step_overheads():
    rng = np.random.default_rng(2)
    steps = []
    for k in range(12):
        base, ops = float(rng.uniform(1e-5, 1e-2)), float(rng.integers(5, 500))
        steps.append(Step(f"p{k}", base, ops, base + ops * 3e-6 + 1.5e-4))
    fit = fit_steps(steps)
    assert fit.launch_overhead == pytest.approx(3e-6, rel=0.05)
    assert fit.step_overhead == pytest.approx(1.5e-4, rel=0.05)
    for s in steps:
        assert predicted(s, fit) == pytest.approx(s.measured, rel=0.03)


def test_a_loop_launches_its_body_ops_every_iteration():
    """The loop's condition (compare) and body (add, exponential, negate) launch 4 ops per
    iteration, 4 iterations: the launch overhead is charged 16 times."""
    g = read_hlo_text(TRIP4)
    w = g.op_index("w")
    assert g.op_attrs[w]["launches"] == 16
    base = {
        "name": "t",
        "bf16_tflops": 1e3,
        "fp32_tflops": 1e3,
        "hbm_gbps": 1e6,
        "nvlink_gbps": 1,
        "network_gbps": 1,
        "pcie_gbps": 1,
    }
    t0 = op_times(g, load_device({**base, "launch_overhead_us": 0}))[0, w]
    t1 = op_times(g, load_device({**base, "launch_overhead_us": 2}))[0, w]
    assert t1 - t0 == pytest.approx(16 * 2e-6)
    once = read_hlo_text(WHILE.replace("TRIP", "{}"))
    assert once.op_attrs[once.op_index("w")]["launches"] == 4


def test_step_overhead_is_added_once_to_the_makespan():
    g = read_hlo_text(TRIP4)
    plain = timeline(g, device="h100").makespan[0]
    dev = load_device({"extends": "h100", "step_overhead_us": 250})
    assert estimate(g, dev).step_overhead == pytest.approx(2.5e-4)
    assert timeline(g, device=dev).makespan[0] == pytest.approx(plain + 2.5e-4)
    assert load_device("h100").step_overhead == 0.0


def test_step_terms_split_the_timeline_into_base_launches_and_overhead():
    g = read_hlo_text(TRIP4)
    dev = {
        "name": "t",
        "bf16_tflops": 1,
        "fp32_tflops": 1,
        "hbm_gbps": 10,
        "nvlink_gbps": 1,
        "network_gbps": 1,
        "pcie_gbps": 1,
    }
    st = step_terms(g, dev, "w", 1e-3)
    full = timeline(g, device=load_device({**dev, "launch_overhead_us": 3, "step_overhead_us": 40}))
    from cpsched.measure.fit import StepFit

    assert predicted(st, StepFit(3e-6, 4e-5, 1, 0.0)) == pytest.approx(full.makespan[0])


def test_op_samples_pair_profiled_ops_with_their_figures_and_skip_loops():
    g = read_hlo_text(TRIP4)
    per_op = {"ops": {"w": [1e-4, 1.0], "r": [1e-6, 1.0], "nothere": [1.0, 1.0]}}
    assert op_samples(g, per_op, "p") == []  # a loop's time is its body's; r is an alias
    text = "HloModule m\n\nENTRY e {\n  a = f32[64] parameter(0)\n  ROOT n = f32[64] negate(a)\n}\n"
    g2 = read_hlo_text(text)
    (s,) = op_samples(g2, {"ops": {"n": [4e-6, 2.0]}}, "p", devices=2)
    assert (s.op, s.flops, s.bytes, s.seconds, s.calls) == ("n", 64, 512, 2e-6, 1.0)


CPU_MODULE = os.path.join(REPO, "models", "hlo", "mlp_train.hlo")
GPU_MODULE = os.path.join(REPO, "models", "hlo", "gpu", "mlp_train.hlo.gz")


def test_modules_say_which_backend_optimized_them():
    assert read_graph(CPU_MODULE).meta["backend"] == "cpu"
    assert read_graph(GPU_MODULE).meta["backend"] == "gpu"
    assert read_hlo_text(TRIP4).meta["backend"] is None


def test_default_preset_is_cpu_for_xla_cpu_modules_only():
    assert "cpu" in preset_names() and "h200-fitted" in preset_names()
    assert default_device(read_graph(CPU_MODULE)) == "cpu"
    assert default_device(read_graph(GPU_MODULE)) == "h100"
    assert default_device(random_layered(n=5, seed=0)) == "h100"
    assert default_device() == "h100"


@pytest.mark.parametrize("name", ["cpu", "h200-fitted"])
def test_fitted_presets_name_their_source_for_every_fitted_figure(name):
    dev = load_device(name)
    path = os.path.join(REPO, "cpsched", "cost", "devices", f"{name}.json")
    with open(path) as f:
        data = json.load(f)
    for key in ("bf16_tflops", "fp32_tflops", "hbm_gbps", "launch_overhead_us", "step_overhead_us"):
        assert key in data and "fitted" in data["sources"][key], key
    assert dev.step_overhead >= 0 and dev.hbm_bandwidth > 0


def test_compare_and_schedule_report_the_cpu_preset_for_an_xla_cpu_module(capsys):
    from cpsched.cli import main

    assert main(["compare", CPU_MODULE, "--json", "--no-solver"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["device"] == out["reproduce"]["device"] == "cpu"
    assert out["time_model"] == "cpu model"
    assert main(["compare", CPU_MODULE, "--no-solver"]) == 0
    assert "makespan (cpu model)" in capsys.readouterr().out
    assert main(["compare", CPU_MODULE, "--json", "--no-solver", "--device", "h100"]) == 0
    assert json.loads(capsys.readouterr().out)["device"] == "h100"


def test_schedule_names_the_preset_of_its_time_figures(tmp_path, capsys):
    from cpsched.cli import main

    src = os.path.join(REPO, "models", "hlo", "sharded_dp_tp.hlo")
    out = tmp_path / "o.hlo"
    args = [
        "schedule",
        src,
        "--objective",
        "overlap",
        "--async-collectives",
        "--time-limit",
        "1",
        "-o",
        str(out),
        "--json",
    ]
    assert main(args) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["device"] == "cpu" and data["makespan"]["static"] > 0


def test_scale_fit_recovers_a_factor_a_launch_and_a_step_overhead():
    from cpsched.measure.fit import fit_scale

    rng = np.random.default_rng(3)
    steps = []
    for k in range(14):
        base, ops = float(rng.uniform(1e-5, 1e-2)), float(rng.integers(5, 3000))
        steps.append(Step(f"p{k}", base, ops, 2.5 * base + ops * 1e-6 + 8e-5))
    fit = fit_scale(steps)
    assert fit.scale == pytest.approx(2.5, rel=0.05)
    assert fit.launch_overhead == pytest.approx(1e-6, rel=0.1)
    assert fit.step_overhead == pytest.approx(8e-5, rel=0.15)
    assert fit.median_abs_log_ratio < 0.02


# -- the additive per-class model (op_time = "sum") --------------------------------------------

SCAN = """HloModule scan

fused_dus {
  buf = f32[64,256] parameter(0)
  row = f32[1,256] parameter(1)
  i = s32[] parameter(2)
  z = s32[] constant(0)
  ROOT u = f32[64,256] dynamic-update-slice(buf, row, i, z)
}

fused_ds {
  buf = f32[64,256] parameter(0)
  i = s32[] parameter(1)
  z = s32[] constant(0)
  ROOT s = f32[1,256] dynamic-slice(buf, i, z), dynamic_slice_sizes={1,256}
}

fused_mm {
  a = f32[1,256] parameter(0)
  w = f32[256,256] parameter(1)
  d = f32[1,256] dot(a, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = f32[1,256] tanh(d)
}

cond {
  p = (s32[], f32[64,256], f32[64,256], f32[256,256]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(64)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  p = (s32[], f32[64,256], f32[64,256], f32[256,256]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  xs = f32[64,256] get-tuple-element(p), index=1
  ys = f32[64,256] get-tuple-element(p), index=2
  w = f32[256,256] get-tuple-element(p), index=3
  x = f32[1,256] fusion(xs, i), kind=kLoop, calls=fused_ds
  y = f32[1,256] fusion(x, w), kind=kOutput, calls=fused_mm
  ys2 = f32[64,256] fusion(ys, y, i), kind=kLoop, calls=fused_dus
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  ROOT t = (s32[], f32[64,256], f32[64,256], f32[256,256]) tuple(i2, xs, ys2, w)
}

ENTRY e {
  xs = f32[64,256] parameter(0)
  w = f32[256,256] parameter(1)
  z = s32[] constant(0)
  ys = f32[64,256] broadcast(f32[] constant(0)), dimensions={}
  t0 = (s32[], f32[64,256], f32[64,256], f32[256,256]) tuple(z, xs, ys, w)
  l = (s32[], f32[64,256], f32[64,256], f32[256,256]) while(t0), condition=cond, body=body, backend_config={"known_trip_count":{"n":"64"}}
  ROOT r = f32[64,256] get-tuple-element(l), index=2
}
"""

ROW = 256 * 4  # one f32[1,256] row
MATRIX = 64 * ROW


def test_reader_gives_a_loops_matmul_flops_and_the_bytes_its_slices_move():
    """A scan: each iteration slices one row out of xs, multiplies it by w (a dot fused
    with tanh) and writes one row of ys in place. ``bytes_accessed`` counts xs and ys whole
    every iteration; ``bytes_moved`` what is touched: the slice reads and writes a row, the
    dot reads its row and w and writes a row, the update reads its row and writes it into ys
    in place. Matmul flops: the dot's, 64 times."""
    g = read_hlo_text(SCAN)
    loop = g.op_index("l")
    a = g.op_attrs[loop]
    assert a["matmul_flops"] == 64 * 2 * 256 * 256
    per_iteration = (
        9  # the condition's compare: two s32 in, a pred out
        + (ROW + 4 + ROW)  # the slice fusion: a row of xs and the index in, a row out
        + (ROW + 256 * ROW + ROW)  # the dot fusion: its row and w in, a row out
        + (ROW + 4 + ROW)  # the update fusion: the row and the index in, the row into ys
        + 12  # the counter's add
    )
    assert a["bytes_moved"] == 64 * per_iteration
    accessed = g._eval(g.bytes_accessed, static())[0][loop]
    # bytes_accessed: xs whole instead of the row sliced, ys whole in and out instead of
    # the row written
    assert accessed == a["bytes_moved"] + 64 * (3 * MATRIX - 2 * ROW)
    # an op of no such kind gets neither attribute (its figures are flops and bytes_accessed)
    assert "bytes_moved" not in g.op_attrs[g.op_index("ys")]


SUM_DEVICE = {
    "name": "sum",
    "op_time": "sum",
    "default_dtype": "fp32",
    "fp32_tflops": 0.2,
    "bf16_tflops": 0.2,
    "vector_tflops": 0.05,
    "hbm_gbps": 100,
    "nvlink_gbps": 100,
    "network_gbps": 100,
    "pcie_gbps": 100,
    "launch_overhead_us": 0.5,
}


def test_sum_op_time_adds_a_launch_the_bytes_moved_and_each_class_of_flops():
    g = read_hlo_text(SCAN)
    loop = g.op_index("l")
    a = g.op_attrs[loop]
    flops = float(g._eval(g.flops, static())[0][loop])
    want = (
        a["launches"] * 0.5e-6
        + a["bytes_moved"] / 100e9
        + a["matmul_flops"] / 0.2e12
        + (flops - a["matmul_flops"]) / 0.05e12
    )
    assert op_times(g, load_device(SUM_DEVICE))[0, loop] == pytest.approx(want)
    # the roofline presets do not read the new attributes
    roof = load_device({**SUM_DEVICE, "op_time": "roofline"})
    by = float(g._eval(g.bytes_accessed, static())[0][loop])
    assert op_times(g, roof)[0, loop] == pytest.approx(
        max(flops / 0.2e12, by / 100e9) + a["launches"] * 0.5e-6
    )


def test_sum_op_time_needs_a_vector_rate_and_knows_its_modes():
    from cpsched.core.errors import InputError

    with pytest.raises(InputError, match="vector_tflops"):
        load_device({k: v for k, v in SUM_DEVICE.items() if k != "vector_tflops"})
    with pytest.raises(InputError, match="op_time"):
        load_device({**SUM_DEVICE, "op_time": "max"})
    assert load_device(SUM_DEVICE).to_dict()["op_time"] == "sum"


def test_sum_fit_recovers_the_figures_that_made_the_ops_and_steps():
    """Programs made with known figures (a launch 0.4 us, 80 GB/s, 0.3 TFLOP/s matmul, 0.04
    vector, 20 GB/s of fresh memory, 5 GB/s of mapped memory, a 50 us step, colocated
    devices x1.5): the fit gives them back. Without mapped buffers (every column 0) the
    mapped rate is 0: not charged, rather than a made-up figure."""
    rng = np.random.default_rng(3)
    theta = np.array([0.4e-6, 1 / 80e9, 1 / 0.3e12, 1 / 0.04e12, 1 / 20e9, 1 / 5e9, 50e-6])
    progs = []
    for k in range(12):
        ops = np.column_stack(
            [
                np.ones(30),
                10 ** rng.uniform(3, 7, 30),
                np.where(rng.random(30) < 0.3, 10 ** rng.uniform(5, 9, 30), 0.0),
                10 ** rng.uniform(2, 6, 30),
                np.where(rng.random(30) < 0.2, 10 ** rng.uniform(6, 8, 30), 0.0),
                np.where(rng.random(30) < 0.1, 10 ** rng.uniform(7, 8, 30), 0.0),
            ]
        )
        calls = np.ones(30)
        step = ops.sum(axis=0)
        devices = 4 if k >= 9 else 1
        one = float(step @ theta[:6])
        measured = one + theta[6] if devices == 1 else devices * 1.5 * one + theta[6]
        progs.append(SumProgram(f"p{k}", step, ops, ops @ theta[:6], calls, measured, devices))
    fit = fit_sum(progs)
    assert fit.launch_overhead == pytest.approx(0.4e-6, rel=0.02)
    assert fit.bandwidth == pytest.approx(80e9, rel=0.02)
    assert fit.matmul_flops == pytest.approx(0.3e12, rel=0.02)
    assert fit.vector_flops == pytest.approx(0.04e12, rel=0.02)
    assert fit.fresh_bandwidth == pytest.approx(20e9, rel=0.02)
    assert fit.mapped_bandwidth == pytest.approx(5e9, rel=0.02)
    assert fit.step_overhead == pytest.approx(50e-6, rel=0.05)
    assert fit.colocated_factor == pytest.approx(1.5, rel=0.02)
    assert fit.multi_programs == 3 and fit.samples == 9 * 30
    for p in progs:
        assert sum_predict(p, fit.theta(), fit.colocated_factor) == pytest.approx(
            p.measured, rel=0.02
        )
    keys = fit.file_keys()
    assert keys["op_time"] == "sum" and keys["hbm_gbps"] == pytest.approx(80, rel=0.02)
    assert keys["mapped_memory_gbps"] == pytest.approx(5, rel=0.02)
    assert keys["mapped_buffer_mib"] == 32.0
    unmapped = []
    for p in progs:
        st, ops = p.step_terms.copy(), p.op_terms.copy()
        st[5] = 0.0
        ops[:, 5] = 0.0
        th = theta.copy()
        th[5] = 0.0
        one = float(st @ th[:6])
        m = one + th[6] if p.devices == 1 else p.devices * 1.5 * one + th[6]
        unmapped.append(SumProgram(p.program, st, ops, ops @ th[:6], p.op_calls, m, p.devices))
    bare = fit_sum(unmapped)
    assert bare.mapped_bandwidth == 0.0 and bare.bandwidth == pytest.approx(80e9, rel=0.02)


def test_sum_program_terms_are_the_timelines_of_unit_devices():
    """A program's step terms, weighted by a device's figures, are that device's makespan
    (less its step overhead): the fit and the timeline time the same work."""
    g = read_hlo_text(SCAN)
    p = sum_program(g, [], "scan", 1e-3, 1, fresh_mib=1 / 16)  # buffers of 64 KiB and up
    dev = load_device({**SUM_DEVICE, "step_overhead_us": 30})
    theta = np.array([0.5e-6, 1 / 100e9, 1 / 0.2e12, 1 / 0.05e12, 1 / 10e9, 1 / 1e9, 30e-6])
    fresh = load_device(
        {**SUM_DEVICE, "step_overhead_us": 30, "fresh_memory_gbps": 10, "fresh_buffer_mib": 1 / 16}
    )
    assert sum_predict(p, theta, 1.0) == pytest.approx(timeline(g, device=fresh).makespan[0])
    assert sum_predict(p, theta, 1.0) > timeline(g, device=dev).makespan[0]


def test_fresh_memory_charges_the_large_buffers_an_op_defines():
    """The entry's broadcast defines ys (64 KiB): with a threshold of 64 KiB it pays ys's
    bytes at the fresh-memory rate. The loop defines nothing (its state is the buffers it
    was given, updated in place). A threshold above every buffer charges nothing."""
    g = read_hlo_text(SCAN)
    base = {**SUM_DEVICE, "fresh_memory_gbps": 1, "fresh_buffer_mib": 64 * 1024 / 2**20}
    plain = op_times(g, load_device(SUM_DEVICE))[0]
    charged = op_times(g, load_device(base))[0] - plain
    assert charged[g.op_index("ys")] == pytest.approx(MATRIX / 1e9)
    assert charged[g.op_index("l")] == 0.0
    assert charged.sum() == pytest.approx(MATRIX / 1e9)
    none = op_times(g, load_device({**base, "fresh_buffer_mib": 1.0}))[0]
    assert none == pytest.approx(plain)


def test_mapped_memory_charges_the_buffers_past_its_threshold_on_top():
    """ys (64 KiB) is past a 64 KiB mapped threshold: it pays its bytes at the mapped rate
    on top of the fresh-memory rate; a mapped threshold above it charges nothing more, and
    so does a preset without a mapped rate."""
    g = read_hlo_text(SCAN)
    kib64 = 64 * 1024 / 2**20
    fresh = {**SUM_DEVICE, "fresh_memory_gbps": 1, "fresh_buffer_mib": kib64}
    base = op_times(g, load_device(fresh))[0]
    mapped = {**fresh, "mapped_memory_gbps": 0.5, "mapped_buffer_mib": kib64}
    more = op_times(g, load_device(mapped))[0] - base
    assert more[g.op_index("ys")] == pytest.approx(MATRIX / 0.5e9)
    assert more.sum() == pytest.approx(MATRIX / 0.5e9)
    above = op_times(g, load_device({**mapped, "mapped_buffer_mib": 1.0}))[0]
    assert above == pytest.approx(base)
    assert load_device(fresh).mapped_memory_bandwidth == 0.0


def test_colocated_step_is_n_times_the_factor_times_one_devices_work():
    """XLA:CPU runs a module for N devices as N devices in one process on the same cores:
    ``cpsched run`` and the benchmark predict N * factor * (one device's step - the step
    overhead) + the step overhead; a preset without the factor gives one device's step."""
    from cpsched.measure.run import colocated_step

    dev = load_device({**SUM_DEVICE, "step_overhead_us": 50, "colocated_devices_factor": 1.5})
    assert colocated_step(1.05e-3, 8, dev) == pytest.approx(8 * 1.5 * 1e-3 + 50e-6)
    assert colocated_step(1.05e-3, 1, dev) == 1.05e-3
    assert colocated_step(1.05e-3, 8, "h100") == 1.05e-3
    assert load_device("cpu").colocated_devices_factor > 0
