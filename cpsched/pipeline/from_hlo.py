"""Collective-permute placement in the loop bodies of a pipeline program's HLO, against XLA's.

A pipeline written by the user (a ``lax.scan`` over ticks whose body runs the stage and
``ppermute``s activations round the ring, as Praxis' circular pipeline does) compiles to a
while loop whose body holds the collective-permutes. XLA keeps the user's schedule and only
places the send/receive; this is that placement, made by ``cp-overlap``:

1. every while body of the module that holds a collective-permute is converted on its own
   (``HloConverter``), its synchronous collectives split into start/done pairs
   (``convert_sync_collectives``; a pair's start sits where the collective was, its done
   right after, so XLA's order of the body is the start/done pair back to back);
2. the body is ordered by ``cp-overlap`` (``cpsched.cp.overlap``): start early, done late,
   minimum makespan of the body under the cost model, with the body's peak at most the
   budget (default: XLA's order's peak of the body, so cpsched never uses more memory than
   XLA does for the body);
3. XLA's order, cpsched's model of XLA's latency-hiding scheduler (``lhs``, what XLA's GPU
   pipeline would run on the split body, under the same memory limit) and cp-overlap's
   order go through the same timeline (``cpsched.cost.timeline``): per pair the
   distance (instructions between start and done) and the transfer time hidden behind
   compute, and the body's exposed communication per iteration and over the loop's trip
   count (XLA's ``known_trip_count``);
4. the module is written back with each split collective as XLA's
   ``collective-permute-start``/``-done`` at the positions of cpsched's order
   (``cpsched.writers.hlo.async_module_text``), read back and checked (every body's order
   valid, the pairs real async pairs, peaks re-simulated) before anything is returned.

Only the body is reordered: moving a transfer across iterations (XLA's CollectivePipeliner)
changes the loop's state and is not done here.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from cpsched.analysis.schedule import make_schedule
from cpsched.analysis.validate import validate_schedule
from cpsched.core.errors import InputError, ScheduleError
from cpsched.core.graph import Graph
from cpsched.core.scenarios import Scenarios, static
from cpsched.core.transforms import convert_sync_collectives
from cpsched.core.units import format_bytes_exact
from cpsched.cost.model import estimate, load_device
from cpsched.cost.timeline import Timeline, simulate_timeline
from cpsched.cp.runtime import SolverConfig
from cpsched.heuristics.lhs import lhs
from cpsched.readers.hlo.convert import (
    HloConverter,
    call_contexts,
    module_graphs,
    read_hlo_module,
)
from cpsched.readers.hlo.parser import HloModule, parse_hlo_text
from cpsched.readers.hlo.verify import verify_module
from cpsched.strategies.options import solver_options
from cpsched.strategies.overlap.method import solve_overlap
from cpsched.writers.hlo import AsyncHlo, async_module_text, verify_async_module, write_hlo

PERMUTES = ("collective-permute", "collective-permute-start")


@dataclass
class PairPlacement:
    """One collective-permute of a body: XLA's placement against cpsched's."""

    collective: str  # the instruction's name in the input
    transfer: float  # estimated transfer time (cost model unit)
    xla_distance: int  # instructions between start and done in XLA's order
    xla_hidden: float  # transfer time overlapped with compute in XLA's order
    lhs_distance: int  # the same for cpsched's model of XLA's latency-hiding scheduler
    lhs_hidden: float
    cp_distance: int
    cp_hidden: float

    def to_dict(self) -> dict:
        return dict(vars(self))


@dataclass
class BodyPlacement:
    body: str  # computation name
    loop: str  # the while instruction that runs it
    trip_count: int | None  # XLA's known_trip_count (None: unknown)
    n_ops: int  # ops of the body after the split
    unit: str  # the cost model's time unit
    budget: int  # bytes the body's peak may reach
    xla_peak: int
    lhs_peak: int
    cp_peak: int
    xla_makespan: float  # one iteration
    lhs_makespan: float
    cp_makespan: float
    xla_exposed: float  # exposed communication of one iteration
    lhs_exposed: float
    cp_exposed: float
    status: str  # cp-overlap's status
    pairs: list[PairPlacement] = field(default_factory=list)
    cp_order: list[str] = field(default_factory=list)  # op names of the split body

    def total(self, per_iteration: float) -> float | None:
        return None if self.trip_count is None else per_iteration * self.trip_count

    def to_dict(self) -> dict:
        d = {k: v for k, v in vars(self).items() if k not in ("pairs", "cp_order")}
        d["pairs"] = [p.to_dict() for p in self.pairs]
        for who in ("xla", "lhs", "cp"):
            d[f"{who}_exposed_total"] = self.total(d[f"{who}_exposed"])
        return d


@dataclass
class PipelineHloReport:
    path: str | None
    device: str
    bodies: list[BodyPlacement]
    text: str  # the module with cpsched's placement, async pairs written out
    read_back: str  # what the read-back check found
    seconds: float

    def to_dict(self) -> dict:
        return {
            "path": self.path,
            "device": self.device,
            "bodies": [b.to_dict() for b in self.bodies],
            "read_back": self.read_back,
            "seconds": round(self.seconds, 3),
        }


def permute_loops(module: HloModule) -> list[tuple[str, str, int | None]]:
    """(body, while instruction, trip count) for every while body that holds a
    collective-permute, in module order."""
    ctx = call_contexts(module)
    out = []
    seen: set[str] = set()
    for comp in module.computations:
        for ins in comp.instructions:
            if ins.opcode != "while":
                continue
            body = dict(ins.called()).get("body")
            if body is None or body in seen or ctx.get(body) != "sequential":
                continue
            if any(i.opcode in PERMUTES for i in module.by_name[body].instructions):
                seen.add(body)
                out.append((body, ins.name, _trip_count(ins)))
    return out


def _trip_count(ins) -> int | None:
    cfg = ins.backend_config()
    ktc = cfg.get("known_trip_count") if isinstance(cfg, dict) else None
    try:
        return int(ktc["n"]) if isinstance(ktc, dict) else None
    except (KeyError, TypeError, ValueError):
        return None


def _timeline(g: Graph, order, costs, sc: Scenarios) -> Timeline:
    return simulate_timeline(g, order, costs, sc)[0]


def _pairs(tl: Timeline) -> dict[str, dict]:
    """Collective-permute rows of a timeline by the input instruction they come from."""
    out = {}
    for r in tl.pair_rows():
        if r["class"] != "collective:collective-permute":
            continue
        attrs = tl.graph.op_attrs.get(tl.graph.op_index(r["start"]), {})
        out[str(attrs.get("converted_from", r["done"] or r["start"]))] = r
    return out


def place_body(
    module: HloModule,
    body: str,
    loop: str,
    trip_count: int | None,
    *,
    device: str = "h100",
    budget: int | None = None,
    cfg: SolverConfig | None = None,
) -> tuple[BodyPlacement, Graph]:
    """One body: XLA's order and cp-overlap's (``cfg``: its time limit and solver options),
    both through the same timeline."""
    cfg = SolverConfig() if cfg is None else cfg
    g = convert_sync_collectives(HloConverter(module).graph(body))
    if g.dims:
        raise InputError(f"{body}: symbolic sizes; the loop-body report needs a concrete module")
    sc = static()
    if g.original_order is None:
        raise InputError(f"{body}: the module is not scheduled; XLA's order of the body is unknown")
    xla_order = list(g.original_order)
    xla = make_schedule(g, xla_order, "xla", sc)
    cap = int(xla.peak_bytes[0]) if budget is None else int(budget)
    costs = estimate(g, load_device(device), sc)
    # XLA's GPU pipeline would run its latency-hiding scheduler on the split body: cpsched's
    # model of it (``lhs``) under the same memory limit is the second reference
    lhs_s = make_schedule(g, lhs(g, sc, memory_limit=cap, device=device), "lhs", sc)
    cp = solve_overlap(
        g,
        sc,
        budget=[cap],
        objective="makespan",
        device=device,
        hint=xla_order,
        time_limit=cfg.time_limit,
        **solver_options(cfg),
    )
    # the solver's claim is checked by the validator, byte for byte, like every schedule
    cps = make_schedule(g, cp.order, "cp-overlap", sc, status=cp.status)
    if int(cps.peak_bytes[0]) > cap:
        raise InputError(f"{body}: no order within the budget of {format_bytes_exact(cap)}")
    tx, tl, tc = (_timeline(g, x.order, costs, sc) for x in (xla, lhs_s, cps))
    px, pl, pc = _pairs(tx), _pairs(tl), _pairs(tc)
    pairs = [
        PairPlacement(
            name,
            float(px[name]["transfer_time"]),
            int(px[name]["distance"]),
            float(px[name]["overlapped"]),
            int(pl[name]["distance"]),
            float(pl[name]["overlapped"]),
            int(pc[name]["distance"]),
            float(pc[name]["overlapped"]),
        )
        for name in px
        if name in pc and name in pl
    ]
    placement = BodyPlacement(
        body,
        loop,
        trip_count,
        g.n_ops,
        tx.unit,
        cap,
        int(xla.peak_bytes[0]),
        int(lhs_s.peak_bytes[0]),
        int(cps.peak_bytes[0]),
        float(tx.makespan),
        float(tl.makespan),
        float(tc.makespan),
        float(tx.exposed_comm),
        float(tl.exposed_comm),
        float(tc.exposed_comm),
        cps.status,
        pairs,
        [g.op_names[i] for i in cps.order],
    )
    return placement, g


def place_permutes(
    source,
    *,
    device: str = "h100",
    budget: int | None = None,
    time_limit: float = 10.0,
    workers: int = 2,
    seed: int = 0,
    deadline: float | None = None,
) -> PipelineHloReport:
    """Every collective-permute loop body of an HLO module (a path, or a parsed module)
    placed by cp-overlap against XLA's order; the written module read back and checked.
    ``time_limit`` is shared among the bodies, none of which runs past ``deadline`` (a
    ``time.perf_counter()`` instant)."""
    t0 = time.perf_counter()
    module = source if isinstance(source, HloModule) else read_hlo_module(str(source))
    verify_module(module)
    loops = permute_loops(module)
    if not loops:
        raise InputError(
            "no while loop body with a collective-permute: not a ppermute pipeline program",
            path=module.path,
        )
    bodies: list[BodyPlacement] = []
    graphs: list[Graph] = []
    for k, (body, loop, trips) in enumerate(loops):
        end = t0 + time_limit if deadline is None else min(t0 + time_limit, deadline)
        share = (end - time.perf_counter()) / (len(loops) - k)
        if deadline is None:
            share = max(0.5, share)
        placement, g = place_body(
            module,
            body,
            loop,
            trips,
            device=device,
            budget=budget,
            cfg=SolverConfig(max(0.01, share), workers, seed, deadline=deadline),
        )
        bodies.append(placement)
        graphs.append(g)
    text, note = write_placements(module, bodies, graphs)
    return PipelineHloReport(module.path, device, bodies, text, note, time.perf_counter() - t0)


def write_placements(
    module: HloModule, bodies: list[BodyPlacement], graphs: list[Graph]
) -> tuple[str, str]:
    """The module with every body in cpsched's order, its split collectives written as
    start/done pairs (a body whose collective-permutes were async already is re-sequenced
    as it is); each body read back from the final text: scheduled, order valid, pairs real
    async pairs, peak as simulated and within the budget."""
    current = module
    written: list[AsyncHlo | None] = []
    for b, g in zip(bodies, graphs):
        split = any("converted_from" in a for a in g.op_attrs.values())
        if split:
            index = {n: i for i, n in enumerate(g.op_names)}
            w = async_module_text(current, g, [index[n] for n in b.cp_order], computation=b.body)
            text = w.text
        else:
            w = None
            text = write_hlo(current, {b.body: b.cp_order})
        written.append(w)
        current = parse_hlo_text(text)
    text = current.text
    back = module_graphs(current)
    n_pairs = 0
    for b, w in zip(bodies, written):
        if w is not None:
            w.text = text
            _g, peaks = verify_async_module(text, w, static())
        else:
            g = back[b.body]
            if g.original_order is None or [g.op_names[i] for i in g.original_order] != b.cp_order:
                raise ScheduleError(f"{b.body}: the written body is not in cpsched's order")
            peaks = validate_schedule(g, g.original_order, static(), what="written loop body")
        if int(np.max(peaks)) > b.budget:
            raise ScheduleError(
                f"{b.body}: the written body's peak {format_bytes_exact(np.max(peaks))} is over the budget "
                f"{format_bytes_exact(b.budget)}"
            )
        n_pairs += len(b.pairs)
    verify_module(current)
    return text, (
        f"{n_pairs} collective-permute(s) in {len(bodies)} loop bod"
        f"{'y' if len(bodies) == 1 else 'ies'} written as start/done pairs; read back: "
        "orders valid, pairs async, peaks within the budget"
    )


__all__ = [
    "PairPlacement",
    "BodyPlacement",
    "PipelineHloReport",
    "permute_loops",
    "place_body",
    "place_permutes",
    "write_placements",
]
