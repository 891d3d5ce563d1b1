"""The joint model's solve-and-decode (``cpsched.strategies.joint.method`` documents the model
and runs the phases): the model at tick resolution with its cuts (``TickModel``), hinted from
a plan, read back as a replay-checked ``Plan``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from ortools.sat.python.cp_model_helper import FlatIntExpr

from cpsched.cost.model import Costs
from cpsched.cost.timeline import simulate_timeline
from cpsched.cp import runtime
from cpsched.cp.joint import objectives as O
from cpsched.cp.joint.constraints import build, readers
from cpsched.cp.joint.problem import JointProblem, PlanTiming, time_order, time_plan
from cpsched.cp.joint.variables import JointVars
from cpsched.cp.overlap.problem import copy_durations, floor1, ticks
from cpsched.cp.overlap.solve import tick_makespan_bound
from cpsched.remat.replay import check_plan
from cpsched.remat.rewrite import plan_to_graph
from cpsched.remat.skeleton import Evict, Regen, Skeleton, materialize

__all__ = ["METHOD", "Plan", "TickModel", "hint_plan", "plan_of", "read_back", "value_of"]

METHOD = "cp-joint"
# ticks for the whole work: coarser than the overlap model's (100,000 and 200 per op), as
# the gap decisions make fine time domains slow to propagate (a 5-op case proves its budget
# infeasible in 0.1 s at 5,000 ticks and 8 s at 100,000); the rounding slack is reported
# and taken off the bound
RESOLUTION = 5_000
TICKS_PER_OP = 50


@dataclass
class Plan:
    """A plan of one of the methods: skeleton, active candidates per scenario, timings."""

    name: str
    skeleton: Skeleton
    active: list[list[int]]
    timing: list[PlanTiming]

    def makespan(self) -> np.ndarray:
        return np.array([t.makespan for t in self.timing])

    def peak(self) -> np.ndarray:
        return np.array([t.peak for t in self.timing], dtype=np.int64)


def plan_of(prob: JointProblem, name: str, skeleton: Skeleton, active) -> Plan:
    """``skeleton`` with ``active`` candidates per scenario, timed in every scenario."""
    timing = []
    for s in range(len(prob.scenarios)):
        if not len(active[s]) and len(skeleton.order) == prob.graph.n_ops:
            timing.append(time_order(prob, skeleton.order, s))  # an order: no graph to write
            continue
        ev = materialize(prob.graph, skeleton, active[s])
        timing.append(time_plan(prob, ev, s))
    return Plan(name, skeleton, [list(a) for a in active], timing)


class TickModel:
    """The joint model of ``prob`` at tick resolution: the tick durations, the rounding slack
    (``over``: how much slower the true times can be than the ticks say, taken off the
    solver's bound; ``under``: how much faster, for the budget-free bound ``lb_free`` as a
    cut on the tick makespan), the horizon and the overlap model's analytic bound as a cut.
    ``build`` makes the model (whole, or a window of an order) from a hint plan; ``read``
    decodes and replays a solution."""

    def __init__(
        self,
        prob: JointProblem,
        scenario_objective: str,
        resolution: int = RESOLUTION,
        lb_free: np.ndarray | None = None,
    ):
        base = prob.base
        C = len(prob.scenarios)
        self.prob, self.C, self.lb_free = prob, C, lb_free
        self.scenario_objective = scenario_objective
        self.ref = ref = np.maximum(base.dur.sum(axis=1), 1e-30)
        d, t, tick, over = copy_durations(
            base, "exact", scenario_objective, ref, resolution, per_op=TICKS_PER_OP
        )
        d1 = floor1(d)
        over = over + (d1 - d).sum(axis=1) * tick
        host = np.stack([ticks(prob.host_time[c], tick[c], False) for c in range(C)])
        host = host.reshape(C, -1)
        gap = prob.gap_buffers
        a_of = prob.graph.buffer_def
        # a clone or a host copy rounds its time too: the slack covers every one that may run
        for b in gap:
            if prob.remat_buffers[b]:
                a = int(a_of[b])
                over = over + np.maximum(d1[:, a] * tick - base.dur[:, a], 0)
            if prob.evict_buffers[b]:
                over = over + 2 * np.maximum(host[:, b] * tick - prob.host_time[:, b], 0)
        # and the other way: how much faster than the true times the tick model can be
        # (times rounded down), for the budget-free bound as a cut on the tick makespan: a
        # tick plan's true makespan is at most its tick makespan plus every rounding-down of
        # what may run
        under = np.maximum(base.dur - d1 * tick[:, None], 0).sum(axis=1)
        if base.P:
            under = under + np.maximum(base.ttime - t * tick[:, None], 0).sum(axis=1)
        for b in gap:
            if prob.remat_buffers[b]:
                a = int(a_of[b])
                under = under + np.maximum(base.dur[:, a] - d1[:, a] * tick, 0)
            if prob.evict_buffers[b]:
                under = under + 2 * np.maximum(prob.host_time[:, b] - host[:, b] * tick, 0)
        serial = d1.sum(axis=1) + t.sum(axis=1)
        for b in gap:
            serial = serial + d1[:, a_of[b]] * int(prob.remat_buffers[b]) + 2 * host[:, b]
        self.horizon = serial.astype(np.int64) + 1
        self.lb_t = tick_makespan_bound(base, d1, t)
        self.d1, self.t, self.host, self.tick, self.over, self.under = (
            d1,
            t,
            host,
            tick,
            over,
            under,
        )

    def build(self, window, hint: Plan | None) -> tuple[JointVars, Any]:
        """The model (``window``: (order, a, b), positions a..b of ``order`` free, the rest
        fixed; None: the whole model), hinted from ``hint``; and the objective's
        coefficients."""
        J = build(self.prob, self.d1, self.t, self.host, self.horizon, window=window)
        for c in range(self.C):
            J.m.add(J.V.M[c] >= int(math.ceil(self.lb_t[c] - 1e-6)))
            if self.lb_free is not None:  # one tick of margin for float rounding
                cut = int(math.floor((float(self.lb_free[c]) - self.under[c]) / self.tick[c])) - 1
                if cut > 0:
                    J.m.add(J.V.M[c] >= cut)
        _, coef = O.makespan(J, self.scenario_objective, self.tick, self.ref)
        if hint is not None:
            hint_plan(J, hint, self.d1, self.t, self.host)
        return J, coef

    def read(self, J: JointVars, solver) -> Plan:
        """The solution as a plan, each scenario's replayed against its budget (raises
        ``ScheduleError``)."""
        prob = self.prob
        skeleton, active = read_back(J, solver)
        for c in range(self.C):
            ev = materialize(prob.graph, skeleton, active[c])
            check_plan(prob.graph, ev, prob.scenarios.only(c), int(prob.budget[c]), what=METHOD)
        return plan_of(prob, METHOD, skeleton, active)

    def about(self, J: JointVars, hint: Plan | None) -> dict[str, Any]:
        """The model's size, ticks and rounding slack, as ``info['model']`` reports them."""
        return {
            **{k: v for k, v in J.stats.items() if not k.startswith("memory_intervals_")},
            "tick": [float(x) for x in self.tick],
            "rounding_slack": [float(x) for x in self.over],
            "hint": hint.name if hint is not None else None,
        }

    def bounds(self, run: runtime.Run, coef) -> tuple[np.ndarray | None, float | None]:
        """The solver's bound on the true makespan (one scenario: per scenario; several,
        weighted: on the weighted makespan), the rounding slack taken off."""
        if not run.solved:
            return None, None
        solver = run.solver
        if self.C == 1:
            return np.array(
                [max(0.0, solver.best_objective_bound * self.tick[0] - self.over[0])]
            ), None
        if self.scenario_objective == "weighted":
            w = self.prob.scenarios.weights
            # the objective is sum(coef_k * M_k) with coef proportional to w_k * tick_k
            scale = float((w * self.tick)[0] / coef[0]) if coef[0] else 0.0
            return None, max(0.0, solver.best_objective_bound * scale - float(w @ self.over))
        return None, None

    def claimed(self, J: JointVars, solver) -> list[float]:
        """The model's makespan per scenario, in time units."""
        return [float(solver.value(J.V.M[c]) * self.tick[c]) for c in range(self.C)]


