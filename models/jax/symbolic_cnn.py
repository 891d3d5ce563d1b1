"""Export convolutional training steps written with flax and equinox as StableHLO, with
symbolic batch and spatial dims, and the same steps with concrete shapes.

jax, flax, equinox and optax live in the jax environment (``make jax-env``); from the
repository root::

    .venv-jax/bin/python models/jax/symbolic_cnn.py --out models/stablehlo

Two programs, whose layers, initialisers, norms and optimiser are the libraries' own:

- ``resnet_train``: a small ResNet in ``flax.linen`` (``nn.Conv``, ``nn.BatchNorm`` with
  running statistics, ``nn.max_pool``, two stages of basic residual blocks, a strided
  projection, global average pool, ``nn.Dense`` head); softmax cross-entropy, ``optax.sgd``
  with momentum. Input ``[b, h, w, 3]``.
- ``unet_diffusion_train``: a U-Net noise predictor in ``equinox`` (``eqx.nn.Conv2d``,
  ``eqx.nn.ConvTranspose2d``, ``eqx.nn.GroupNorm``, ``eqx.nn.Linear`` for a sinusoidal time
  embedding, ``eqx.nn.AvgPool2d`` down, skip connections concatenated up); one denoising
  diffusion training step (noise a batch at random times, predict the noise, mean squared
  error), ``optax.adam``. Input ``[b, h, w, 1]`` (the step is ``vmap``-ed over the batch, as
  equinox models are written per example).

For each it writes ``NAME.sym.mlir.gz`` (``jax.export`` with symbolic batch and spatial
dims ``b, 8*hk, 8*wk``: both spatial dims multiples of 8, so that the three poolings halve
them exactly) and ``NAME.b{B}_h{H}_w{W}.mlir.gz`` for the sizes in ``CONCRETE``,
gzip-compressed (the U-Net's text is about 1 MB; cpsched reads ``.mlir.gz`` as it is). Debug
locations are cut as in ``symbolic.py``.
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

# (b, h, w) of the concrete exports; h and w multiples of 8
CONCRETE = ((2, 16, 16), (4, 32, 24), (8, 48, 64))
CLASSES = 10


def build_resnet():
    """(step, state): the flax ResNet training step and the shapes of its state."""
    import flax.linen as nn
    import jax
    import jax.numpy as jnp
    import optax

    class Block(nn.Module):
        features: int
        strides: int = 1

        @nn.compact
        def __call__(self, x, train: bool):
            norm = lambda: nn.BatchNorm(use_running_average=not train, momentum=0.9)
            y = nn.Conv(self.features, (3, 3), self.strides, use_bias=False)(x)
            y = nn.relu(norm()(y))
            y = nn.Conv(self.features, (3, 3), use_bias=False)(y)
            y = norm()(y)
            if x.shape[-1] != self.features or self.strides != 1:
                x = nn.Conv(self.features, (1, 1), self.strides, use_bias=False)(x)
                x = norm()(x)
            return nn.relu(x + y)

    class ResNet(nn.Module):
        @nn.compact
        def __call__(self, x, train: bool = True):
            x = nn.Conv(16, (3, 3), use_bias=False)(x)
            x = nn.relu(nn.BatchNorm(use_running_average=not train, momentum=0.9)(x))
            x = nn.max_pool(x, (2, 2), (2, 2))
            for features, strides in ((16, 1), (16, 1), (32, 2), (32, 1)):
                x = Block(features, strides)(x, train)
            x = nn.avg_pool(x, (2, 2), (2, 2))
            x = x.mean(axis=(1, 2))
            return nn.Dense(CLASSES)(x)

    model = ResNet()
    tx = optax.sgd(0.05, momentum=0.9)

    def init(key):
        variables = model.init(key, jnp.zeros((1, 8, 8, 3)), train=False)
        params = variables["params"]
        return {"params": params, "batch_stats": variables["batch_stats"],
                "opt": tx.init(params)}

    def resnet_train_step(state, images, labels):
        def loss_fn(params):
            logits, updates = model.apply(
                {"params": params, "batch_stats": state["batch_stats"]}, images,
                train=True, mutable=["batch_stats"])
            loss = optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()
            return loss, updates["batch_stats"]

        (loss, stats), grads = jax.value_and_grad(loss_fn, has_aux=True)(state["params"])
        updates, opt = tx.update(grads, state["opt"], state["params"])
        params = optax.apply_updates(state["params"], updates)
        return {"params": params, "batch_stats": stats, "opt": opt}, loss

    def inputs(b, h, w):
        return (jax.ShapeDtypeStruct((b, h, w, 3), jnp.float32),
                jax.ShapeDtypeStruct((b,), jnp.int32))

    return resnet_train_step, jax.eval_shape(init, jax.random.PRNGKey(0)), inputs


def build_unet():
    """(step, state): the equinox U-Net diffusion training step and its state's shapes."""
    import equinox as eqx
    import jax
    import jax.numpy as jnp
    import optax

    class ResBlock(eqx.Module):
        norm1: eqx.nn.GroupNorm
        conv1: eqx.nn.Conv2d
        temb: eqx.nn.Linear
        norm2: eqx.nn.GroupNorm
        conv2: eqx.nn.Conv2d
        skip: eqx.nn.Conv2d | None

        def __init__(self, cin, cout, tdim, key):
            k = jax.random.split(key, 4)
            self.norm1 = eqx.nn.GroupNorm(min(4, cin), cin)
            self.conv1 = eqx.nn.Conv2d(cin, cout, 3, padding=1, key=k[0])
            self.temb = eqx.nn.Linear(tdim, cout, key=k[1])
            self.norm2 = eqx.nn.GroupNorm(4, cout)
            self.conv2 = eqx.nn.Conv2d(cout, cout, 3, padding=1, key=k[2])
            self.skip = eqx.nn.Conv2d(cin, cout, 1, key=k[3]) if cin != cout else None

        def __call__(self, x, t):
            h = self.conv1(jax.nn.silu(self.norm1(x)))
            h = h + self.temb(t)[:, None, None]
            h = self.conv2(jax.nn.silu(self.norm2(h)))
            return h + (self.skip(x) if self.skip is not None else x)

    class UNet(eqx.Module):
        tproj: eqx.nn.Linear
        stem: eqx.nn.Conv2d
        down: list
        pool: eqx.nn.AvgPool2d
        mid: ResBlock
        ups: list
        up_blocks: list
        head: eqx.nn.Conv2d

        def __init__(self, key, chans=(16, 32, 64), tdim=32):
            k = iter(jax.random.split(key, 16))
            self.tproj = eqx.nn.Linear(tdim, tdim, key=next(k))
            self.stem = eqx.nn.Conv2d(1, chans[0], 3, padding=1, key=next(k))
            cins = (chans[0],) + chans[:-1]
            self.down = [ResBlock(a, c, tdim, next(k)) for a, c in zip(cins, chans)]
            self.pool = eqx.nn.AvgPool2d(2, 2)
            self.mid = ResBlock(chans[-1], chans[-1], tdim, next(k))
            self.ups = [eqx.nn.ConvTranspose2d(c, c, 2, stride=2, key=next(k))
                        for c in reversed(chans)]
            outs = tuple(reversed(cins))
            self.up_blocks = [ResBlock(2 * c, o, tdim, next(k))
                              for c, o in zip(reversed(chans), outs)]
            self.head = eqx.nn.Conv2d(chans[0], 1, 3, padding=1, key=next(k))

        def __call__(self, x, t):
            half = self.tproj.in_features // 2
            freq = jnp.exp(-jnp.log(1e4) * jnp.arange(half) / half)
            temb = jax.nn.silu(self.tproj(jnp.concatenate([jnp.sin(t * freq),
                                                           jnp.cos(t * freq)])))
            h = self.stem(x)
            skips = []
            for block in self.down:
                h = block(h, temb)
                skips.append(h)
                h = self.pool(h)
            h = self.mid(h, temb)
            for up, block in zip(self.ups, self.up_blocks):
                h = block(jnp.concatenate([up(h), skips.pop()], axis=0), temb)
            return self.head(h)

    model = UNet(jax.random.PRNGKey(0))
    params, static = eqx.partition(model, eqx.is_array)
    tx = optax.adam(1e-3)

    def unet_diffusion_train_step(state, images, key):
        # images [b, h, w, 1]; equinox convolutions take one example, channels first
        x0 = jnp.transpose(images, (0, 3, 1, 2))
        kt, kn = jax.random.split(key)
        t = jax.random.uniform(kt, (x0.shape[0],))
        noise = jax.random.normal(kn, x0.shape)
        alpha = jnp.cos(0.5 * jnp.pi * t)[:, None, None, None]
        xt = alpha * x0 + jnp.sqrt(1 - alpha ** 2) * noise

        def loss_fn(p):
            net = eqx.combine(p, static)
            pred = jax.vmap(net)(xt, t[:, None])
            return jnp.mean((pred - noise) ** 2)

        loss, grads = jax.value_and_grad(loss_fn)(state["params"])
        updates, opt = tx.update(grads, state["opt"], state["params"])
        return {"params": optax.apply_updates(state["params"], updates), "opt": opt}, loss

    def inputs(b, h, w):
        return (jax.ShapeDtypeStruct((b, h, w, 1), jnp.float32),
                jax.ShapeDtypeStruct((2,), jnp.uint32))

    state = jax.eval_shape(lambda: {"params": params, "opt": tx.init(params)})
    return unet_diffusion_train_step, state, inputs


