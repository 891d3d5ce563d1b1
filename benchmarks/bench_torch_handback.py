"""cpsched's order handed back to Inductor on every corpus program, run against eager mode.

    .venv-torch/bin/python benchmarks/bench_torch_handback.py [--time-limit 5] [--only a,b]
        [--budget-minutes M] [--timeout S]

(``make torch-env`` makes ``.venv-torch``.) For each program of ``models/torch/capture.py``,
smallest first, in its own process: build it (seeded weights and inputs, as the corpus capture
does), run one step eagerly (forward, and for training programs the backward of the summed
outputs), then ``torch.compile`` it (Inductor, CPU) under ``cpsched.inductor_order`` and run the
same step, then compile it again with Inductor's own order (its peak-memory pass) and run it
once more. Checked per program:

- every graph Inductor scheduled ran in cp's order (the order its scheduler ended with is the
  order cpsched gave, and Inductor's ``estimate_peak_memory`` of it is cpsched's peak);
- outputs, gradients of the parameters and the module's buffers after the step (batch-norm
  statistics) equal eager mode's: integers and booleans exactly, floats within ``RTOL`` of the
  tensor's largest eager magnitude;
- cp's order computes bit for bit what Inductor's own order computes (same kernels, another
  order);
- programs with a dynamic dim also run at the dim's largest value on the same compiled graphs.

Random ops run as eager's (``torch._inductor.config.fallback_random``) and the generator is
reseeded before each step, so dropout draws the same masks in all three runs when the draws
happen in eager's order. Inductor's caches live in ``.inductor-cache/`` at the repository root
(git-ignored; ``TORCHINDUCTOR_CACHE_DIR`` overrides it): kernels built once are reused by later
runs. Writes ``benchmarks/results_torch_handback.md`` (and ``.json``) after every program, so an
interrupted run keeps what finished; programs not run are listed with the reason.
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

# float tolerance: max |compiled - eager| <= RTOL * max |eager| + ATOL, per tensor
RTOL = 1e-3
ATOL = 1e-6


# -- the worker: one program, in its own process ----------------------------------------------


def _compare(ref: dict, got: dict) -> dict:
    """Per kind of tensor (outputs, grads, buffers): equal within the tolerance, worst errors."""
    import torch

    out = {"equal": True, "max_abs": 0.0, "max_rel": 0.0, "tensors": 0, "worst": None}
    if ref.keys() != got.keys():
        out.update(
            equal=False,
            worst=f"different tensors: {sorted(ref.keys() ^ got.keys())[:4]}",
        )
        return out
    for key, e in ref.items():
        c = got[key]
        out["tensors"] += 1
        if e.shape != c.shape or e.dtype != c.dtype:
            out.update(
                equal=False,
                worst=f"{key}: {tuple(c.shape)} {c.dtype} != {tuple(e.shape)} {e.dtype}",
            )
            continue
        if not (e.is_floating_point() or e.is_complex()):
            if not torch.equal(e, c):
                out.update(equal=False, worst=f"{key}: integers differ")
            continue
        e64, c64 = e.double(), c.double()
        finite = torch.isfinite(e64)
        if not torch.equal(finite, torch.isfinite(c64)) or not torch.equal(
            e64[~finite], c64[~finite]
        ):
            out.update(equal=False, worst=f"{key}: inf/nan differ")
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

    def compiled_module():
        torch._dynamo.reset()
        _mark_dynamic(module, inputs, dynamic)
        return torch.compile(module, **({} if dynamic else {"dynamic": False}))

    row: dict = {"program": name, "training": training, "dynamic": dynamic is not None}
    ref64 = reference64(inputs)
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


def _passes(r: dict) -> bool:
    checks = [r["outputs"]["equal"], r["grads"]["equal"], r["buffers"]["equal"]]
    if "other_size" in r:
        checks += [r["other_size"][k]["equal"] for k in ("outputs", "grads", "buffers")]
    return all(checks)


def own_cell(r: dict) -> str:
    if r["own_order_bitwise"]:
        return "yes"
    if not r["repeat_bitwise"]:
        return "runs differ"  # the same compiled step twice is not bit for bit the same
    return "**no**"


def write(rows: dict, skipped: dict, order: list, args, seconds: float, torch_version: str) -> None:
    def e(x: float) -> str:
        return "0" if x == 0 else f"{x:.1e}"

    cmd = ("python benchmarks/bench_torch_handback.py " + " ".join(sys.argv[1:])).strip()
    made_by = sorted({r.get("made_by", cmd) for r in rows.values()} | {cmd})
    made = f"`nice -n 10 {cmd}`"
    if len(made_by) > 1:  # --keep: rows of earlier runs were kept
        made = "; ".join(
            f"`nice -n 10 {c}` ({', '.join(n for n, r in rows.items() if r.get('made_by', cmd) == c)})"
            for c in made_by
            if any(r.get("made_by", cmd) == c for r in rows.values())
        )
    L = ["# Hand-back: cp's order compiled by Inductor, against eager mode\n"]
    L.append(
        f"Made by {made} (.venv-torch, torch {torch_version}), last run "
        f"{seconds / 60:.1f} min on {platform.machine()}, {os.cpu_count()} cores shared with "
        "other jobs (seconds measured under load). Each program of `models/torch/capture.py` "
        "(the corpus of `benchmarks/results_torch.md`) is built with seeded weights and inputs "
        "and run one step eagerly, then compiled by `torch.compile` (Inductor, CPU) under "
        f"`cpsched.inductor_order(time_limit={args.time_limit:g})` (method `cp`) and run the "
        "same step, then compiled with Inductor's own order and run again. Training programs: "
        "forward and the backward of the summed outputs. Random ops as eager's "
        "(`fallback_random`), generator reseeded before each step. Inductor's caches: "
        "`.inductor-cache/` (kernels built by an earlier run are reused).\n"
    )
    L.append(
        f"Equal: integers and booleans exactly; floats when max |compiled - eager| <= {RTOL:g} x "
        f"max |eager| + {ATOL:g}, per tensor (outputs; gradients of every parameter; the "
        "module's buffers after the step, e.g. batch-norm statistics). `max abs` / `max rel`: "
        "the largest error over those tensors, relative to the tensor's largest eager magnitude. "
        "`order`: graphs whose final order in Inductor's scheduler is cp's / graphs compiled "
        "(and Inductor's `estimate_peak_memory` of it equals cp's peak). `= own`: cp's order "
        "gives bit for bit the results of Inductor's own order (`runs differ`: two runs of the "
        "same compiled step already differ, a kernel is not deterministic). `compile s`: first compiled "
        "step minus the second (cp's solves included).\n"
    )
    done = [rows[n] for n, _, _ in order if n in rows and "error" not in rows[n]]
    failed = [rows[n] for n, _, _ in order if n in rows and "error" in rows[n]]
    n_graphs = sum(len(r["graphs"]) for r in done)
    n_final = sum(g["final_is_cp"] and g["estimate_equals_cp"] for r in done for g in r["graphs"])
    L.append("## Summary\n")
    L.append(
        f"- programs run: {len(done)} of {len(order)}; failed: {len(failed)}; not run: {len(skipped)}"
    )
    n_order = sum(g["final_is_cp"] for r in done for g in r["graphs"])
    L.append(
        f"- graphs compiled in cp's order, Inductor's final order = cp's: {n_order} of {n_graphs}; "
        f"and Inductor's estimate of it = cp's peak too: {n_final} of {n_graphs}"
    )
    L.append(
        f"- outputs, gradients and buffers equal eager mode's: {sum(_passes(r) for r in done)} of {len(done)} programs"
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
        worst = max(
            done,
            key=lambda r: max(r[k]["max_rel"] for k in ("outputs", "grads", "buffers")),
        )
        L.append(
            f"- largest relative error: {worst['program']}, "
            f"{e(max(worst[k]['max_rel'] for k in ('outputs', 'grads', 'buffers')))}"
        )
    L.append("")
    L.append("## Per program\n")
    L.append(
        "| program | graphs | order | outputs | grads | buffers | max abs | max rel | = own | "
        "eager step s | compile s | compiled step s |"
    )
    L.append("|---|--:|:-:|:-:|:-:|:-:|--:|--:|:-:|--:|--:|--:|")
    for name, _, _ in order:
        r = rows.get(name)
        if r is None or "error" in r:
            continue
        ok = sum(g["final_is_cp"] and g["estimate_equals_cp"] for g in r["graphs"])
        kinds = ("outputs", "grads", "buffers")

        def cell(c: dict) -> str:
            if c["tensors"] == 0:
                return "-"
            return "yes" if c["equal"] else "**NO**"

        L.append(
            f"| {name} | {len(r['graphs'])} | {ok}/{len(r['graphs'])} | {cell(r['outputs'])} "
            f"| {cell(r['grads'])} | {cell(r['buffers'])} | {e(max(r[k]['max_abs'] for k in kinds))} "
            f"| {e(max(r[k]['max_rel'] for k in kinds))} | {own_cell(r)} "
            f"| {r['eager_s']:.2f} | {r['compile_s']:.1f} | {r['compiled_step_s']:.2f} |"
        )
    L.append("")
    dyn = [r for r in done if "other_size" in r]
    if dyn:
        L.append("### Dynamic dims at their largest value\n")
        L.append(
            "The same compiled graphs (cp's one order, made at the hint) run at the dim's "
            "largest value, against eager mode there.\n"
        )
        L.append("| program | at | graphs added | outputs | grads | max rel |")
        L.append("|---|---|--:|:-:|:-:|--:|")
        for r in dyn:
            o = r["other_size"]
            at = ", ".join(f"{k}={v}" for k, v in o["at"].items())
            L.append(
                f"| {r['program']} | {at} | {o['graphs_added']} | "
                f"{'yes' if o['outputs']['equal'] else '**NO**'} | "
                f"{'-' if not o['grads']['tensors'] else ('yes' if o['grads']['equal'] else '**NO**')} | "
                f"{e(max(o[k]['max_rel'] for k in ('outputs', 'grads', 'buffers')))} |"
            )
        L.append("")
    bad = [r for r in done if not _passes(r)]
    if bad:
        L.append("### Differences from eager mode\n")
        for r in bad:
            worst = [r[k]["worst"] for k in ("outputs", "grads", "buffers") if not r[k]["equal"]]
            own = r["own_vs_eager"]
            L.append(
                f"- {r['program']}: {'; '.join(worst)} (Inductor's own order: "
                f"{'equal' if all(own[k]['equal'] for k in own) else 'differs too'})"
            )
        L.append("")
    if failed or skipped:
        L.append("## Not run\n")
        for r in failed:
            L.append(f"- {r['program']}: failed: {r['error']}")
        for n, why in skipped.items():
            L.append(f"- {n}: {why}")
        L.append("")
    tmp = OUT.with_suffix(".md.tmp")
    tmp.write_text("\n".join(L) + "\n")
    os.replace(tmp, OUT)
    tmp = OUT.with_suffix(".json.tmp")
    tmp.write_text(
        json.dumps(
            {"command": cmd, "rtol": RTOL, "atol": ATOL, "programs": rows, "not_run": skipped},
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
        help="keep the rows of programs not run this time from the last results (each row "
        "names the command that made it)",
    )
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", str(CACHE))
    if args.worker:
        row = worker(args.worker, args.time_limit)
        Path(args.out).write_text(json.dumps(row))
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
    listed = order  # the table's programs: those run now, and with --keep the last run's
    if args.keep and OUT.with_suffix(".json").exists():
        last = json.loads(OUT.with_suffix(".json").read_text())
        now = {n for n, _, _ in order}
        rows = {n: r for n, r in last["programs"].items() if n not in now}
        for r in rows.values():
            r.setdefault("made_by", last.get("command", "an earlier run"))
        skipped = {n: why for n, why in last["not_run"].items() if n not in now}
        listed = [p for p in _programs() if p[0] in now or p[0] in rows or p[0] in skipped]
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
                else:
                    tail = (p.stderr.strip().splitlines() or ["no message"])[-1]
                    rows[name] = {
                        "program": name,
                        "error": f"exit {p.returncode}: {tail[:300]}",
                    }
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
                or f"order {sum(g['final_is_cp'] for g in r['graphs'])}/{len(r['graphs'])}, eager-equal {_passes(r)}, own-bitwise {r['own_order_bitwise']}"
                if r
                else skipped.get(name, "")
            ),
            flush=True,
        )
        write(rows, skipped, listed, args, time.perf_counter() - t0, torch.__version__)
    write(rows, skipped, listed, args, time.perf_counter() - t0, torch.__version__)
    print(OUT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
