"""Export a small transformer training step as StableHLO with symbolic (b, s) dims.

jax is an optional extra; run with the jax environment, from the repository root::

    .venv-jax/bin/python models/jax/symbolic.py --out models/stablehlo

It writes, for the same training step (2 layers, d_model 64, 4 heads, d_ff 128, vocab 256,
sinusoidal positions, f32, softmax cross-entropy, SGD):

- ``transformer_train.sym.mlir``: ``jax.export`` with ``symbolic_shape("b, s",
  constraints=["s <= 2048"])`` (every activation has ``?`` dims tied to ``b`` and ``s``);
- ``transformer_train.b{B}_s{S}.mlir``: the same step exported with concrete shapes, for
  the (b, s) pairs in ``CONCRETE``.

``control_flow.sym.mlir``: while, cond, sort, cumsum, pad and a ``b // 2 + 1`` gather under a
symbolic ``b`` (see ``build_control_flow``);
and ``mlp_train.b{B}.hlo`` for B in ``MLP_BUCKETS``: XLA's optimized module of a small MLP
training step compiled once per batch size (the input of ``cpsched info a.b64.hlo
a.b256.hlo ...``, which fits one symbolic graph to them; source paths cut as in capture.py).

Debug locations are cut (``#loc`` alias lines and ``loc(#locN)`` references) except the
names of function arguments, which carry the pytree paths of the parameters.
"""

from __future__ import annotations

import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

D, HEADS, D_FF, VOCAB, LAYERS, MAX_LEN = 64, 4, 128, 256, 2, 2048
CONCRETE = ((2, 128), (4, 256), (8, 512))
MLP_BUCKETS = (64, 256, 1024)


def build():
    import jax
    import jax.numpy as jnp

    dh = D // HEADS

    def init(key):
        ks = iter(jax.random.split(key, 32))
        dense = lambda m, n: jax.random.normal(next(ks), (m, n)) / jnp.sqrt(m)
        p = {"wte": dense(VOCAB, D), "blocks": []}
        for _ in range(LAYERS):
            p["blocks"].append({"wqkv": dense(D, 3 * D), "wo": dense(D, D),
                                "w1": dense(D, D_FF), "w2": dense(D_FF, D), "g": jnp.ones(D)})
        return p

    def norm(g, x):
        return x * jax.lax.rsqrt((x * x).mean(-1, keepdims=True) + 1e-5) * g

    def block(p, x):
        b, s, _ = x.shape
        h = norm(p["g"], x)
        q, k, v = jnp.split(h @ p["wqkv"], 3, axis=-1)
        heads = lambda t: t.reshape(b, s, HEADS, dh).transpose(0, 2, 1, 3)
        q, k, v = heads(q), heads(k), heads(v)
        scores = q @ k.transpose(0, 1, 3, 2) / jnp.sqrt(dh)
        # causal mask as an additive bias from two iotas
        # (lax iotas: jnp.arange adds start/step arithmetic under symbolic shapes)
        row = jax.lax.broadcasted_iota(jnp.int32, (s, s), 0)
        col = jax.lax.broadcasted_iota(jnp.int32, (s, s), 1)
        bias = (col > row).astype(jnp.float32) * -1e9
        att = jax.nn.softmax(scores + bias, axis=-1)
        o = (att @ v).transpose(0, 2, 1, 3).reshape(b, s, D)
        x = x + o @ p["wo"]
        return x + jax.nn.gelu(norm(p["g"], x) @ p["w1"]) @ p["w2"]

    def loss_fn(p, tokens, targets):
        s = tokens.shape[1]
        pos = jax.lax.broadcasted_iota(jnp.float32, (s, 1), 0)
        freq = jnp.exp(-jax.lax.broadcasted_iota(jnp.float32, (1, D), 1) / D)
        x = p["wte"][tokens] + jnp.sin(pos * freq)[None]
        for bp in p["blocks"]:
            x = block(bp, x)
        logits = x @ p["wte"].T
        logz = jax.nn.logsumexp(logits, axis=-1)
        onehot = jax.nn.one_hot(targets, VOCAB)
        return (logz - (logits * onehot).sum(-1)).mean()

    def transformer_train_step(p, tokens, targets):
        loss, grads = jax.value_and_grad(loss_fn)(p, tokens, targets)
        return jax.tree.map(lambda a, g: a - 1e-3 * g, p, grads), loss

    params = jax.eval_shape(init, jax.random.PRNGKey(0))
    return transformer_train_step, params


