"""From a PyTorch program to cpsched graphs: what Inductor's memory pass schedules
(optional extra: ``cpsched[torch]``; torch is imported only when a function here is called).

``from_torch(fn_or_module, *example_inputs, training=False, dynamic_shapes=None)`` runs
``torch.compile`` with Inductor on the CPU and records every graph Inductor schedules (the
forward, and with ``training=True`` the backward of ``sum(outputs)``): the scheduler's
nodes after fusion and their buffers exactly as ``torch._inductor.memory`` sees them
(``size_alloc`` / ``size_free``, the successors that free a buffer, the dependences that
order nodes, freeable graph inputs, graph outputs), Inductor's own orders and estimated
peaks (the incoming order, LPMF, BFS, DFS and the one it keeps), each node's FX/ATen names
and source line, and symbolic sizes as expressions over torch's symbols with their hints
and ranges. The record is a plain dict (``cpsched-torch-graph``, see
``cpsched.readers.torch_graph``), which cpsched reads without torch.

By default the capture stops each graph's compilation right after Inductor's scheduler has
run (the memory pass is the last step that decides the order) and runs that graph eagerly,
so no C++ kernel is built; ``full_compile=True`` lets Inductor finish (what the hand-back
tests use). Inductor's FX graph cache is turned off while capturing, so the scheduler runs.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import sys
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from cpsched.core.errors import InputError
from cpsched.readers.files import short_path
from cpsched.readers.torch_graph import (
    FORMAT,
    VERSION,
    TorchProgram,
    graph_from_torch_dict,
    save_record,
)


def _torch():
    try:
        import torch
        import torch._inductor.config  # noqa: F401
        import torch._inductor.memory  # noqa: F401
    except ImportError:
        raise ImportError("from_torch needs torch: pip install 'cpsched[torch]'") from None
    return torch


# -- source lines without machine paths ---------------------------------------------------

_FRAME_RE = re.compile(r'File "([^"]+)", line (\d+)')


def source_line(stack_trace: str | None) -> str | None:
    """``file.py:LINE`` of the innermost frame of an FX node's stack trace."""
    if not stack_trace:
        return None
    frames = _FRAME_RE.findall(stack_trace)
    if not frames:
        return None
    path, line = frames[-1]
    return f"{short_path(path)}:{line}"


# -- symbolic sizes -----------------------------------------------------------------------


class SizeSymbols:
    """Expressions over torch's size symbols, and the symbols' hints, ranges and sources."""

    def __init__(self, names: Mapping[str, str]):
        self.names = dict(names)  # torch symbol -> a user's dim name (from dynamic_shapes)
        self.used: dict[str, dict[str, Any]] = {}

    def expr(self, e, hint: int) -> str | None:
        """``e`` (a sympy expression in bytes) as text over named symbols, or None when it
        has no symbol or does not evaluate to ``hint`` at the symbols' hints."""
        import sympy
        from torch._inductor.virtualized import V

        e = sympy.sympify(e)
        if not e.free_symbols:
            return None
        shape_env = V.graph.sizevars.shape_env
        values = {}
        for s in e.free_symbols:
            hints = getattr(shape_env, "backed_var_to_val", None)
            val = (hints if hints is not None else shape_env.var_to_val).get(s)
            if val is None:  # unbacked: Inductor counts it 0 bytes
                return None
            values[s] = int(val)
        if int(e.subs(values)) != hint:
            return None
        for s in e.free_symbols:
            name = self.names.get(str(s), str(s))
            if name in self.used:
                continue
            vr = shape_env.var_to_range.get(s)
            lo = hi = None
            if vr is not None:
                lo = int(vr.lower) if vr.lower.is_finite else None
                hi = int(vr.upper) if vr.upper.is_finite else None
            sources = shape_env.var_to_sources.get(s) or []
            self.used[name] = {
                "symbol": str(s),
                "hint": values[s],
                "min": lo,
                "max": hi,
                "source": _source_name(sources[0]) if sources else None,
            }
        return _substitute(str(e), self.names)


def _source_name(source) -> str:
    name = source.name
    return name() if callable(name) else str(name)


# -- one scheduled graph as a dict ---------------------------------------------------------


