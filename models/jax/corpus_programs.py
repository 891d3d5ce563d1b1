"""The JAX programs of the corpus (``models/hlo/corpus/``), one builder per program.

Each builder returns ``(jitted_fn, args, function_name)``; ``capture.py --corpus`` calls it
in a child process whose ``XLA_FLAGS`` ask XLA:CPU to dump, runs the function once and
keeps the dumped module of ``function_name``. jax is imported inside the builders only, so
importing this file needs nothing but the standard library.

``CORPUS`` maps a program name to ``(builder, host devices, family, description)``. The
programs are small (they compile in seconds) but written the way users write them:
stacked layer parameters scanned with ``lax.scan``, ``jax.checkpoint`` policies, meshes with
named axes, ``shard_map`` collectives, donated buffers.
"""

from __future__ import annotations


# ----------------------------------------------------------------------------------------
# Shared pieces (called inside builders, after jax is imported there).
# ----------------------------------------------------------------------------------------

def _jax():
    import jax
    import jax.numpy as jnp
    return jax, jnp


def _shard_map(f, mesh, in_specs, out_specs):
    import jax
    try:
        return jax.shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs,
                             check_vma=False)
    except (AttributeError, TypeError):  # older jax
        from jax.experimental.shard_map import shard_map
        return shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs,
                         check_rep=False)


def _mesh(shape, names):
    import jax
    import numpy as np
    from jax.sharding import Mesh
    n = int(np.prod(shape))
    devices = jax.devices()
    if len(devices) < n:
        raise SystemExit(f"need {n} devices, have {len(devices)}")
    return Mesh(np.array(devices[:n]).reshape(shape), names)


def _rms_norm(x, g):
    jax, jnp = _jax()
    return x * jax.lax.rsqrt((x * x).mean(-1, keepdims=True) + 1e-5) * g


def _stacked_block_params(key, layers, d, d_ff, dtype=None):
    """Parameters of `layers` pre-norm transformer blocks, stacked on a leading axis."""
    jax, jnp = _jax()
    dtype = dtype or jnp.float32
    k = jax.random.split(key, 4)
    init = lambda kk, shape, fan_in: (jax.random.normal(kk, shape) / jnp.sqrt(fan_in)).astype(dtype)
    return {"g1": jnp.ones((layers, d), dtype), "g2": jnp.ones((layers, d), dtype),
            "wqkv": init(k[0], (layers, d, 3 * d), d), "wo": init(k[1], (layers, d, d), d),
            "w1": init(k[2], (layers, d, d_ff), d), "w2": init(k[3], (layers, d_ff, d), d_ff)}


def _block(p, x, heads, causal=True):
    """One pre-norm transformer block on x [batch, seq, d] (attention + GELU MLP)."""
    jax, jnp = _jax()
    b, s, d = x.shape
    dh = d // heads
    h = _rms_norm(x, p["g1"])
    q, k, v = jnp.split(h @ p["wqkv"], 3, axis=-1)
    split = lambda t: t.reshape(b, s, heads, dh).transpose(0, 2, 1, 3)
    q, k, v = split(q), split(k), split(v)
    scores = jnp.einsum("bhqd,bhkd->bhqk", q, k) / jnp.sqrt(dh).astype(x.dtype)
    if causal:
        mask = jnp.tril(jnp.ones((s, s), bool))
        scores = jnp.where(mask, scores, jnp.asarray(-1e9, scores.dtype))
    att = jax.nn.softmax(scores, axis=-1)
    o = jnp.einsum("bhqk,bhkd->bhqd", att, v).transpose(0, 2, 1, 3).reshape(b, s, d)
    x = x + o @ p["wo"]
    h = _rms_norm(x, p["g2"])
    return x + jax.nn.gelu(h @ p["w1"]) @ p["w2"]


def _sgd(params, grads, lr=0.01):
    jax, _ = _jax()
    return jax.tree.map(lambda p, g: p - lr * g, params, grads)


def _adam(params, m, v, grads, step, lr=3e-4):
    jax, jnp = _jax()
    b1, b2, eps = 0.9, 0.999, 1e-8
    step = step + 1
    m = jax.tree.map(lambda m, g: b1 * m + (1 - b1) * g, m, grads)
    v = jax.tree.map(lambda v, g: b2 * v + (1 - b2) * g * g, v, grads)
    c1, c2 = 1 - b1 ** step, 1 - b2 ** step
    params = jax.tree.map(lambda p, m, v: p - lr * (m / c1) / (jnp.sqrt(v / c2) + eps),
                          params, m, v)
    return params, m, v, step


# ----------------------------------------------------------------------------------------
# Scan over layers with jax.checkpoint.
# ----------------------------------------------------------------------------------------

def _scan_transformer(policy_name, fname, layers=4, remat=True):
    jax, jnp = _jax()
    batch, seq, d, heads, d_ff, vocab = 4, 64, 128, 4, 512, 256
    keys = jax.random.split(jax.random.PRNGKey(10), 4)
    params = {"emb": jax.random.normal(keys[0], (vocab, d)) * 0.02,
              "blocks": _stacked_block_params(keys[1], layers, d, d_ff),
              "gf": jnp.ones(d)}

    layer = lambda x, p: (_block(p, x, heads), None)
    if remat:
        policy = getattr(jax.checkpoint_policies, policy_name)
        layer = jax.checkpoint(layer, policy=policy, prevent_cse=False)

    def loss_fn(params, tokens, targets):
        x = params["emb"][tokens]
        x, _ = jax.lax.scan(layer, x, params["blocks"])
        logits = _rms_norm(x, params["gf"]) @ params["emb"].T
        logp = jax.nn.log_softmax(logits)
        return -jnp.take_along_axis(logp, targets[..., None], -1).mean()

    def step(params, m, v, count, tokens, targets):
        loss, grads = jax.value_and_grad(loss_fn)(params, tokens, targets)
        params, m, v, count = _adam(params, m, v, grads, count)
        return params, m, v, count, loss

    step.__name__ = fname
    tokens = jax.random.randint(keys[2], (batch, seq), 0, vocab)
    targets = jax.random.randint(keys[3], (batch, seq), 0, vocab)
    zeros = jax.tree.map(jnp.zeros_like, params)
    args = (params, zeros, jax.tree.map(jnp.zeros_like, params), jnp.float32(0), tokens,
            targets)
    return jax.jit(step, donate_argnums=(0, 1, 2)), args, fname


def build_scan_remat_nothing():
    return _scan_transformer("nothing_saveable", "scan_remat_nothing_step")


def build_scan_remat_dots():
    return _scan_transformer("dots_saveable", "scan_remat_dots_step")


def build_scan_noremat():
    return _scan_transformer(None, "scan_noremat_step", remat=False)


