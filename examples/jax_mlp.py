"""A two-layer MLP's SGD step, the input of `cpsched capture` in docs/jax.md.

`make()` gives the step with a symbolic batch size `b` (a StableHLO module whose sizes are
polynomials in `b`); `make(b=64)` gives it at one batch size (XLA's optimized module too).
"""

import jax
import jax.numpy as jnp


def step(params, x):
    loss = lambda p: jnp.mean(jnp.tanh(x @ p["w1"]) @ p["w2"])  # noqa: E731
    grads = jax.grad(loss)(params)
    return jax.tree.map(lambda p, g: p - 0.1 * g, params, grads)


def make(b=None):
    params = {"w1": jnp.ones((256, 1024)), "w2": jnp.ones((1024, 256))}
    if b is None:
        x = jax.ShapeDtypeStruct((8, 256), jnp.float32)  # shape stand-in: dims say b, 256
        return step, (params, x), {"dims": {"x": "b, 256"}}
    return step, (params, jnp.ones((b, 256)))
