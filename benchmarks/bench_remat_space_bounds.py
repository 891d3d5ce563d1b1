"""How far cp-remat's plan is from the best plan in the clone spaces its searches use.

    .venv/bin/python benchmarks/bench_remat_space_bounds.py [--budget 486895]
        [--time-limit 600] [--seed 0] [--plan plan.json] [--spaces 0,0+inputs,1,1+inputs]
        [--mip-seconds 300] [--steps 8] [--rows 40]

Runs ``solve_remat`` on RLG n1000 (or reads its order and clones from ``--plan``, which a
first run writes), then, on that order, builds the fixed-order segment model
(``cpsched.cp.remat.segments``) over several candidate spaces and reports for each:

- ``LP``: its linear relaxation (GLOP): no plan in that space adds less;
- ``MIP``: the same model solved as an integer program by SCIP for ``--mip-seconds``,
  hinted with the plan: its proven bound (no plan in that space adds less) and its best plan.

and first the bounds valid for every plan on that order (``cpsched.cp.remat.lp_bound``):
the LP with memory counted at one step, for each of the ``--steps`` highest, and at
``--rows`` steps together (``lp_bound`` returns the largest of them).

Spaces: ``d`` = clone chains ``d`` producers deep (``candidate_steps``), ``+inputs`` = also
clones at the steps where one of their inputs is read (a clone made early, while its inputs
are still resident, instead of right before its reader). The plan's own clones are always
in the space. These bounds hold only inside each space (other clone steps, deeper chains and
other orders are not covered), so they say where a search over that space must stop, not
what the problem allows; ``lp_bound`` and ``cpsched.remat.bound`` hold for every plan.
Both solvers ship with OR-Tools. Prints one line per space; the results file is written by
hand from them.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("CPSCHED_SHARED_DIR", REPO.parent / "shared"))
RLG1000 = (
    SHARED / "peer-cases" / "moccasin" / "random_layered_n1000_w0.31_nlv0.75_ed0.2_scd0.14.json"
)
sys.path.insert(0, str(REPO))

from cpsched.analysis.memory import positions, simulate  # noqa: E402
from cpsched.core.graph import Graph  # noqa: E402
from cpsched.core.scenarios import static  # noqa: E402
from cpsched.cp.remat.lp_bound import (  # noqa: E402
    as_linear_program,
    counted_rows,
    highest_steps,
    step_set_bound,
)
from cpsched.cp.remat.segments import build_segment_model, hot_steps  # noqa: E402
from cpsched.strategies.remat.method import solve_remat  # noqa: E402
from cpsched.readers.nx_json import read_nx_json  # noqa: E402
from cpsched.remat.policy import recomputable_ops  # noqa: E402
from cpsched.remat.skeleton import Regen  # noqa: E402
from cpsched.remat.timing import op_durations  # noqa: E402


def input_read_steps(graph: Graph, order, hot: np.ndarray) -> set[tuple[int, int]]:
    """Clones (op, step) at the steps where one of the op's inputs is read, inside a gap of
    its output that covers a hot step before that step (elsewhere the clone frees nothing)."""
    pos = positions(order, graph.n_ops)
    hot_before = np.concatenate([[0], np.cumsum(hot)])
    out: set[tuple[int, int]] = set()
    for v in map(int, np.flatnonzero(recomputable_ops(graph))):
        reads = sorted(
            {int(pos[int(w)]) for b in graph.defines(v) for w in graph.buffer_users(int(b))}
        )
        if not reads:
            continue
        for s in sorted(
            {int(pos[int(w)]) for a in graph.uses(v) for w in graph.buffer_users(int(a))}
        ):
            if s <= pos[v] + 1 or s > reads[-1]:
                continue
            prev = max([q for q in reads if q < s] + [int(pos[v])])
            if hot_before[s] > hot_before[prev + 1]:
                out.add((v, s))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--budget", type=int, default=486_895)
    ap.add_argument("--time-limit", type=float, default=600.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--plan", help="JSON {order, clones}: read when it exists, else written")
    ap.add_argument("--spaces", default="0,0+inputs,1,1+inputs")
    ap.add_argument("--mip-seconds", type=float, default=300.0)
    ap.add_argument("--steps", type=int, default=8, help="one-step LPs at the highest steps")
    ap.add_argument("--rows", default="40", help="step counts for the LPs over many steps")
    args = ap.parse_args(argv)
    if not RLG1000.exists():
        print("shared peer cases not found next to the checkout; nothing to do")
        return 0
    g = read_nx_json(str(RLG1000))
    sc = static()
    bud = np.array([args.budget])
    if args.plan and Path(args.plan).exists():
        saved = json.loads(Path(args.plan).read_text())
        order, plan = saved["order"], {(int(v), int(q)) for v, q in saved["clones"]}
    else:
        t0 = time.perf_counter()
        r = solve_remat(g, None, args.budget, time_limit=args.time_limit, workers=2, seed=args.seed)
        order = [int(v) for v in r.skeleton.order]
        plan = {
            (int(c.op), int(c.step))
            for c in (r.skeleton.candidates[i] for i in r.active[0])
            if isinstance(c, Regen)
        }
        print(
            f"cp-remat: {float(r.added_time_pct[0]):.3f} % {r.status} in "
            f"{time.perf_counter() - t0:.0f} s, {len(plan)} clones",
            flush=True,
        )
        if args.plan:
            Path(args.plan).write_text(json.dumps({"order": order, "clones": sorted(plan)}))
    dur = op_durations(g, sc, "h100")
    sizes, trans = g.sizes(sc), g.transient_bytes(sc)
    total = float(dur[0].sum())
    usage = np.atleast_2d(simulate(g, order, sc).usage)
    hot = hot_steps(usage, bud)
    plan_pct = 100 * float(sum(dur[0][v] for v, _ in plan)) / total
    print(
        f"order peak {int(np.max(usage))} B, {int(hot.sum())} steps over {args.budget} B; "
        f"plan {plan_pct:.3f} % ({len(plan)} clones)",
        flush=True,
    )
    one = sizes[:1], trans[:1], dur[0]
    t0 = time.perf_counter()
    alone = [
        (step_set_bound(g, order, args.budget, *one, [int(t)], 3600), int(t))
        for t in highest_steps(usage[0], args.budget, args.steps)
    ]
    print(
        f"every plan on this order, memory counted at one step (the {args.steps} highest): "
        + ", ".join(f"{int(t)}: {100 * b / total:.3f} %" for b, t in alone)
        + f" ({time.perf_counter() - t0:.0f} s)",
        flush=True,
    )
    for k in (int(x) for x in args.rows.split(",") if x):
        t0 = time.perf_counter()
        rows = np.flatnonzero(counted_rows(usage[0], args.budget, k)).tolist()
        b = step_set_bound(g, order, args.budget, *one, rows, 3600)
        print(
            f"every plan on this order, memory counted at {len(rows)} steps: at least "
            f"{100 * b / total:.3f} % ({time.perf_counter() - t0:.0f} s)",
            flush=True,
        )
    for space in (x for x in args.spaces.split(",") if x):
        depth = int(space.split("+")[0])
        extra = set(plan) | (input_read_steps(g, order, hot) if "+inputs" in space else set())
        data = (g, order, bud, sizes, trans, dur[0])
        sm = build_segment_model(*data, chain_depth=depth, extra=extra, hot=hot)
        lp, _ = as_linear_program(sm, "GLOP", integer=False)
        t0 = time.perf_counter()
        st = lp.Solve()
        lp_s = time.perf_counter() - t0
        lp_pct = 100 * lp.Objective().Value() * sm.unit / total if st == lp.OPTIMAL else np.nan
        mip, xs = as_linear_program(sm, "SCIP", integer=True)
        sm.hint(plan)
        hint = dict(zip(sm.model.proto.solution_hint.vars, sm.model.proto.solution_hint.values))
        mip.SetHint(xs, [float(hint.get(i, 0)) for i in range(len(xs))])
        mip.SetTimeLimit(int(args.mip_seconds * 1000))
        t0 = time.perf_counter()
        mip.Solve()
        mip_s = time.perf_counter() - t0
        # SCIP reports no bound (a huge negative number) when stopped before its root LP
        bound = max(0.0, 100 * mip.Objective().BestBound() * sm.unit / total)
        found = 100 * mip.Objective().Value() * sm.unit / total
        print(
            f"space {space}: {sm.stats['clone_candidates']} candidates, "
            f"{sm.stats['segments']} segments; LP {lp_pct:.3f} % ({lp_s:.0f} s); "
            f"MIP bound {bound:.3f} %, best {found:.3f} % ({mip_s:.0f} s)",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
