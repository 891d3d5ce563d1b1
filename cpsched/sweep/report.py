"""What a sweep shows: a Markdown summary and, with matplotlib, one picture.

The summary has one table over methods (solves, failures, the median of each solve's peak
over the best peak any method found on that graph, median wall time, graphs where the
method is best) and one per graph x method x setting (median and best peak, median wall,
statuses). The picture: per method, peak / best on that graph, and wall time.
"""

from __future__ import annotations

import collections
import io
import json
import statistics
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from cpsched.core.units import format_bytes, format_seconds
from cpsched.plot import COLORS
from cpsched.sweep.table import ERROR
from cpsched.writers import write_bytes

# The per-graph table stops here (the CSV has every row).
MAX_GROUP_ROWS = 1000
# Options that vary within a group (seeds repeat a setting) or name the group already.
NOT_SETTING = ("method", "seed", "deterministic")


def _int(v: Any) -> int | None:
    try:
        return int(v)
    except (TypeError, ValueError):
        return None


def _float(v: Any) -> float | None:
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def setting(options_text: str) -> str:
    """The options of a row that set it apart from other rows of its graph and method."""
    try:
        opts = json.loads(options_text)
    except ValueError:
        return options_text
    parts = []
    for k, v in sorted(opts.items()):
        if k in NOT_SETTING:
            continue
        if k == "scenarios":
            v = " ".join(v) if isinstance(v, list) else "file"
        parts.append(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}")
    return ", ".join(parts) or "-"


def _ok(r: Mapping[str, str]) -> bool:
    return r["status"] != ERROR and _int(r["peak_bytes"]) is not None


def best_peaks(rows: Iterable[Mapping[str, str]]) -> dict[str, int]:
    """The least peak any solve found per graph (the reference of the ratios)."""
    best: dict[str, int] = {}
    for r in rows:
        p = _int(r["peak_bytes"])
        if _ok(r) and p is not None and "budget" not in r["options"]:
            best[r["graph"]] = min(best.get(r["graph"], p), p)
    return best


def _ratio(r: Mapping[str, str], best: Mapping[str, int]) -> float | None:
    p, b = _int(r["peak_bytes"]), best.get(r["graph"])
    if not _ok(r) or p is None or not b or "budget" in r["options"]:
        return None  # a remat plan's peak is set by its budget: not comparable
    return p / b


def _wins(rows: Sequence[Mapping[str, str]], best: Mapping[str, int]) -> collections.Counter:
    wins: collections.Counter[str] = collections.Counter()
    for g, b in best.items():
        for m in {r["method"] for r in rows if r["graph"] == g and _int(r["peak_bytes"]) == b}:
            wins[m] += 1
    return wins