def _origins(snode) -> list:
    out = []
    for n in snode.get_nodes():
        node = getattr(n, "node", None)
        if node is not None and hasattr(node, "get_origins"):
            out.extend(node.get_origins())
    return sorted(set(out), key=lambda o: o.name)


def _node_record(snode, index: int) -> dict[str, Any]:
    origins = _origins(snode)
    aten = sorted(
        {str(getattr(o.target, "__name__", o.target)) for o in origins if o.op == "call_function"}
    )
    source = next((s for s in (source_line(o.meta.get("stack_trace")) for o in origins) if s), None)
    rec: dict[str, Any] = {
        "name": snode.get_name(),
        "kind": type(snode).__name__,
        "index": index,
        "fx": [o.name for o in origins][:16],
        "aten": aten[:16],
    }
    if source:
        rec["source"] = source
    # Inductor's own cost figures (at the hints): FLOPs of the matmuls / convolutions it
    # counts, bytes read and written; for time estimates (cpsched's cost model)
    try:
        flops = snode.estimate_flops()
        if flops:
            rec["flops"] = int(flops)
    except Exception:  # not every node kind can count (user kernels, templates)
        pass
    try:
        rec["bytes"] = int(snode.get_read_write_buffers_sizes())
    except Exception:
        pass
    return rec


def snapshot(nodes, name_to_buf, name_to_fused_node, graph_inputs, graph_outputs, symbols):
    """Inductor's memory-planning view of ``nodes`` (in the order given), as a dict, with
    the orders and estimates of ``reorder_for_peak_memory``'s portfolio."""
    import torch
    from torch._inductor import memory
    from torch._inductor.ir import MultiOutput
    from torch._inductor.utils import get_dtype_size, is_nonfreeable_buffers
    from torch._inductor.virtualized import V

    peak0, freeable = memory.prepare_planning_info(
        nodes, name_to_buf, name_to_fused_node, graph_inputs, graph_outputs
    )
    node_names = {n: n.get_name() for n in nodes}
    records = []
    buf_owner: dict[str, str] = {}
    for i, n in enumerate(nodes):
        rec = _node_record(n, i)
        for b in n.get_outputs():
            buf_owner[b.get_name()] = node_names[n]
        records.append(rec)
    name_to_node = {b: node_names[n] for n in nodes for b in n.get_buffer_names()}
    mutation_real = V.graph.scheduler.mutation_real_name if V.graph.scheduler else {}
    for n, rec in zip(nodes, records):
        deps: list[str] = []
        for dep in n.unmet_dependencies:
            p = name_to_node.get(dep.name)
            if p is not None and p != rec["name"] and p not in deps:
                deps.append(p)
        rec["deps"] = deps
        rec["preds"] = [node_names[p] for p in n.mpi_node.pred_nodes]
    buffers = []
    for n in nodes:
        for b in n.get_outputs():
            mpi = b.mpi_buffer
            rec = {
                "name": b.get_name(),
                "node": node_names[n],
                "size_alloc": int(mpi.size_alloc),
                "size_free": int(mpi.size_free),
                "succ": [node_names[s] for s in mpi.succ_nodes],
                "output": b.get_name() in graph_outputs,
            }
            layout = getattr(b.node, "layout", None)
            if isinstance(b.node, MultiOutput) and b.node.inputs:
                rec["alloc_parent"] = b.node.inputs[0].get_name()
            if b.get_name() in mutation_real:
                rec["mutates"] = mutation_real[b.get_name()]
            try:
                dtype = b.node.get_dtype()
                nbytes = b.node.get_numel() * get_dtype_size(dtype)
                rec["dtype"] = str(dtype).replace("torch.", "")
                e = symbols.expr(nbytes, max(rec["size_alloc"], rec["size_free"]))
                if e is not None:
                    rec["size_expr"] = e
            except (NotImplementedError, AttributeError, TypeError):
                pass
            if layout is not None and type(layout).__name__ in ("MultiOutputLayout", "NoneLayout"):
                rec["layout"] = type(layout).__name__
            buffers.append(rec)
    # Inductor sizes a freeable input by the bytes of the last dep on it in the node list
    # (get_freeable_input_buf overwrites as it goes), so its size depends on which reader
    # comes last; recorded per reader where they differ (see torch_graph.pin_last_readers)
    reader_bytes: dict[str, dict[str, int]] = {}
    for n in nodes:
        for dep in n.read_writes.reads:
            if dep.name in freeable and not is_nonfreeable_buffers(dep):
                per = reader_bytes.setdefault(dep.name, {})
                per.pop(node_names[n], None)  # keep list order: this node read it last
                per[node_names[n]] = int(V.graph.get_dep_size_hint(dep))
    inputs = []
    for name in graph_inputs:
        fb = freeable.get(name)
        box = V.graph.graph_inputs.get(name)
        rec = {"name": name, "freeable": fb is not None, "output": name in graph_outputs}
        if isinstance(box, (torch.SymInt, int)) or box is None or not hasattr(box, "get_numel"):
            rec["size"] = 0
            rec["scalar"] = True
        else:
            nbytes = box.get_numel() * get_dtype_size(box.get_dtype())
            hint = V.graph.sizevars.optimization_hint(nbytes, fallback=0)
            rec["size"] = int(fb.mpi_buffer.size_free) if fb is not None else int(hint)
            e = symbols.expr(nbytes, rec["size"])
            if e is not None:
                rec["size_expr"] = e
        if fb is not None:
            rec["succ"] = [node_names[s] for s in fb.mpi_buffer.succ_nodes]
            per = reader_bytes.get(name, {})
            if len(set(per.values())) > 1:
                rec["reader_bytes"] = per
        inputs.append(rec)
    # the portfolio of reorder_for_peak_memory, each order with its estimate
    orders: dict[str, list[str]] = {"baseline": [node_names[n] for n in nodes]}
    peaks: dict[str, int] = {"baseline": int(peak0)}
    for method in (
        memory.topological_sort_lpmf,
        memory.topological_sort_bfs,
        memory.topological_sort_dfs,
    ):
        if method is memory.topological_sort_lpmf:
            order = method(nodes, freeable, name_to_buf, graph_outputs)
        else:
            order = method(nodes)
        key = method.__name__.replace("topological_sort_", "")
        orders[key] = [node_names[n] for n in order]
        peaks[key] = int(memory.estimate_peak_memory(order, freeable, graph_outputs)[0])
    return {
        "nodes": records,
        "buffers": buffers,
        "inputs": inputs,
        "outputs": list(graph_outputs),
        "inductor": {
            "orders": orders,
            "peaks": peaks,
            "size_threshold_for_succ_based_strategy": int(
                torch._inductor.config.size_threshold_for_succ_based_strategy
            ),
        },
    }