def build_mlp(batch: int):
    import jax
    import jax.numpy as jnp

    def loss(w, x):
        h = jax.nn.relu(x @ w[0])
        return ((h @ w[1]) ** 2).mean()

    def mlp_train_step(w, x):
        g = jax.grad(loss)(w, x)
        return [a - 0.1 * b for a, b in zip(w, g)]

    w = [jax.ShapeDtypeStruct((256, 512), jnp.float32),
         jax.ShapeDtypeStruct((512, 256), jnp.float32)]
    return mlp_train_step, (w, jax.ShapeDtypeStruct((batch, 256), jnp.float32))


def build_control_flow():
    """Ops JAX emits under shape polymorphism beyond a plain step: while, case (cond), sort,
    cumsum (dynamic_reduce_window custom call), pad, a gather whose size is b // 2 + 1
    (floor_divide / remainder helper functions), dynamic_reshape."""
    import jax
    import jax.numpy as jnp

    def control_flow(x, n):
        def body(c):
            i, y = c
            return i + 1, jnp.sin(y) * 2
        _, y = jax.lax.while_loop(lambda c: c[0] < n, body, (0, x))
        z = jax.lax.cond(n > 3, lambda v: v * 2, lambda v: jnp.concatenate([v, v])[:v.shape[0]],
                         y)
        w = jax.lax.sort(z, dimension=0)
        head = z[: x.shape[0] // 2 + 1]
        return jnp.cumsum(w, axis=0), jnp.pad(z, ((1, 2), (0, 0))), head.sum(), z.reshape(-1)

    return control_flow


def clean(text: str) -> str:
    text = re.sub(r"^#loc\d*\s*=.*\n", "", text, flags=re.M)
    return re.sub(r" loc\(#loc\d*\)", "", text)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="models/stablehlo")
    args = ap.parse_args()
    import jax
    import jax.numpy as jnp
    from jax import export

    step, params = build()
    os.makedirs(args.out, exist_ok=True)
    b, s = export.symbolic_shape("b, s", constraints=[f"s <= {MAX_LEN}"])
    tok = jax.ShapeDtypeStruct((b, s), jnp.int32)
    exp = export.export(jax.jit(step))(params, tok, tok)
    with open(os.path.join(args.out, "transformer_train.sym.mlir"), "w") as f:
        f.write(clean(exp.mlir_module()))
    for bv, sv in CONCRETE:
        tok = jax.ShapeDtypeStruct((bv, sv), jnp.int32)
        exp = export.export(jax.jit(step))(params, tok, tok)
        with open(os.path.join(args.out, f"transformer_train.b{bv}_s{sv}.mlir"), "w") as f:
            f.write(clean(exp.mlir_module()))
    b = export.symbolic_shape("b")[0]
    exp = export.export(jax.jit(build_control_flow()))(
        jax.ShapeDtypeStruct((b, 8), jnp.float32), jax.ShapeDtypeStruct((), jnp.int32))
    with open(os.path.join(args.out, "control_flow.sym.mlir"), "w") as f:
        f.write(clean(exp.mlir_module()))
    from models.jax.capture import sanitize
    for bv in MLP_BUCKETS:
        fn, fargs = build_mlp(bv)
        text = jax.jit(fn).lower(*fargs).compile().as_text()
        with open(os.path.join(args.out, f"mlp_train.b{bv}.hlo"), "w") as f:
            f.write(sanitize(text))
    print(f"wrote {2 + len(CONCRETE) + len(MLP_BUCKETS)} modules to {args.out} (jax {jax.__version__})")


if __name__ == "__main__":
    main()