def summary_markdown(
    rows: Sequence[Mapping[str, str]], title: str, header_lines: Sequence[str] = ()
) -> str:
    best = best_peaks(rows)
    wins = _wins([r for r in rows if _ratio(r, best) is not None], best)
    by_method: dict[str, list[Mapping[str, str]]] = collections.defaultdict(list)
    for r in rows:
        by_method[r["method"]].append(r)
    out = [f"# Sweep: {title}", ""] + list(header_lines) + [""]
    out += [
        "## Methods",
        "",
        "Peak / best: each solve's peak over the least peak any method found on that graph "
        "(1.00 = the best; remat plans, whose peak is their budget, are left out).",
        "",
        "| method | solves | failed | median peak / best | worst peak / best | graphs best "
        "| median wall | statuses |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for m, rs in by_method.items():
        ratios = [x for x in (_ratio(r, best) for r in rs) if x is not None]
        walls = [w for w in (_float(r["wall_s"]) for r in rs) if w is not None]
        failed = sum(r["status"] == ERROR for r in rs)
        statuses = collections.Counter(r["status"] for r in rs)
        out.append(
            f"| {m} | {len(rs)} | {failed} | "
            f"{f'{statistics.median(ratios):.3f}' if ratios else '-'} | "
            f"{f'{max(ratios):.3f}' if ratios else '-'} | {wins.get(m, 0)} | "
            f"{format_seconds(statistics.median(walls)) if walls else '-'} | "
            + ", ".join(f"{k} {v}" for k, v in statuses.most_common())
            + " |"
        )
    groups: dict[tuple[str, str, str], list[Mapping[str, str]]] = collections.defaultdict(list)
    for r in rows:
        groups[(r["graph"], r["method"], setting(r["options"]))].append(r)
    out += [
        "",
        "## Graph x method",
        "",
        "Bold: the least peak found on that graph.",
        "",
        "| graph | ops | method | setting | solves | failed | median peak | best peak | "
        "median wall | statuses |",
        "|---|---:|---|---|---:|---:|---:|---:|---:|---|",
    ]
    for k, ((g, m, s), rs) in enumerate(sorted(groups.items())):
        if k == MAX_GROUP_ROWS:
            out.append(f"\n({len(groups) - k} more groups: see the table)")
            break
        peaks = [p for p in (_int(r["peak_bytes"]) for r in rs if _ok(r)) if p is not None]
        walls = [w for w in (_float(r["wall_s"]) for r in rs) if w is not None]
        failed = sum(r["status"] == ERROR for r in rs)
        top = min(peaks) if peaks else None
        top_text = "-" if top is None else format_bytes(top)
        if top is not None and top == best.get(g) and "budget" not in rs[0]["options"]:
            top_text = f"**{top_text}**"
        errors = {r["error"] for r in rs if r["status"] == ERROR}
        status_text = ", ".join(
            f"{k2} {v}" for k2, v in collections.Counter(r["status"] for r in rs).most_common()
        )
        if errors:
            status_text += f" ({sorted(errors)[0][:80]})"
        ops = next((r["n_ops"] for r in rs if r["n_ops"]), "")
        out.append(
            f"| {g} | {ops} | {m} | {s} | {len(rs)} | {failed} | "
            f"{format_bytes(statistics.median(peaks)) if peaks else '-'} | {top_text} | "
            f"{format_seconds(statistics.median(walls)) if walls else '-'} | {status_text} |"
        )
    return "\n".join(out) + "\n"


def plot_sweep(rows: Sequence[Mapping[str, str]], path: str, title: str, inputs=()) -> None:
    """Per method: peak / best on the same graph, and wall time (log scale)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    best = best_peaks(rows)
    methods = list(dict.fromkeys(r["method"] for r in rows))
    ratios = [
        [x for x in (_ratio(r, best) for r in rows if r["method"] == m) if x] for m in methods
    ]
    walls = [
        [w for w in (_float(r["wall_s"]) for r in rows if r["method"] == m) if w is not None]
        for m in methods
    ]
    fig, axes = plt.subplots(1, 2, figsize=(max(8.0, 1.2 * len(methods) + 4), 4.5))
    for ax, data, label in (
        (axes[0], ratios, "peak / best peak on the graph"),
        (axes[1], walls, "wall time per solve (s, this machine)"),
    ):
        shown = [(m, d) for m, d in zip(methods, data) if d]
        if shown:
            bp = ax.boxplot([d for _, d in shown], patch_artist=True)
            for (m, _), box in zip(shown, bp["boxes"]):  # one colour per method, both panels
                box.set_facecolor(COLORS[methods.index(m) % len(COLORS)])
                box.set_alpha(0.6)
            ax.set_xticks(range(1, len(shown) + 1))
            ax.set_xticklabels([m for m, _ in shown], rotation=30, ha="right")
        ax.set_ylabel(label)
        ax.grid(axis="y", alpha=0.3)
    if any(walls):
        axes[1].set_yscale("log")
    graphs = len({r["graph"] for r in rows})
    fig.suptitle(
        f"{title}: {len(rows)} solves of {graphs} graph{'s' if graphs != 1 else ''}, "
        f"{len(methods)} methods",
        fontsize=10,
    )
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    write_bytes(path, buf.getvalue(), tuple(inputs))