def build_scan_remat_names():
    """Policy save_only_these_names: only the tagged attention output is kept."""
    jax, jnp = _jax()
    from jax.ad_checkpoint import checkpoint_name
    batch, seq, d, d_ff, layers = 8, 32, 128, 512, 6
    keys = jax.random.split(jax.random.PRNGKey(11), 4)
    params = {"w1": jax.random.normal(keys[0], (layers, d, d_ff)) / jnp.sqrt(d),
              "w2": jax.random.normal(keys[1], (layers, d_ff, d)) / jnp.sqrt(d_ff),
              "g": jnp.ones((layers, d))}

    def layer(x, p):
        h = checkpoint_name(_rms_norm(x, p["g"]), "normed")
        u = checkpoint_name(h @ p["w1"], "up")
        return x + jax.nn.gelu(u) @ p["w2"], None

    layer = jax.checkpoint(layer, policy=jax.checkpoint_policies.save_only_these_names("up"))

    def loss_fn(params, x, y):
        x, _ = jax.lax.scan(layer, x, params)
        return ((x - y) ** 2).mean()

    def scan_remat_names_step(params, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        return _sgd(params, grads), loss

    x = jax.random.normal(keys[2], (batch, seq, d))
    y = jax.random.normal(keys[3], (batch, seq, d))
    return jax.jit(scan_remat_names_step, donate_argnums=(0,)), (params, x, y), \
        "scan_remat_names_step"


def build_grad_accum_scan():
    """Gradient accumulation over microbatches with lax.scan, then one Adam update."""
    jax, jnp = _jax()
    micro, mb, d_in, width, n_cls = 4, 16, 128, 256, 10
    keys = jax.random.split(jax.random.PRNGKey(12), 6)
    params = [(jax.random.normal(keys[i], (a, b)) / jnp.sqrt(a), jnp.zeros(b))
              for i, (a, b) in enumerate([(d_in, width), (width, width), (width, n_cls)])]

    def loss_fn(params, x, y):
        for w, b in params[:-1]:
            x = jax.nn.relu(x @ w + b)
        w, b = params[-1]
        logp = jax.nn.log_softmax(x @ w + b)
        return -jnp.take_along_axis(logp, y[:, None], -1).mean()

    def grad_accum_step(params, m, v, count, xs, ys):
        def body(acc, xy):
            loss, g = jax.value_and_grad(loss_fn)(params, *xy)
            return jax.tree.map(jnp.add, acc, g), loss
        zero = jax.tree.map(jnp.zeros_like, params)
        grads, losses = jax.lax.scan(body, zero, (xs, ys))
        grads = jax.tree.map(lambda g: g / micro, grads)
        params, m, v, count = _adam(params, m, v, grads, count)
        return params, m, v, count, losses.mean()

    xs = jax.random.normal(keys[3], (micro, mb, d_in))
    ys = jax.random.randint(keys[4], (micro, mb), 0, n_cls)
    z = lambda: jax.tree.map(jnp.zeros_like, params)
    return jax.jit(grad_accum_step, donate_argnums=(0, 1, 2)), \
        (params, z(), z(), jnp.float32(0), xs, ys), "grad_accum_step"


# ----------------------------------------------------------------------------------------
# Conditionals and data-dependent loops.
# ----------------------------------------------------------------------------------------

def build_cond_switch():
    """lax.switch picks a layer variant by a traced index; lax.cond skips a non-finite update."""
    jax, jnp = _jax()
    batch, d, width = 32, 128, 256
    keys = jax.random.split(jax.random.PRNGKey(20), 5)
    params = {"w1": jax.random.normal(keys[0], (d, width)) / jnp.sqrt(d),
              "w2": jax.random.normal(keys[1], (width, d)) / jnp.sqrt(width)}

    def loss_fn(params, x, y, variant):
        h = x @ params["w1"]
        h = jax.lax.switch(variant, [jax.nn.relu, jax.nn.gelu,
                                     lambda t: t * jax.nn.sigmoid(t)], h)
        return ((h @ params["w2"] - y) ** 2).mean()

    def cond_switch_step(params, x, y, variant):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y, variant)
        gnorm = jnp.sqrt(sum((g * g).sum() for g in jax.tree.leaves(grads)))
        params = jax.lax.cond(jnp.isfinite(gnorm),
                              lambda p: _sgd(p, grads),
                              lambda p: p, params)
        return params, loss

    x = jax.random.normal(keys[2], (batch, d))
    y = jax.random.normal(keys[3], (batch, d))
    return jax.jit(cond_switch_step, donate_argnums=(0,)), \
        (params, x, y, jnp.int32(1)), "cond_switch_step"


def build_scan_switch_layers():
    """Heterogeneous layers: a scan over layers whose body switches on the layer's kind."""
    jax, jnp = _jax()
    layers, batch, d = 6, 16, 128
    keys = jax.random.split(jax.random.PRNGKey(21), 4)
    params = {"w": jax.random.normal(keys[0], (layers, d, d)) / jnp.sqrt(d),
              "kind": jnp.array([0, 1, 2, 0, 1, 2], jnp.int32)}

    def layer(x, p):
        branches = [lambda x, w: jax.nn.relu(x @ w),
                    lambda x, w: x + jnp.tanh(x @ w),
                    lambda x, w: _rms_norm(x @ w, 1.0)]
        return jax.lax.switch(p["kind"], branches, x, p["w"]), None

    def loss_fn(w, kind, x, y):
        out, _ = jax.lax.scan(layer, x, {"w": w, "kind": kind})
        return ((out - y) ** 2).mean()

    def scan_switch_step(w, kind, x, y):
        loss, g = jax.value_and_grad(loss_fn)(w, kind, x, y)
        return w - 0.01 * g, loss

    x = jax.random.normal(keys[1], (batch, d))
    y = jax.random.normal(keys[2], (batch, d))
    return jax.jit(scan_switch_step, donate_argnums=(0,)), \
        (params["w"], params["kind"], x, y), "scan_switch_step"


def build_while_cg():
    """Conjugate gradients until the residual is small: a while_loop whose trip count
    depends on the data, then a dense layer on the solution."""
    jax, jnp = _jax()
    n, k = 256, 4
    keys = jax.random.split(jax.random.PRNGKey(22), 3)
    a = jax.random.normal(keys[0], (n, n)) / jnp.sqrt(n)
    spd = a @ a.T + jnp.eye(n)
    b = jax.random.normal(keys[1], (n, k))
    w = jax.random.normal(keys[2], (k, 64))

    def while_cg(spd, b, w):
        x0 = jnp.zeros_like(b)
        r0 = b - spd @ x0

        def cond(s):
            _, r, _, rs, it = s
            return jnp.logical_and(jnp.sqrt(rs.sum()) > 1e-5, it < 500)

        def body(s):
            x, r, p, rs, it = s
            ap = spd @ p
            alpha = rs / (p * ap).sum(0)
            x = x + alpha * p
            r = r - alpha * ap
            rs_new = (r * r).sum(0)
            p = r + (rs_new / rs) * p
            return x, r, p, rs_new, it + 1

        x, r, _, _, iters = jax.lax.while_loop(cond, body, (x0, r0, r0, (r0 * r0).sum(0), 0))
        return jnp.tanh(x @ w), iters

    return jax.jit(while_cg), (spd, b, w), "while_cg"


def build_ode_adaptive():
    """Adaptive-step RK (Heun/Euler pair) for a small neural ODE: the step size and the
    number of steps depend on the data."""
    jax, jnp = _jax()
    batch, d, width = 16, 32, 128
    keys = jax.random.split(jax.random.PRNGKey(23), 3)
    w1 = jax.random.normal(keys[0], (d, width)) / jnp.sqrt(d)
    w2 = jax.random.normal(keys[1], (width, d)) / jnp.sqrt(width)
    y0 = jax.random.normal(keys[2], (batch, d))

    def ode_adaptive(w1, w2, y0):
        f = lambda y: jnp.tanh(y @ w1) @ w2
        tol, t_end = 1e-3, 1.0

        def cond(s):
            t, _, _, n = s
            return jnp.logical_and(t < t_end, n < 1000)

        def body(s):
            t, y, h, n = s
            h = jnp.minimum(h, t_end - t)
            k1 = f(y)
            k2 = f(y + h * k1)
            y_hi = y + 0.5 * h * (k1 + k2)
            err = jnp.abs(y_hi - (y + h * k1)).max()
            ok = err <= tol
            t = jnp.where(ok, t + h, t)
            y = jnp.where(ok, y_hi, y)
            h = h * jnp.clip(0.9 * jnp.sqrt(tol / (err + 1e-12)), 0.2, 5.0)
            return t, y, h, n + 1

        _, y, _, n = jax.lax.while_loop(cond, body, (0.0, y0, 0.1, 0))
        return y, n

    return jax.jit(ode_adaptive), (w1, w2, y0), "ode_adaptive"


