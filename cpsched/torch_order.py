"""cpsched's order handed back to PyTorch Inductor (optional extra: ``cpsched[torch]``).

    import cpsched
    with cpsched.inductor_order(time_limit=10) as run:      # method="cp" by default
        compiled = torch.compile(model)
        compiled(x).sum().backward()
    run.graphs   # per graph: Inductor's order and estimate, cpsched's, the order Inductor ran

While the context is active, every graph Inductor schedules is ordered by cpsched: after
fusion, Inductor's own scheduler-pass hook (``torch._inductor.config._post_fusion_custom_pass``)
reads the fused nodes into a cpsched graph (the same conversion as ``from_torch``), schedules
it with ``method`` (default ``cp``: least peak, with a proven bound; a cpsched heuristic or
``inductor-default`` also works), and returns the nodes in that order. Inductor's own
peak-memory pass (``config.reorder_for_peak_memory``) is turned off for the duration so that it
does not reorder them again; the FX graph cache is off, so every graph is scheduled (a cached
kernel would bypass the pass). Everything else is Inductor's usual compile: kernels are built,
and the program computes what eager mode computes.

For each graph the context records (``run.graphs``): Inductor's order and estimated peak (its
portfolio on the same nodes), cpsched's order, peak and bound, Inductor's
``estimate_peak_memory`` of cpsched's order, and the order Inductor's scheduler finally had
(observed when it is built). Inductor's estimates are made as Inductor makes them for the
order it keeps: planning info prepared for that order. That sizes a freeable graph input by
the bytes its last reader reads, so the inputs whose readers read different bytes keep the
last reader they have in Inductor's order (``readers.torch_graph.pin_last_readers``), and
Inductor's estimate of cpsched's order is cpsched's peak. torch is imported only when the
context is entered.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from cpsched import api
from cpsched.readers.torch_frontend import SizeSymbols, snapshot
from cpsched.readers.torch_graph import graph_from_torch_dict, pin_last_readers


@dataclass
class HandedBack:
    """One graph Inductor scheduled while ``inductor_order`` was active."""

    name: str
    record: dict[str, Any]  # Inductor's view (``snapshot``), before ``pin_last_readers``
    order: list[str]  # cpsched's order of the scheduler nodes
    peak: int  # cpsched's simulated peak of it (bytes, at the size hints)
    bound: int | None
    status: str
    inductor_order: list[str]  # what Inductor's portfolio would have kept
    inductor_peak: int
    inductor_estimate_of_order: int = -1  # Inductor's estimate_peak_memory of ``order``
    final_order: list[str] = field(default_factory=list)  # the order Inductor ended with
    pinned_inputs: int = 0  # inputs whose last reader was kept (``pin_last_readers``)


@dataclass
class InductorOrder:
    """What ``inductor_order`` recorded: one ``HandedBack`` per graph, in compile order."""

    method: str
    options: Mapping[str, Any]
    graphs: list[HandedBack] = field(default_factory=list)


def _order_nodes(nodes, run: InductorOrder):
    from torch._inductor import memory
    from torch._inductor.virtualized import V

    sched = nodes[0].scheduler if nodes else None
    if sched is None:
        return nodes
    graph_inputs = list(V.graph.graph_inputs.keys())
    graph_outputs = list(V.graph.get_output_names())
    from torch.utils._ordered_set import OrderedSet

    inputs, outputs = OrderedSet(graph_inputs), OrderedSet(graph_outputs)
    symbols = SizeSymbols({})
    rec = snapshot(nodes, sched.name_to_buf, sched.name_to_fused_node, inputs, outputs, symbols)
    rec["symbols"] = symbols.used  # a symbolic graph is ordered at the hints, as Inductor does
    peaks = rec["inductor"]["peaks"]
    best = min(("baseline", "lpmf", "bfs", "dfs"), key=lambda k: peaks[k])
    by_name = {n.get_name(): n for n in nodes}

    def estimate(names: list[str]) -> int:
        """Inductor's estimate of an order, its planning info made for that order."""
        ordered = [by_name[name] for name in names]
        _, freeable = memory.prepare_planning_info(
            ordered, sched.name_to_buf, sched.name_to_fused_node, inputs, outputs
        )
        return int(memory.estimate_peak_memory(ordered, freeable, outputs)[0])

    rec["inductor"]["order"] = rec["inductor"]["orders"][best]
    rec["inductor"]["peak"] = estimate(rec["inductor"]["order"])
    rec.update(format="cpsched-torch-graph", version=1, name=f"graph{len(run.graphs)}")
    # a freeable input's size in Inductor's estimate is its last reader's bytes: keep the
    # last readers of Inductor's order, so that Inductor estimates cpsched's order as cpsched
    pinned_rec, pinned = pin_last_readers(rec)
    g = graph_from_torch_dict(pinned_rec)
    res = api.schedule(g, run.method, **dict(run.options))
    order = [name for name in res.order_names() if name in by_name]
    out = [by_name[name] for name in order]
    scen = res.scenarios.names[0]
    run.graphs.append(
        HandedBack(
            name=V.graph.name or rec["name"],
            record=rec,
            order=order,
            peak=int(res.peak[scen]),
            bound=int(res.bound[scen]) if res.bound else None,
            status=res.status,
            inductor_order=list(rec["inductor"]["order"]),
            inductor_peak=int(rec["inductor"]["peak"]),
            inductor_estimate_of_order=estimate(order),
            pinned_inputs=pinned,
        )
    )
    return out


@contextlib.contextmanager
def inductor_order(method: str = "cp", **options: Any) -> Iterator[InductorOrder]:
    """While active, ``torch.compile`` (Inductor) runs every graph in ``method``'s order.

    ``options`` go to ``cpsched.schedule`` (``time_limit``, ``workers``, ``seed``, ...).
    Yields an ``InductorOrder`` that collects one ``HandedBack`` per graph.
    """
    try:
        import torch
        import torch._inductor.config as inductor_config
        from torch._inductor import graph as inductor_graph
    except ImportError:
        raise ImportError("inductor_order needs torch: pip install 'cpsched[torch]'") from None
    run = InductorOrder(method, dict(options))
    original_update = inductor_graph.GraphLowering._update_scheduler
    first_pending = [0]

    def observe(self_graph):
        original_update(self_graph)
        final = [n.get_name() for n in self_graph.scheduler.nodes]
        for h in run.graphs[first_pending[0] :]:
            if not h.final_order and set(final) == set(h.order):
                h.final_order = final
        first_pending[0] = len(run.graphs)

    def custom_pass(nodes):
        return _order_nodes(nodes, run)

    inductor_graph.GraphLowering._update_scheduler = observe
    try:
        with (
            inductor_config.patch(
                _post_fusion_custom_pass=custom_pass,
                reorder_for_peak_memory=False,
                fx_graph_cache=False,
                fx_graph_remote_cache=False,
            ),
            torch._functorch.config.patch(enable_autograd_cache=False),
        ):
            yield run
    finally:
        inductor_graph.GraphLowering._update_scheduler = original_update


__all__ = ["inductor_order", "InductorOrder", "HandedBack"]
