"""Pictures at the edge (matplotlib, optional): memory over the order with the lower bound,
the streams of a timeline, and the memory-time frontier.

Axes carry their units: bytes in B/KiB/MiB/GiB and times in ns/us/ms/s, scaled to the
figures shown (never an offset such as ``1e-5``); a time axis names the device model that
made it. Titles say whose order is drawn.
"""

from __future__ import annotations

import io
import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from cpsched.analysis.memory import MemoryProfile
from cpsched.core.errors import InputError
from cpsched.cost.model import UNIT_FILE, UNIT_XLA
from cpsched.cost.timeline import Timeline, Timelines
from cpsched.writers import check_target, write_bytes

NEED_MATPLOTLIB = "--plot needs matplotlib: pip install 'cpsched[plot]'"


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise InputError(NEED_MATPLOTLIB) from None
    return plt


def require_matplotlib() -> None:
    """Load matplotlib now, before any solving (a second on a loaded machine, counted in the
    command's time limit at its start, not at its end), or raise the one-line ``--plot``
    error if it is missing."""
    import importlib.util

    if importlib.util.find_spec("matplotlib") is None:
        raise InputError(NEED_MATPLOTLIB)
    _pyplot()


# Ten colours (matplotlib's tab10) times four dash patterns: 40 methods before a repeat;
# the colour changes first, and the dash pattern changes whenever the colours wrap around.
COLORS = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)
LINESTYLES = ("-", "--", ":", "-.")
MARKERS = ("x", "+", "s", "^", "D", "v", "P", "*", "<", ">", "o", "h")
BOUND_COLOR = "#444444"
WAIT_COLOR = "#d62728"


