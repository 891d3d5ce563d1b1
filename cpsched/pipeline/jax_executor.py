"""Reference executor: run a pipeline schedule for real with JAX and check its gradients.

A small MLP (one ``tanh(x @ W + b)`` layer per virtual stage, squared-error loss) is cut into
``p * v`` stages on ``p`` devices (stage ``c*p + d`` on device ``d``, the looped placement of
``cpsched.pipeline.problem``). The schedule's per-device action lists are turned into a
table of ticks: in each tick every device runs at most one action (F, B or W of its own
chunk and microbatch, chosen with ``lax.switch`` from the table), then two ring
``ppermute``s move the forward activations one device on and the input gradients one
device back; a receiver files what it got under the (chunk, microbatch) the table names.
Everything runs inside one ``shard_map`` over a ``pp`` mesh axis, so each device only
sees its own weights and buffers. The accumulated weight gradients are compared with
``jax.grad`` of the same loss computed without any pipeline.

jax is imported lazily: the rest of cpsched never needs it. On a CPU-only machine set
``XLA_FLAGS=--xla_force_host_platform_device_count=4`` (``ensure_host_devices`` does it
when jax has not been imported yet).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from cpsched.pipeline.problem import PipelineProblem
from cpsched.pipeline.schedule import Action, check_complete, deps

_KIND = {"F": 1, "B": 2, "W": 3}


def ensure_host_devices(n: int) -> None:
    """Ask XLA:CPU for ``n`` host devices (only effective before jax is imported)."""
    flags = os.environ.get("XLA_FLAGS", "")
    if "xla_force_host_platform_device_count" not in flags:
        os.environ["XLA_FLAGS"] = f"{flags} --xla_force_host_platform_device_count={n}".strip()


@dataclass
class TickTable:
    kind: np.ndarray  # [T, p] 0 idle, 1 F, 2 B, 3 W
    chunk: np.ndarray  # [T, p]
    mb: np.ndarray  # [T, p]
    recv_f: np.ndarray  # [T, p, 3]: (flag, chunk, mb) for the activation received after tick t
    recv_b: np.ndarray  # [T, p, 3]: same for the input gradient

    @property
    def ticks(self) -> int:
        return self.kind.shape[0]


def tick_table(problem: PipelineProblem, actions) -> TickTable:
    """Unit-time replay of the lists: an action runs one tick after its inputs (a transfer
    lands at the end of the tick that produced it) and after the device's previous action."""
    check_complete(problem, actions)
    p = problem.p
    tick: dict[Action, int] = {}
    ptr, free = [0] * p, [0] * p
    left = sum(len(x) for x in actions)
    while left:
        moved = False
        for d in range(p):
            while ptr[d] < len(actions[d]):
                a = actions[d][ptr[d]]
                qs = deps(problem, a)
                if any(q not in tick for q in qs):
                    break
                t = max([free[d]] + [tick[q] + 1 for q in qs])
                tick[a] = t
                free[d] = t + 1
                ptr[d] += 1
                left -= 1
                moved = True
        if not moved:
            raise ValueError("the action lists deadlock")
    T = max(tick.values()) + 1
    kind = np.zeros((T, p), np.int32)
    chunk = np.zeros((T, p), np.int32)
    mb = np.zeros((T, p), np.int32)
    rf = np.zeros((T, p, 3), np.int32)
    rb = np.zeros((T, p, 3), np.int32)
    S = problem.n_stages
    for a, t in tick.items():
        d = problem.device(a.stage)
        kind[t, d], chunk[t, d], mb[t, d] = _KIND[a.kind], problem.chunk(a.stage), a.mb
        if a.kind == "F" and a.stage < S - 1:
            nxt = a.stage + 1
            rf[t, problem.device(nxt)] = (1, problem.chunk(nxt), a.mb)
        if a.kind == "B" and a.stage > 0:
            prv = a.stage - 1
            rb[t, problem.device(prv)] = (1, problem.chunk(prv), a.mb)
    return TickTable(kind, chunk, mb, rf, rb)


