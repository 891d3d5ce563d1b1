"""Sweeps: graphs x methods x scenarios x time limits x seeds from one spec, run on Ray or a
local process pool, each solve's row appended to a results table keyed by a content hash
so that an interrupted sweep resumes (``cpsched sweep SPEC``; ``run_sweep`` from Python)."""

from cpsched.sweep.driver import SweepReport, run_sweep
from cpsched.sweep.spec import Spec, Task, load_spec

__all__ = ["run_sweep", "SweepReport", "load_spec", "Spec", "Task"]
