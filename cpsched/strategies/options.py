"""The solver options of one ``SolverConfig`` as the keyword arguments the methods take
(``workers``, ``seed``, ``deterministic``, ``deadline``), for a strategy that runs another
method with its own options."""

from __future__ import annotations

from typing import Any

from cpsched.cp.runtime import SolverConfig

__all__ = ["solver_options"]


def solver_options(cfg: SolverConfig) -> dict[str, Any]:
    """``cfg``'s workers, seed, determinism and deadline (None in deterministic mode)."""
    return dict(
        workers=cfg.workers,
        seed=cfg.seed,
        deterministic=cfg.deterministic,
        deadline=None if cfg.deterministic else cfg.deadline,
    )
