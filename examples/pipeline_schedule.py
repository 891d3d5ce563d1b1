"""Example: a 4-stage pipeline whose last stage (the LM head) is 1.5x heavier, B ~ 2F, W ~ F,
transfers half an F long, activations under the 1F1B memory cap.

Prints every published schedule beside the CP-SAT one, writes the CP schedule as the
action CSV that PyTorch's pipelining runtime loads (``_load_csv``) and as a Perfetto trace,
and, when jax is installed, runs the schedule on 4 host CPU devices and checks its
gradients against the unpipelined step.

    python examples/pipeline_schedule.py [OUT_DIR]        # default: out/

The same from the command line:

    cpsched pipeline -p 4 -m 8 --costs-file examples/pipeline_costs.json --dim b=1 \
        --csv out/pipeline.csv --trace out/pipeline_trace.json
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from cpsched.pipeline.solve import solve  # noqa: E402
from cpsched.pipeline import baselines  # noqa: E402
from cpsched.pipeline.export import write_torch_csv, write_trace  # noqa: E402
from cpsched.pipeline.problem import PipelineProblem  # noqa: E402


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "out")
    out.mkdir(parents=True, exist_ok=True)
    problem = PipelineProblem(p=4, m=8, f=(2, 2, 2, 3), b=(4, 4, 4, 6), w=(2, 2, 2, 3),
                              act=("b*4096",), act_w=("b*2048",), comm=1.0,
                              memory_cap="1f1b").at({"b": 1})
    print(f"{'method':<12} {'makespan':>9} {'bubble':>8}  fits the 1F1B cap")
    for name in baselines.BASELINES:
        if baselines.applicable(problem, name) is None:
            r = baselines.build(problem, name).replay
            print(f"{name:<12} {r.makespan:>9g} {100 * r.bubble_fraction:>7.2f}%  {r.memory_ok}")
    cp = solve(problem, time_limit=10)
    r = cp.replay
    print(f"{'cp':<12} {r.makespan:>9g} {100 * r.bubble_fraction:>7.2f}%  {r.memory_ok}  "
          f"({cp.status}, bound {cp.bound:g})")
    write_torch_csv(str(out / "pipeline.csv"), cp)
    write_trace(str(out / "pipeline_trace.json"), cp)
    print(f"wrote {out / 'pipeline.csv'} and {out / 'pipeline_trace.json'}")
    if importlib.util.find_spec("jax") is None:
        print("jax not installed: skipping the executor check (make jax-env)")
        return
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    from cpsched.pipeline.jax_executor import check, ensure_host_devices
    ensure_host_devices(problem.p)
    res = check(problem, cp.actions)
    print(f"JAX executor: loss {res['loss']:.6f}, gradients equal the unpipelined step "
          f"(max |dW| difference {res['max_abs_dw']:.2e}) in {res['ticks']} ticks")


if __name__ == "__main__":
    main()