def init_params(problem: PipelineProblem, hidden: int, seed: int = 0):
    """Weights [p, v, H, H] and biases [p, v, H]; entry [d, c] is stage c*p + d."""
    rng = np.random.default_rng(seed)
    w = rng.normal(0, 1.0 / np.sqrt(hidden), (problem.p, problem.v, hidden, hidden))
    b = rng.normal(0, 0.1, (problem.p, problem.v, hidden))
    return w.astype(np.float32), b.astype(np.float32)


def reference_grads(problem: PipelineProblem, w, b, x, y):
    """Loss and gradients of the whole model, no pipeline: (loss, dW, db)."""
    import jax
    import jax.numpy as jnp

    p, v = problem.p, problem.v
    n = x.shape[0] * x.shape[1]

    def loss(w, b):
        h = x
        for s in range(p * v):
            d, c = s % p, s // p
            h = jnp.tanh(h @ w[d, c] + b[d, c])
        return 0.5 * jnp.sum((h - y) ** 2) / n

    val, (gw, gb) = jax.value_and_grad(loss, argnums=(0, 1))(jnp.asarray(w), jnp.asarray(b))
    return float(val), np.asarray(gw), np.asarray(gb)


def run_schedule(problem: PipelineProblem, actions, w, b, x, y):
    """Execute ``actions`` on ``problem.p`` devices; returns (loss, dW, db) like
    ``reference_grads``. ``x``, ``y``: [m, batch, H] microbatches and targets."""
    ensure_host_devices(problem.p)
    import jax
    import jax.numpy as jnp
    from jax.sharding import PartitionSpec as P

    if len(jax.devices()) < problem.p:
        raise RuntimeError(
            f"{problem.p} devices needed, jax sees {len(jax.devices())}; set "
            f"XLA_FLAGS=--xla_force_host_platform_device_count={problem.p} "
            f"before importing jax"
        )
    p, v, m = problem.p, problem.v, problem.m
    S = p * v
    fused = not problem.split_backward
    tab = tick_table(problem, actions)
    x.shape[-1]
    n = x.shape[0] * x.shape[1]
    mesh = jax.make_mesh((p,), ("pp",), devices=jax.devices()[:p])
    kind_t, chunk_t, mb_t = (jnp.asarray(a) for a in (tab.kind, tab.chunk, tab.mb))
    rf_t, rb_t = jnp.asarray(tab.recv_f), jnp.asarray(tab.recv_b)
    xin0 = np.zeros((p, v, m) + x.shape[1:], np.float32)
    xin0[0, 0] = x  # stage 0 reads the data
    fwd_perm = [(i, (i + 1) % p) for i in range(p)]
    bwd_perm = [(i, (i - 1) % p) for i in range(p)]

    def device_program(w, b, xin, y):
        w, b, xin = w[0], b[0], xin[0]  # this device's chunks
        d = jax.lax.axis_index("pp")
        zeros = jnp.zeros(xin.shape[2:], xin.dtype)
        state = dict(
            xin=xin,
            ys=jnp.zeros_like(xin),
            gout=jnp.zeros_like(xin),
            gpre=jnp.zeros_like(xin),
            dw=jnp.zeros_like(w),
            db=jnp.zeros_like(b),
            loss=jnp.zeros((), xin.dtype),
        )

        def tick(t, st):
            k, c, j = kind_t[t, d], chunk_t[t, d], mb_t[t, d]
            stage = c * p + d

            def idle(st):
                return st, zeros, zeros

            def fwd(st):
                h = jnp.tanh(st["xin"][c, j] @ w[c] + b[c])
                last = stage == S - 1
                g = (h - y[j]) / n
                st = dict(
                    st,
                    ys=st["ys"].at[c, j].set(h),
                    gout=jnp.where(last, st["gout"].at[c, j].set(g), st["gout"]),
                    loss=st["loss"] + jnp.where(last, 0.5 * jnp.sum((h - y[j]) ** 2) / n, 0.0),
                )
                return st, jnp.where(last, zeros, h), zeros

            def weight(st, gp):
                xi = st["xin"][c, j]
                return dict(st, dw=st["dw"].at[c].add(xi.T @ gp), db=st["db"].at[c].add(gp.sum(0)))

            def bwd(st):
                h = st["ys"][c, j]
                gp = st["gout"][c, j] * (1.0 - h * h)
                gx = gp @ w[c].T
                st = weight(st, gp) if fused else dict(st, gpre=st["gpre"].at[c, j].set(gp))
                return st, zeros, jnp.where(stage == 0, zeros, gx)

            def wgrad(st):
                return weight(st, st["gpre"][c, j]), zeros, zeros

            st, send_f, send_b = jax.lax.switch(k, [idle, fwd, bwd, wgrad], st)
            got_f = jax.lax.ppermute(send_f, "pp", fwd_perm)
            got_b = jax.lax.ppermute(send_b, "pp", bwd_perm)
            ff, fc, fj = rf_t[t, d, 0], rf_t[t, d, 1], rf_t[t, d, 2]
            bf, bc, bj = rb_t[t, d, 0], rb_t[t, d, 1], rb_t[t, d, 2]
            st = dict(
                st,
                xin=jnp.where(ff == 1, st["xin"].at[fc, fj].set(got_f), st["xin"]),
                gout=jnp.where(bf == 1, st["gout"].at[bc, bj].set(got_b), st["gout"]),
            )
            return st

        st = jax.lax.fori_loop(0, tab.ticks, tick, state)
        return st["dw"][None], st["db"][None], jax.lax.psum(st["loss"], "pp")

    prog = jax.jit(
        jax.shard_map(
            device_program,
            mesh=mesh,
            in_specs=(P("pp"), P("pp"), P("pp"), P()),
            out_specs=(P("pp"), P("pp"), P()),
            check_vma=False,
        )
    )
    from jax.sharding import NamedSharding

    split, rep = NamedSharding(mesh, P("pp")), NamedSharding(mesh, P())
    gw, gb, loss = prog(
        jax.device_put(jnp.asarray(w), split),
        jax.device_put(jnp.asarray(b), split),
        jax.device_put(jnp.asarray(xin0), split),
        jax.device_put(jnp.asarray(y), rep),
    )
    return float(loss), np.asarray(gw), np.asarray(gb)


