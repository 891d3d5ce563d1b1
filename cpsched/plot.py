"""Pictures at the edge: memory over time and a stream Gantt chart (matplotlib, optional)."""

from __future__ import annotations

import io
import os
from collections.abc import Mapping

from cpsched.analysis.memory import MemoryProfile
from cpsched.core.errors import InputError
from cpsched.cost.timeline import Timeline, Timelines
from cpsched.writers import check_target, write_bytes


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise InputError("--plot needs matplotlib: pip install 'cpsched[plot]'") from None
    return plt


def require_matplotlib() -> None:
    """Raise the one-line ``--plot`` error now, before any solving, if matplotlib is missing."""
    import importlib.util

    if importlib.util.find_spec("matplotlib") is None:
        raise InputError("--plot needs matplotlib: pip install 'cpsched[plot]'")


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


def line_styles(names) -> dict[str, tuple[str, str]]:
    """``{name: (colour, linestyle)}``, a different pair for every name (up to 40)."""
    out = {}
    for k, name in enumerate(names):
        out[name] = (COLORS[k % len(COLORS)], LINESTYLES[(k // len(COLORS)) % len(LINESTYLES)])
    return out


def _check_target(path: str, inputs: tuple[str, ...]) -> None:
    check_target(path, inputs)


def plot_memory(
    profiles: Mapping[str, MemoryProfile],
    path: str,
    title: str = "",
    inputs: tuple[str, ...] = (),
    timelines: Mapping[str, Timeline | Timelines] | None = None,
) -> None:
    """One line per method (``MemoryProfile``), per scenario; optional Gantt panel below."""
    _check_target(path, inputs)
    plt = _pyplot()
    first = next(iter(profiles.values()))
    n_sc = len(first.scenarios)
    rows = n_sc + (1 if timelines else 0)
    fig, axes = plt.subplots(rows, 1, figsize=(10, 3.2 * rows), squeeze=False)
    styles = line_styles(profiles)
    for s in range(n_sc):
        ax = axes[s, 0]
        for name, prof in profiles.items():
            color, dash = styles[name]
            ax.plot(
                prof.usage[s] / 2**20,
                label=f"{name} (peak {prof.peak[s] / 2**20:.1f} MiB)",
                linewidth=1.2,
                color=color,
                linestyle=dash,
            )
        ax.set_ylabel("MiB live")
        ax.set_xlabel("step")
        ax.set_title(f"{title} — {first.scenarios.names[s]}" if n_sc > 1 else title)
        ax.legend(fontsize=7, loc="upper left")
    if timelines:
        ax = axes[-1, 0]
        name, tl = next(iter(timelines.items()))
        tl = tl[0] if isinstance(tl, Timelines) else tl  # Timelines -> first scenario
        busy = tl.end > tl.start
        lanes = {
            tl.streams[0]: [(float(a), float(b - a)) for a, b in zip(tl.start[busy], tl.end[busy])]
        }
        for k in range(tl.n_pairs):
            st = tl.streams[int(tl.pair_stream[k])] if not tl.pair_sync[k] else tl.streams[0]
            lanes.setdefault(st, []).append(
                (float(tl.transfer_begin[k]), float(tl.transfer_end[k] - tl.transfer_begin[k]))
            )
        for y, spans in enumerate(lanes.values()):
            ax.broken_barh(spans, (y - 0.4, 0.8), edgecolor="white", linewidth=0.3)
        ax.set_yticks(range(len(lanes)), list(lanes))
        ax.set_xlabel(f"time ({tl.unit})")
        ax.set_title(f"streams — {name} ({tl.scenario})")
    fig.tight_layout()
    buf = io.BytesIO()
    try:
        ext = os.path.splitext(path)[1].lstrip(".").lower() or "png"
        fig.savefig(buf, dpi=110, format=ext)
    except ValueError as e:  # an extension matplotlib cannot write
        raise InputError(f"cannot write: {e}", path=path) from None
    finally:
        plt.close(fig)
    write_bytes(path, buf.getvalue(), inputs)


def plot_frontier(
    points: list[dict],
    baselines: list[dict],
    path: str,
    title: str = "",
    unit: str = "s",
    inputs: tuple[str, ...] = (),
) -> None:
    """Makespan against the memory budget: the frontier's points with their lower bounds,
    every heuristic as one point at its own peak (first scenario, or the figures given)."""
    _check_target(path, inputs)
    plt = _pyplot()

    def first(v):
        return next(iter(v.values())) if isinstance(v, dict) else v

    fig, ax = plt.subplots(figsize=(8, 4.5))
    ok = [p for p in points if p.get("makespan") is not None]
    xs = [first(p["budget_bytes"]) / 2**20 for p in ok]
    ax.step(
        xs, [first(p["makespan"]) for p in ok], where="post", marker="o", label="cp-joint (plan)"
    )
    lb = [(x, first(p["makespan_bound"])) for x, p in zip(xs, ok) if p.get("makespan_bound")]
    if lb:
        ax.plot(*zip(*lb), linestyle=":", marker="v", label="lower bound")
    for row in baselines:
        ax.scatter(first(row["peak_bytes"]) / 2**20, first(row["makespan"]), marker="x")
        ax.annotate(
            row["method"],
            (first(row["peak_bytes"]) / 2**20, first(row["makespan"])),
            fontsize=7,
            xytext=(3, 3),
            textcoords="offset points",
        )
    ax.set_xlabel("memory budget / peak (MiB)")
    ax.set_ylabel(f"makespan ({unit})")
    ax.set_title(title)
    ax.legend(fontsize=8)
    fig.tight_layout()
    buf = io.BytesIO()
    try:
        ext = os.path.splitext(path)[1].lstrip(".").lower() or "png"
        fig.savefig(buf, dpi=110, format=ext)
    except ValueError as e:
        raise InputError(f"cannot write: {e}", path=path) from None
    finally:
        plt.close(fig)
    write_bytes(path, buf.getvalue(), inputs)