def read_back(J: JointVars, solver) -> tuple[Skeleton, list[list[int]]]:
    """The solution as a skeleton: the main order by start time, every clone and host round
    trip at the step of the first main op that starts at or after it."""
    V, prob = J.V, J.prob
    g = prob.graph
    order = V.order_from(solver)
    n = len(order)
    cands: list[Regen | Evict] = []
    index: dict[Regen | Evict, int] = {}
    active: list[list[int]] = []

    def add(cand) -> int:
        if cand not in index:
            index[cand] = len(cands)
            cands.append(cand)
        return index[cand]

    for c in range(J.C):
        st = np.array([solver.value(V.s[c][i]) for i in order], dtype=np.int64)
        st = np.maximum.accumulate(st) if n else st

        def step(x: int, st=st) -> int:
            return int(np.searchsorted(st, x, side="left"))

        act: list[int] = []
        clones = []
        backs = []
        for b in prob.gap_buffers:
            if b in J.remat and solver.boolean_value(J.remat[b][c]):
                clones.append((solver.value(J.clone_start[b][c]), b))
            if b in J.evict and solver.boolean_value(J.evict[b][c]):
                backs.append((solver.value(J.back_start[b][c]), b))
        sub: dict[int, int] = {}
        for r, b in sorted(clones):
            k = step(r)
            sub[k] = sub.get(k, 0) + 1
            act.append(add(Regen(int(g.buffer_def[b]), k, sub[k] - 1)))
        rank: dict[int, int] = {}
        for p, b in sorted(backs):
            k = step(p)
            rank[k] = rank.get(k, 0) + 1
            o = solver.value(J.out_start[b][c])
            f = solver.value(J.drop[b][c])
            act.append(add(Evict(int(b), step(o), step(f), k, rank[k] - 1)))
        active.append(act)
    return Skeleton(tuple(order), tuple(cands)), active


