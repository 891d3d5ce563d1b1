"""Objectives of the remat model: least weighted added time (clone durations plus exposed
prefetch time, with the scenario weights), or least weighted peak with the added time
capped per scenario."""

from __future__ import annotations

from cpsched.cp.remat.variables import Vars


def added_time(mdl: Vars) -> list:
    """Per scenario, the added time: every present clone's duration plus every exposed
    prefetch."""
    spec = mdl.sp
    out = []
    for s in range(spec.n_s):
        terms = []
        for (v, _k), ps in mdl.P.items():
            if spec.dur[s, v] > 0:
                terms.append(int(spec.dur[s, v]) * ps[s])
        for (_b, s2), xv in mdl.X.items():
            if s2 == s:
                terms.append(xv)
        out.append(sum(terms) if terms else 0)
    return out


def apply(mdl: Vars) -> None:
    """The spec's objective: ``time`` (weighted added time) or ``peak`` (weighted peak, the
    added time at most ``overhead_cap``)."""
    spec, m = mdl.sp, mdl.m
    S = spec.n_s
    mdl.cost = added_time(mdl)
    if spec.objective == "peak":
        if spec.overhead_cap is not None:
            for s in range(S):
                m.add(mdl.cost[s] <= int(spec.overhead_cap[s]))
        m.minimize(sum(int(spec.weights[s]) * mdl.capvar[s] for s in range(S)))
    else:
        m.minimize(sum(int(spec.weights[s]) * mdl.cost[s] for s in range(S)))