def line_styles(names) -> dict[str, tuple[str, str]]:
    """``{name: (colour, linestyle)}``, a different pair for every name (up to 40)."""
    out = {}
    for k, name in enumerate(names):
        out[name] = (COLORS[k % len(COLORS)], LINESTYLES[(k // len(COLORS)) % len(LINESTYLES)])
    return out


# -- units of the axes ----------------------------------------------------------------------


def byte_scale(largest: float) -> tuple[float, str]:
    """``(divisor, unit)`` that shows ``largest`` bytes as a number below 1024.

    >>> byte_scale(512), byte_scale(3 * 2**20)
    ((1, 'B'), (1048576, 'MiB'))
    """
    div, unit = 1, "B"
    for u in ("KiB", "MiB", "GiB", "TiB"):
        if abs(largest) < div * 1024:
            break
        div, unit = div * 1024, u
    return div, unit


def time_scale(largest: float, unit: str) -> tuple[float, str]:
    """``(factor, unit)`` that shows times of the cost model's ``unit`` (seconds, XLA's
    units taken as microseconds, or a file's own) as numbers from 1 to 1000.

    >>> time_scale(3.1e-4, "s"), time_scale(43000, "xla"), time_scale(12, "file")
    ((1000000.0, 'us'), (0.001, 'ms'), (1.0, 'units'))
    """
    if unit == UNIT_FILE:
        return 1.0, "units"
    to_seconds = 1e-6 if unit == UNIT_XLA else 1.0
    s = abs(float(largest)) * to_seconds
    for factor, name in ((1.0, "s"), (1e3, "ms"), (1e6, "us"), (1e9, "ns")):
        if s >= 1.0 / factor or name == "ns":
            return to_seconds * factor, name
    raise AssertionError("unreachable")


def _num(v: float) -> str:
    """Three significant figures, trailing zeros kept (``2.50``, ``128``)."""
    return f"{v:#.3g}".rstrip(".") if abs(v) < 1000 else f"{v:.0f}"


def _plain(ax) -> None:
    """Tick labels as plain numbers: no offset (``+3.3e-4``) and no ``1e-5`` multiplier."""
    for axis in ("x", "y"):
        try:
            ax.ticklabel_format(axis=axis, style="plain", useOffset=False)
        except AttributeError:  # a categorical or log axis has no such formatter
            pass


def _save(fig, plt, path: str, inputs: tuple[str, ...]) -> None:
    buf = io.BytesIO()
    try:
        ext = os.path.splitext(path)[1].lstrip(".").lower() or "png"
        fig.savefig(buf, dpi=120, format=ext, bbox_inches="tight")
    except ValueError as e:  # an extension matplotlib cannot write
        raise InputError(f"cannot write: {e}", path=path) from None
    finally:
        plt.close(fig)
    write_bytes(path, buf.getvalue(), inputs)


# -- memory over the order, and the streams -------------------------------------------------


def plot_memory(
    profiles: Mapping[str, MemoryProfile],
    path: str,
    title: str = "",
    inputs: tuple[str, ...] = (),
    timelines: Mapping[str, Timeline | Timelines] | None = None,
    *,
    bound: Mapping[str, int] | None = None,
) -> None:
    """Bytes live at every step of each order (one line per ``profiles`` entry, one panel
    per scenario), with the lower bound on any order's peak as a dashed line (``bound``:
    bytes per scenario). ``timelines`` (label -> timeline, first scenario) add a panel of
    their streams, drawn only where some timeline has a collective or copy to show."""
    check_target(path, inputs)
    plt = _pyplot()
    fig = memory_figure(profiles, title, timelines, bound=bound)
    _save(fig, plt, path, inputs)


def memory_figure(
    profiles: Mapping[str, MemoryProfile],
    title: str = "",
    timelines: Mapping[str, Timeline | Timelines] | None = None,
    *,
    bound: Mapping[str, int] | None = None,
):
    """``plot_memory``'s matplotlib figure, not saved."""
    plt = _pyplot()
    first = next(iter(profiles.values()))
    names = first.scenarios.names
    lanes = _stream_lanes(timelines or {})
    rows = len(names) + (1 if lanes else 0)
    heights = [3.0] * len(names) + ([0.5 + 0.45 * len(lanes)] if lanes else [])
    fig, axes = plt.subplots(
        rows, 1, figsize=(10, sum(heights) + 0.6), squeeze=False, height_ratios=heights
    )
    styles = line_styles(profiles)
    for s, scenario in enumerate(names):
        ax = axes[s, 0]
        top = max(int(p.peak[s]) for p in profiles.values())
        if bound:
            top = max(top, int(bound.get(scenario, 0)))
        div, unit = byte_scale(top)
        # the solver rows last (drawn on top) and a little heavier
        for name in sorted(profiles, key=lambda n: n.startswith("cp")):
            prof = profiles[name]
            color, dash = styles[name]
            ax.plot(
                np.arange(prof.usage.shape[1]),
                prof.usage[s] / div,
                label=f"{name}: peak {_num(prof.peak[s] / div)} {unit}",
                linewidth=1.8 if name.startswith("cp") else 1.1,
                color=color,
                linestyle=dash,
            )
            at = int(prof.peak_step[s])  # where the peak is
            ax.plot([at], [prof.usage[s][at] / div], marker="o", markersize=3.5, color=color)
        if bound and scenario in bound:
            ax.axhline(
                bound[scenario] / div,
                color=BOUND_COLOR,
                linestyle=(0, (4, 3)),
                linewidth=1.0,
                label=f"lower bound (any order): {_num(bound[scenario] / div)} {unit}",
            )
        ax.set_ylabel(f"live memory ({unit})")
        ax.set_xlabel("step (ops run so far)")
        ax.set_ylim(bottom=0)
        ax.set_xlim(0, max(1, first.usage.shape[1] - 1))
        ax.grid(alpha=0.25)
        _plain(ax)
        sub = f" — scenario {scenario}" if len(names) > 1 else ""
        ax.set_title((title + sub) if s == 0 else f"scenario {scenario}", fontsize=10)
        handles, labels = ax.get_legend_handles_labels()
        order = sorted(range(len(labels)), key=lambda k: labels[k].startswith("lower bound"))
        ax.legend(
            [handles[k] for k in order],
            [labels[k] for k in order],
            fontsize=7,
            loc="upper left",
            bbox_to_anchor=(1.01, 1.0),
            borderaxespad=0.0,
            frameon=False,
        )
    if lanes:
        _draw_lanes(axes[-1, 0], lanes)
    fig.tight_layout()
    return fig


def _stream_lanes(timelines: Mapping[str, Timeline | Timelines]) -> list[dict[str, Any]]:
    """One lane per stream of each timeline that has a collective or a copy (a compute
    stream alone is one solid bar: nothing to see)."""
    lanes: list[dict[str, Any]] = []
    for label, tl in timelines.items():
        tl = tl[0] if isinstance(tl, Timelines) else tl
        if tl.n_pairs == 0:
            continue
        busy = tl.end > tl.start
        compute = [(float(a), float(b - a)) for a, b in zip(tl.start[busy], tl.end[busy])]
        waits = []
        for k in range(tl.n_pairs):
            if tl.wait[k] <= 0:
                continue
            if tl.pair_sync[k]:
                waits.append((float(tl.transfer_begin[k]), float(tl.wait[k])))
            elif tl.pair_done[k] >= 0:
                at = float(tl.start[int(tl.pair_done[k])])
                waits.append((at - float(tl.wait[k]), float(tl.wait[k])))
        lanes.append(
            {
                "name": f"{label}: compute",
                "spans": compute,
                "waits": waits,
                "tl": tl,
            }
        )
        by_stream: dict[str, list[tuple[float, float]]] = {}
        for k in range(tl.n_pairs):
            if tl.pair_sync[k]:
                continue
            st = tl.streams[int(tl.pair_stream[k])]
            by_stream.setdefault(st, []).append(
                (float(tl.transfer_begin[k]), float(tl.transfer_end[k] - tl.transfer_begin[k]))
            )
        for st, spans in by_stream.items():
            lanes.append({"name": f"{label}: {st}", "spans": spans, "waits": [], "tl": tl})
    return lanes


def _draw_lanes(ax, lanes: list[dict[str, Any]]) -> None:
    tls = [lane["tl"] for lane in lanes]
    largest = max(float(t.makespan) for t in tls)
    factor, unit = time_scale(largest, tls[0].unit)
    models = sorted({t.model for t in tls})
    n = len(lanes)
    labelled = set()
    for y, lane in enumerate(lanes):
        yy = n - 1 - y  # the first lane on top
        compute = lane["name"].endswith(": compute")
        color = "#9aa5b1" if compute else COLORS[0]
        label = "op (compute stream)" if compute else "transfer (collective / copy)"
        spans = [(a * factor, max(d * factor, 0.0)) for a, d in lane["spans"]]
        ax.broken_barh(
            spans,
            (yy - 0.35, 0.7),
            facecolor=color,
            edgecolor="none",
            label=None if label in labelled else label,
        )
        labelled.add(label)
        if lane["waits"]:
            ax.broken_barh(
                [(a * factor, d * factor) for a, d in lane["waits"]],
                (yy - 0.35, 0.7),
                facecolor=WAIT_COLOR,
                edgecolor="none",
                label=None if "exposed" in labelled else "exposed communication (waiting)",
            )
            labelled.add("exposed")
    ax.set_yticks(
        range(n),
        [
            lane["name"]
            + (
                f" ({_num(float(lane['tl'].makespan) * factor)} {unit})"
                if lane["name"].endswith(": compute")
                else ""
            )
            for lane in reversed(lanes)
        ],
        fontsize=8,
    )
    ax.set_ylim(-0.6, n - 0.4)
    ax.set_xlim(0, largest * factor * 1.01)
    ax.set_xlabel(f"time ({unit}, {', '.join(models)})")
    scenario = tls[0].scenario
    where = "" if scenario == "static" else f" (scenario {scenario})"
    ax.set_title(f"streams{where}: the compute stream and each transfer stream", fontsize=10)
    ax.grid(axis="x", alpha=0.25)
    _plain(ax)
    ax.legend(
        fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, frameon=False
    )


# -- the memory-time frontier ---------------------------------------------------------------


def _first(v):
    return next(iter(v.values())) if isinstance(v, dict) else v


def baseline_groups(baselines: Sequence[Mapping[str, Any]]) -> list[tuple[list[str], Any, Any]]:
    """Heuristic rows at the same (peak, makespan) as one point with every name:
    ``[(names, peak_bytes, makespan)]``, in the rows' order.

    >>> baseline_groups([{"method": "a", "peak_bytes": 5, "makespan": 1.0},
    ...                  {"method": "b", "peak_bytes": 5, "makespan": 1.0},
    ...                  {"method": "c", "peak_bytes": 6, "makespan": 1.0}])
    [(['a', 'b'], 5, 1.0), (['c'], 6, 1.0)]
    """
    groups: dict[tuple, tuple[list[str], Any, Any]] = {}
    for row in baselines:
        peak, span = _first(row["peak_bytes"]), _first(row["makespan"])
        key = (int(peak), round(float(span), 12))
        if key in groups:
            groups[key][0].append(row["method"])
        else:
            groups[key] = ([row["method"]], peak, span)
    return list(groups.values())


def plot_frontier(
    points: list[dict],
    baselines: list[dict],
    path: str,
    title: str = "",
    unit: str = "s",
    inputs: tuple[str, ...] = (),
    *,
    model: str = "",
    scenario: str | None = None,
) -> None:
    """Makespan against the memory budget: cp-joint's plan at each budget (a step line:
    the frontier never rises with the budget) with the solver's lower bound, and each
    heuristic as one marker at its own peak (rows at the same point share one marker and
    one legend entry). ``model`` names the device model of the times; figures of the first
    scenario (``scenario`` names it)."""
    check_target(path, inputs)
    plt = _pyplot()
    fig = frontier_figure(points, baselines, title=title, unit=unit, model=model, scenario=scenario)
    _save(fig, plt, path, inputs)


def frontier_figure(
    points: list[dict],
    baselines: list[dict],
    *,
    title: str = "",
    unit: str = "s",
    model: str = "",
    scenario: str | None = None,
):
    """``plot_frontier``'s matplotlib figure, not saved."""
    plt = _pyplot()
    ok = [p for p in points if p.get("makespan") is not None]
    groups = baseline_groups(baselines)
    all_bytes = [_first(p["budget_bytes"]) for p in ok] + [g[1] for g in groups]
    all_times = [_first(p["makespan"]) for p in ok] + [g[2] for g in groups]
    div, bunit = byte_scale(max(all_bytes, default=1))
    factor, tunit = time_scale(max(all_times, default=1.0), unit)
    fig, ax = plt.subplots(figsize=(9, 4.8))
    if ok:
        xs = [_first(p["budget_bytes"]) / div for p in ok]
        ax.step(
            xs,
            [_first(p["makespan"]) * factor for p in ok],
            where="post",
            marker="o",
            linewidth=1.8,
            color=COLORS[0],
            label="cp-joint: plan within the budget",
        )
        lb = [
            (x, _first(p["makespan_bound"]) * factor)
            for x, p in zip(xs, ok)
            if p.get("makespan_bound") is not None
        ]
        if lb:
            ax.plot(
                *zip(*lb),
                linestyle=(0, (4, 3)),
                marker="v",
                color=BOUND_COLOR,
                linewidth=1.0,
                label="cp-joint: lower bound on the makespan",
            )
    for k, (names, peak, span) in enumerate(groups):
        ax.scatter(
            peak / div,
            span * factor,
            marker=MARKERS[k % len(MARKERS)],
            color=COLORS[1 + k % (len(COLORS) - 1)],  # the first colour is cp-joint's
            s=40,
            zorder=3,
            label=", ".join(names),
        )
    ax.set_xlabel(f"memory: cp-joint's budget, each heuristic's own peak ({bunit})")
    ax.set_ylabel(f"makespan ({tunit}, {model or 'cost model'})")
    sub = f" — scenario {scenario}" if scenario else ""
    ax.set_title(title + sub, fontsize=10)
    ax.grid(alpha=0.25)
    _plain(ax)
    ax.legend(
        fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, frameon=False
    )
    fig.tight_layout()
    return fig


__all__ = [
    "plot_memory",
    "plot_frontier",
    "memory_figure",
    "frontier_figure",
    "require_matplotlib",
    "line_styles",
    "byte_scale",
    "time_scale",
    "baseline_groups",
    "COLORS",
]