# -- recording every graph of a compile ------------------------------------------------------


class _SchedulingCaptured(Exception):
    """Raised after Inductor's scheduler has run, to skip building kernels."""


class Recorder:
    """Collects one record per graph Inductor schedules, while active."""

    def __init__(
        self,
        symbol_names: Mapping[str, str] | None = None,
        stop_after_scheduling: bool = True,
        record: bool = True,
    ):
        self.graphs: list[dict[str, Any]] = []
        self.symbol_names = dict(symbol_names or {})
        self.stop_after_scheduling = stop_after_scheduling
        self.record = record  # off: only stop after scheduling (Inductor's config untouched)

    @contextlib.contextmanager
    def active(self) -> Iterator[Recorder]:
        torch = _torch()
        from torch._functorch.aot_autograd import make_boxed_func
        from torch._inductor import compile_fx, graph, memory
        from torch._inductor.output_code import MockFXGraphCacheOutput
        from torch._inductor.virtualized import V

        original_reorder = memory.reorder_for_peak_memory
        original_update = graph.GraphLowering._update_scheduler
        original_inner = compile_fx.compile_fx_inner
        recorder = self

        def reorder(nodes, name_to_buf, name_to_fused_node, graph_inputs, graph_outputs, **kw):
            symbols = SizeSymbols(recorder.symbol_names)
            rec = snapshot(
                nodes, name_to_buf, name_to_fused_node, graph_inputs, graph_outputs, symbols
            )
            out = original_reorder(
                nodes, name_to_buf, name_to_fused_node, graph_inputs, graph_outputs, **kw
            )
            _, freeable = memory.prepare_planning_info(
                out, name_to_buf, name_to_fused_node, graph_inputs, graph_outputs
            )
            rec["inductor"]["order"] = [n.get_name() for n in out]
            rec["inductor"]["peak"] = int(
                memory.estimate_peak_memory(out, freeable, graph_outputs)[0]
            )
            rec["symbols"] = symbols.used
            rec["graph_name"] = V.graph.name or ""
            recorder.graphs.append(rec)
            return out

        def update_scheduler(self_graph):
            original_update(self_graph)
            if recorder.stop_after_scheduling:
                raise _SchedulingCaptured()

        @functools.wraps(original_inner)
        def inner(gm, example_inputs, *args, **kwargs):
            fx_outputs = [
                getattr(a, "name", None) for a in gm.graph.find_nodes(op="output")[0].args[0]
            ]
            fx_inputs = [n.name for n in gm.graph.find_nodes(op="placeholder")]
            start = len(recorder.graphs)
            try:
                result = original_inner(gm, example_inputs, *args, **kwargs)
            except Exception as e:  # _SchedulingCaptured, maybe wrapped by Inductor
                if not _caused_by_capture(e):
                    raise
                result = MockFXGraphCacheOutput(gm=make_boxed_func(_stand_in(gm)))
            for rec in recorder.graphs[start:]:
                rec["fx_inputs"] = fx_inputs
                rec["fx_outputs"] = fx_outputs
                rec["is_inference"] = bool(kwargs.get("is_inference", False))
                rec["is_backward"] = bool(kwargs.get("is_backward", False))
            return result

        self.inner_compile = inner
        patches: list[tuple[Any, str, Any]] = [
            (graph.GraphLowering, "_update_scheduler", update_scheduler)
        ]
        config: dict[str, Any] = {"fx_graph_cache": False, "fx_graph_remote_cache": False}
        if self.record:
            patches.append((memory, "reorder_for_peak_memory", reorder))
            config["reorder_for_peak_memory"] = True
        for obj, attr, new in patches:
            setattr(obj, attr, new)
        try:
            with (
                torch._inductor.config.patch(**config),
                torch._functorch.config.patch(enable_autograd_cache=False),
            ):
                yield self
        finally:
            memory.reorder_for_peak_memory = original_reorder
            graph.GraphLowering._update_scheduler = original_update

    def backend(self, gm, example_inputs):
        """Inductor's ``compile_fx`` with the recording inner compile (while active)."""
        from torch._inductor.compile_fx import compile_fx

        return compile_fx(gm, example_inputs, inner_compile=self.inner_compile)