def check(
    problem: PipelineProblem,
    actions,
    hidden: int = 8,
    batch: int = 2,
    seed: int = 0,
    rtol: float = 1e-4,
    atol: float = 1e-6,
) -> dict:
    """Run ``actions`` and the unpipelined step on the same data; raise AssertionError when
    the loss or any gradient differs beyond the tolerance. Returns the largest differences."""
    rng = np.random.default_rng(seed + 1)
    w, b = init_params(problem, hidden, seed)
    x = rng.normal(size=(problem.m, batch, hidden)).astype(np.float32)
    y = rng.normal(size=(problem.m, batch, hidden)).astype(np.float32)
    l0, gw0, gb0 = reference_grads(problem, w, b, x, y)
    l1, gw1, gb1 = run_schedule(problem, actions, w, b, x, y)
    np.testing.assert_allclose(l1, l0, rtol=rtol, atol=atol)
    np.testing.assert_allclose(gw1, gw0, rtol=rtol, atol=atol)
    np.testing.assert_allclose(gb1, gb0, rtol=rtol, atol=atol)
    return {
        "loss": l0,
        "max_abs_dw": float(np.abs(gw1 - gw0).max()),
        "max_abs_db": float(np.abs(gb1 - gb0).max()),
        "ticks": tick_table(problem, actions).ticks,
    }


__all__ = [
    "tick_table",
    "run_schedule",
    "reference_grads",
    "check",
    "init_params",
    "ensure_host_devices",
]