# ----------------------------------------------------------------------------------------
# Meshes and collectives.
# ----------------------------------------------------------------------------------------

MESH3 = ((2, 2, 2), ("data", "fsdp", "tensor"))


def build_mesh3_named():
    """2-layer MLP-block training step on a data x fsdp x tensor mesh, sharded with
    NamedSharding only (the partitioner inserts the collectives)."""
    jax, jnp = _jax()
    from jax.sharding import NamedSharding, PartitionSpec as P
    mesh = _mesh(*MESH3)
    batch, seq, d, d_ff, layers = 8, 32, 128, 512, 2
    keys = jax.random.split(jax.random.PRNGKey(30), 2 * layers + 2)
    params = [{"g": jnp.ones(d),
               "w1": jax.random.normal(keys[2 * i], (d, d_ff)) / jnp.sqrt(d),
               "w2": jax.random.normal(keys[2 * i + 1], (d_ff, d)) / jnp.sqrt(d_ff)}
              for i in range(layers)]
    pspec = [{"g": P(), "w1": P("fsdp", "tensor"), "w2": P("tensor", "fsdp")}
             for _ in range(layers)]
    xspec = P(("data", "fsdp"), None, None)
    ns = lambda s: NamedSharding(mesh, s)

    def loss_fn(params, x, y):
        for p in params:
            h = _rms_norm(x, p["g"])
            u = jax.lax.with_sharding_constraint(
                jax.nn.gelu(h @ p["w1"]), ns(P(("data", "fsdp"), None, "tensor")))
            x = jax.lax.with_sharding_constraint(x + u @ p["w2"], ns(xspec))
        return ((x - y) ** 2).mean()

    def mesh3_named_step(params, m, v, count, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        params, m, v, count = _adam(params, m, v, grads, count)
        return params, m, v, count, loss

    put = lambda a, s: jax.device_put(a, ns(s))
    params = jax.tree.map(put, params, pspec)
    zeros = lambda: jax.tree.map(jnp.zeros_like, params)
    x = put(jax.random.normal(keys[-2], (batch, seq, d)), xspec)
    y = put(jax.random.normal(keys[-1], (batch, seq, d)), xspec)
    pshard = jax.tree.map(ns, pspec)
    fn = jax.jit(mesh3_named_step, donate_argnums=(0, 1, 2),
                 in_shardings=(pshard, pshard, pshard, ns(P()), ns(xspec), ns(xspec)),
                 out_shardings=(pshard, pshard, pshard, ns(P()), ns(P())))
    return fn, (params, zeros(), zeros(), jnp.float32(0), x, y), "mesh3_named_step"


def build_mesh3_shard_map():
    """The same step written by hand in shard_map: fsdp all-gather of weights,
    tensor-parallel all-reduce, fsdp reduce-scatter of gradients, data all-reduce."""
    jax, jnp = _jax()
    from jax.sharding import NamedSharding, PartitionSpec as P
    mesh = _mesh(*MESH3)
    batch, seq, d, d_ff, layers = 8, 32, 128, 512, 2
    keys = jax.random.split(jax.random.PRNGKey(31), 2 * layers + 2)
    params = [{"g": jnp.ones(d),
               "w1": jax.random.normal(keys[2 * i], (d, d_ff)) / jnp.sqrt(d),
               "w2": jax.random.normal(keys[2 * i + 1], (d_ff, d)) / jnp.sqrt(d_ff)}
              for i in range(layers)]
    pspec = [{"g": P(), "w1": P("fsdp", "tensor"), "w2": P("tensor", "fsdp")}
             for _ in range(layers)]
    xspec = P(("data", "fsdp"), None, None)

    def local_loss(params, x, y):
        for p in params:
            w1 = jax.lax.all_gather(p["w1"], "fsdp", axis=0, tiled=True)
            w2 = jax.lax.all_gather(p["w2"], "fsdp", axis=1, tiled=True)
            h = _rms_norm(x, p["g"])
            x = x + jax.lax.psum(jax.nn.gelu(h @ w1) @ w2, "tensor")
        return ((x - y) ** 2).mean()

    def body(params, x, y):
        # all_gather's transpose is a reduce-scatter over fsdp; the data axis needs the
        # explicit mean, the (replicated) norm gains a mean over both batch axes.
        loss, grads = jax.value_and_grad(local_loss)(params, x, y)
        grads = [{"g": jax.lax.pmean(g["g"], ("data", "fsdp")),
                  "w1": jax.lax.pmean(g["w1"], "data"),
                  "w2": jax.lax.pmean(g["w2"], "data")} for g in grads]
        loss = jax.lax.pmean(loss, ("data", "fsdp"))
        return _sgd(params, grads), loss

    smap = _shard_map(body, mesh, (pspec, xspec, xspec), (pspec, P()))

    def mesh3_shard_map_step(params, x, y):
        return smap(params, x, y)

    put = lambda a, s: jax.device_put(a, NamedSharding(mesh, s))
    params = jax.tree.map(put, params, pspec)
    x = put(jax.random.normal(keys[-2], (batch, seq, d)), xspec)
    y = put(jax.random.normal(keys[-1], (batch, seq, d)), xspec)
    return jax.jit(mesh3_shard_map_step, donate_argnums=(0,)), (params, x, y), \
        "mesh3_shard_map_step"


def build_fsdp_scan():
    """Scan over layers with stacked parameters sharded over a (data, fsdp) mesh: the
    weight all-gathers and gradient reduce-scatters land inside the while bodies."""
    jax, jnp = _jax()
    from jax.sharding import NamedSharding, PartitionSpec as P
    mesh = _mesh((2, 4), ("data", "fsdp"))
    layers, batch, seq, d, d_ff = 4, 8, 32, 128, 512
    keys = jax.random.split(jax.random.PRNGKey(32), 4)
    params = {"w1": jax.random.normal(keys[0], (layers, d, d_ff)) / jnp.sqrt(d),
              "w2": jax.random.normal(keys[1], (layers, d_ff, d)) / jnp.sqrt(d_ff),
              "g": jnp.ones((layers, d))}
    pspec = {"w1": P(None, "fsdp", None), "w2": P(None, None, "fsdp"), "g": P()}
    xspec = P(("data", "fsdp"), None, None)
    ns = lambda s: NamedSharding(mesh, s)

    @jax.checkpoint
    def layer(x, p):
        h = _rms_norm(x, p["g"])
        return x + jax.nn.gelu(h @ p["w1"]) @ p["w2"], None

    def loss_fn(params, x, y):
        x, _ = jax.lax.scan(layer, x, params)
        return ((x - y) ** 2).mean()

    def fsdp_scan_step(params, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        return _sgd(params, grads), loss

    pshard = jax.tree.map(ns, pspec)
    params = jax.tree.map(lambda a, s: jax.device_put(a, s), params, pshard)
    x = jax.device_put(jax.random.normal(keys[2], (batch, seq, d)), ns(xspec))
    y = jax.device_put(jax.random.normal(keys[3], (batch, seq, d)), ns(xspec))
    fn = jax.jit(fsdp_scan_step, donate_argnums=(0,),
                 in_shardings=(pshard, ns(xspec), ns(xspec)),
                 out_shardings=(pshard, ns(P())))
    return fn, (params, x, y), "fsdp_scan_step"


def build_pipeline_circular():
    """Circular pipeline on 4 stages (shard_map over 'stage'): each stage holds 2 of the 8
    layers (repeat 2); a lax.scan over ticks applies the stage's current layer and shifts
    activations to the next stage with ppermute. Forward, backward, SGD."""
    jax, jnp = _jax()
    from jax.sharding import NamedSharding, PartitionSpec as P
    stages, repeats, micro, mb, d = 4, 2, 8, 4, 128
    mesh = _mesh((stages,), ("stage",))
    keys = jax.random.split(jax.random.PRNGKey(33), 4)
    # Layer r*stages + s lives on stage s at repeat slot r: w[s, r].
    w = jax.random.normal(keys[0], (stages, repeats, d, d)) / jnp.sqrt(d)
    xs = jax.random.normal(keys[1], (micro, mb, d))
    ys = jax.random.normal(keys[2], (micro, mb, d))
    ticks = micro * repeats + stages - 1
    shift = [(i, (i + 1) % stages) for i in range(stages)]

    def stage_loss(w, xs, ys):
        w = w[0]                                    # [repeats, d, d] of this stage
        s = jax.lax.axis_index("stage")

        def tick(carry, t):
            state, outs = carry                     # state [mb, d]: this stage's input
            # Stage 0 takes a fresh microbatch during the first `micro` ticks of each
            # repeat; otherwise it gets what the last stage sent round the ring.
            r = jnp.clip((t - s) // micro, 0, repeats - 1)
            mi = (t - s) % micro
            fresh = jnp.logical_and(s == 0, t < micro)
            inp = jnp.where(fresh, xs[jnp.clip(t, 0, micro - 1)], state)
            out = jnp.tanh(inp @ w[r]) + inp
            done = jnp.logical_and(s == stages - 1, r == repeats - 1)
            valid = jnp.logical_and(t - s >= 0, t - s < micro * repeats)
            outs = jax.lax.dynamic_update_index_in_dim(
                outs, jnp.where(jnp.logical_and(done, valid), out, outs[mi]), mi, 0)
            state = jax.lax.ppermute(out, "stage", shift)
            return (state, outs), None

        init = (jnp.zeros((mb, d)), jnp.zeros((micro, mb, d)))
        (_, outs), _ = jax.lax.scan(tick, init, jnp.arange(ticks))
        loss = jnp.where(s == stages - 1, ((outs - ys) ** 2).mean(), 0.0)
        return jax.lax.psum(loss, "stage")

    def body(w, xs, ys):
        loss, g = jax.value_and_grad(stage_loss)(w, xs, ys)
        return w - 0.01 * g, loss

    smap = _shard_map(body, mesh, (P("stage"), P(), P()), (P("stage"), P()))

    def pipeline_circular_step(w, xs, ys):
        return smap(w, xs, ys)

    w = jax.device_put(w, NamedSharding(mesh, P("stage")))
    return jax.jit(pipeline_circular_step, donate_argnums=(0,)), (w, xs, ys), \
        "pipeline_circular_step"


def build_moe_all_to_all():
    """Top-1 mixture of experts under shard_map on 4 devices (one expert each): tokens are
    dispatched into per-expert capacity slots, exchanged with all_to_all, run through the
    local expert FFN and sent back with a second all_to_all. Forward, backward, SGD."""
    jax, jnp = _jax()
    from jax.sharding import NamedSharding, PartitionSpec as P
    experts, tokens, d, d_ff, cap = 4, 64, 64, 256, 24   # tokens per device
    mesh = _mesh((experts,), ("expert",))
    keys = jax.random.split(jax.random.PRNGKey(34), 5)
    params = {"router": jax.random.normal(keys[0], (d, experts)) / jnp.sqrt(d),
              "w1": jax.random.normal(keys[1], (experts, d, d_ff)) / jnp.sqrt(d),
              "w2": jax.random.normal(keys[2], (experts, d_ff, d)) / jnp.sqrt(d_ff)}
    pspec = {"router": P(), "w1": P("expert"), "w2": P("expert")}

    def local_loss(params, x, y):
        logits = x @ params["router"]                       # [tokens, experts]
        probs = jax.nn.softmax(logits)
        choice = jnp.argmax(logits, -1)
        onehot = jax.nn.one_hot(choice, experts)
        pos = (jnp.cumsum(onehot, 0) - 1) * onehot           # slot within the expert
        keep = (pos < cap) * onehot
        dispatch = keep[..., None] * jax.nn.one_hot(pos.sum(-1).astype(jnp.int32), cap)[:, None, :]
        buf = jnp.einsum("tec,td->ecd", dispatch, x)         # [experts, cap, d]
        buf = jax.lax.all_to_all(buf, "expert", 0, 0, tiled=True)
        h = jax.nn.gelu(buf @ params["w1"][0]) @ params["w2"][0]
        h = jax.lax.all_to_all(h, "expert", 0, 0, tiled=True)
        gate = (probs * onehot).sum(-1)
        out = jnp.einsum("tec,ecd->td", dispatch, h) * gate[:, None]
        return ((x + out - y) ** 2).mean()

    def body(params, x, y):
        loss, grads = jax.value_and_grad(local_loss)(params, x, y)
        grads["router"] = jax.lax.pmean(grads["router"], "expert")
        return _sgd(params, grads), jax.lax.pmean(loss, "expert")

    smap = _shard_map(body, mesh, (pspec, P("expert"), P("expert")), (pspec, P()))

    def moe_step(params, x, y):
        return smap(params, x, y)

    put = lambda a, s: jax.device_put(a, NamedSharding(mesh, s))
    params = jax.tree.map(put, params, pspec)
    x = put(jax.random.normal(keys[3], (experts * tokens, d)), P("expert"))
    y = put(jax.random.normal(keys[4], (experts * tokens, d)), P("expert"))
    return jax.jit(moe_step, donate_argnums=(0,)), (params, x, y), "moe_step"


# ----------------------------------------------------------------------------------------
# Convolutions, attention, precision, donation, batching, inference, recurrence.
# ----------------------------------------------------------------------------------------

def build_resnet_bn():
    """Small ResNet: stem conv, 2 stages of 2 residual blocks (conv-BN-ReLU x2, strided
    1x1 projection between stages), global average pool, dense head; batch-norm with batch
    statistics and running averages; SGD with momentum."""
    jax, jnp = _jax()
    batch, hw, n_cls = 8, 32, 10
    chans = (16, 32)
    keys = iter(jax.random.split(jax.random.PRNGKey(40), 32))
    conv_w = lambda a, b, k=3: jax.random.normal(next(keys), (k, k, a, b)) / jnp.sqrt(k * k * a)
    params = {"stem": conv_w(3, chans[0]), "blocks": [], "proj": conv_w(chans[0], chans[1], 1),
              "head": jax.random.normal(next(keys), (chans[1], n_cls)) * 0.01}
    stats = {"blocks": []}
    for si, c in enumerate(chans):
        for _ in range(2):
            params["blocks"].append({"w1": conv_w(c, c), "w2": conv_w(c, c),
                                     "s1": jnp.ones(c), "b1": jnp.zeros(c),
                                     "s2": jnp.ones(c), "b2": jnp.zeros(c)})
            stats["blocks"].append({"m1": jnp.zeros(c), "v1": jnp.ones(c),
                                    "m2": jnp.zeros(c), "v2": jnp.ones(c)})

    def conv(x, w, stride=1):
        return jax.lax.conv_general_dilated(x, w, (stride, stride), "SAME",
                                            dimension_numbers=("NHWC", "HWIO", "NHWC"))

    def bn(x, s, b):
        mu, var = x.mean((0, 1, 2)), x.var((0, 1, 2))
        return (x - mu) * jax.lax.rsqrt(var + 1e-5) * s + b, mu, var

    def loss_fn(params, x, y):
        x = jax.nn.relu(conv(x, params["stem"]))
        new_stats = []
        for i, p in enumerate(params["blocks"]):
            if i == 2:
                x = conv(x, params["proj"], stride=2)
            h, m1, v1 = bn(conv(x, p["w1"]), p["s1"], p["b1"])
            h, m2, v2 = bn(conv(jax.nn.relu(h), p["w2"]), p["s2"], p["b2"])
            x = jax.nn.relu(x + h)
            new_stats.append({"m1": m1, "v1": v1, "m2": m2, "v2": v2})
        logp = jax.nn.log_softmax(x.mean((1, 2)) @ params["head"])
        return -jnp.take_along_axis(logp, y[:, None], -1).mean(), new_stats

    def resnet_bn_step(params, mom, stats, x, y):
        (loss, batch_stats), grads = jax.value_and_grad(loss_fn, has_aux=True)(params, x, y)
        mom = jax.tree.map(lambda m, g: 0.9 * m + g, mom, grads)
        params = jax.tree.map(lambda p, m: p - 0.01 * m, params, mom)
        stats = {"blocks": jax.tree.map(lambda old, new: 0.9 * old + 0.1 * new,
                                        stats["blocks"], batch_stats)}
        return params, mom, stats, loss

    x = jax.random.normal(next(keys), (batch, hw, hw, 3))
    y = jax.random.randint(next(keys), (batch,), 0, n_cls)
    return jax.jit(resnet_bn_step, donate_argnums=(0, 1, 2)), \
        (params, jax.tree.map(jnp.zeros_like, params), stats, x, y), "resnet_bn_step"


def build_attention_long():
    """One causal self-attention layer on a 2048-token sequence (2 heads of 64), scores
    materialised: forward and backward w.r.t. the projections."""
    jax, jnp = _jax()
    batch, seq, d, heads = 1, 2048, 128, 2
    keys = jax.random.split(jax.random.PRNGKey(41), 3)
    params = {"wqkv": jax.random.normal(keys[0], (d, 3 * d)) / jnp.sqrt(d),
              "wo": jax.random.normal(keys[1], (d, d)) / jnp.sqrt(d)}
    x = jax.random.normal(keys[2], (batch, seq, d))

    def loss_fn(params, x):
        dh = d // heads
        q, k, v = jnp.split(x @ params["wqkv"], 3, -1)
        sp = lambda t: t.reshape(batch, seq, heads, dh).transpose(0, 2, 1, 3)
        q, k, v = sp(q), sp(k), sp(v)
        s = jnp.einsum("bhqd,bhkd->bhqk", q, k) / jnp.sqrt(dh)
        s = jnp.where(jnp.tril(jnp.ones((seq, seq), bool)), s, -1e9)
        o = jnp.einsum("bhqk,bhkd->bhqd", jax.nn.softmax(s, -1), v)
        o = o.transpose(0, 2, 1, 3).reshape(batch, seq, d) @ params["wo"]
        return (o * o).mean()

    def attention_long_step(params, x):
        loss, grads = jax.value_and_grad(loss_fn)(params, x)
        return _sgd(params, grads), loss

    return jax.jit(attention_long_step, donate_argnums=(0,)), (params, x), \
        "attention_long_step"


def build_attention_blockwise():
    """Blockwise (flash-style) attention over a 4096-token sequence: a lax.scan over key /
    value blocks of 512 with an online softmax, so no [seq, seq] score matrix exists;
    forward and backward."""
    jax, jnp = _jax()
    seq, d, block = 4096, 64, 512
    nb = seq // block
    keys = jax.random.split(jax.random.PRNGKey(42), 2)
    wqkv = jax.random.normal(keys[0], (d, 3 * d)) / jnp.sqrt(d)
    x = jax.random.normal(keys[1], (seq, d))

    def attend(q, k, v):
        kb, vb = k.reshape(nb, block, d), v.reshape(nb, block, d)

        def step(carry, kv):
            m, l, acc = carry
            s = (q @ kv[0].T) / jnp.sqrt(d)                    # [seq, block]
            m_new = jnp.maximum(m, s.max(-1))
            p = jnp.exp(s - m_new[:, None])
            scale = jnp.exp(m - m_new)
            return (m_new, l * scale + p.sum(-1), acc * scale[:, None] + p @ kv[1]), None

        init = (jnp.full((seq,), -jnp.inf), jnp.zeros(seq), jnp.zeros((seq, d)))
        (m, l, acc), _ = jax.lax.scan(jax.checkpoint(step), init, (kb, vb))
        return acc / l[:, None]

    def loss_fn(wqkv, x):
        q, k, v = jnp.split(x @ wqkv, 3, -1)
        return (attend(q, k, v) ** 2).mean()

    def attention_blockwise_step(wqkv, x):
        loss, g = jax.value_and_grad(loss_fn)(wqkv, x)
        return wqkv - 0.01 * g, loss

    return jax.jit(attention_blockwise_step, donate_argnums=(0,)), (wqkv, x), \
        "attention_blockwise_step"


def build_bf16_mixed():
    """Mixed precision: f32 master weights cast to bf16 for a 2-layer transformer
    forward/backward in bf16, static loss scaling, f32 Adam update."""
    jax, jnp = _jax()
    layers, batch, seq, d, heads, d_ff = 2, 4, 64, 128, 4, 512
    keys = jax.random.split(jax.random.PRNGKey(43), 3)
    params = _stacked_block_params(keys[0], layers, d, d_ff)
    x = jax.random.normal(keys[1], (batch, seq, d))
    y = jax.random.normal(keys[2], (batch, seq, d))
    scale = 1024.0

    def loss_fn(params, x, y):
        p16 = jax.tree.map(lambda a: a.astype(jnp.bfloat16), params)
        h = x.astype(jnp.bfloat16)
        for i in range(layers):
            h = _block(jax.tree.map(lambda a: a[i], p16), h, heads)
        return ((h.astype(jnp.float32) - y) ** 2).mean() * scale

    def bf16_mixed_step(params, m, v, count, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        grads = jax.tree.map(lambda g: g.astype(jnp.float32) / scale, grads)
        params, m, v, count = _adam(params, m, v, grads, count)
        return params, m, v, count, loss / scale

    z = lambda: jax.tree.map(jnp.zeros_like, params)
    return jax.jit(bf16_mixed_step, donate_argnums=(0, 1, 2)), \
        (params, z(), z(), jnp.float32(0), x, y), "bf16_mixed_step"


def _adam_update(donate, fname):
    jax, jnp = _jax()
    keys = jax.random.split(jax.random.PRNGKey(44), 8)
    shapes = [(512, 512), (512, 2048), (2048, 512), (512,), (2048,), (1024, 512)]
    params = [jax.random.normal(k, s) * 0.02 for k, s in zip(keys, shapes)]
    grads = [jax.random.normal(k, s) * 0.01 for k, s in zip(keys[::-1], shapes)]

    def step(params, m, v, count, grads):
        gnorm = jnp.sqrt(sum((g * g).sum() for g in grads))
        grads = [g * jnp.minimum(1.0, 1.0 / (gnorm + 1e-6)) for g in grads]
        params, m, v, count = _adam(params, m, v, grads, count)
        return params, m, v, count

    step.__name__ = fname
    z = lambda: [jnp.zeros_like(p) for p in params]
    fn = jax.jit(step, donate_argnums=(0, 1, 2) if donate else ())
    return fn, (params, z(), z(), jnp.float32(0), grads), fname


def build_adam_donated():
    return _adam_update(True, "adam_donated_step")


def build_adam_not_donated():
    return _adam_update(False, "adam_not_donated_step")


def build_vmap_per_example():
    """DP-SGD style: per-example gradients with vmap(grad), per-example clipping, noise-
    free mean, SGD."""
    jax, jnp = _jax()
    batch, d_in, width, n_cls = 32, 64, 128, 10
    keys = jax.random.split(jax.random.PRNGKey(45), 5)
    params = {"w1": jax.random.normal(keys[0], (d_in, width)) / jnp.sqrt(d_in),
              "w2": jax.random.normal(keys[1], (width, width)) / jnp.sqrt(width),
              "w3": jax.random.normal(keys[2], (width, n_cls)) / jnp.sqrt(width)}

    def loss_one(params, x, y):
        h = jnp.tanh(x @ params["w1"])
        h = jnp.tanh(h @ params["w2"])
        logp = jax.nn.log_softmax(h @ params["w3"])
        return -logp[y]

    def vmap_per_example_step(params, x, y):
        g = jax.vmap(jax.grad(loss_one), in_axes=(None, 0, 0))(params, x, y)
        norms = jnp.sqrt(sum((t.reshape(batch, -1) ** 2).sum(1) for t in jax.tree.leaves(g)))
        clip = jnp.minimum(1.0, 1.0 / (norms + 1e-6))
        g = jax.tree.map(lambda t: (t * clip.reshape((batch,) + (1,) * (t.ndim - 1))).mean(0), g)
        return _sgd(params, g), norms.mean()

    x = jax.random.normal(keys[3], (batch, d_in))
    y = jax.random.randint(keys[4], (batch,), 0, n_cls)
    return jax.jit(vmap_per_example_step, donate_argnums=(0,)), (params, x, y), \
        "vmap_per_example_step"


def _decoder_params(key, layers, d, d_ff, vocab):
    jax, jnp = _jax()
    k = jax.random.split(key, 2)
    return {"emb": jax.random.normal(k[0], (vocab, d)) * 0.02,
            "blocks": _stacked_block_params(k[1], layers, d, d_ff)}


def _decode_one(params, cache, tok, pos, heads):
    """One decode step for tokens tok [batch] at position pos; cache k/v [L, b, h, T, dh]."""
    jax, jnp = _jax()
    x = params["emb"][tok]                                      # [b, d]
    b, d = x.shape
    dh = d // heads
    t_max = cache["k"].shape[3]
    ks, vs = [], []
    for i in range(cache["k"].shape[0]):
        p = jax.tree.map(lambda a: a[i], params["blocks"])
        h = _rms_norm(x, p["g1"])
        q, k, v = jnp.split(h @ p["wqkv"], 3, -1)
        q, k, v = (t.reshape(b, heads, 1, dh) for t in (q, k, v))
        kc = jax.lax.dynamic_update_slice(cache["k"][i], k, (0, 0, pos, 0))
        vc = jax.lax.dynamic_update_slice(cache["v"][i], v, (0, 0, pos, 0))
        ks.append(kc)
        vs.append(vc)
        s = jnp.einsum("bhqd,bhkd->bhqk", q, kc) / jnp.sqrt(dh)
        s = jnp.where(jnp.arange(t_max) <= pos, s, -1e9)
        o = jnp.einsum("bhqk,bhkd->bhqd", jax.nn.softmax(s, -1), vc).reshape(b, d)
        x = x + o @ p["wo"]
        x = x + jax.nn.gelu(_rms_norm(x, p["g2"]) @ p["w1"]) @ p["w2"]
    logits = x @ params["emb"].T
    return logits, {"k": jnp.stack(ks), "v": jnp.stack(vs)}


def build_decode_kv_cache():
    """Inference decode step of a 2-layer decoder with a KV cache [layers, batch 8, 4
    heads, 512, 32]: the new key/value is written with dynamic_update_slice at the traced
    position, the cache is donated so XLA updates it in place."""
    jax, jnp = _jax()
    layers, batch, d, heads, d_ff, vocab, t_max = 2, 8, 128, 4, 512, 512, 512
    params = _decoder_params(jax.random.PRNGKey(46), layers, d, d_ff, vocab)
    shape = (layers, batch, heads, t_max, d // heads)
    cache = {"k": jnp.zeros(shape), "v": jnp.zeros(shape)}

    def decode_kv_cache_step(params, cache, tok, pos):
        logits, cache = _decode_one(params, cache, tok, pos, heads)
        return jnp.argmax(logits, -1).astype(jnp.int32), cache, pos + 1

    tok = jnp.zeros((batch,), jnp.int32)
    return jax.jit(decode_kv_cache_step, donate_argnums=(1,)), \
        (params, cache, tok, jnp.int32(7)), "decode_kv_cache_step"


def build_decode_loop():
    """Greedy generation of 16 tokens: the KV-cache decode step inside lax.fori_loop (a
    while loop with a known trip count), cache and tokens carried in the loop state."""
    jax, jnp = _jax()
    layers, batch, d, heads, d_ff, vocab, t_max, steps = 2, 4, 128, 4, 512, 512, 256, 16
    params = _decoder_params(jax.random.PRNGKey(47), layers, d, d_ff, vocab)
    shape = (layers, batch, heads, t_max, d // heads)
    cache = {"k": jnp.zeros(shape), "v": jnp.zeros(shape)}

    def decode_loop(params, cache, tok, start):
        out = jnp.zeros((batch, steps), jnp.int32)

        def body(i, s):
            cache, tok, out = s
            logits, cache = _decode_one(params, cache, tok, start + i, heads)
            tok = jnp.argmax(logits, -1).astype(jnp.int32)
            return cache, tok, out.at[:, i].set(tok)

        cache, _, out = jax.lax.fori_loop(0, steps, body, (cache, tok, out))
        return out, cache

    tok = jnp.ones((batch,), jnp.int32)
    return jax.jit(decode_loop, donate_argnums=(1,)), (params, cache, tok, jnp.int32(3)), \
        "decode_loop"


def build_lstm_train():
    """Single-layer LSTM (hidden 128) over 32 time steps in lax.scan, a dense head on the
    last state; backpropagation through time, SGD."""
    jax, jnp = _jax()
    batch, steps, d_in, hid, n_cls = 16, 32, 32, 128, 10
    keys = jax.random.split(jax.random.PRNGKey(48), 5)
    params = {"wx": jax.random.normal(keys[0], (d_in, 4 * hid)) / jnp.sqrt(d_in),
              "wh": jax.random.normal(keys[1], (hid, 4 * hid)) / jnp.sqrt(hid),
              "b": jnp.zeros(4 * hid),
              "head": jax.random.normal(keys[2], (hid, n_cls)) / jnp.sqrt(hid)}

    def loss_fn(params, xs, y):
        def cell(carry, x):
            h, c = carry
            z = x @ params["wx"] + h @ params["wh"] + params["b"]
            i, f, g, o = jnp.split(z, 4, -1)
            c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
            h = jax.nn.sigmoid(o) * jnp.tanh(c)
            return (h, c), None
        init = (jnp.zeros((batch, hid)), jnp.zeros((batch, hid)))
        (h, _), _ = jax.lax.scan(cell, init, xs)
        logp = jax.nn.log_softmax(h @ params["head"])
        return -jnp.take_along_axis(logp, y[:, None], -1).mean()

    def lstm_train_step(params, xs, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, xs, y)
        return _sgd(params, grads), loss

    xs = jax.random.normal(keys[3], (steps, batch, d_in))
    y = jax.random.randint(keys[4], (batch,), 0, n_cls)
    return jax.jit(lstm_train_step, donate_argnums=(0,)), (params, xs, y), "lstm_train_step"


def build_scan_remat_offload():
    """The scanned MLP stack with jax.checkpoint(save_and_offload_only_these_names): the
    tagged activation is offloaded to host memory between forward and backward."""
    jax, jnp = _jax()
    from jax.ad_checkpoint import checkpoint_name
    batch, seq, d, d_ff, layers = 8, 32, 128, 512, 4
    keys = jax.random.split(jax.random.PRNGKey(49), 4)
    params = {"w1": jax.random.normal(keys[0], (layers, d, d_ff)) / jnp.sqrt(d),
              "w2": jax.random.normal(keys[1], (layers, d_ff, d)) / jnp.sqrt(d_ff)}

    def layer(x, p):
        u = checkpoint_name(x @ p["w1"], "up")
        return x + jax.nn.gelu(u) @ p["w2"], None

    policy = jax.checkpoint_policies.save_and_offload_only_these_names(
        names_which_can_be_saved=[], names_which_can_be_offloaded=["up"],
        offload_src="device", offload_dst="pinned_host")
    layer = jax.checkpoint(layer, policy=policy)

    def loss_fn(params, x, y):
        x, _ = jax.lax.scan(layer, x, params)
        return ((x - y) ** 2).mean()

    def scan_remat_offload_step(params, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        return _sgd(params, grads), loss

    x = jax.random.normal(keys[2], (batch, seq, d))
    y = jax.random.normal(keys[3], (batch, seq, d))
    return jax.jit(scan_remat_offload_step, donate_argnums=(0,)), (params, x, y), \
        "scan_remat_offload_step"


def build_nested_scan():
    """Nested loops: gradient accumulation (a scan over 4 microbatches) around a scanned,
    checkpointed 4-layer stack, so while bodies hold while loops."""
    jax, jnp = _jax()
    micro, mb, seq, d, d_ff, layers = 4, 4, 32, 128, 256, 4
    keys = jax.random.split(jax.random.PRNGKey(50), 4)
    params = {"w1": jax.random.normal(keys[0], (layers, d, d_ff)) / jnp.sqrt(d),
              "w2": jax.random.normal(keys[1], (layers, d_ff, d)) / jnp.sqrt(d_ff),
              "g": jnp.ones((layers, d))}

    @jax.checkpoint
    def layer(x, p):
        return x + jax.nn.gelu(_rms_norm(x, p["g"]) @ p["w1"]) @ p["w2"], None

    def loss_fn(params, x, y):
        x, _ = jax.lax.scan(layer, x, params)
        return ((x - y) ** 2).mean()

    def nested_scan_step(params, xs, ys):
        def micro_step(acc, xy):
            loss, g = jax.value_and_grad(loss_fn)(params, *xy)
            return jax.tree.map(jnp.add, acc, g), loss
        grads, losses = jax.lax.scan(micro_step, jax.tree.map(jnp.zeros_like, params),
                                     (xs, ys))
        return jax.tree.map(lambda p, g: p - 0.01 * g / micro, params, grads), losses.mean()

    xs = jax.random.normal(keys[2], (micro, mb, seq, d))
    ys = jax.random.normal(keys[3], (micro, mb, seq, d))
    return jax.jit(nested_scan_step, donate_argnums=(0,)), (params, xs, ys), \
        "nested_scan_step"


def build_ring_attention():
    """Ring attention on 4 devices (shard_map, sequence sharded): a lax.scan over the 4
    ring steps attends to the resident key/value block with an online softmax and passes
    the block on with ppermute; forward and backward w.r.t. the projections."""
    jax, jnp = _jax()
    from jax.sharding import NamedSharding, PartitionSpec as P
    ring, seq, d = 4, 4096, 64
    mesh = _mesh((ring,), ("seq",))
    keys = jax.random.split(jax.random.PRNGKey(51), 2)
    wqkv = jax.random.normal(keys[0], (d, 3 * d)) / jnp.sqrt(d)
    x = jax.random.normal(keys[1], (seq, d))
    perm = [(i, (i + 1) % ring) for i in range(ring)]

    def local_loss(wqkv, x):
        q, k, v = jnp.split(x @ wqkv, 3, -1)            # local block [seq/ring, d]
        n = q.shape[0]

        def step(carry, _):
            m, l, acc, k, v = carry
            s = (q @ k.T) / jnp.sqrt(d)
            m_new = jnp.maximum(m, s.max(-1))
            p = jnp.exp(s - m_new[:, None])
            scale = jnp.exp(m - m_new)
            acc = acc * scale[:, None] + p @ v
            l = l * scale + p.sum(-1)
            k = jax.lax.ppermute(k, "seq", perm)
            v = jax.lax.ppermute(v, "seq", perm)
            return (m_new, l, acc, k, v), None

        init = (jnp.full((n,), -jnp.inf), jnp.zeros(n), jnp.zeros((n, d)), k, v)
        (m, l, acc, _, _), _ = jax.lax.scan(step, init, None, length=ring)
        return jax.lax.psum(((acc / l[:, None]) ** 2).sum(), "seq") / (seq * d)

    def body(wqkv, x):
        loss, g = jax.value_and_grad(local_loss)(wqkv, x)
        return wqkv - 0.01 * jax.lax.psum(g, "seq"), loss

    smap = _shard_map(body, mesh, (P(), P("seq")), (P(), P()))

    def ring_attention_step(wqkv, x):
        return smap(wqkv, x)

    x = jax.device_put(x, NamedSharding(mesh, P("seq")))
    return jax.jit(ring_attention_step, donate_argnums=(0,)), (wqkv, x), \
        "ring_attention_step"


# ----------------------------------------------------------------------------------------
# name -> (builder, host devices, family, description)
# ----------------------------------------------------------------------------------------

def build_mesh1_named():
    """Mesh code run on one device: a 2-layer MLP training step whose parameters, batch and
    activations are placed with NamedSharding on a 1x1 (data, model) mesh, as a program
    written for a mesh is first tried on one host; newer XLA prints these shardings with the
    mesh's axis names on a single-device module."""
    jax, jnp = _jax()
    from jax.sharding import NamedSharding, PartitionSpec as P
    mesh = _mesh((1, 1), ("data", "model"))
    ns = lambda s: NamedSharding(mesh, s)
    batch, d, d_ff = 32, 128, 512
    k1, k2, k3, k4 = jax.random.split(jax.random.PRNGKey(40), 4)
    params = {"w1": jax.random.normal(k1, (d, d_ff)) / jnp.sqrt(d),
              "w2": jax.random.normal(k2, (d_ff, d)) / jnp.sqrt(d_ff)}
    pspec = {"w1": P(None, "model"), "w2": P("model", None)}

    def loss_fn(params, x, y):
        h = jax.lax.with_sharding_constraint(jax.nn.gelu(x @ params["w1"]),
                                             ns(P("data", "model")))
        return ((h @ params["w2"] - y) ** 2).mean()

    def mesh1_named_step(params, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        return jax.tree.map(lambda p, g: p - 0.01 * g, params, grads), loss

    pshard = jax.tree.map(ns, pspec)
    params = jax.tree.map(lambda a, s: jax.device_put(a, s), params, pshard)
    x = jax.device_put(jax.random.normal(k3, (batch, d)), ns(P("data")))
    y = jax.device_put(jax.random.normal(k4, (batch, d)), ns(P("data")))
    fn = jax.jit(mesh1_named_step, donate_argnums=(0,),
                 in_shardings=(pshard, ns(P("data")), ns(P("data"))),
                 out_shardings=(pshard, ns(P())))
    return fn, (params, x, y), "mesh1_named_step"


CORPUS = {
    "scan_remat_nothing": (
        "build_scan_remat_nothing", 1, "scan-over-layers + checkpoint",
        "4-layer pre-norm transformer (d 128, 4 heads, d_ff 512, seq 64, batch 4, vocab 256) "
        "with stacked layer params under lax.scan, jax.checkpoint(nothing_saveable); "
        "forward, backward, Adam; params and optimizer state donated"),
    "scan_remat_dots": (
        "build_scan_remat_dots", 1, "scan-over-layers + checkpoint",
        "the same scanned transformer with jax.checkpoint(dots_saveable): matmul outputs "
        "are saved, the rest recomputed"),
    "scan_noremat": (
        "build_scan_noremat", 1, "scan-over-layers",
        "the same scanned transformer without jax.checkpoint (every residual stacked by "
        "the forward scan)"),
    "scan_remat_names": (
        "build_scan_remat_names", 1, "scan-over-layers + checkpoint",
        "6-layer residual MLP stack under lax.scan with jax.checkpoint("
        "save_only_these_names('up')) and checkpoint_name tags; SGD"),
    "grad_accum_scan": (
        "build_grad_accum_scan", 1, "scan (gradient accumulation)",
        "3-layer MLP, gradients of 4 microbatches summed in a lax.scan, then one Adam "
        "update; params and optimizer state donated"),
    "cond_switch": (
        "build_cond_switch", 1, "cond / switch",
        "2-layer MLP whose activation is chosen by lax.switch on a traced index (3 "
        "branches, also in the backward pass); the SGD update is applied under lax.cond "
        "only when the gradient norm is finite"),
    "scan_switch_layers": (
        "build_scan_switch_layers", 1, "scan + switch",
        "6 heterogeneous layers in a lax.scan whose body lax.switch-es on the layer's kind "
        "(relu dense, tanh residual, normalised dense); forward, backward, SGD"),
    "while_cg": (
        "build_while_cg", 1, "data-dependent while",
        "conjugate-gradient solve of a 256x256 SPD system with 4 right-hand sides in a "
        "lax.while_loop until the residual norm < 1e-5 (trip count depends on the data), "
        "then a dense tanh layer"),
    "ode_adaptive": (
        "build_ode_adaptive", 1, "data-dependent while",
        "adaptive-step Heun/Euler integration of a small neural ODE (batch 16, d 32, "
        "width 128) in a lax.while_loop: step size and step count depend on the data"),
    "mesh3_named": (
        "build_mesh3_named", 8, "3-axis mesh (NamedSharding)",
        "2-layer MLP-block training step on a 2x2x2 (data, fsdp, tensor) mesh of 8 host "
        "devices, parameters and batch placed with NamedSharding and "
        "with_sharding_constraint; the partitioner inserts the collectives; Adam, donated"),
    "mesh1_named": (
        "build_mesh1_named", 1, "mesh code on one device (NamedSharding)",
        "2-layer MLP training step (batch 32, d 128, d_ff 512) with parameters, batch and "
        "activations placed by NamedSharding on a 1x1 (data, model) mesh of one device: "
        "the module's shardings name the mesh axes; SGD, donated"),
    "mesh3_shard_map": (
        "build_mesh3_shard_map", 8, "3-axis mesh (shard_map)",
        "the same step written in shard_map on the 2x2x2 (data, fsdp, tensor) mesh: fsdp "
        "all-gather of weights, tensor all-reduce, reduce-scatter of gradients over fsdp, "
        "data-parallel mean; SGD"),
    "fsdp_scan": (
        "build_fsdp_scan", 8, "scan-over-layers + mesh",
        "4-layer residual MLP stack under lax.scan + jax.checkpoint, stacked params "
        "sharded over a 2x4 (data, fsdp) mesh with NamedSharding: the weight all-gathers "
        "and gradient reduce-scatters sit inside the while bodies"),
    "pipeline_circular": (
        "build_pipeline_circular", 4, "pipeline (ppermute in scan)",
        "circular pipeline over 4 stages in shard_map: 8 layers, 2 per stage (repeat 2), "
        "8 microbatches; a lax.scan over 19 ticks applies the stage's layer and ppermutes "
        "activations round the ring; forward, backward, SGD"),
    "moe_all_to_all": (
        "build_moe_all_to_all", 4, "mixture of experts (all-to-all)",
        "top-1 mixture of experts on 4 devices in shard_map, one expert each: capacity-"
        "slot dispatch, all_to_all to the experts, expert FFN (d 64, d_ff 256), all_to_all "
        "back, gated combine; forward, backward, SGD"),
    "resnet_bn": (
        "build_resnet_bn", 1, "conv net",
        "small ResNet (stem conv, 4 residual blocks of conv-BN-ReLU in 2 stages of 16/32 "
        "channels, strided projection, global pool, dense head; batch 8, 32x32x3) with "
        "batch-norm statistics; forward, backward, SGD with momentum; donated"),
    "attention_long": (
        "build_attention_long", 1, "long-sequence attention",
        "one causal self-attention layer on 2048 tokens (d 128, 2 heads), scores "
        "materialised ([2, 2048, 2048] per batch); forward, backward, SGD"),
    "attention_blockwise": (
        "build_attention_blockwise", 1, "long-sequence attention",
        "blockwise (flash-style) attention over 4096 tokens (d 64): lax.scan over 8 "
        "key/value blocks of 512 with an online softmax, jax.checkpoint on the step; "
        "forward, backward, SGD"),
    "bf16_mixed": (
        "build_bf16_mixed", 1, "bf16 mixed precision",
        "2-layer transformer (d 128, 4 heads, seq 64, batch 4) computed in bf16 from f32 "
        "master weights, static loss scaling, f32 Adam update; donated"),
    "adam_donated": (
        "build_adam_donated", 1, "donated buffers",
        "gradient clipping and Adam update of 6 parameter arrays (~3.4M f32), params and "
        "both moments donated (input_output_alias): updates happen in place"),
    "adam_not_donated": (
        "build_adam_not_donated", 1, "donated buffers",
        "the same clipped Adam update without donation: new params and moments need "
        "their own buffers"),
    "vmap_per_example": (
        "build_vmap_per_example", 1, "vmap / batched",
        "per-example gradients of a 3-layer tanh MLP with vmap(grad) (batch 32), "
        "per-example clipping (DP-SGD style), mean, SGD"),
    "decode_kv_cache": (
        "build_decode_kv_cache", 1, "inference decode (KV cache)",
        "one decode step of a 2-layer decoder (d 128, 4 heads, vocab 512, batch 8) with a "
        "KV cache [2, 8, 4, 512, 32] updated by dynamic_update_slice at a traced position; "
        "cache donated; greedy argmax"),
    "decode_loop": (
        "build_decode_loop", 1, "inference decode (KV cache) + loop",
        "greedy generation of 16 tokens: the KV-cache decode step (batch 4, cache length "
        "256) inside lax.fori_loop, cache and tokens in the loop state; cache donated"),
    "lstm_train": (
        "build_lstm_train", 1, "recurrent (scan over time)",
        "single-layer LSTM (hidden 128, input 32, batch 16) over 32 steps in lax.scan, "
        "dense head on the last state; backpropagation through time, SGD"),
    "scan_remat_offload": (
        "build_scan_remat_offload", 1, "scan-over-layers + checkpoint (offload)",
        "4-layer residual MLP stack under lax.scan with jax.checkpoint("
        "save_and_offload_only_these_names): the tagged up-projection is marked for "
        "offload to pinned host memory; XLA:CPU has one memory space, so the module keeps "
        "no offload (no S(5), no host transfers)"),
    "nested_scan": (
        "build_nested_scan", 1, "nested scans",
        "gradient accumulation over 4 microbatches (outer lax.scan) of a 4-layer residual "
        "MLP stack under an inner lax.scan with jax.checkpoint: while loops inside while "
        "bodies; SGD, donated"),
    "ring_attention": (
        "build_ring_attention", 4, "long-sequence attention (ring, ppermute in scan)",
        "ring attention over 4096 tokens (d 64) sequence-sharded on 4 devices in "
        "shard_map: a lax.scan over the 4 ring steps with an online softmax, key/value "
        "blocks passed on with ppermute; forward, backward, SGD"),
}