def _stand_in(gm):
    """What runs in place of a graph whose kernels were not built: uninitialised outputs
    of the traced sizes and strides (no compute: the values are never used for anything but
    driving the next graph's compile), or the graph itself, eagerly, when a size is symbolic
    or an output is not a plain tensor."""
    import torch

    out_node = gm.graph.find_nodes(op="output")[0]
    metas = [getattr(a, "meta", {}).get("val") if a is not None else None for a in out_node.args[0]]

    def concrete(v) -> bool:
        return isinstance(v, torch.Tensor) and all(
            isinstance(x, int) for x in (*v.shape, *v.stride())
        )

    if not all(v is None or concrete(v) for v in metas):
        return gm.forward

    def run(*args):
        return tuple(
            None
            if v is None
            else torch.empty_strided(
                tuple(v.shape), tuple(v.stride()), dtype=v.dtype, device=v.device
            )
            for v in metas
        )

    return run


def _caused_by_capture(e: BaseException) -> bool:
    seen = set()
    cur: BaseException | None = e
    while cur is not None and id(cur) not in seen:
        if isinstance(cur, _SchedulingCaptured):
            return True
        seen.add(id(cur))
        cur = cur.__cause__ or cur.__context__
    return False


# -- dynamic shapes --------------------------------------------------------------------------


