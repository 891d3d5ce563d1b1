"""The memory CP model's rows and objectives alone, on hand-made problems.

``Problem`` built directly (not from a graph), so that op 0 need not come first, buffers can
be live-in with several users, a transient can be exactly one model unit, a buffer's users
can all run before its definer (it is then live at its definer only), and nothing at all
may be sized. Checked against every order (``Problem.peak``), no exact search or fallback
beside the model."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from cpsched.cp.memory import constraints as C
from cpsched.cp.memory import objectives as O
from cpsched.cp.memory.solve import ModelOptions, ObjectiveSpec, build, run
from cpsched.cp.memory.problem import Problem
from cpsched.cp.runtime import SolverConfig

CFG = SolverConfig(time_limit=10, workers=1, seed=0)
# nothing redundant beside the rows under test: no forced-live peak bound, no symmetry
BARE = dict(symmetry=False, domains=False, peak_bound=False)


def problem(preds, defs, users, out, sizes, transient, base, name="hand") -> Problem:
    n = len(preds)
    base = np.atleast_1d(np.asarray(base, dtype=np.int64))
    S = len(base)
    sizes = np.asarray(sizes, dtype=np.int64).reshape(S, len(defs))
    return Problem(
        ops=np.arange(n, dtype=np.int64),
        preds=[list(p) for p in preds],
        buf_def=np.asarray(defs, dtype=np.int64),
        buf_users=[list(u) for u in users],
        buf_out=np.asarray(out, dtype=bool),
        sizes=sizes,
        transient=np.asarray(transient, dtype=np.int64).reshape(S, n),
        base=base,
        floor=np.zeros(S, dtype=np.int64),
        name=name,
    )


def orders(p: Problem) -> list[list[int]]:
    return [list(o) for o in itertools.permutations(range(p.n)) if p.is_valid(o)]


def random_problem(seed: int, n: int = 5) -> Problem:
    """A random DAG whose op indices are shuffled (op 0 is not always a source), with
    live-in buffers of several users, program outputs, transients of 0 to 2 bytes and
    sizes from 1 byte (the model unit is 1 byte, so 1-byte items are one unit)."""
    rng = random.Random(seed)
    label = list(range(n))
    rng.shuffle(label)  # label[i]: op index of the i-th op in a hidden topological order
    preds: list[list[int]] = [[] for _ in range(n)]
    for i in range(n):
        preds[label[i]] = [label[j] for j in range(i) if rng.random() < 0.35]
    succs = {v: [w for w in range(n) if v in preds[w]] for v in range(n)}
    defs, users, out, sizes = [], [], [], []
    for v in range(n):
        for _ in range(rng.choice([1, 1, 2])):
            us = [w for w in succs[v] if rng.random() < 0.8]
            defs.append(v)
            users.append(us)
            out.append(not us or rng.random() < 0.15)
            sizes.append(rng.randint(1, 9))
    for _ in range(2):  # live-in buffers read by up to three ops
        defs.append(-1)
        users.append(sorted(rng.sample(range(n), rng.randint(1, 3))))
        out.append(False)
        sizes.append(rng.randint(1, 9))
    trans = [rng.choice([0, 0, 1, 2]) for _ in range(n)]
    return problem(preds, defs, users, out, sizes, trans, rng.randint(0, 3), f"rand{seed}")


def live_sets(p: Problem) -> tuple[np.ndarray, np.ndarray]:
    """``[n, nb]``: b is live at op v's step in some order / in every order."""
    some = np.zeros((p.n, p.nb), dtype=bool)
    every = np.ones((p.n, p.nb), dtype=bool)
    for o in orders(p):
        start, end = p.live_ranges(o)
        pos = np.empty(p.n, dtype=np.int64)
        pos[o] = np.arange(p.n)
        live = (start[None, :] <= pos[:, None]) & (pos[:, None] <= end[None, :])
        some |= live
        every &= live
    return some, every


def fixed_order_peak(p: Problem, order: list[int], opts: ModelOptions) -> int:
    """The model's least peak in bytes (exact units) with every position pinned to
    ``order``."""
    built = build(p, ObjectiveSpec("weighted", weights=np.ones(p.n_scenarios)), opts)
    scale = built.vars.scale
    assert scale.exact.all()
    for t, v in enumerate(order):
        built.vars.model.add(built.vars.pos[v] == t)
    r = run(built, CFG)
    assert r.status == "OPTIMAL", order
    return int(r.peaks_units[0]) * int(scale.unit[0])


