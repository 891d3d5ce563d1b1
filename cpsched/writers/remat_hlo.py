"""A remat / offload plan written into its HLO module, one module per shape bucket.

One order serves every scenario but the active clones and copies may differ per bucket, and
an HLO module has one instruction list: so ``output`` carries the plan of the last (largest)
bucket, which is also checked in every other bucket (memory grows with the dims, so it is the
safe module when the shape is not known), and with several buckets each bucket's own module
goes to ``OUT.<bucket>.hlo``. Every module is read back, validated and re-simulated before
anything is written; the plan JSON goes to ``OUT.plan.json``.
"""

from __future__ import annotations

import os
import re
from typing import Any

from cpsched.analysis.memory import simulate
from cpsched.core.errors import InputError
from cpsched.core.graph import Graph
from cpsched.core.scenarios import Scenarios
from cpsched.readers.hlo.convert import read_hlo_module
from cpsched.remat.plan import RematResult
from cpsched.writers import check_target, write_json, write_text
from cpsched.writers.hlo import remat_module_text, verify_remat_module


def bucket_path(output: str, name: str) -> str:
    """``out.hlo`` + bucket ``s<=512`` -> ``out.s_512.hlo`` (the name made file-safe)."""
    stem, ext = os.path.splitext(output)
    return f"{stem}.{re.sub(r'[^A-Za-z0-9_.-]+', '_', name).strip('_') or 'bucket'}{ext}"


def remat_hlo_paths(output: str, scenarios: Scenarios) -> tuple[dict[int, str], str]:
    """Module path per bucket (the last bucket at ``output``) and the plan JSON's path."""
    last = len(scenarios) - 1
    paths = {
        s: (output if s == last else bucket_path(output, scenarios.names[s]))
        for s in range(len(scenarios))
    }
    plan_path = output + ".plan.json"
    if len(set(paths.values()) | {plan_path}) != len(scenarios) + 1:
        raise InputError("two buckets map to one file name; rename the scenarios", path=output)
    return paths, plan_path


def write_remat_hlo(
    source: str,
    output: str,
    graph: Graph,
    scenarios: Scenarios,
    result: RematResult,
    method: str,
    data: dict[str, Any],
    inputs: tuple[str, ...] = (),
) -> tuple[list[str], dict[str, dict[str, Any]]]:
    """Write the plan's module(s) and ``data`` (the plan JSON, which gains ``hlo_module``).

    Returns the paths written (the main module first, the plan JSON last) and, per bucket,
    what went into its module (clones, evictions, prefetches, the peak read back)."""
    module = read_hlo_module(source)
    sc = scenarios
    last = len(sc) - 1
    paths, plan_path = remat_hlo_paths(output, sc)
    protect = (source,) + tuple(inputs)
    for path in list(paths.values()) + [plan_path]:
        check_target(path, protect)
    texts, info = {}, {}
    for s in sorted(paths, key=lambda k: k != last):
        name, budget = sc.names[s], int(result.budget[s])
        comment = (
            (
                f"cpsched {method}: remat plan of bucket {name} ({s + 1} of {len(sc)}), "
                f"budget {budget} B; every bucket's plan: {os.path.basename(plan_path)}"
            )
            if len(sc) > 1
            else None
        )
        w = remat_module_text(module, graph, result.events[s], comment=comment)
        starts = [start for _, start, _ in w.evictions]
        # the house rule: what leaves the program is read back, validated and re-simulated
        back, peak = verify_remat_module(
            w.text, w.computation, sc.only(s), budget, starts, plan_peak=int(result.peak[s])
        )
        texts[s] = w.text
        info[name] = {
            "output": paths[s],
            "computation": w.computation,
            "scenario": name,
            "peak_bytes": peak,
            "budget_bytes": budget,
            "clones": dict(w.clones),
            "evictions": [list(e) for e in w.evictions],
            "prefetches": [list(p) for p in w.prefetches],
        }
        if s == last and len(sc) > 1:
            # the module read back, simulated in every bucket
            assert back.original_order is not None  # read back from a scheduled module
            peaks = simulate(back, back.original_order, sc).peak
            info[name]["fits_buckets"] = [name] + [
                sc.names[o] for o in range(last) if peaks[o] <= result.budget[o]
            ]
    top = info[sc.names[last]]
    data["hlo_module"] = dict(top, **({"per_bucket": info} if len(sc) > 1 else {}))
    for s in sorted(paths):
        write_text(paths[s], texts[s], inputs=protect)
    write_json(plan_path, data, inputs=protect)
    ordered = [sc.names[last]] + [sc.names[s] for s in range(last)]
    return [paths[last]] + [paths[s] for s in range(last)] + [plan_path], {
        n: info[n] for n in ordered
    }


__all__ = ["bucket_path", "remat_hlo_paths", "write_remat_hlo"]
