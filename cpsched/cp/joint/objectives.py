"""Objective of the joint model: the makespan over the time copies (weighted by the
scenarios' weights, or the largest relative to its lower bound), as the overlap model has
it; clones and exposed copies are inside the makespan."""

from __future__ import annotations

import numpy as np

from cpsched.cp.joint.variables import JointVars
from cpsched.cp.overlap import objectives as overlap


def makespan(J: JointVars, scenario_objective: str, tick: np.ndarray, ref: np.ndarray):
    """Minimise the makespan; returns (objective expression, integer coefficients)."""
    obj, coef, _ = overlap.makespan(J.V, J.prob.base, scenario_objective, tick, ref, J.V.H)
    J.m.minimize(obj)
    return obj, coef