def hand_problems() -> dict[str, Problem]:
    return {
        # a 1-byte transient on op 1 decides the peak: 2 (a) + 2 (b) + 1 at op 1
        "one-unit-transient": problem(
            [[], [0]], [0, 1], [[1], []], [False, True], [2, 2], [0, 1], 0
        ),
        # nothing sized: the peak is the base (a buffer live in and out of the program)
        "base-only": problem([[], [0]], [], [], [], np.zeros((1, 0)), [0, 0], 3),
        # a live-in buffer read by ops 0 and 1 is live at op 2 (transient 5) iff one of
        # them runs after op 2
        "live-in-readers": problem(
            [[], [], []], [-1, 2], [[0, 1], []], [False, True], [10, 1], [0, 0, 5], 0
        ),
        # op 0 defines B, op 1 (transient 5) defines C, op 2 reads both: B is live at
        # op 1 iff op 0 runs first (op 2 certainly runs after op 1)
        "def-before-reader-after": problem(
            [[], [], [0, 1]],
            [0, 1, 2],
            [[2], [2], []],
            [False, False, True],
            [10, 10, 1],
            [0, 5, 0],
            0,
        ),
        # W is defined by op 1 and read by its ancestor op 0: live at op 1 only; op 2
        # (independent) defines a smaller program output
        "reader-before-definer": problem(
            [[], [0], []], [1, 2], [[0], []], [False, True], [10, 4], [0, 0, 0], 0
        ),
    }


@pytest.mark.parametrize("memory", ["cumulative", "per-op", "both"])
@pytest.mark.parametrize("name", sorted(hand_problems()))
def test_hand_made_rows_evaluate_every_fixed_order_exactly(name, memory):
    """Pin the model (no peak bound, symmetry or domains) to each order: its least peak is
    that order's peak. Each problem exposes one way to under- or over-count: a transient
    of one unit, a peak that is only the base, a live-in buffer whose readers are
    unordered against the op, a definer that may or may not run before the op while the
    reader surely runs after it, and a buffer whose reader runs before its definer."""
    p = hand_problems()[name]
    opts = ModelOptions(memory=memory, **BARE)
    for o in orders(p):
        assert fixed_order_peak(p, o, opts) == int(p.peak(o)[0]), o


@pytest.mark.parametrize("seed", range(6))
def test_hand_made_maybe_live_is_live_in_some_but_not_every_order(seed):
    """``forced_live`` is exactly "live at v in every order" and ``maybe_live`` exactly
    "in some order but not every one", on problems where op 0 need not be a source."""
    p = random_problem(seed)
    some, every = live_sets(p)
    assert (p.forced_live == every).all()
    assert (C.maybe_live(p) == (some & ~every)).all()


def test_hand_made_maybe_live_of_an_op_0_that_is_not_a_source():
    """Op 1 runs before op 0, which defines X (read by op 2): X is never live at op 1."""
    p = problem([[1], [], [0], []], [0, 3], [[2], []], [False, True], [5, 1], [0] * 4, 0)
    maybe = C.maybe_live(p)
    some, every = live_sets(p)
    assert not some[1, 0] and not maybe[1, 0]
    assert maybe[3, 0] and not every[3, 0]  # op 3 is independent of X's def and reader
    assert (maybe == (some & ~every)).all()


def test_hand_made_reader_before_definer_is_counted_somewhere():
    """A buffer whose only reader runs before its definer is live at the definer in every
    order; the model must count it there (as forced or as maybe-live)."""
    p = hand_problems()["reader-before-definer"]
    some, _ = live_sets(p)
    assert some[1, 0]
    assert ((p.forced_live | C.maybe_live(p)) >= some).all()


@pytest.mark.parametrize("seed", range(6))
def test_hand_made_random_rows_are_exact_on_sampled_orders(seed):
    """The per-op and cumulative rows alone, on random hand-made problems, pinned to 12
    sampled orders each: the model's least peak is the order's."""
    p = random_problem(seed)
    all_orders = orders(p)
    sample = random.Random(seed).sample(all_orders, min(12, len(all_orders)))
    for memory in ("cumulative", "per-op"):
        opts = ModelOptions(memory=memory, **BARE)
        for o in sample:
            assert fixed_order_peak(p, o, opts) == int(p.peak(o)[0]), (memory, o)