def hint_plan(J: JointVars, plan: Plan, d: np.ndarray, t: np.ndarray, host: np.ndarray) -> None:
    """Every main variable from the tick timeline of ``plan`` (the plan graph simulated with
    the model's tick durations)."""
    prob, V, m = J.prob, J.V, J.m
    g = prob.graph
    base = prob.base
    op_index = {name: i for i, name in enumerate(g.op_names)}
    buf_index = {name: b for b, name in enumerate(g.buffer_names)}
    p_of = {int(a): p for p, a in enumerate(base.starts)}
    pairs: list[tuple[Any, Any]] = []
    main_pos = None
    rd = readers(prob)
    a_of = g.buffer_def
    size_of: dict[tuple[int, int, str], int] = {}
    for c in range(J.C):
        ev = materialize(g, plan.skeleton, plan.active[c])
        pg, porder = plan_to_graph(g, ev)
        n2 = pg.n_ops
        op = np.zeros((1, n2))
        tr: dict[int, np.ndarray] = {}
        orig = np.full(n2, -1, dtype=np.int64)
        clone = np.zeros(n2, dtype=bool)
        copy_buf: dict[int, tuple[str, int]] = {}
        for i in range(n2):
            name = pg.op_names[i]
            k = op_index.get(pg.attrs(i).get("remat_of", name), -1)
            if k >= 0 and pg.opcodes[i] == g.opcodes[k]:
                orig[i] = k
                clone[i] = "remat_of" in pg.attrs(i)
                op[0, i] = d[c, k]
                if k in p_of:
                    tr[i] = np.array([float(t[c, p_of[k]])])
                continue
            for tag in (".evict", ".prefetch"):
                if tag in name:
                    bname = name[: name.rindex(tag)]
                    if bname in buf_index:
                        b = buf_index[bname]
                        copy_buf[i] = (tag, b)
                        if name.endswith(".start"):
                            tr[i] = np.array([float(host[c, b])])
        tl = simulate_timeline(
            pg,
            porder,
            Costs(op, tr),
            prob.scenarios.only(c),
            comm_streams=base.comm_streams,
            validate=False,
        )[0]
        start = np.rint(tl.start).astype(np.int64)
        end = np.rint(tl.end).astype(np.int64)
        begin = {int(a): int(round(x)) for a, x in zip(tl.pair_start, tl.transfer_begin)}
        s_main = np.zeros(g.n_ops, dtype=np.int64)
        e_main = np.zeros(g.n_ops, dtype=np.int64)
        for i in range(n2):
            if orig[i] >= 0 and not clone[i]:
                s_main[orig[i]] = start[i]
                e_main[orig[i]] = end[i]
        for i in range(g.n_ops):
            pairs.append((V.s[c][i], int(s_main[i])))
        pairs.append((V.M[c], int(math.ceil(tl.makespan))))
        if c == 0:
            main_pos = np.argsort(np.argsort(s_main, kind="stable"), kind="stable")
        second: dict[int, int] = {}
        clone_start: dict[int, int] = {}
        for i in range(n2):
            if clone[i]:
                outs = [b for b in g.defines(int(orig[i])) if int(b) in J.remat]
                for b in outs:
                    clone_start[int(b)] = int(start[i])
        drops: dict[int, int] = {}
        outs_t: dict[int, int] = {}
        for i, (tag, b) in copy_buf.items():
            if tag == ".evict" and pg.op_names[i].endswith(".start"):
                outs_t[b] = begin.get(i, int(start[i]))
            elif tag == ".evict":
                drops[b] = int(start[i])
            elif pg.op_names[i].endswith(".start"):
                second[b] = begin.get(i, int(start[i]))
        for b in prob.gap_buffers:
            on_r = b in clone_start and b in J.remat
            on_e = b in second and b in J.evict and b in outs_t
            if b in J.remat:
                pairs.append((J.remat[b][c], on_r))
                pairs.append((J.clone_start[b][c], clone_start.get(b, 0)))
            if b in J.evict:
                pairs.append((J.evict[b][c], on_e))
                pairs.append((J.out_start[b][c], outs_t.get(b, 0)))
                pairs.append((J.back_start[b][c], second.get(b, 0)))
            a = int(g.buffer_def[b])
            cut = clone_start[b] if on_r else (outs_t[b] if on_e else None)
            # every reader that runs (main ops, and the clones in the plan) with its span
            spans = [(int(s_main[r[1]]), int(e_main[r[1]]), r) for r in rd[b] if r[0] == "op"]
            spans += [
                (clone_start[r[1]], clone_start[r[1]] + int(d[c, a_of[r[1]]]), r)
                for r in rd[b]
                if r[0] == "clone" and r[1] in clone_start
            ]
            early_end = max([int(e_main[a])] + [e for st, e, _ in spans if cut is None or st < cut])
            drop = drops.get(b, early_end) if on_e else early_end
            pairs.append((J.drop[b][c], drop))
            second_end = max((e for st, e, _ in spans if cut is not None and st >= cut), default=0)
            pairs.append((J.second_end[b][c], second_end))
            for r in rd[b]:
                if (b, r) not in J.late:
                    continue
                st = s_main[r[1]] if r[0] == "op" else clone_start.get(r[1])
                late = cut is not None and st is not None and st >= cut
                pairs.append((J.late[b, r][c], bool(late)))
            for kind, on, first in (
                ("remat", on_r, clone_start.get(b)),
                ("evict", on_e, second.get(b)),
            ):
                size_of[(c, b, kind)] = (
                    max(0, second_end - first) if on and first is not None else 0
                )
        for cc, end, users in J.group_ends:
            if cc == c:
                pairs.append((end, int(max(e_main[u] for u in users))))
        for b, ends in J.ends.items():
            readers_end = [int(e_main[r[1]]) for r in rd[b] if r[0] == "op"]
            readers_end += [
                clone_start[r[1]] + int(d[c, a_of[r[1]]])
                for r in rd[b]
                if r[0] == "clone" and r[1] in clone_start
            ]
            pairs.append((ends[c], max(readers_end, default=0)))
        for cc, b, size, kind in J.second_sizes:
            if cc == c:
                pairs.append((size, size_of.get((c, b, kind), 0)))
        # spans (start, end) of the overlap variables: their lengths from the values above
        known = {
            v.index: val for v, val in pairs if hasattr(v, "index") and not isinstance(val, bool)
        }
        for size, st_e, en_e in V.sizes:
            try:
                pairs.append((size, max(0, value_of(en_e, known) - value_of(st_e, known))))
            except KeyError:
                continue
    if main_pos is not None:
        for (i, j), lit in V.lit.items():
            pairs.append((lit, bool(main_pos[i] < main_pos[j])))
    runtime.set_hints(m, pairs)


def value_of(e, known: dict[int, int]) -> int:
    """Value of a constant or linear expression from known variable values (KeyError if a
    variable is unknown)."""
    if isinstance(e, (int, np.integer)):
        return int(e)
    f = FlatIntExpr(e)
    return sum(int(c) * known[v.index] for v, c in zip(f.vars, f.coeffs)) + int(f.offset)
