"""Running written modules on XLA: outputs against a reference order, step times, memory.

``run_module`` (``cpsched run``) needs jax, in this Python or in the one named by
``CPSCHED_JAX_PYTHON``; nothing here imports jax. ``xla_run`` is the part that does (in a
child process), and imports nothing from cpsched, so that it also runs on machines with jax
and numpy only (``benchmarks/measure_gpu.py``).
"""

from cpsched.measure.run import RunRecord, jax_python, measure_group, run_module

__all__ = ["RunRecord", "run_module", "measure_group", "jax_python"]
