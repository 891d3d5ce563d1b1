"""Capture real XLA:CPU dumps of small JAX training steps into ``models/hlo/``.

jax is an optional extra of cpsched and lives in its own virtual environment, never in
the project venv: ``make jax-env`` creates ``.venv-jax`` (git-ignored) with the newest jax
and jaxlib on the package registry, under a Python >= 3.12 (``JAX_VERSION=...`` picks
another release). From the repository root::

    .venv-jax/bin/python models/jax/capture.py            # the five programs below
    .venv-jax/bin/python models/jax/capture.py --corpus   # models/hlo/corpus/ (make corpus)

``--only gpt2l_train,mlp_train`` captures a subset; ``--keep-dumps DIR`` keeps XLA's raw
dump folders. ``--corpus`` captures the programs of ``corpus_programs.py`` instead, each in
both XLA:CPU orders (default and ``CPU_SCHEDULER_TYPE_MEMORY_OPTIMIZED``, the ``.memopt``
twin), writes the same four files gzip-compressed (``NAME[.memopt].hlo.gz`` ...) into
``models/hlo/corpus/`` and a ``manifest.json`` there with per-computation instruction
counts, roles (entry, while body/condition, conditional branch, call), control-flow and
collective counts and XLA's own peak figures. Each program is compiled in its own child
process, because XLA reads ``XLA_FLAGS`` once per process::

    XLA_FLAGS="--xla_dump_to=DIR --xla_dump_hlo_as_text
               [--xla_force_host_platform_device_count=8]
               [--xla_cpu_scheduler_type=CPU_SCHEDULER_TYPE_MEMORY_OPTIMIZED]"
    JAX_PLATFORMS=cpu

From each dump the script keeps, for the jitted step's module only:

- ``*.cpu_after_optimizations.txt`` -> ``NAME.hlo`` (optimized, ``is_scheduled=true``);
- ``*-live-range.txt`` -> ``NAME.live-range.txt`` (``HloLiveRange``: the instruction
  sequence, ``BufferLiveRange`` ``value{index}:start-end`` per value, the values live at
  the peak);
- ``*-buffer-assignment.txt`` -> ``NAME.buffer-assignment.txt`` (allocations with every
  value's size and offset);
- ``*-memory-usage-report.txt`` -> ``NAME.memory-usage-report.txt`` (the allocations
  grouped by size with the shapes sharing each, and their ``Total bytes:``).

Absolute source paths that XLA copies into the text (``FileNames``, ``source_file=``)
are cut to their last components so the files hold no machine-specific path. Finally it
writes ``models/hlo/manifest.json`` (versions, flags, op counts, XLA's own peak figures),
which README.md mirrors, and copies ``sharded_dp_tp.hlo`` to ``demo.hlo``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter

DEMO = "sharded_dp_tp"
HLO_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "hlo")
MEMOPT_FLAG = "--xla_cpu_scheduler_type=CPU_SCHEDULER_TYPE_MEMORY_OPTIMIZED"

# name -> (builder function, needs 8 host devices, extra XLA flags, description)
PROGRAMS = {
    "gpt2l_train": ("build_gpt", False, (),
                    "GPT-style decoder, 2 layers (d_model 128, 4 heads, d_ff 512, vocab 512, "
                    "batch 8, seq 128, f32): forward, backward, Adam update; params and "
                    "optimizer state donated"),
    "gpt2l_train.memopt": ("build_gpt", False, (MEMOPT_FLAG,),
                           "the same GPT step compiled with XLA:CPU's memory-optimized "
                           "scheduler"),
    "mlp_train": ("build_mlp", False, (),
                  "MLP, 4 hidden layers of width 512 (batch 64, f32): forward, softmax "
                  "cross-entropy, backward, SGD with momentum; params donated"),
    "mlp_train.memopt": ("build_mlp", False, (MEMOPT_FLAG,),
                         "the same MLP step compiled with XLA:CPU's memory-optimized "
                         "scheduler"),
    "cnn_train": ("build_cnn", False, (),
                  "small CNN (3 conv 3x3 + pool, dense head, batch 16, 32x32x3, f32): "
                  "forward, backward, SGD"),
    "cnn_train.memopt": ("build_cnn", False, (MEMOPT_FLAG,),
                         "the same CNN step compiled with XLA:CPU's memory-optimized "
                         "scheduler"),
    "sharded_dp_tp": ("build_sharded", True, (),
                      "2-layer Megatron-style block under shard_map on a 2x4 (dp, tp) mesh of "
                      "8 host devices: sequence-parallel all-gather / reduce-scatter around "
                      "the MLP, a tensor-parallel all-reduce, a ring (ppermute) pass of keys "
                      "over the tp axis, data-parallel gradient all-reduce, SGD"),
    "sharded_dp_tp.memopt": ("build_sharded", True, (MEMOPT_FLAG,),
                             "the same sharded step compiled with XLA:CPU's memory-optimized "
                             "scheduler"),
}


# ----------------------------------------------------------------------------------------
# The JAX programs (run in the child process; jax is imported only here).
# ----------------------------------------------------------------------------------------

def build_gpt():
    import jax
    import jax.numpy as jnp

    layers, d, heads, d_ff, vocab, batch, seq = 2, 128, 4, 512, 512, 8, 128
    dh = d // heads
    key = jax.random.PRNGKey(0)
    keys = iter(jax.random.split(key, 64))

    def dense(k, m, n):
        return jax.random.normal(k, (m, n), jnp.float32) / jnp.sqrt(m)

    params = {"wte": dense(next(keys), vocab, d), "wpe": dense(next(keys), seq, d) * 0.1,
              "lnf": {"g": jnp.ones(d), "b": jnp.zeros(d)}, "blocks": []}
    for _ in range(layers):
        params["blocks"].append({
            "ln1": {"g": jnp.ones(d), "b": jnp.zeros(d)},
            "wqkv": dense(next(keys), d, 3 * d), "bqkv": jnp.zeros(3 * d),
            "wo": dense(next(keys), d, d), "bo": jnp.zeros(d),
            "ln2": {"g": jnp.ones(d), "b": jnp.zeros(d)},
            "w1": dense(next(keys), d, d_ff), "b1": jnp.zeros(d_ff),
            "w2": dense(next(keys), d_ff, d), "b2": jnp.zeros(d)})

    def layer_norm(p, x):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) * jax.lax.rsqrt(var + 1e-5) * p["g"] + p["b"]

    def block(p, x):
        h = layer_norm(p["ln1"], x)
        qkv = h @ p["wqkv"] + p["bqkv"]
        q, k, v = jnp.split(qkv, 3, axis=-1)
        split = lambda t: t.reshape(batch, seq, heads, dh).transpose(0, 2, 1, 3)
        q, k, v = split(q), split(k), split(v)
        scores = (q @ k.transpose(0, 1, 3, 2)) / jnp.sqrt(dh)
        mask = jnp.tril(jnp.ones((seq, seq), bool))
        scores = jnp.where(mask, scores, -1e9)
        att = jax.nn.softmax(scores, axis=-1)
        o = (att @ v).transpose(0, 2, 1, 3).reshape(batch, seq, d)
        x = x + o @ p["wo"] + p["bo"]
        h = layer_norm(p["ln2"], x)
        x = x + jax.nn.gelu(h @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]
        return x

    def loss_fn(params, tokens, targets):
        x = params["wte"][tokens] + params["wpe"][None]
        for p in params["blocks"]:
            x = block(p, x)
        x = layer_norm(params["lnf"], x)
        logits = x @ params["wte"].T
        logp = jax.nn.log_softmax(logits, axis=-1)
        return -jnp.take_along_axis(logp, targets[..., None], axis=-1).mean()

    def gpt2l_train_step(params, m, v, step, tokens, targets):
        loss, grads = jax.value_and_grad(loss_fn)(params, tokens, targets)
        b1, b2, lr, eps = 0.9, 0.999, 3e-4, 1e-8
        step = step + 1
        m = jax.tree.map(lambda m, g: b1 * m + (1 - b1) * g, m, grads)
        v = jax.tree.map(lambda v, g: b2 * v + (1 - b2) * g * g, v, grads)
        c1, c2 = 1 - b1 ** step, 1 - b2 ** step
        params = jax.tree.map(lambda p, m, v: p - lr * (m / c1) / (jnp.sqrt(v / c2) + eps),
                              params, m, v)
        return params, m, v, step, loss

    zeros = jax.tree.map(jnp.zeros_like, params)
    tokens = jax.random.randint(next(keys), (batch, seq), 0, vocab)
    targets = jax.random.randint(next(keys), (batch, seq), 0, vocab)
    step_fn = jax.jit(gpt2l_train_step, donate_argnums=(0, 1, 2))
    args = (params, zeros, jax.tree.map(jnp.zeros_like, params), jnp.float32(0.0),
            tokens, targets)
    return step_fn, args, "gpt2l_train_step"


def build_mlp():
    import jax
    import jax.numpy as jnp

    width, hidden, batch, d_in, n_cls = 512, 4, 64, 256, 10
    keys = iter(jax.random.split(jax.random.PRNGKey(1), 16))
    dims = [d_in] + [width] * hidden + [n_cls]
    params = [(jax.random.normal(next(keys), (a, b)) / jnp.sqrt(a), jnp.zeros(b))
              for a, b in zip(dims[:-1], dims[1:])]

    def loss_fn(params, x, y):
        for w, b in params[:-1]:
            x = jax.nn.relu(x @ w + b)
        w, b = params[-1]
        logp = jax.nn.log_softmax(x @ w + b)
        return -jnp.take_along_axis(logp, y[:, None], axis=-1).mean()

    def mlp_train_step(params, mom, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        mom = jax.tree.map(lambda m, g: 0.9 * m + g, mom, grads)
        params = jax.tree.map(lambda p, m: p - 0.01 * m, params, mom)
        return params, mom, loss

    x = jax.random.normal(next(keys), (batch, d_in))
    y = jax.random.randint(next(keys), (batch,), 0, n_cls)
    step_fn = jax.jit(mlp_train_step, donate_argnums=(0, 1))
    return step_fn, (params, jax.tree.map(jnp.zeros_like, params), x, y), "mlp_train_step"


def build_cnn():
    import jax
    import jax.numpy as jnp

    batch, hw, chans, n_cls = 16, 32, (3, 16, 32, 64), 10
    keys = iter(jax.random.split(jax.random.PRNGKey(2), 16))
    params = {"convs": [jax.random.normal(next(keys), (3, 3, a, b)) / jnp.sqrt(9 * a)
                        for a, b in zip(chans[:-1], chans[1:])]}
    params["head"] = jax.random.normal(next(keys), (chans[-1] * (hw // 8) ** 2, n_cls)) * 0.01

    def loss_fn(params, x, y):
        for w in params["convs"]:
            x = jax.lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                             dimension_numbers=("NHWC", "HWIO", "NHWC"))
            x = jax.nn.relu(x)
            x = jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1),
                                      "VALID")
        logp = jax.nn.log_softmax(x.reshape(x.shape[0], -1) @ params["head"])
        return -jnp.take_along_axis(logp, y[:, None], axis=-1).mean()

    def cnn_train_step(params, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        return jax.tree.map(lambda p, g: p - 0.01 * g, params, grads), loss

    x = jax.random.normal(next(keys), (batch, hw, hw, chans[0]))
    y = jax.random.randint(next(keys), (batch,), 0, n_cls)
    return jax.jit(cnn_train_step, donate_argnums=(0,)), (params, x, y), "cnn_train_step"


def build_sharded():
    import jax
    import numpy as np
    import jax.numpy as jnp
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    try:
        shard_map = jax.shard_map
    except AttributeError:  # older jax
        from jax.experimental.shard_map import shard_map

    dp, tp = 2, 4
    batch, seq, d, d_ff, layers = 8, 64, 128, 512, 2
    devices = jax.devices()
    if len(devices) < dp * tp:
        raise SystemExit(f"need {dp * tp} devices, have {len(devices)}")
    mesh = Mesh(np.array(devices[:dp * tp]).reshape(dp, tp), ("dp", "tp"))
    keys = iter(jax.random.split(jax.random.PRNGKey(3), 32))
    params = [{"g": jnp.ones(d),
               "wk": jax.random.normal(next(keys), (d, d)) / jnp.sqrt(d),
               "w1": jax.random.normal(next(keys), (d, d_ff)) / jnp.sqrt(d),
               "w2": jax.random.normal(next(keys), (d_ff, d)) / jnp.sqrt(d_ff)}
              for _ in range(layers)]
    pspec = [{"g": P(), "wk": P(), "w1": P(None, "tp"), "w2": P("tp", None)}
             for _ in range(layers)]
    ring = [(i, (i + 1) % tp) for i in range(tp)]

    def norm(g, x):
        return x * jax.lax.rsqrt((x * x).mean(-1, keepdims=True) + 1e-5) * g

    def local_loss(params, x, y):
        # x: [batch/dp, seq/tp, d], sequence-sharded over tp.
        for li, p in enumerate(params):
            h = norm(p["g"], x)
            # Ring pass of keys over the tp axis (ring-attention style): collective-permute.
            k = h @ p["wk"]
            score = (h * k).sum(-1, keepdims=True)
            for _ in range(tp - 1):
                k = jax.lax.ppermute(k, "tp", ring)
                score = score + (h * k).sum(-1, keepdims=True)
            h = h * jax.nn.sigmoid(score / tp)
            if li % 2 == 0:
                # Sequence parallel: all-gather the sequence, column/row-parallel MLP,
                # reduce-scatter back to sequence shards.
                full = jax.lax.all_gather(h, "tp", axis=1, tiled=True)
                o = jax.nn.gelu(full @ p["w1"]) @ p["w2"]
                x = x + jax.lax.psum_scatter(o, "tp", scatter_dimension=1, tiled=True)
            else:
                # Plain tensor parallel: each rank holds its sequence shard; the partial
                # sums of the row-parallel matmul meet in an all-reduce.
                full = jax.lax.all_gather(h, "tp", axis=1, tiled=True)
                o = jax.nn.gelu(full @ p["w1"]) @ p["w2"]
                o = jax.lax.psum(o, "tp")
                idx = jax.lax.axis_index("tp")
                x = x + jax.lax.dynamic_slice_in_dim(o, idx * (seq // tp), seq // tp, axis=1)
        return ((x - y) ** 2).mean()

    def step_body(params, x, y):
        loss, grads = jax.value_and_grad(local_loss)(params, x, y)
        # Gradients of params replicated over an axis are summed over it; make the
        # data-parallel all-reduce explicit for every parameter.
        grads = jax.tree.map(lambda g: jax.lax.pmean(g, "dp"), grads)
        loss = jax.lax.pmean(loss, ("dp", "tp"))
        params = jax.tree.map(lambda p, g: p - 0.01 * g, params, grads)
        return params, loss

    xspec = P("dp", "tp", None)
    try:
        body = shard_map(step_body, mesh=mesh, in_specs=(pspec, xspec, xspec),
                         out_specs=(pspec, P()), check_vma=False)
    except TypeError:
        body = shard_map(step_body, mesh=mesh, in_specs=(pspec, xspec, xspec),
                         out_specs=(pspec, P()), check_rep=False)

    def sharded_dp_tp_step(params, x, y):
        return body(params, x, y)

    put = lambda a, s: jax.device_put(a, NamedSharding(mesh, s))
    params = jax.tree.map(put, params, pspec)
    x = put(jax.random.normal(next(keys), (batch, seq, d)), xspec)
    y = put(jax.random.normal(next(keys), (batch, seq, d)), xspec)
    return jax.jit(sharded_dp_tp_step, donate_argnums=(0,)), (params, x, y), \
        "sharded_dp_tp_step"


# ----------------------------------------------------------------------------------------
# Child: compile one program with the dump flags already set.
# ----------------------------------------------------------------------------------------

def child(name: str) -> None:
    import jax
    if name in PROGRAMS:
        builder = globals()[PROGRAMS[name][0]]
    else:
        import corpus_programs  # beside this script; on sys.path as the script's folder
        builder = getattr(corpus_programs, corpus_programs.CORPUS[name][0])
    fn, args, fname = builder()
    out = fn(*args)
    jax.block_until_ready(out)
    import jaxlib
    print(json.dumps({"function": fname, "jax": jax.__version__,
                      "jaxlib": getattr(jaxlib, "__version__", jax.__version__),
                      "devices": len(jax.devices())}))


# ----------------------------------------------------------------------------------------
# Parent: run the children, pick and clean the files.
# ----------------------------------------------------------------------------------------

_PATH_RE = re.compile(r'"(/[^"\n]*)"')


def _short_path(path: str) -> str:
    parts = path.split("/")
    for anchor in ("site-packages", "dist-packages"):
        if anchor in parts:
            return "/".join(parts[parts.index(anchor) + 1:])
    if "models" in parts:
        return "/".join(parts[len(parts) - 1 - parts[::-1].index("models"):])
    return parts[-1]


def sanitize(text: str) -> str:
    """Cut absolute paths inside quoted strings to their meaningful tail."""
    return _PATH_RE.sub(lambda m: '"' + _short_path(m.group(1)) + '"', text)


def opcode_counts(hlo: str) -> tuple[int, int, Counter]:
    """(entry instructions, all instructions, opcode histogram of the entry computation)."""
    entry_lines, all_count, in_entry = [], 0, False
    inst = re.compile(r"^\s*(?:ROOT\s+)?%?[\w.\-]+\s*=\s*.*?\s([a-z][a-z0-9\-]*)\(")
    for line in hlo.splitlines():
        if line.startswith("ENTRY"):
            in_entry = True
            continue
        if in_entry and line.startswith("}"):
            in_entry = False
        m = inst.match(line)
        if m:
            all_count += 1
            if in_entry:
                entry_lines.append(m.group(1))
    return len(entry_lines), all_count, Counter(entry_lines)


def _pick(dump_dir: str, function: str, suffix: str) -> str | None:
    pat = re.compile(r"module_\d+\.jit_" + re.escape(function) + r"\..*" + re.escape(suffix) + "$")
    hits = sorted(f for f in os.listdir(dump_dir) if pat.match(f))
    return os.path.join(dump_dir, hits[-1]) if hits else None


def xla_memory_numbers(dump_dir: str, function: str, live_range_text: str | None) -> dict:
    """XLA's own figures: the HloLiveRange peak and the buffer assignment's total bytes."""
    out = {}
    if live_range_text:
        m = re.search(r"Live ranges at (\d+) \(peak\):\n((?:    .*\n)*)", live_range_text)
        if m:
            cum = re.findall(r"cumulative: (\d+) bytes", m.group(2))
            out["live_range_peak_step"] = int(m.group(1))
            out["live_range_peak_bytes"] = int(cum[-1]) if cum else 0
    report = _pick(dump_dir, function, "cpu_after_optimizations-memory-usage-report.txt")
    if report:
        with open(report) as f:
            m = re.search(r"Total bytes: (\d+)", f.read())
        if m:
            out["buffer_assignment_total_bytes"] = int(m.group(1))
    return out


KEEP = (("cpu_after_optimizations.txt", ".hlo"),
        ("cpu_after_optimizations-live-range.txt", ".live-range.txt"),
        ("cpu_after_optimizations-buffer-assignment.txt", ".buffer-assignment.txt"),
        ("cpu_after_optimizations-memory-usage-report.txt", ".memory-usage-report.txt"))
COLLECTIVES = ("all-reduce", "all-gather", "reduce-scatter", "collective-permute",
               "all-to-all", "all-reduce-start", "all-gather-start",
               "collective-permute-start", "all-reduce-done", "all-gather-done",
               "collective-permute-done")


def capture(name: str, out_dir: str, keep_dumps: str | None) -> dict:
    _, needs8, extra, desc = PROGRAMS[name]
    dump = tempfile.mkdtemp(prefix=f"xla_{name}_")
    flags = ["--xla_dump_to=" + dump, "--xla_dump_hlo_as_text"]
    if needs8:
        flags.append("--xla_force_host_platform_device_count=8")
    flags.extend(extra)
    env = dict(os.environ, XLA_FLAGS=" ".join(flags), JAX_PLATFORMS="cpu")
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", name],
                          env=env, capture_output=True, text=True)
    if proc.returncode:
        raise SystemExit(f"{name}: child failed\n{proc.stderr[-4000:]}")
    info = json.loads(proc.stdout.strip().splitlines()[-1])
    files, texts = {}, {}
    for suffix, ext in KEEP:
        src = _pick(dump, info["function"], suffix)
        if src is None:
            print(f"{name}: XLA wrote no *{suffix}", file=sys.stderr)
            continue
        with open(src) as f:
            text = sanitize(f.read())
        dst = name + ext
        with open(os.path.join(out_dir, dst), "w") as f:
            f.write(text)
        files[ext] = dst
        texts[ext] = text
        if ext == ".hlo":
            n_entry, n_all, hist = opcode_counts(text)
    numbers = xla_memory_numbers(dump, info["function"], texts.get(".live-range.txt"))
    if keep_dumps:
        shutil.copytree(dump, os.path.join(keep_dumps, name), dirs_exist_ok=True)
    shutil.rmtree(dump, ignore_errors=True)
    entry = {"program": desc, "function": info["function"],
             "xla_flags": [f for f in flags if not f.startswith("--xla_dump_to=")]
             + ["--xla_dump_to=DIR"],
             "files": sorted(files.values()), "jax": info["jax"], "jaxlib": info["jaxlib"],
             "devices": info["devices"], "entry_instructions": n_entry,
             "all_instructions": n_all,
             "collectives": {k: v for k, v in sorted(hist.items()) if k in COLLECTIVES},
             "xla_memory": numbers,
             "entry_opcodes": dict(hist.most_common())}
    print(f"{name}: {n_entry} entry instructions ({n_all} in all), "
          f"collectives {entry['collectives']}", file=sys.stderr)
    return entry


# ----------------------------------------------------------------------------------------
# The corpus (models/hlo/corpus/): every program in both XLA:CPU orders, gzip-compressed.
# ----------------------------------------------------------------------------------------

CORPUS_VARIANTS = (("default", "", ()), ("memopt", ".memopt", (MEMOPT_FLAG,)))
_HEADER_RE = re.compile(r"^(ENTRY\s+)?%?([\w.\-]+)\s*\(.*\{\s*$")
_INST_RE = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=\s*.*?\s([a-z][a-z0-9\-]*)\(")
_REF_RE = re.compile(r"\b(calls|to_apply|body|condition|true_computation|false_computation|"
                     r"branch_computations)=(\{[^}]*\}|%?[\w.\-]+)")
# Which computations a reference makes sequential (scheduled on their own by XLA).
_ROLE = {("while", "body"): "while-body", ("while", "condition"): "while-condition",
         ("conditional", "branch_computations"): "conditional-branch",
         ("conditional", "true_computation"): "conditional-branch",
         ("conditional", "false_computation"): "conditional-branch",
         ("call", "to_apply"): "call", ("fusion", "calls"): "fusion"}
SEQUENTIAL_ROLES = ("entry", "while-body", "while-condition", "conditional-branch", "call")
CORPUS_COLLECTIVES = tuple(sorted(set(COLLECTIVES) | {
    "all-to-all", "reduce-scatter", "collective-broadcast", "ragged-all-to-all",
    "all-gather-start", "all-gather-done", "collective-permute-start",
    "collective-permute-done", "async-start", "async-done"}))


def module_summary(hlo: str) -> dict:
    """Per-computation instruction counts and roles, control-flow and collective counts."""
    comps, order, entry, cur = {}, [], None, None
    roles: dict[str, set] = {}
    for line in hlo.splitlines():
        if cur is None:
            m = _HEADER_RE.match(line)
            if m and not line.startswith((" ", "HloModule")):
                cur = m.group(2)
                comps[cur] = Counter()
                order.append(cur)
                if m.group(1):
                    entry = cur
            continue
        if line.startswith("}"):
            cur = None
            continue
        m = _INST_RE.match(line)
        if not m:
            continue
        op = m.group(2)
        comps[cur][op] += 1
        for attr, val in _REF_RE.findall(line):
            for callee in re.findall(r"%?([\w.\-]+)", val):
                roles.setdefault(callee, set()).add(_ROLE.get((op, attr), "applied"))
    total = Counter()
    for hist in comps.values():
        total.update(hist)
    out = {"entry": entry, "instructions": sum(total.values()),
           "entry_instructions": sum(comps[entry].values()) if entry else 0,
           "control_flow": {k: total.get(k, 0) for k in ("while", "conditional", "call")},
           "collectives": {k: total[k] for k in CORPUS_COLLECTIVES if total.get(k)},
           "computations": {}, "fused_computations": 0, "fused_instructions": 0,
           "applied_computations": 0}
    for name in order:
        role = "entry" if name == entry else "/".join(sorted(roles.get(name, {"unused"})))
        n = sum(comps[name].values())
        if role == "fusion":
            out["fused_computations"] += 1
            out["fused_instructions"] += n
        elif role == "applied":
            out["applied_computations"] += 1
        else:
            out["computations"][name] = {"role": role, "instructions": n,
                                         "opcodes": dict(comps[name].most_common())}
    return out


def buffer_assignment_numbers(text: str) -> dict:
    """Sum of allocation sizes and of the preallocated temp buffer in a buffer assignment."""
    total = temp = 0
    for m in re.finditer(r"^allocation \d+: size (\d+)(.*)$", text, re.M):
        total += int(m.group(1))
        if "preallocated-temp" in m.group(2):
            temp += int(m.group(1))
    return {"allocations_total_bytes": total, "preallocated_temp_bytes": temp}


def _write_gz(path: str, text: str) -> None:
    import gzip
    with open(path, "wb") as raw:
        # mtime=0 and no file name inside: the same text always gives the same bytes.
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0,
                           compresslevel=9) as f:
            f.write(text.encode())


def capture_corpus_variant(name: str, variant: tuple, devices: int, out_dir: str,
                           keep_dumps: str | None) -> tuple[dict, dict]:
    label, suffix, extra = variant
    dump = tempfile.mkdtemp(prefix=f"xla_{name}{suffix}_")
    flags = ["--xla_dump_to=" + dump, "--xla_dump_hlo_as_text"]
    if devices > 1:
        flags.append(f"--xla_force_host_platform_device_count={devices}")
    flags.extend(extra)
    env = dict(os.environ, XLA_FLAGS=" ".join(flags), JAX_PLATFORMS="cpu")
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", name],
                          env=env, capture_output=True, text=True)
    if proc.returncode:
        raise SystemExit(f"{name}{suffix}: child failed\n{proc.stderr[-4000:]}")
    info = json.loads(proc.stdout.strip().splitlines()[-1])
    files, texts = [], {}
    for src_suffix, ext in KEEP:
        src = _pick(dump, info["function"], src_suffix)
        if src is None:
            raise SystemExit(f"{name}{suffix}: XLA wrote no *{src_suffix}")
        with open(src) as f:
            texts[ext] = sanitize(f.read())
        dst = f"{name}{suffix}{ext}.gz"
        _write_gz(os.path.join(out_dir, dst), texts[ext])
        files.append(dst)
    summary = module_summary(texts[".hlo"])
    memory = xla_memory_numbers(dump, info["function"], texts[".live-range.txt"])
    m = re.match(r"HloLiveRange \(max (\d+)\)", texts[".live-range.txt"])
    if m:
        memory["live_range_schedule_end"] = int(m.group(1))
    memory.update(buffer_assignment_numbers(texts[".buffer-assignment.txt"]))
    if keep_dumps:
        shutil.copytree(dump, os.path.join(keep_dumps, name + suffix), dirs_exist_ok=True)
    shutil.rmtree(dump, ignore_errors=True)
    entry = {"xla_flags": [f for f in flags if not f.startswith("--xla_dump_to=")]
             + ["--xla_dump_to=DIR"], "files": files, **summary, "xla_memory": memory}
    print(f"{name}{suffix}: {summary['instructions']} instructions "
          f"({summary['entry_instructions']} in entry), control flow "
          f"{summary['control_flow']}, collectives {summary['collectives']}, "
          f"live-range peak {memory.get('live_range_peak_bytes')}", file=sys.stderr)
    return entry, info


def capture_corpus(names: list[str], out_dir: str, keep_dumps: str | None) -> None:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from corpus_programs import CORPUS
    unknown = [n for n in names if n not in CORPUS]
    if unknown:
        raise SystemExit(f"not corpus programs: {', '.join(unknown)}")
    os.makedirs(out_dir, exist_ok=True)
    manifest_path = os.path.join(out_dir, "manifest.json")
    manifest = {"programs": {}}
    if os.path.exists(manifest_path):
        with open(manifest_path) as f:
            manifest = json.load(f)
    programs = {k: v for k, v in manifest.get("programs", {}).items() if k in CORPUS}
    for n in names:
        _, devices, family, desc = CORPUS[n]
        variants, info = {}, {}
        for variant in CORPUS_VARIANTS:
            variants[variant[0]], info = capture_corpus_variant(n, variant, devices, out_dir,
                                                                keep_dumps)
        programs[n] = {"family": family, "description": desc, "function": info["function"],
                       "devices": info["devices"], "jax": info["jax"],
                       "jaxlib": info["jaxlib"], "variants": variants}
    versions = sorted({(p["jax"], p["jaxlib"]) for p in programs.values()})
    manifest = {
        "about": "XLA:CPU dumps of real JAX programs, each in XLA:CPU's default and "
                 "memory-optimized order; written by models/jax/capture.py --corpus "
                 "(make corpus). Files are gzip-compressed text.",
        "jax": ", ".join(sorted({v[0] for v in versions})),
        "jaxlib": ", ".join(sorted({v[1] for v in versions})),
        "platform": "cpu (JAX_PLATFORMS=cpu)",
        "variants": {label: {"suffix": suffix, "extra_xla_flags": list(extra)}
                     for label, suffix, extra in CORPUS_VARIANTS},
        "programs": dict(sorted(programs.items()))}
    with open(manifest_path, "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    if os.path.abspath(out_dir) == os.path.join(HLO_DIR, "corpus"):
        update_readme_table(os.path.join(HLO_DIR, "README.md"), manifest)


TABLE_START, TABLE_END = "<!-- corpus table: start -->", "<!-- corpus table: end -->"


def corpus_table(manifest: dict) -> str:
    """The README's corpus table (markdown), from the corpus manifest."""
    rows = ["| program | family | devices | instructions (entry) | while / cond | "
            "collectives | XLA peak, default order | XLA peak, memopt order |",
            "|---|---|---|---|---|---|---|---|"]
    for name, p in manifest["programs"].items():
        d, m = p["variants"]["default"], p["variants"]["memopt"]
        cf = d["control_flow"]
        coll = ", ".join(f"{n} {k}" for k, n in d["collectives"].items()) or "none"
        peak = lambda v: f"{v['xla_memory']['live_range_peak_bytes']:,}"
        rows.append(f"| `{name}` | {p['family']} | {p['devices']} | {d['instructions']} "
                    f"({d['entry_instructions']}) | {cf['while']} / {cf['conditional']} | "
                    f"{coll} | {peak(d)} | {peak(m)} |")
    rows.append("")
    rows.extend(f"- `{name}`: {p['description']}." for name, p in manifest["programs"].items())
    return "\n".join(rows)