# -- objectives ---------------------------------------------------------------------------


def _two_units() -> Problem:
    """Two scenarios: 64-byte model units in the first, 1-byte units in the second."""
    return problem(
        [[], [0]], [0, 1], [[1], []], [False, True], [[64, 128], [1, 3]], [[0, 0], [0, 0]], [0, 0]
    )


@pytest.mark.parametrize(
    "weights,want",
    [
        # w * unit = (32, 0.5): round(10000 * 0.5 / 32) = 156, then / gcd(10000, 156) = 4
        ((0.5, 0.5), (2500, 39)),
        # a zero weight stays 0; (10000, 0) / 10000
        ((1.0, 0.0), (1, 0)),
        ((0.0, 1.0), (0, 1)),
        # a positive weight that rounds to 0 becomes 1: (10000, 1), gcd 1
        ((1.0, 1e-5), (10000, 1)),
        # all weights zero: weigh by the model unit, as bytes: like (0.5, 0.5)
        ((0.0, 0.0), (2500, 39)),
    ],
)
def test_hand_made_weighted_coefficients(weights, want):
    """``round(RES * w_s * unit_s / max)``, at least 1 for a positive weight, 0 for a zero
    weight, divided by their gcd; integers."""
    built = build(_two_units(), ObjectiveSpec("weighted", weights=np.ones(2)))
    assert built.vars.scale.unit.tolist() == [64, 1]
    c = O.weight_coefs(built.vars, np.array(weights))
    assert c.dtype.kind == "i"
    assert c.tolist() == list(want)


def test_hand_made_zero_weight_scenario_is_ignored():
    """Weights (1, 0): the model's order is the least peak of scenario 0 alone, and its
    objective is that peak in units (coefficient 1); scenario 1 does not count."""
    # op 0 and op 1 are independent, op 2 reads both; scenario 0 prefers op 1 first,
    # scenario 1 prefers op 0 first
    p = problem(
        [[], [], [0, 1]],
        [0, 1, 2],
        [[2], [2], []],
        [False, False, True],
        [[8, 8, 8], [8, 8, 8]],
        [[0, 4, 0], [4, 0, 0]],
        [0, 0],
    )
    built = build(p, ObjectiveSpec("weighted", weights=np.array([1.0, 0.0])), ModelOptions(**BARE))
    r = run(built, CFG)
    assert r.status == "OPTIMAL"
    peaks = np.array([p.peak(o) for o in orders(p)])
    best0 = int(peaks[:, 0].min())
    unit = int(built.vars.scale.unit[0])
    assert unit == 4  # the gcd of 8-byte buffers and a 4-byte transient
    assert int(p.peak(r.order)[0]) == best0 and int(r.objective) == best0 // unit


def test_hand_made_minimax_with_a_zero_lower_bound():
    """A lower bound of 0 bytes is read as one model unit: ``z = RES * peak``."""
    p = hand_problems()["live-in-readers"]
    built = build(p, ObjectiveSpec("minimax", minimax_lbs=np.array([0])), ModelOptions(**BARE))
    assert built.objective.lbs.tolist() == [1]
    r = run(built, CFG)
    assert r.status == "OPTIMAL"
    best = min(int(p.peak(o)[0]) for o in orders(p))
    assert int(p.peak(r.order)[0]) == best and int(r.objective) == O.RES * best


# seeds whose least peak is above the problem's bound (the minimum-cut bound closes the
# gap on most 4-op graphs)
@pytest.mark.parametrize("seed", [0, 6, 9, 11, 12, 13])
def test_hand_made_minimax_over_the_forced_live_bound(seed):
    """Minimax with the problem's own lower bound as the denominator (the peak variable's
    lower bound too), where the least peak is above it: ``z`` must be allowed above RES."""
    p = random_problem(seed, n=4)
    peaks = np.array([p.peak(o)[0] for o in orders(p)])
    lb = int(p.lower_bound[0])
    assert peaks.min() > lb  # these seeds have a gap
    built = build(p, ObjectiveSpec("minimax", minimax_lbs=np.array([lb])))
    r = run(built, CFG)
    assert r.status == "OPTIMAL"
    assert int(r.objective) == -(-O.RES * int(peaks.min()) // lb) > O.RES
