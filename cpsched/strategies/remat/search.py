"""Neighbourhood searches of cp-remat over a plan's clones on its order: exact repairs in
the segment model (``cpsched.cp.remat.segments``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence, Set
from typing import Any

import numpy as np

from cpsched.analysis.memory import positions
from cpsched.core.graph import Graph
from cpsched.cp import runtime
from cpsched.cp.remat.segments import as_regens, build_segment_model, candidate_steps, solve_model
from cpsched.cp.runtime import Clock, SolverConfig
from cpsched.remat.policy import recomputable_ops

__all__ = ["lns_segments"]


def lns_segments(
    graph: Graph,
    order: Sequence[int],
    budgets: np.ndarray,
    sizes: np.ndarray,
    trans: np.ndarray,
    cost: np.ndarray,
    start: Sequence[tuple[int, int, float]],
    *,
    hot: np.ndarray | None = None,
    cfg: SolverConfig | None = None,
    round_limit: float = 5.0,
    extra_ops: int = 100,
    chain_depth: int = 0,
    fits: Callable[[list[tuple[int, int, float]]], bool] | None = None,
) -> tuple[list[tuple[int, int, float]], dict[str, Any]]:
    """Large-neighbourhood search over a plan's clones with exact repairs.

    Each round frees the clones of a random share (30-100 %) of the ops the plan clones
    plus ``extra_ops`` random other ops that have a candidate, keeps every other clone,
    and solves that neighbourhood of the segment model to optimality (or for
    ``round_limit`` s) from the current plan; the plan it returns is kept when it costs
    no more and ``fits(regens)`` (the replay check) holds. The greedy search
    (``heuristics.remat.lns_remat``) repairs by walking the program, so it stalls once no
    single window can be re-walked better (RLG n1000 at 486,895: 1 improvement in 749
    rounds); exact repairs trade clones between ops anywhere in the program.

    ``cfg``: ``time_limit`` for the whole search, the solver options of every round (round
    ``k`` with seed ``cfg.seed + k``). In deterministic mode the rounds' limits are work and
    the search ends when they add up to the time limit, so it repeats exactly.

    Returns the best clones (op, step, sub) and ``{'rounds', 'improved'}``."""
    cfg = SolverConfig(time_limit=60.0) if cfg is None else cfg
    clock = Clock.of(cfg)
    pos = positions(order, graph.n_ops)

    def price(keys: Set[tuple[int, int]]) -> float:
        return float(sum(cost[v] for v, _ in keys))

    inc = {(int(v), int(q)) for v, q, _ in start}
    best = price(inc)
    data = (graph, order, budgets, sizes, trans, cost)
    clonable = recomputable_ops(graph)
    pool = sorted(v for v, qs in candidate_steps(graph, order, clonable, 0, hot).items() if qs)
    rng = np.random.default_rng(cfg.seed)
    rounds = improved = 0
    while inc and clock.left() > 1.0 and not runtime.interrupted():
        rounds += 1
        mine = sorted({v for v, _ in inc})
        k = max(1, int(round(len(mine) * rng.uniform(0.3, 1.0))))
        ops = set(rng.choice(mine, size=k, replace=False).tolist())
        if pool:
            ops |= set(rng.choice(pool, size=min(extra_ops, len(pool)), replace=False).tolist())
        sm = build_segment_model(*data, chain_depth=chain_depth, ops=ops, fixed=inc, hot=hot)
        sm.hint(inc)
        t_round = min(round_limit, clock.left())
        run = solve_model(sm, t_round, cfg.with_(seed=cfg.seed + rounds, log=False))
        clock.spend(t_round)
        if not run.solved:
            continue
        new = {k for k in inc if k[0] not in ops} | sm.chosen(run.solver)
        c = price(new)
        if new == inc or c > best + 1e-9:
            continue
        if fits is not None and not fits(as_regens(pos, new)):
            continue
        if c < best - 1e-9:
            improved += 1
        inc, best = new, c
    return as_regens(pos, inc), {"rounds": rounds, "improved": improved}