def update_readme_table(readme: str, manifest: dict) -> bool:
    """Rewrite the table between the markers of models/hlo/README.md; False if absent."""
    if not os.path.exists(readme):
        return False
    with open(readme) as f:
        text = f.read()
    if TABLE_START not in text or TABLE_END not in text:
        return False
    head, rest = text.split(TABLE_START, 1)
    _, tail = rest.split(TABLE_END, 1)
    with open(readme, "w") as f:
        f.write(head + TABLE_START + "\n" + corpus_table(manifest) + "\n" + TABLE_END + tail)
    return True


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=None,
                    help="output folder (default models/hlo, or models/hlo/corpus with "
                         "--corpus)")
    ap.add_argument("--only", default="", help="comma-separated program names")
    ap.add_argument("--keep-dumps", default=None)
    ap.add_argument("--corpus", action="store_true",
                    help="capture the corpus programs (corpus_programs.py) into "
                         "models/hlo/corpus/, both XLA:CPU orders, gzip-compressed")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        child(a.child)
        return
    if a.corpus:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from corpus_programs import CORPUS
        capture_corpus([n for n in a.only.split(",") if n] or list(CORPUS),
                       a.out or os.path.join(HLO_DIR, "corpus"), a.keep_dumps)
        return
    a.out = a.out or HLO_DIR
    names = [n for n in a.only.split(",") if n] or list(PROGRAMS)
    os.makedirs(a.out, exist_ok=True)
    manifest_path = os.path.join(a.out, "manifest.json")
    manifest = {}
    if os.path.exists(manifest_path):
        with open(manifest_path) as f:
            manifest = json.load(f)
    for n in names:
        manifest[n] = capture(n, a.out, a.keep_dumps)
        if n == DEMO:
            # `make demo` schedules this one: small, and it has every collective kind.
            shutil.copyfile(os.path.join(a.out, n + ".hlo"), os.path.join(a.out, "demo.hlo"))
    with open(manifest_path, "w") as f:
        json.dump(dict(sorted(manifest.items())), f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
