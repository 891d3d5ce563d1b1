"""``cpsched run MODULE.hlo [--reference XLA_ORDER.hlo]``: run a written module on XLA.

Exit status: 0 when the module ran (and its outputs equal the reference's, when one is
given), 1 when they differ, 2 for a module that cannot be run (one line saying why).
"""

from __future__ import annotations

import json

from cpsched.core.units import format_bytes, format_seconds
from cpsched.measure.run import DEFAULT_DEVICE, DEFAULT_REPEAT, RunRecord, run_module


def add_parser(sub) -> None:
    q = sub.add_parser(
        "run", help="run a module on XLA: outputs against a reference, step time, memory"
    )
    q.add_argument(
        "module",
        metavar="MODULE.hlo",
        help="HLO text (.gz too), e.g. what `cpsched schedule -o` wrote",
    )
    q.add_argument(
        "--reference",
        metavar="XLA_ORDER.hlo",
        help="the same program in another order (XLA's own): outputs must equal "
        "its outputs on the same inputs (default: no check)",
    )
    q.add_argument(
        "--repeat",
        type=int,
        default=DEFAULT_REPEAT,
        metavar="N",
        help=f"timed steps; the step time is their median (default: {DEFAULT_REPEAT})",
    )
    q.add_argument(
        "--seed", type=int, default=0, metavar="K", help="seed of the random inputs (default: 0)"
    )
    q.add_argument(
        "--platform",
        choices=("auto", "cpu", "gpu"),
        default="auto",
        help="XLA backend (default: auto, a GPU when jax has one)",
    )
    q.add_argument(
        "--device",
        metavar="PRESET",
        help="cost-model preset of the predicted step time (default: cpu for XLA:CPU's "
        f"final module, else {DEFAULT_DEVICE})",
    )
    q.add_argument(
        "--profile",
        type=int,
        default=0,
        metavar="N",
        help="also profile N steps for per-op times (in --json; default: 0)",
    )
    q.add_argument(
        "--json", action="store_true", help="the record as JSON: bytes, seconds (default: text)"
    )
    q.set_defaults(fn=cmd_run)


def cmd_run(args) -> int:
    rec = run_module(
        args.module,
        reference=args.reference,
        repeat=args.repeat,
        seed=args.seed,
        platform=args.platform,
        device=args.device,
        profile_runs=args.profile,
    )
    if args.json:
        print(json.dumps(rec.to_dict(), indent=1))
    else:
        print(summary(rec))
    return 1 if rec.outputs_equal is False else 0


def _ms(x: float | None) -> str:
    return format_seconds(x) if x is not None else "-"


def summary(rec: RunRecord) -> str:
    backend = "XLA:GPU" if rec.platform == "gpu" else "XLA:CPU"
    lines = [f"{rec.module} on {backend} ({rec.device_kind})"]
    if rec.reference is None:
        lines.append("  outputs: not checked (no --reference)")
    elif rec.outputs_equal:
        rtols = rec.output_check.get("rtols") or []
        tol = f"floats within rtol {', '.join(f'{r:g}' for r in rtols)}" if rtols else "exact"
        lines.append(f"  outputs: equal to {rec.reference}'s ({tol})")
    elif rec.outputs_equal is False:
        lines.append(
            f"  outputs: DIFFER from {rec.reference}'s: {rec.output_check.get('reason', '')}"
        )
    else:
        lines.append(f"  outputs: not compared ({rec.output_check.get('reason', '')})")
    if rec.step_seconds is not None:
        s = rec.spread
        lines.append(
            f"  step time: {_ms(rec.step_seconds)} median of {rec.repeat} (min "
            f"{_ms(s.get('min'))}, q1 {_ms(s.get('q1'))}, q3 {_ms(s.get('q3'))}, max "
            f"{_ms(s.get('max'))})"
        )
    else:
        lines.append("  step time: not run")
    if rec.reference_run and rec.reference_run.get("step_seconds") is not None:
        lines.append(
            f"  reference step time: {_ms(rec.reference_run['step_seconds'])}; "
            f"predicted {_ms(rec.reference_run.get('predicted_seconds'))}"
        )
    lines.append(
        f"  predicted: {_ms(rec.predicted_seconds)} for the order XLA ran (cpsched's "
        f"timeline model, device preset {rec.device})"
    )
    oc = rec.order_check
    if rec.order_kept:
        lines.append(
            f"  order: kept ({oc.get('matched')} of {oc.get('input_instructions')} "
            f"instructions in XLA's final module in the same order; XLA added "
            f"{oc.get('added_by_xla')})"
        )
    else:
        why = (
            f"{oc['out_of_order'][0]}"
            if oc.get("out_of_order")
            else f"only {oc.get('matched')} of {oc.get('input_instructions')} instructions "
            "left under their names"
        )
        lines.append(f"  order: NOT kept: {backend} ran its own ({why}); xla_order in --json")
    mem = rec.memory
    parts = [
        f"{k[:-6]} {format_bytes(mem[k])}"
        for k in ("temp_bytes", "argument_bytes", "output_bytes", "alias_bytes")
        if k in mem
    ]
    if parts:
        lines.append("  memory (XLA's compiled stats): " + ", ".join(parts))
    if rec.peak_bytes_in_use is not None:
        lines.append(
            f"  peak bytes in use (device allocator): {format_bytes(rec.peak_bytes_in_use)}"
        )
    lines.extend(f"  note: {n}" for n in rec.notes)
    return "\n".join(lines)
