"""The joint model (cp-joint) against the separate methods in sequence, at equal budgets.

    python benchmarks/bench_joint.py [--time-limit S] [--fracs 0.9,0.8,0.7] [--out FILE.md]
        [--frontier PROGRAM --points K --point-limit S]

Sharded training steps (the bundled dp x tp module, the corpus's 3-axis-mesh and MoE
all-to-all programs with their collectives split into async pairs, and the generator's
Megatron-style step). For each, the least peak of the min-peak order (``cp``, 10 s) and
budgets at ``--fracs`` of it. At each budget, each separate method gets ``--time-limit``
seconds and cp-joint ``--joint-time-limit`` (default: their total, three times as much):

- ``cp-overlap``: the order alone (collective placement within the budget, no added op);
- ``cp-remat``: recompute (time without communication), then timed with communication;
- ``remat, then overlap``: cp-overlap on cp-remat's plan written into the graph, within the
  budget (the separate methods in sequence: order, remat, overlap);
- ``cp-joint``: one model for all three.

Makespans are the timeline simulator's on the plan written into the graph; every plan was
replayed against the budget. "best sequential" is the least makespan of the first three
that fit. Cost model: the h100 preset (``cpsched.cost.model``).

``--frontier PROGRAM`` instead runs ``cpsched.api.frontier`` with ``--points`` budgets and
``--point-limit`` seconds each, and reports the wall time and every point.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from cpsched import api  # noqa: E402
from cpsched.core.errors import CpschedError  # noqa: E402
from cpsched.core.scenarios import from_dim_specs, static  # noqa: E402
from cpsched.cost.timeline import simulate_timeline  # noqa: E402
from cpsched.strategies.joint.bounds import memory_cut_bound, no_memory_bound  # noqa: E402
from cpsched.cp.joint.problem import (  # noqa: E402
    build_joint_problem,
    copy_out_before_back,
    plan_costs,
    skeleton_from_plan_order,
    time_plan,
)
from cpsched.strategies.joint.method import solve_joint  # noqa: E402
from cpsched.cp.overlap.problem import build_problem  # noqa: E402
from cpsched.cp.runtime import SolverConfig  # noqa: E402
from cpsched.strategies.overlap.method import solve_overlap  # noqa: E402
from cpsched.strategies.remat.method import solve_remat  # noqa: E402
from cpsched.generators import transformer_parallel  # noqa: E402
from cpsched.core.transforms import convert_sync_collectives  # noqa: E402
from cpsched.remat.replay import replay  # noqa: E402
from cpsched.remat.rewrite import plan_to_graph  # noqa: E402
from cpsched.remat.skeleton import Skeleton, materialize  # noqa: E402
from cpsched.remat.timing import host_link  # noqa: E402

ROOT = os.path.dirname(HERE)
PROGRAMS = {
    "sharded_dp_tp": (os.path.join(ROOT, "models/hlo/sharded_dp_tp.hlo"), None),
    "mesh3_named": (os.path.join(ROOT, "models/hlo/corpus/mesh3_named.hlo.gz"), None),
    "moe_all_to_all": (os.path.join(ROOT, "models/hlo/corpus/moe_all_to_all.hlo.gz"), None),
    "megatron_dp2_tp4": (None, ["b=4", "s=1024"]),
    "mesh3_shard_map": (os.path.join(ROOT, "models/hlo/corpus/mesh3_shard_map.hlo.gz"), None),
}


def load(name: str):
    path, dims = PROGRAMS[name]
    if path is None:
        g = convert_sync_collectives(transformer_parallel(layers=2))
        return g, from_dim_specs(dims)
    g = api.read(path, async_collectives=True)
    return g, static()


def one(
    name: str, fracs, limit: float, joint_limit: float, relax_limit: float, evict: bool = False
) -> list[dict]:
    g, sc = load(name)
    # host offload (the device's PCIe link) for every method and the cut bound, or none
    link = host_link(g, "h100") if evict else None
    least = api.schedule(g, scenarios=sc, time_limit=10).peak[sc.names[0]]
    base = build_problem(g, sc, reach=False)
    # the budget-free bound (every plan at every budget; cpsched.strategies.joint.bounds): the
    # overlap model without a memory limit, once per program
    full = build_problem(g, sc)
    free_lb, free_ms, _ = no_memory_bound(full, relax_limit, SolverConfig())
    free = {
        "no_memory_bound": float(free_lb[0]),
        "no_memory_makespan": None if free_ms is None else float(free_ms[0]),
        "relax_limit": relax_limit,
    }
    rows = []
    for f in fracs:
        bud = np.array([int(f * least)])
        prob = build_joint_problem(base, bud, link)
        row: dict = {
            "program": name,
            "ops": g.n_ops,
            "least_peak": int(least),
            "frac": f,
            "budget": int(bud[0]),
            "evict": evict,
            **free,
        }
        # the cut bound at this budget (every plan; inf: none fits)
        t0 = time.perf_counter()
        cut, cut_info = memory_cut_bound(build_joint_problem(full, bud, link))
        row["cut_bound"] = float(cut[0])
        row["cut_at"] = cut_info["cuts"][0]
        row["cut_s"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        s = solve_overlap(g, sc, budget=bud, costs=base.costs, time_limit=limit)
        ev = materialize(g, _skeleton(s.order), [])
        t = time_plan(prob, ev, 0)
        row["cp-overlap"] = (t.makespan, bool(int(s.peak_bytes[0]) <= bud[0]))
        row["cp-overlap_s"] = time.perf_counter() - t0
        try:
            t0 = time.perf_counter()
            r = solve_remat(
                g, sc, bud, durations=base.dur, time_limit=limit, evict=evict, transfer=link
            )
            ev = r.events[0]
            t = time_plan(prob, ev, 0)
            row["cp-remat"] = (t.makespan, True)
            # order, remat, then overlap: cp-overlap on the plan written into the graph
            pg, porder = plan_to_graph(g, ev)
            o = solve_overlap(pg, sc, budget=bud, hint=porder, time_limit=limit)
            costs = plan_costs(prob, pg, 0)
            if evict:
                # a reader of a copy back depends on its start only: read the order back as
                # a plan (as cp-joint does) so that it waits for the copy's done
                sk, act = skeleton_from_plan_order(g, pg, copy_out_before_back(pg, o.order))
                ev2 = materialize(g, sk, act)
                rp = replay(g, ev2, budget=int(bud[0]))
                row["remat, then overlap"] = (time_plan(prob, ev2, 0).makespan, not rp.errors)
            else:
                tl = simulate_timeline(pg, o.order, costs, sc)
                row["remat, then overlap"] = (
                    float(tl.makespan[0]),
                    bool(int(o.peak_bytes[0]) <= bud[0]),
                )
            row["cp-remat_s"] = time.perf_counter() - t0
        except CpschedError as e:
            row["cp-remat"] = (None, False)
            row["remat, then overlap"] = (None, False)
            row["remat_error"] = str(e)
        t0 = time.perf_counter()
        try:
            j = solve_joint(g, sc, bud, evict=evict, transfer=link, time_limit=joint_limit)
            n = sc.names[0]
            row["cp-joint"] = (j.info["makespan"][n], True)
            row["joint_status"] = j.status
            mb = j.info.get("makespan_bound")
            row["joint_bound"] = max(
                mb[n] if mb else 0.0, free["no_memory_bound"], row["cut_bound"]
            )
            row["budget_free_bound"] = j.info.get("budget_free_bound", {}).get(n)
            row["no_memory"] = j.info.get("no_memory")
            row["joint_from"] = j.info.get("chosen")
        except CpschedError as e:
            row["cp-joint"] = (None, False)
            row["joint_error"] = str(e)
            row["joint_bound"] = max(free["no_memory_bound"], row["cut_bound"])
        row["cp-joint_s"] = time.perf_counter() - t0
        seq = [
            row[k][0]
            for k in ("cp-overlap", "cp-remat", "remat, then overlap")
            if row[k][1] and row[k][0] is not None
        ]
        row["best_sequential"] = min(seq) if seq else None
        print(json.dumps(row), flush=True)
        rows.append(row)
    return rows


def _skeleton(order):
    return Skeleton(tuple(int(i) for i in order))


def fmt_us(x):
    return "-" if x is None else f"{x * 1e6:.1f}"


def fmt_cut(x):
    return "-" if x is None else ("inf (no plan)" if not np.isfinite(x) else fmt_us(x))


def gap_table(rows: list[dict], limit: float, joint_limit: float) -> str:
    """Program, fraction, budget, best sequential, joint, bound, gap, and what the bound
    says about the 10 % target."""
    out = [
        "| program | fraction | budget (B) | best sequential (us) | cp-joint (us) | "
        "cut bound (us) | joint bound (us) | gap (%) | joint vs best sequential | "
        "10 % target |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        b, j, lb = r["best_sequential"], r["cp-joint"][0], r.get("joint_bound")
        cut = r.get("cut_bound")
        gap = f"{100 * (j - lb) / j:.1f}" if (j is not None and lb) else "-"
        gain = f"{100 * (b - j) / b:+.1f} %" if (j is not None and b) else "-"
        if cut is not None and not np.isfinite(cut):
            verdict = f"no plan exists (proven at {r['cut_at'][0]})"
        elif b is None or j is None:
            verdict = "no plan found"
        elif j <= 0.9 * b:
            verdict = "met"
        elif lb is not None and lb > 0.9 * b:
            verdict = f"unreachable (bound {100 * (b - lb) / b:.1f} % below)"
        else:
            verdict = "open"
        out.append(
            f"| {r['program']} | {r['frac']:.0%} | {r['budget']:,} | {fmt_us(b)} | "
            f"{fmt_us(j)} ({r.get('joint_status', '-')}) | {fmt_cut(cut)} | "
            f"{fmt_us(lb) if lb is None or np.isfinite(lb) else 'inf'} | {gap} | {gain} | "
            f"{verdict} |"
        )
    out.append("")
    out.append(
        f"time limits: each separate method {limit:g} s, cp-joint {joint_limit:g} s; "
        f"budget-free bound {rows[0]['relax_limit'] if rows else 0:g} s per program"
    )
    return "\n".join(out)


def table(rows: list[dict]) -> str:
    out = [
        "| program | budget (of least peak) | cp-overlap | cp-remat | remat, then overlap | "
        "best sequential | cp-joint (status) | joint bound | joint vs best sequential |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        cells = []
        for k in ("cp-overlap", "cp-remat", "remat, then overlap"):
            v, ok = r[k]
            cells.append(fmt_us(v) + ("" if ok or v is None else " (over)"))
        j = r["cp-joint"][0]
        b = r["best_sequential"]
        gain = f"{100 * (b - j) / b:+.1f} %" if (j is not None and b) else "-"
        out.append(
            f"| {r['program']} ({r['ops']} ops) | {r['budget']:,} B ({r['frac']:.0%}) | "
            + " | ".join(cells)
            + f" | {fmt_us(b)} | {fmt_us(j)} ({r.get('joint_status', '-')}) | "
            f"{fmt_us(r.get('joint_bound'))} | {gain} |"
        )
    return "\n".join(out)


def frontier_run(name: str, points: int, limit: float) -> str:
    g, sc = load(name)
    t0 = time.perf_counter()
    f = api.frontier(g, scenarios=sc, points=points, time_limit=limit)
    wall = time.perf_counter() - t0
    lines = [
        f"frontier of {name} ({g.n_ops} ops): {points} points, {limit:g} s each, wall {wall:.0f} s",
        "",
        "| budget (B) | status | peak (B) | makespan (us) | bound (us) | exposed comm (us) |",
        "|---|---|---|---|---|---|",
    ]
    for p in f.points:
        if p.get("makespan") is None:
            lines.append(f"| {p['budget_bytes']:,} | {p['status']} | - | - | - | - |")
            continue
        lines.append(
            f"| {p['budget_bytes']:,} | {p['status']} | {p['peak_bytes']:,} | "
            f"{p['makespan'] * 1e6:.1f} | {fmt_us(p.get('makespan_bound'))} | "
            f"{p['exposed_comm'] * 1e6:.1f} |"
        )
    lines += ["", "| heuristic | peak (B) | makespan (us) |", "|---|---|---|"]
    for r in f.baselines:
        lines.append(f"| {r['method']} | {r['peak_bytes']:,} | {r['makespan'] * 1e6:.1f} |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--time-limit", type=float, default=30.0)
    ap.add_argument(
        "--joint-time-limit",
        type=float,
        help="cp-joint's limit (default: 3 x --time-limit, the separate methods' total)",
    )
    ap.add_argument("--fracs", default="0.9,0.8,0.7")
    ap.add_argument(
        "--relax-limit",
        type=float,
        default=60.0,
        help="seconds for the budget-free bound (overlap model without memory), per program",
    )
    ap.add_argument("--programs", default=",".join(PROGRAMS))
    ap.add_argument("--frontier")
    ap.add_argument("--points", type=int, default=20)
    ap.add_argument("--point-limit", type=float, default=20.0)
    ap.add_argument("--out")
    ap.add_argument(
        "--evict", action="store_true", help="allow host offload (the h100 PCIe link) everywhere"
    )
    a = ap.parse_args()
    if a.frontier:
        text = frontier_run(a.frontier, a.points, a.point_limit)
    else:
        fracs = [float(x) for x in a.fracs.split(",")]
        rows = []
        for name in a.programs.split(","):
            rows += one(
                name,
                fracs,
                a.time_limit,
                a.joint_time_limit or 3 * a.time_limit,
                a.relax_limit,
                a.evict,
            )
        text = (
            table(rows)
            + "\n\n"
            + gap_table(rows, a.time_limit, a.joint_time_limit or 3 * a.time_limit)
        )
    print(text)
    if a.out:
        with open(a.out, "w") as fh:
            fh.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