def _mark_dynamic(fn, inputs: Sequence[Any], dynamic_shapes) -> dict[str, str]:
    """Mark the dims that ``dynamic_shapes`` (``torch.export``'s form: per argument, by
    position or name, a ``{dim: Dim}`` map or a tuple) names as dynamic with their ranges.
    Returns ``{argument-dim source text: Dim name}`` to name torch's symbols after them."""
    import inspect

    torch = _torch()
    if dynamic_shapes is None:
        return {}
    try:
        sig = inspect.signature(fn.forward if isinstance(fn, torch.nn.Module) else fn)
        params = list(sig.parameters)
    except (TypeError, ValueError):
        params = []
    if isinstance(dynamic_shapes, Mapping):
        items = []
        for key, spec in dynamic_shapes.items():
            if isinstance(key, str):
                if key not in params:
                    raise InputError(f"dynamic_shapes: no argument {key!r} (has {params})")
                items.append((params.index(key), spec))
            else:
                items.append((int(key), spec))
    else:
        items = list(enumerate(dynamic_shapes))
    names: dict[str, str] = {}
    for k, spec in items:
        if spec is None:
            continue
        if not 0 <= k < len(inputs):
            raise InputError(f"dynamic_shapes: argument {k} is not given")
        t = inputs[k]
        dims = spec.items() if isinstance(spec, Mapping) else enumerate(spec)
        for d, dim in dims:
            if dim is None:
                continue
            lo = getattr(dim, "min", None)
            hi = getattr(dim, "max", None)
            kw = {}
            if lo is not None:
                kw["min"] = int(lo)
            if hi is not None and hi < sys.maxsize // 2:
                kw["max"] = int(hi)
            torch._dynamo.mark_dynamic(t, int(d), **kw)
            dim_name = str(getattr(dim, "__name__", f"d{d}"))
            if k < len(params):
                names[f"L['{params[k]}'].size()[{int(d)}]"] = dim_name
            names[f"L['args'][{k}].size()[{int(d)}]"] = dim_name
    return names


def _substitute(text: str, rename: Mapping[str, str]) -> str:
    for old, new in sorted(rename.items(), key=lambda kv: -len(kv[0])):
        text = re.sub(rf"\b{re.escape(old)}\b", new, text)
    return text


def _rename_symbols(records: list[dict[str, Any]], by_source: Mapping[str, str]) -> None:
    """Name torch's size symbols after the user's ``Dim``s, through their sources."""
    for rec in records:
        rename = {}
        for name, info in rec.get("symbols", {}).items():
            src = info.get("source") or ""
            for key, dim in by_source.items():
                if src.endswith(key) or src == key:
                    rename[name] = dim
        if not rename:
            continue
        rec["symbols"] = {rename.get(k, k): v for k, v in rec["symbols"].items()}

        for b in rec["buffers"] + rec["inputs"]:
            if "size_expr" in b:
                b["size_expr"] = _substitute(b["size_expr"], rename)


# -- the entry point -------------------------------------------------------------------------


def _leaves(x) -> list:
    torch = _torch()
    if isinstance(x, torch.Tensor):
        return [x]
    if isinstance(x, Mapping):
        return [t for v in x.values() for t in _leaves(v)]
    if isinstance(x, (list, tuple)):
        return [t for v in x for t in _leaves(v)]
    if hasattr(x, "to_tuple"):  # transformers' ModelOutput
        return _leaves(x.to_tuple())
    return []


def run_compiled(
    recorder: Recorder,
    fn_or_module,
    example_inputs: Sequence[Any],
    dynamic_shapes=None,
    training: bool = False,
    compile_options: Mapping[str, Any] | None = None,
) -> dict[str, str]:
    """Compile and run ``fn_or_module`` once (and the backward of the sum of its outputs
    with ``training``) with ``recorder`` active. Returns the dynamic dims' names by source."""
    torch = _torch()
    torch._dynamo.reset()
    by_source = _mark_dynamic(fn_or_module, example_inputs, dynamic_shapes)
    opts = dict(compile_options or {})
    if dynamic_shapes is None:
        opts.setdefault("dynamic", False)
    try:
        with recorder.active():
            compiled = torch.compile(fn_or_module, backend=recorder.backend, **opts)
            if training:
                out = compiled(*example_inputs)
                leaves = [t for t in _leaves(out) if t.requires_grad]
                if not leaves:
                    raise InputError("training=True: no output requires grad")
                loss = sum(t.float().sum() for t in leaves)
                loss.backward()
            else:
                with torch.no_grad():
                    compiled(*example_inputs)
    finally:
        torch._dynamo.reset()
    return by_source


