"""cpsched's order handed back to Inductor on every corpus program, run against eager mode.

    .venv-torch/bin/python benchmarks/bench_torch_handback.py [--time-limit 5] [--only a,b]
        [--budget-minutes M] [--timeout S] [--keep]
    .venv/bin/python benchmarks/bench_torch_handback.py --render   # the table from its JSON

(``make torch-env`` makes ``.venv-torch``.) For each program of ``models/torch/capture.py``,
smallest first, in its own process: build it (seeded weights and inputs, as the corpus capture
does), run one step eagerly in float64 (the reference) and in float32 (forward, and for
training programs the backward of the summed outputs), then ``torch.compile`` it (Inductor, CPU) under ``cpsched.inductor_order`` and run the
same step, then compile it again with Inductor's own order (its peak-memory pass) and run it
once more. Checked per program:

- every graph Inductor scheduled ran in cp's order (the order its scheduler ended with is the
  order cpsched gave, and Inductor's ``estimate_peak_memory`` of it is cpsched's peak);
- outputs, gradients of the parameters and the module's buffers after the step (batch-norm
  statistics) equal eager mode's: integers, booleans, shapes and inf/nan places exactly; each
  float tensor within ``FACTOR`` times float32 eager's own error against the float64 step,
  plus ``ULPS`` float32 ulps of its magnitude (``verdict``: pass or FAIL per program; the
  per-tensor errors are stored, so the table can be made again with ``--render``);
- cp's order computes bit for bit what Inductor's own order computes (same kernels, another
  order);
- programs with a dynamic dim also run at the dim's largest value on the same compiled graphs.

Random ops run as eager's (``torch._inductor.config.fallback_random``) and the generator is
reseeded before each step, so dropout draws the same masks in all three runs when the draws
happen in eager's order. Inductor's caches live in ``.inductor-cache/`` at the repository root
(git-ignored; ``TORCHINDUCTOR_CACHE_DIR`` overrides it): kernels built once are reused by later
runs. Writes ``benchmarks/results_torch_handback.md`` (and ``.json``) after every program, so an
interrupted run keeps what finished; programs not run are listed with the reason. With
``--keep`` the rows of programs this run does not run are kept from the table on disk (read
again before each write, under a lock): runs with disjoint ``--only`` fill one table, and each
row names the command that made it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "models" / "torch"
OUT = REPO / "benchmarks" / "results_torch_handback.md"
CACHE = REPO / ".inductor-cache"

# float tolerance per tensor against the float64 eager step (the reference):
# max |x - x64| <= FACTOR * max |eager float32 - x64| + ULPS * EPS32 * max |x64|
FACTOR = 4.0
ULPS = 16
EPS32 = 2.0**-23
# where a model cannot run in float64: max |compiled - eager| <= RTOL * max |eager| + ATOL
RTOL = 1e-3
ATOL = 1e-6


# -- the worker: one program, in its own process ----------------------------------------------


def _compare(ref: dict, got: dict) -> dict:
    """Per kind of tensor (outputs, grads, buffers): equal within the tolerance, worst errors."""
    import torch

    out = {"equal": True, "exact": True, "max_abs": 0.0, "max_rel": 0.0, "tensors": 0}
    out["worst"] = None
    if ref.keys() != got.keys():
        out.update(
            equal=False,
            exact=False,
            worst=f"different tensors: {sorted(ref.keys() ^ got.keys())[:4]}",
        )
        return out
    for key, e in ref.items():
        c = got[key]
        out["tensors"] += 1
        if e.shape != c.shape or e.dtype != c.dtype:
            out.update(
                equal=False,
                exact=False,
                worst=f"{key}: {tuple(c.shape)} {c.dtype} != {tuple(e.shape)} {e.dtype}",
            )
            continue
        if not (e.is_floating_point() or e.is_complex()):
            if not torch.equal(e, c):
                out.update(equal=False, exact=False, worst=f"{key}: integers differ")
            continue
        e64, c64 = e.double(), c.double()
        finite = torch.isfinite(e64)
        if not torch.equal(finite, torch.isfinite(c64)) or not torch.equal(
            e64[~finite], c64[~finite]
        ):
            out.update(equal=False, exact=False, worst=f"{key}: inf/nan differ")
            continue
        if e.numel() == 0:
            continue
        err = float((c64[finite] - e64[finite]).abs().max()) if finite.any() else 0.0
        scale = float(e64[finite].abs().max()) if finite.any() else 0.0
        rel = err / scale if scale else (0.0 if err == 0 else float("inf"))
        if err > out["max_abs"]:
            out["max_abs"] = err
        if rel > out["max_rel"]:
            out["max_rel"] = rel
            out["worst"] = key
        if err > RTOL * scale + ATOL:
            out["equal"] = False
            out["worst"] = f"{key}: max abs error {err:.3g} over {RTOL:g} x {scale:.3g}"
    return out


def _errors(ref64: dict, eager: dict, cp: dict, own: dict | None = None) -> dict:
    """Per float tensor: [scale, eager, cp, own], the largest |eager float64 value| and the
    largest |x - eager float64| of float32 eager, cp's order and Inductor's own order (when
    given; finite
    entries; a tensor whose inf/nan pattern differs gets inf). The tolerance is applied by the
    driver (``_within``), so it can be read again without rerunning."""
    out: dict = {}
    for key, r in ref64.items():
        xs = [eager.get(key), cp.get(key)] + ([own.get(key)] if own is not None else [])
        if not r.is_floating_point() or any(x is None or x.shape != r.shape for x in xs):
            continue
        finite = r.isfinite()
        if not finite.any():
            continue
        row = [float(r[finite].abs().max())]
        for x in xs:
            x64 = x.double()
            if not torch_equal(x64.isfinite(), finite):
                row.append(float("inf"))
            else:
                row.append(float((x64[finite] - r[finite]).abs().max()))
        out[key] = row
    return out


def torch_equal(a, b) -> bool:
    import torch

    return bool(torch.equal(a, b))


def _bitwise(a: dict, b: dict) -> bool:
    import torch

    return a.keys() == b.keys() and all(
        a[k].shape == b[k].shape and torch.equal(a[k].nan_to_num(0.0), b[k].nan_to_num(0.0))
        if a[k].is_floating_point()
        else torch.equal(a[k], b[k])
        for k in a
    )


def _max_diff(a: dict, b: dict) -> float:
    """The largest |a - b| over the float tensors both have (0.0 when bit for bit equal)."""
    worst = 0.0
    for k, x in a.items():
        y = b.get(k)
        if y is not None and x.is_floating_point() and x.shape == y.shape and x.numel():
            worst = max(worst, float((x.double() - y.double()).abs().nan_to_num(0.0).max()))
    return worst


def _other_size_inputs(inputs, dynamic_shapes):
    """The inputs with each dynamic dim at its largest value (same dtype, seeded values)."""
    import torch

    g = torch.Generator().manual_seed(2)
    new = list(inputs)
    for k, spec in dynamic_shapes.items():
        t = inputs[k]
        shape = list(t.shape)
        for d, dim in spec.items():
            shape[d] = int(dim.max)
        if t.is_floating_point():
            new[k] = torch.randn(shape, generator=g, dtype=t.dtype)
        else:
            new[k] = torch.randint(0, int(t.max()) + 1, shape, generator=g, dtype=t.dtype)
    return tuple(new), {
        str(getattr(d, "__name__", "dim")): int(d.max)
        for s in dynamic_shapes.values()
        for d in s.values()
    }


# the float64 step is skipped where twice the float32 step's largest estimated peak is above
# this: CPU float64 convolutions have no oneDNN kernel and unfold their input (VGG16 at batch
# 64 would need about 15 GiB for one layer)
FLOAT64_LIMIT = 4 << 30


def worker(name: str, time_limit: float) -> dict:
    import copy

    import torch
    import torch._inductor.config as inductor_config

    sys.path.insert(0, str(REPO))
    sys.path.insert(0, str(CORPUS))
    import capture as corpus  # the corpus programs

    import cpsched
    from cpsched.readers.torch_frontend import _leaves, _mark_dynamic

    build, _, _ = corpus.PROGRAMS[name]
    torch.manual_seed(0)
    module, inputs, options = build()
    training = bool(options.get("training", False))
    dynamic = options.get("dynamic_shapes")
    state = copy.deepcopy(module.state_dict())

    def step(fn, args, mod=module, loss=torch.float32) -> tuple[dict, dict, dict, float]:
        torch.manual_seed(1234)
        mod.zero_grad(set_to_none=True)
        t0 = time.perf_counter()
        if training:
            out = fn(*args)
            leaves = [t for t in _leaves(out) if t.requires_grad]
            sum(t.to(loss).sum() for t in leaves).backward()
        else:
            with torch.no_grad():
                out = fn(*args)
        secs = time.perf_counter() - t0
        outs = {f"output{i}": t.detach().clone() for i, t in enumerate(_leaves(out))}
        grads = {
            n: p.grad.detach().clone() for n, p in mod.named_parameters() if p.grad is not None
        }
        bufs = {n: b.detach().clone() for n, b in mod.named_buffers()}
        mod.zero_grad(set_to_none=True)
        if mod is module:
            with torch.no_grad():
                module.load_state_dict(state)  # the same weights and statistics for the next run
        return outs, grads, bufs, secs

    def reference64(args) -> tuple[dict, dict, dict] | str:
        """The eager step in float64 (weights, buffers and float inputs cast up), run first
        and alone: the reference both float32 eager and the compiled steps are measured by."""
        default = torch.get_default_dtype()
        torch.set_default_dtype(torch.float64)  # tensors the forward makes (a timestep table)
        try:
            mod64 = copy.deepcopy(module).double()
            args64 = tuple(
                t.double() if isinstance(t, torch.Tensor) and t.is_floating_point() else t
                for t in args
            )
            ref = step(mod64, args64, mod=mod64, loss=torch.float64)[:3]
            del mod64
            return ref
        except Exception as exc:  # a model that cannot run in float64
            return f"{type(exc).__name__}: {str(exc)[:200]}"
        finally:
            torch.set_default_dtype(default)

    def compiled_module():
        torch._dynamo.reset()
        _mark_dynamic(module, inputs, dynamic)
        return torch.compile(module, **({} if dynamic else {"dynamic": False}))

    row: dict = {"program": name, "training": training, "dynamic": dynamic is not None}
    peak = max(
        g["inductor_peak_bytes"]
        for g in json.loads((CORPUS / "manifest.json").read_text())["programs"][name]["graphs"]
    )
    ref64 = (
        reference64(inputs)
        if 2 * peak <= FLOAT64_LIMIT
        else f"not run: twice the float32 step's peak ({2 * peak / 2**30:.1f} GiB) is over "
        f"{FLOAT64_LIMIT / 2**30:g} GiB"
    )
    eager = step(module, inputs)
    row["eager_s"] = eager[3]

    with inductor_config.patch(fallback_random=True):
        with cpsched.inductor_order(time_limit=time_limit) as run:
            fn = compiled_module()
            cp = step(fn, inputs)
            again = step(fn, inputs)  # warm: compile seconds = first step - this one
            n_at_hint = len(run.graphs)
            if dynamic:
                big, at = _other_size_inputs(inputs, dynamic)
                big64 = reference64(big)
                eager_big = step(module, big)
                cp_big = step(fn, big)
        graphs = [
            {
                "name": h.name,
                "nodes": len(h.order),
                "final_is_cp": h.final_order == h.order,
                "estimate_equals_cp": h.inductor_estimate_of_order == h.peak,
                "cp": h.peak,
                "inductor_estimate_of_cp": h.inductor_estimate_of_order,
                "inductor": h.inductor_peak,
                "status": h.status,
                "pinned": h.pinned_inputs,
            }
            for h in run.graphs
        ]
        torch._dynamo.reset()
        own = step(compiled_module(), inputs)
        torch._dynamo.reset()

    row.update(
        graphs=graphs,
        graphs_at_hint=n_at_hint,
        compile_s=max(cp[3] - again[3], 0.0),
        first_step_s=cp[3],
        compiled_step_s=again[3],
        outputs=_compare(eager[0], cp[0]),
        grads=_compare(eager[1], cp[1]),
        buffers=_compare(eager[2], cp[2]),
        repeat_bitwise=all(_bitwise(a, b) for a, b in zip(cp[:3], again[:3])),
        repeat_max_abs=max(_max_diff(a, b) for a, b in zip(cp[:3], again[:3])),
        own_order_bitwise=all(_bitwise(a, b) for a, b in zip(cp[:3], own[:3])),
        own_max_abs=max(_max_diff(a, b) for a, b in zip(cp[:3], own[:3])),
        float64=(
            {
                k: _errors(r, e, c, o)
                for k, r, e, c, o in zip(("outputs", "grads", "buffers"), ref64, eager, cp, own)
            }
            if not isinstance(ref64, str)
            else ref64
        ),
        own_vs_eager={
            k: _compare(e, o)
            for k, e, o in zip(("outputs", "grads", "buffers"), eager[:3], own[:3])
        },
    )
    if dynamic:
        row["other_size"] = {
            "at": at,
            "graphs_added": len(run.graphs) - n_at_hint,
            "float64": (
                {
                    k: _errors(r, e, c)
                    for k, r, e, c in zip(("outputs", "grads", "buffers"), big64, eager_big, cp_big)
                }
                if not isinstance(big64, str)
                else big64
            ),
            **{
                k: _compare(e, c)
                for k, e, c in zip(("outputs", "grads", "buffers"), eager_big[:3], cp_big[:3])
            },
        }
    return row


# -- the driver --------------------------------------------------------------------------------


def _programs() -> list[tuple[str, int, int]]:
    """(name, graphs, nodes) from the corpus manifest, smallest first: nodes (about one kernel
    each) plus a tenth of the peak MiB (the step's size, for the large-batch programs)."""
    manifest = json.loads((CORPUS / "manifest.json").read_text())
    rows = []
    for name, info in manifest["programs"].items():
        nodes = sum(g["nodes"] for g in info["graphs"])
        peak = max(g["inductor_peak_bytes"] for g in info["graphs"]) / 2**20
        rows.append((nodes + peak / 10, name, len(info["graphs"]), nodes))
    return [(n, k, m) for _, n, k, m in sorted(rows)]


KINDS = ("outputs", "grads", "buffers")


def _tolerance(scale: float, eager_err: float) -> float:
    """The error a compiled float32 step may have against the float64 reference."""
    return FACTOR * eager_err + ULPS * EPS32 * scale


def verdict(r: dict, which: int = 2) -> dict:
    """Whether a program's step is within tolerance: ``which`` 2 is cp's order, 3 Inductor's
    own. Integers, booleans, shapes, dtypes and inf/nan places must equal eager's exactly;
    floats must be within ``_tolerance`` of the float64 step. Without a float64 step (a
    model that cannot run in float64) the float check is against float32 eager with
    ``RTOL``. Returns ok, the worst error / tolerance and its tensor, and eager's own error."""
    parts = [(r, "")] + ([(r["other_size"], " (largest dims)")] if "other_size" in r else [])
    out = {"ok": True, "ratio": 0.0, "worst": None, "eager_rel": 0.0, "float64": True}
    # eager's relative error over tensors that are not zero up to rounding (the gradient of
    # attention's key bias is 0 in exact arithmetic: its relative error says nothing)
    f64s = [p.get("float64") for p, _ in parts]
    top = max(
        (s[0] for f in f64s if isinstance(f, dict) for k in KINDS for s in f[k].values()),
        default=0.0,
    )
    for part, where in parts:
        f64 = part.get("float64")
        for kind in KINDS:
            c = part[kind]
            if not c.get("exact", c["equal"]):
                out.update(ok=False, worst=f"{c['worst']}{where}")
            if not isinstance(f64, dict):
                out["float64"] = False
                if which == 2 and not c["equal"]:
                    out.update(ok=False, worst=f"{c['worst']}{where}")
                continue
            for key, stats in f64[kind].items():
                if which >= len(stats):
                    continue
                scale, eager_err, err = stats[0], stats[1], stats[which]
                if scale > 1e-6 * top:
                    out["eager_rel"] = max(out["eager_rel"], eager_err / scale)
                ratio = err / _tolerance(scale, eager_err) if err else 0.0
                if ratio > out["ratio"]:
                    out["ratio"], out["worst"] = ratio, f"{kind} {key}{where}"
                if ratio > 1:
                    out["ok"] = False
    if which == 3 and not isinstance(r.get("float64"), dict):
        own = r["own_vs_eager"]
        out["ok"] = all(own[k]["equal"] for k in KINDS)
    return out


def _kind_ok(r: dict, kind: str) -> str:
    """pass / FAIL for one kind of tensor of cp's order (``-`` where the step has none)."""
    c = r[kind]
    if c["tensors"] == 0:
        return "-"
    ok = c.get("exact", c["equal"])
    f64 = r.get("float64")
    if isinstance(f64, dict):
        ok = ok and all(s[2] <= _tolerance(s[0], s[1]) for s in f64[kind].values())
    else:
        ok = ok and c["equal"]
    return "pass" if ok else "**FAIL**"


def own_cell(r: dict) -> str:
    if r["own_order_bitwise"]:
        return "yes"
    if not r["repeat_bitwise"]:
        return "runs differ"  # the same compiled step twice is not bit for bit the same
    return f"no ({r['own_max_abs']:.1e})"


def _merged(rows: dict, skipped: dict) -> tuple[dict, dict]:
    """This run's rows over the table's JSON as it is now on disk (a program this run has no
    result for yet keeps the one on disk), so that runs with ``--keep`` fill one table (call
    under the lock)."""
    path = OUT.with_suffix(".json")
    if not path.exists():
        return rows, skipped
    last = json.loads(path.read_text())
    out = dict(last["programs"])
    for r in out.values():
        r.setdefault("made_by", last.get("command", "an earlier run"))
    out.update(rows)
    skip = {n: w for n, w in last["not_run"].items() if n not in rows}
    skip.update(skipped)
    for n in skipped:
        out.pop(n, None)
    return out, skip


def save(rows: dict, skipped: dict, args, torch_version: str) -> None:
    """Write the table (with ``--keep``: merged with what is on disk, under a lock)."""
    import fcntl

    CACHE.mkdir(exist_ok=True)
    with open(CACHE / "handback-table.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if args.keep:
            rows, skipped = _merged(rows, skipped)
        write(rows, skipped, _programs(), args, torch_version)


def write(rows: dict, skipped: dict, order: list, args, torch_version: str) -> None:
    def e(x: float) -> str:
        return "0" if x == 0 else f"{x:.1e}"

    def ratio(v: dict) -> str:
        return f"{v['ratio']:.2f}" if v["float64"] else "-"

    cmd = ("python benchmarks/bench_torch_handback.py " + " ".join(sys.argv[1:])).strip()
    made_by = sorted({r.get("made_by", cmd) for r in rows.values()})
    made = "; ".join(
        f"`nice -n 10 {c}`"
        + (
            f" ({', '.join(n for n, r in rows.items() if r.get('made_by', cmd) == c)})"
            if len(made_by) > 1
            else ""
        )
        for c in made_by or [cmd]
    )
    L = ["# Hand-back: cp's order compiled by Inductor, against eager mode\n"]
    L.append(
        f"Made by {made} (.venv-torch, torch {torch_version}), "
        f"{sum(r.get('wall_s', 0.0) for r in rows.values()) / 60:.0f} min of program runs on "
        f"{platform.machine()}, {os.cpu_count()} cores shared with other jobs (seconds "
        "measured under load). Each program of `models/torch/capture.py` "
        "(the corpus of `benchmarks/results_torch.md`) is built with seeded weights and inputs "
        "and run one step eagerly in float64 (the reference) and in float32, then compiled by "
        "`torch.compile` (Inductor, CPU) under "
        f"`cpsched.inductor_order(time_limit={args.time_limit:g})` (method `cp`) and run the "
        "same step, then compiled with Inductor's own order and run again. Training programs: "
        "forward and the backward of the summed outputs. Random ops as eager's "
        "(`fallback_random`), generator reseeded before each step. Inductor's caches: "
        "`.inductor-cache/` (kernels built by an earlier run are reused).\n"
    )
    L.append(
        "**Outputs equal** (per program, `pass`): integers, booleans, shapes, dtypes and "
        "inf/nan places as eager's exactly; every float tensor (outputs, the gradient of every "
        "parameter, the module's buffers after the step such as batch-norm statistics) within "
        f"max |x - x64| <= {FACTOR:g} x max |eager32 - x64| + {ULPS} ulp x max |x64|, where "
        "x64 is the float64 eager step and eager32 the float32 one (ulp: 2^-23). The compiled "
        "step computes the same float32 expressions as eager in another summation order and "
        "fusion, so its rounding error is of eager's own size; the factor is the margin "
        "allowed, the ulp term covers tensors eager computes exactly. `eager err`: float32 "
        "eager's largest error relative to the tensor's largest magnitude (tensors under 1e-6 of "
        "the program's largest magnitude, zero up to rounding, left out of this column only); "
        "`cp err / tol`: "
        "the largest ratio of cp's order's error to its tolerance (pass when <= 1); `own "
        "err / tol` the same for Inductor's own order. `order`: graphs whose final order in "
        "Inductor's scheduler is cp's / graphs compiled; `estimate`: graphs whose Inductor "
        "`estimate_peak_memory` (planning info made for cp's order) equals cp's peak. `= own`: "
        "cp's order gives bit for bit the results of Inductor's own order (`runs differ`: two "
        "runs of the same compiled step already differ, a kernel is not deterministic; `no (d)`: "
        "repeatable but not the same bits as Inductor's own order, largest |difference| d: "
        "both are checked against float64 above). "
        "`compile s`: first compiled step minus the second (cp's solves included).\n"
    )
    done = [rows[n] for n, _, _ in order if n in rows and "error" not in rows[n]]
    failed = [rows[n] for n, _, _ in order if n in rows and "error" in rows[n]]
    graphs = [g for r in done for g in r["graphs"]]
    L.append("## Summary\n")
    L.append(
        f"- programs run: {len(done)} of {len(order)}; failed: {len(failed)}; "
        f"not run: {len(order) - len(done) - len(failed)}"
    )
    L.append(
        f"- graphs compiled in cp's order: {len(graphs)}; Inductor's final order = cp's: "
        f"{sum(g['final_is_cp'] for g in graphs)} of {len(graphs)}; Inductor's estimate of it "
        f"= cp's peak: {sum(g['estimate_equals_cp'] for g in graphs)} of {len(graphs)} "
        f"(inputs whose last reader was pinned: {sum(g.get('pinned', 0) for g in graphs)}, in "
        f"{sum(bool(g.get('pinned')) for g in graphs)} graphs)"
    )
    cps = {r["program"]: verdict(r, 2) for r in done}
    owns = {r["program"]: verdict(r, 3) for r in done}
    L.append(
        f"- outputs, gradients and buffers equal (tolerance above): cp's order "
        f"{sum(v['ok'] for v in cps.values())} of {len(done)} programs, Inductor's own order "
        f"{sum(v['ok'] for v in owns.values())} of {len(done)}"
    )
    no64 = [r["program"] for r in done if not isinstance(r.get("float64"), dict)]
    if no64:
        L.append(
            f"- no float64 step (checked against float32 eager, max |x - eager| <= {RTOL:g} x "
            f"max |eager| + {ATOL:g}): " + ", ".join(no64)
        )
    steady = [r for r in done if r["repeat_bitwise"]]
    L.append(
        f"- bit for bit equal to Inductor's own order: {sum(r['own_order_bitwise'] for r in steady)} "
        f"of {len(steady)} programs whose compiled step gives the same bits when run twice"
    )
    shaky = [r for r in done if not r["repeat_bitwise"]]
    if shaky:
        L.append(
            "- compiled step not bit for bit repeatable (a kernel that is not deterministic run "
            "to run; largest |difference| of two runs, and of cp's order against Inductor's "
            "own): "
            + "; ".join(
                f"{r['program']} ({r['repeat_max_abs']:.1e}, {r['own_max_abs']:.1e})" for r in shaky
            )
        )
    if done:
        worst = max(done, key=lambda r: cps[r["program"]]["ratio"])
        L.append(
            f"- largest error / tolerance of cp's order: {worst['program']}, "
            f"{cps[worst['program']]['ratio']:.2f} ({cps[worst['program']]['worst']})"
        )
    L.append("")
    L.append("## Per program\n")
    L.append(
        "| program | graphs | order | estimate | outputs | grads | buffers | eager err | "
        "cp err / tol | own err / tol | = own | verdict | eager step s | compile s | "
        "compiled step s |"
    )
    L.append("|---|--:|:-:|:-:|:-:|:-:|:-:|--:|--:|--:|:-:|:-:|--:|--:|--:|")
    for name, _, _ in order:
        r = rows.get(name)
        if r is None or "error" in r:
            continue
        gs = r["graphs"]
        v, o = cps[name], owns[name]
        L.append(
            f"| {name} | {len(gs)} | {sum(g['final_is_cp'] for g in gs)}/{len(gs)} "
            f"| {sum(g['estimate_equals_cp'] for g in gs)}/{len(gs)} "
            f"| {_kind_ok(r, 'outputs')} | {_kind_ok(r, 'grads')} | {_kind_ok(r, 'buffers')} "
            f"| {e(v['eager_rel']) if v['float64'] else '-'} "
            f"| {ratio(v)} | {ratio(o)} | {own_cell(r)} "
            f"| {'pass' if v['ok'] else '**FAIL**'} "
            f"| {r['eager_s']:.2f} | {r['compile_s']:.1f} | {r['compiled_step_s']:.2f} |"
        )
    L.append("")
    dyn = [r for r in done if "other_size" in r]
    if dyn:
        L.append("### Dynamic dims at their largest value\n")
        L.append(
            "The same compiled graphs (cp's one order, made at the hint) run at the dim's "
            "largest value, against the float64 eager step there (same tolerance; included "
            "in the verdict above).\n"
        )
        L.append("| program | at | graphs added | outputs | grads | cp err / tol |")
        L.append("|---|---|--:|:-:|:-:|--:|")
        for r in dyn:
            o = r["other_size"]
            at = ", ".join(f"{k}={v}" for k, v in o["at"].items())
            sub = {**o, "program": r["program"]}
            v = verdict({**sub, "own_order_bitwise": True}, 2)
            L.append(
                f"| {r['program']} | {at} | {o['graphs_added']} | {_kind_ok(sub, 'outputs')} "
                f"| {_kind_ok(sub, 'grads')} | {v['ratio']:.2f} |"
            )
        L.append("")
    bad = [r for r in done if not cps[r["program"]]["ok"]]
    if bad:
        L.append("### Not within tolerance\n")
        for r in bad:
            v, o = cps[r["program"]], owns[r["program"]]
            L.append(
                f"- {r['program']}: {v['worst']}, error {v['ratio']:.2f} x its tolerance "
                f"(Inductor's own order: {'within' if o['ok'] else 'over'} tolerance, "
                f"{o['ratio']:.2f})"
            )
        L.append("")
    absent = [n for n, _, _ in order if n not in rows and n not in skipped]
    if failed or skipped or absent:
        L.append("## Not run\n")
        for r in failed:
            L.append(f"- {r['program']}: failed: {r['error']}")
        for n, why in skipped.items():
            L.append(f"- {n}: {why}")
        for n in absent:
            L.append(f"- {n}: no result yet (not run, or its run has not finished)")
        L.append("")
    tmp = OUT.with_suffix(".md.tmp")
    tmp.write_text("\n".join(L) + "\n")
    os.replace(tmp, OUT)
    tmp = OUT.with_suffix(".json.tmp")
    tmp.write_text(
        json.dumps(
            {
                "command": cmd,
                "tolerance": {"factor": FACTOR, "ulps": ULPS, "rtol_no_float64": RTOL},
                "torch": torch_version,
                "programs": rows,
                "not_run": skipped,
            },
            indent=1,
        )
        + "\n"
    )
    os.replace(tmp, OUT.with_suffix(".json"))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--time-limit", type=float, default=5.0, help="cp's time limit per graph (s)")
    ap.add_argument("--only", help="comma-separated program names (default: all)")
    ap.add_argument("--timeout", type=float, default=3600.0, help="seconds per program")
    ap.add_argument(
        "--budget-minutes",
        type=float,
        help="start no program after this many minutes; the rest are listed as not run",
    )
    ap.add_argument(
        "--keep",
        action="store_true",
        help="keep the table's rows of programs this run does not run (re-read before every "
        "write, so runs with disjoint --only fill one table; each row names its command)",
    )
    ap.add_argument(
        "--render",
        action="store_true",
        help="write the table again from the last results' JSON (no program is run)",
    )
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", str(CACHE))
    if args.worker:
        row = worker(args.worker, args.time_limit)
        Path(args.out).write_text(json.dumps(row))
        return 0

    if args.render:
        last = json.loads(OUT.with_suffix(".json").read_text())
        for r in last["programs"].values():
            r.setdefault("made_by", last.get("command", "an earlier run"))
        write(last["programs"], last["not_run"], _programs(), args, last.get("torch", "?"))
        print(OUT)
        return 0

    import torch

    order = _programs()
    known = {n for n, _, _ in order}
    if args.only:
        wanted = args.only.split(",")
        unknown = sorted(set(wanted) - known)
        if unknown:
            ap.error(f"unknown programs {unknown}")
        order = [p for p in order if p[0] in wanted]
    rows: dict = {}
    skipped: dict = {}
    command = "python benchmarks/bench_torch_handback.py " + " ".join(sys.argv[1:])
    t0 = time.perf_counter()
    for i, (name, _, _) in enumerate(order):
        left = args.timeout
        if args.budget_minutes is not None:
            left = min(left, args.budget_minutes * 60 - (time.perf_counter() - t0))
            if left < 60:
                for n, _, _ in order[i:]:
                    skipped[n] = (
                        f"not run: the run's --budget-minutes {args.budget_minutes:g} was spent "
                        "before its turn (programs run smallest first)"
                    )
                break
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "row.json"
            cmd = [
                sys.executable,
                __file__,
                "--worker",
                name,
                "--out",
                str(out),
                "--time-limit",
                str(args.time_limit),
            ]
            t = time.perf_counter()
            try:
                p = subprocess.run(cmd, capture_output=True, text=True, timeout=left)
                if p.returncode == 0:
                    rows[name] = json.loads(out.read_text())
                    rows[name]["made_by"] = command.strip()
                    rows[name]["wall_s"] = time.perf_counter() - t
                else:
                    tail = (p.stderr.strip().splitlines() or ["no message"])[-1]
                    how = (
                        f"killed by signal {-p.returncode}"
                        if p.returncode < 0
                        else f"exit {p.returncode}"
                    )
                    rows[name] = {"program": name, "error": f"{how}: {tail[:300]}"}
            except subprocess.TimeoutExpired:
                rows.pop(name, None)
                skipped[name] = (
                    f"not finished: stopped after {left / 60:.0f} min (time given to it)"
                )
        r = rows.get(name, {})
        print(
            f"{name}: {time.perf_counter() - t:.0f} s "
            + (
                r.get("error", "")
                or f"order {sum(g['final_is_cp'] for g in r['graphs'])}/{len(r['graphs'])}, within tolerance {verdict(r)['ok']}, own-bitwise {r['own_order_bitwise']}"
                if r
                else skipped.get(name, "")
            ),
            flush=True,
        )
        save(rows, skipped, args, torch.__version__)
    save(rows, skipped, args, torch.__version__)
    print(OUT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