PROGRAMS = {"resnet_train": build_resnet, "unet_diffusion_train": build_unet}


def export_all(out: str, names=None) -> list[str]:
    import jax
    from jax import export

    from models.jax.capture import _write_gz
    from models.jax.symbolic import clean

    written = []
    for name in names or PROGRAMS:
        step, state, inputs = PROGRAMS[name]()
        b, hk, wk = export.symbolic_shape("b, hk, wk")
        variants = [("sym", inputs(b, 8 * hk, 8 * wk))]
        variants += [(f"b{bv}_h{hv}_w{wv}", inputs(bv, hv, wv)) for bv, hv, wv in CONCRETE]
        for tag, args in variants:
            exp = export.export(jax.jit(step))(state, *args)
            path = os.path.join(out, f"{name}.{tag}.mlir.gz")
            _write_gz(path, clean(exp.mlir_module()))
            written.append(path)
    return written


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="models/stablehlo")
    ap.add_argument("--only", default="", help="comma-separated program names")
    args = ap.parse_args()
    import jax

    os.makedirs(args.out, exist_ok=True)
    written = export_all(args.out, [n for n in args.only.split(",") if n] or None)
    print(f"wrote {len(written)} modules to {args.out} (jax {jax.__version__})")


if __name__ == "__main__":
    main()