def schedule_only(
    fn_or_module, *example_inputs, dynamic_shapes=None, training: bool = False
) -> None:
    """Run Inductor on ``fn_or_module`` up to its scheduler for every graph, building no
    kernel (each graph runs as uninitialised outputs): what checks of the scheduler's
    order need (``cpsched.inductor_order`` observes it), in seconds instead of minutes."""
    run_compiled(Recorder(record=False), fn_or_module, example_inputs, dynamic_shapes, training)


def capture_records(
    fn_or_module,
    *example_inputs,
    dynamic_shapes=None,
    training: bool = False,
    full_compile: bool = False,
    compile_options: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """The ``cpsched-torch-graph`` dicts of every graph Inductor schedules for one call."""
    torch = _torch()
    recorder = Recorder(stop_after_scheduling=not full_compile)
    by_source = run_compiled(
        recorder, fn_or_module, example_inputs, dynamic_shapes, training, compile_options
    )
    if not recorder.graphs:
        raise InputError("Inductor scheduled no graph (nothing to compile, or a graph break)")
    _rename_symbols(recorder.graphs, by_source)
    meta = {"torch_version": torch.__version__, "training": bool(training)}
    out = []
    n_fwd = n_bwd = 0
    for rec in recorder.graphs:
        if rec.get("is_backward"):
            part, n_bwd = f"backward{n_bwd or ''}", n_bwd + 1
        else:
            part, n_fwd = f"forward{n_fwd or ''}", n_fwd + 1
        out.append({"format": FORMAT, "version": VERSION, "part": part, **meta, **rec})
    return out


def from_torch(
    fn_or_module,
    *example_inputs,
    dynamic_shapes=None,
    training: bool = False,
    name: str | None = None,
    full_compile: bool = False,
    compile_options: Mapping[str, Any] | None = None,
) -> TorchProgram:
    """Every graph Inductor schedules for ``fn_or_module(*example_inputs)``, as cpsched graphs.

    - ``training=True`` runs the backward of the sum of the outputs that need gradients too,
      so the result has a ``forward`` and a ``backward`` graph;
    - ``dynamic_shapes`` takes ``torch.export``'s form (``{"x": {1: Dim("s", min=16,
      max=512)}}``): those dims are symbolic (``torch._dynamo.mark_dynamic`` with the
      ranges), sizes are polynomials in the ``Dim`` names, and each graph's ``meta``
      carries their hints (the example's values, which Inductor's estimate uses) and ranges.

    Each graph's ``original_order`` is Inductor's chosen order; ``meta["inductor"]`` has its
    estimated peak and the orders of its portfolio. ``TorchProgram.save(folder)`` writes the
    records (``NAME.PART.torch.json.gz``) that ``cpsched.read`` reads without torch.
    """
    records = capture_records(
        fn_or_module,
        *example_inputs,
        dynamic_shapes=dynamic_shapes,
        training=training,
        full_compile=full_compile,
        compile_options=compile_options,
    )
    stem = name or getattr(fn_or_module, "__name__", None) or type(fn_or_module).__name__
    for rec in records:
        rec["name"] = f"{stem}.{rec['part']}"
    return TorchProgram(stem, tuple(graph_from_torch_dict(r) for r in records), tuple(records))


def write_records(records: Sequence[Mapping[str, Any]], folder: str, stem: str) -> list[str]:
    """Write each record as ``folder/STEM.PART.torch.json.gz``; returns the paths."""
    os.makedirs(folder, exist_ok=True)
    return [
        save_record(r, os.path.join(folder, f"{stem}.{r['part']}.torch.json.gz")) for r in records
    ]


__all__ = [
    "from_torch",
    "capture_records",
    "snapshot",
    "Recorder",
    "write_records",
    "schedule_only",
    "run_compiled",
    "short_path",
    "source_line",
]
