"""Synthetic ML-program graphs for cpsched, built directly with ``GraphBuilder``.

One function per family; each returns a ``Graph`` whose ``original_order`` is the natural
program order (the order the ops are written: forward, backward, optimizer update).

- ``transformer_train``: decoder-only transformer, forward + backward + optimizer.
- ``mlp_train``: multi-layer perceptron training step.
- ``unet``: U-Net-like CNN forward, optionally with backward and update.
- ``random_layered``: random layered DAGs in the style of Gagrani et al. (NeurIPS 2022).
- ``transformer_parallel``: one rank's program of a transformer under data, tensor,
  sequence and (optionally) pipeline parallelism, with async collectives.

Conventions shared by the model families:

- Activation sizes are symbolic in the batch ``b`` (and sequence length ``s`` for
  transformers; U-Net spatial sizes are static unless ``spatial`` names a dim). Weights
  are static.
- ``flops`` are 2*M*N*K for matmuls and convolutions and a few flops per element for
  element-wise work; ``bytes_accessed`` is what the op reads plus what it writes.
  ``attrs['dtype']`` (``bf16``/``f32``) tells the cost model which peak applies and
  ``attrs['phase']`` is ``forward``, ``backward`` or ``optimizer``.
- Program inputs that are not donated (data, inference weights) are ``live_in`` and
  ``live_out``, like XLA entry parameters. Training weights and optimizer state are
  donated and updated in place: the update op uses their buffers and defines none, and
  it is ordered (control edges) after every other reader of the buffers it overwrites.
  Weights therefore occupy memory for the whole step; what orders change is how long
  activations, gradients and temporaries live.
- The backward pass is derived mechanically (reverse mode over the recorded forward ops):
  every forward tensor a gradient op needs stays live until that op runs, so ordering and
  rematerialisation decisions matter as they do in real training steps. Gradients that
  reach one tensor from several consumers are summed by one ``add``.
- Collectives are async ``<kind>-start`` / ``<kind>-done`` pairs. The start defines the
  in-flight buffer (the result), the done uses it and forwards it: consumers of the
  result use the start's buffer. The operand's buffer is used by the done too (it must
  stay intact while the transfer runs). ``Collective.bytes`` is the full tensor: the
  buffer for all-reduce and collective-permute, the gathered output for all-gather, the
  unscattered input for reduce-scatter. Replica groups use global rank ids
  ``((stage * dp) + i_dp) * tp + i_tp``.
"""

from __future__ import annotations

import functools
import inspect
import math
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from cpsched.core.errors import InputError, InputTypeError, LimitError
from cpsched.core.graph import Collective, Graph, GraphBuilder, OpKind
from cpsched.core.symbolic import SymExpr

__all__ = [
    "transformer_train",
    "mlp_train",
    "unet",
    "random_layered",
    "transformer_parallel",
    "layered",
    "FAMILIES",
    "check_params",
]

B = SymExpr.dim("b")
S = SymExpr.dim("s")
ONE = SymExpr.const(1)


def _sym(x) -> SymExpr:
    return SymExpr.parse(x)


# ----------------------------------------------------------------------------------------
# A tiny recording net: forward ops on a tape, reverse-mode backward, in-place updates.
# ----------------------------------------------------------------------------------------


@dataclass(eq=False)
class Tensor:
    """A value of the program: the op that produces it and the buffer that holds it."""

    name: str
    op: int  # producing op (the done of an async collective)
    buf: int  # buffer holding the value (the start's buffer for a collective)
    numel: SymExpr
    itemsize: int
    requires_grad: bool
    leaf: bool = False

    @property
    def size(self) -> SymExpr:
        return self.numel * self.itemsize


OUT = object()  # in a gradient rule: the forward op's own result


@dataclass(frozen=True)
class G:
    """Gradient of one input, computed by one new op from ``dy`` and saved tensors."""

    opcode: str
    saved: tuple = ()
    flops: SymExpr | int = 0
    label: str = ""


PASS = "pass"  # gradient of this input is dy itself (residual add)
GradRule = "G | str | Callable[[Tensor], Tensor] | None"


@dataclass(eq=False)
class _Record:
    name: str
    inputs: list
    out: Tensor
    grads: list


class _Net:
    def __init__(self, name: str, itemsize: int):
        self.g = GraphBuilder(name)
        self.itemsize = itemsize
        self.dtype = {2: "bf16", 4: "f32", 1: "f8"}.get(itemsize, f"{8 * itemsize}bit")
        self.tape: list[_Record] = []
        self.hooks: dict[Tensor, Callable[[Tensor], Tensor]] = {}
        self.users: dict[int, list[int]] = {}
        self.weights: list[Tensor] = []
        self.phase = "forward"
        self._n_params = 0

    # -- building blocks -----------------------------------------------------------------
    def _attrs(self, extra=None) -> dict:
        a = {"phase": self.phase, "dtype": self.dtype}
        if extra:
            a.update(extra)
        return a

    def _use(self, t: Tensor, op: int) -> None:
        self.g.add_buffer_user(t.buf, op)
        self.users.setdefault(t.buf, []).append(op)

    def input(
        self,
        name: str,
        numel,
        itemsize: int | None = None,
        donated: bool = False,
        requires_grad: bool = False,
    ) -> Tensor:
        itemsize = itemsize or self.itemsize
        numel = _sym(numel)
        i = self.g.add_op(
            name, "parameter", OpKind.PARAMETER, attrs={"parameter_number": self._n_params}
        )
        self._n_params += 1
        j = self.g.add_buffer(i, numel * itemsize, name=name, live_in=True, live_out=not donated)
        return Tensor(name, i, j, numel, itemsize, requires_grad, leaf=True)

    def weight(self, name: str, numel: int, trainable: bool = True) -> Tensor:
        """A weight: donated and updated in place when trained, else kept (live_out)."""
        t = self.input(name, numel, donated=False, requires_grad=trainable)
        if trainable:
            self.weights.append(t)
        return t

    def op(
        self,
        name: str,
        opcode: str,
        inputs: Sequence[Tensor],
        numel,
        flops=0,
        grads: Sequence | None = None,
        itemsize: int | None = None,
        live_out: bool = False,
        kind: OpKind = OpKind.COMPUTE,
        bytes_accessed=None,
    ) -> Tensor:
        itemsize = itemsize or self.itemsize
        numel = _sym(numel)
        if bytes_accessed is None:
            bytes_accessed = sum((t.size for t in inputs), numel * itemsize)
        i = self.g.add_op(
            name,
            opcode,
            kind,
            operands=[t.op for t in inputs],
            flops=flops,
            bytes_accessed=bytes_accessed,
            attrs=self._attrs(),
        )
        for t in inputs:
            self._use(t, i)
        j = self.g.add_buffer(i, numel * itemsize, name=name, live_out=live_out)
        rg = grads is not None and any(t.requires_grad for t in inputs)
        out = Tensor(name, i, j, numel, itemsize, rg)
        if rg and grads is not None:  # rg implies grads
            self.tape.append(_Record(name, list(inputs), out, list(grads)))
        return out

    def update(
        self, name: str, opcode: str, writes: Sequence[Tensor], reads: Sequence[Tensor], flops
    ) -> int:
        """An in-place update: overwrites ``writes``, defines no buffer, and runs after
        every other reader of the buffers it overwrites."""
        others = {u for t in writes for u in self.users.get(t.buf, ())}
        ba = sum((t.size for t in reads), SymExpr()) + sum((t.size * 2 for t in writes), SymExpr())
        i = self.g.add_op(
            name,
            opcode,
            OpKind.COMPUTE,
            operands=[t.op for t in list(writes) + list(reads)],
            control_preds=sorted(others),
            flops=flops,
            bytes_accessed=ba,
            attrs=self._attrs(),
        )
        for t in list(writes) + list(reads):
            self._use(t, i)
        return i

    def collective(
        self, name: str, kind: str, x: Tensor, out_numel, groups: Sequence[Sequence[int]], grad=None
    ) -> Tensor:
        """An async collective as a start/done pair; returns the (forwarded) result."""
        out_numel = _sym(out_numel)
        out_size = out_numel * x.itemsize
        if kind == "all-gather":
            nbytes = out_size
        elif kind == "reduce-scatter":
            nbytes = x.size
        else:
            nbytes = x.size
        group_tuples = tuple(tuple(int(r) for r in grp) for grp in groups)
        gsize = max(len(grp) for grp in group_tuples) if group_tuples else 1
        if kind == "collective-permute":
            gsize = 2
        attrs = {"phase": self.phase}
        s = self.g.add_op(
            f"{name}.start",
            f"{kind}-start",
            OpKind.ASYNC_START,
            operands=[x.op],
            bytes_accessed=x.size + out_size,
            attrs=attrs,
        )
        self._use(x, s)
        buf = self.g.add_buffer(s, out_size, name=name)
        d = self.g.add_op(
            f"{name}.done", f"{kind}-done", OpKind.ASYNC_DONE, operands=[s], attrs=attrs
        )
        self._use(x, d)
        self.g.add_buffer_user(buf, d)
        self.users.setdefault(buf, []).append(d)
        self.g.pair_async(s, d)
        self.g.set_collective(
            s, Collective(kind=kind, bytes=nbytes, group_size=gsize, replica_groups=group_tuples)
        )
        rg = grad is not None and x.requires_grad
        out = Tensor(name, d, buf, out_numel, x.itemsize, rg)
        if rg:
            self.tape.append(_Record(name, [x], out, [grad]))
        return out

    # -- reverse mode ----------------------------------------------------------------------
    def _finish(self, t: Tensor, contribs: list[Tensor]) -> Tensor:
        dy = contribs[0]
        if len(contribs) > 1:
            dy = self.op(
                f"{t.name}/grad_sum",
                "add",
                contribs,
                t.numel,
                flops=t.numel * (len(contribs) - 1),
                itemsize=contribs[0].itemsize,
            )
        hook = self.hooks.get(t)
        return hook(dy) if hook else dy

    def _grad(self, rec: _Record, k: int, x: Tensor, rule, dy: Tensor) -> Tensor:
        if rule == PASS:
            return dy
        if callable(rule) and not isinstance(rule, G):
            return rule(dy)
        saved = [rec.out if s is OUT else s for s in rule.saved]
        return self.op(
            f"{rec.name}/d{rule.label or k}",
            rule.opcode,
            [dy] + saved,
            x.numel,
            flops=rule.flops,
            itemsize=x.itemsize,
        )

    def backward(
        self,
        out: Tensor,
        dy: Tensor,
        on_weight_grad: Callable[[Tensor, Tensor], Tensor] | None = None,
    ) -> dict[Tensor, Tensor]:
        """Emit the backward pass of everything recorded; returns weight -> gradient.

        A leaf's gradient is finished (summed, hooked, passed to ``on_weight_grad``) as
        soon as its last consumer's backward has run, as autodiff frameworks do.
        """
        self.phase = "backward"
        pending: dict[Tensor, list[Tensor]] = {out: [dy]}
        remaining: Counter = Counter()
        for rec in self.tape:
            for x, r in zip(rec.inputs, rec.grads):
                if r is not None and x.requires_grad:
                    remaining[x] += 1
        wgrads: dict[Tensor, Tensor] = {}
        for rec in reversed(self.tape):
            contribs = pending.pop(rec.out, None)
            d_out = self._finish(rec.out, contribs) if contribs else None
            for k, (x, r) in enumerate(zip(rec.inputs, rec.grads)):
                if r is None or not x.requires_grad:
                    continue
                if d_out is not None:
                    pending.setdefault(x, []).append(self._grad(rec, k, x, r, d_out))
                remaining[x] -= 1
                if x.leaf and remaining[x] == 0 and x in pending:
                    gx = self._finish(x, pending.pop(x))
                    if on_weight_grad and x in self._weight_set():
                        gx = on_weight_grad(x, gx)
                    wgrads[x] = gx
        return wgrads

    def _weight_set(self) -> set:
        return set(self.weights)

    def optimizer(self, grads: dict[Tensor, Tensor], kind: str) -> None:
        """In-place update of every trained weight, in weight creation order."""
        self.phase = "optimizer"
        for w in self.weights:
            gw = grads.get(w)
            if gw is None:
                continue
            n = w.numel
            if kind == "sgd":
                self.update(f"{w.name}/sgd", "sgd-update", [w], [gw], flops=n * 2)
            elif kind == "momentum":
                m = self.input(f"{w.name}/momentum", n, itemsize=4)
                self.update(
                    f"{w.name}/momentum_update", "momentum-update", [w, m], [gw], flops=n * 4
                )
            elif kind == "adam":
                m = self.input(f"{w.name}/adam_m", n, itemsize=4)
                v = self.input(f"{w.name}/adam_v", n, itemsize=4)
                self.update(f"{w.name}/adam", "adam-update", [w, m, v], [gw], flops=n * 12)
            else:
                raise InputError(f"unknown optimizer {kind!r} (sgd, momentum, adam)")

    def build(self, meta: dict) -> Graph:
        g = self.g
        g.original_order = list(range(g.n_ops))
        g.meta.update(meta)
        return g.build()


# -- layers ------------------------------------------------------------------------------


def _matmul(
    net: _Net, name: str, x: Tensor, w: Tensor, m: SymExpr, k: int, n: int, opcode: str = "dot"
) -> Tensor:
    """x [m, k] @ w [k, n]."""
    f = m * (2 * k * n)
    return net.op(
        name, opcode, [x, w], m * n, flops=f, grads=[G("dot", (w,), f, "x"), G("dot", (x,), f, "w")]
    )


def _layer_norm(net: _Net, name: str, x: Tensor, gamma: Tensor) -> Tensor:
    n = x.numel
    return net.op(
        name,
        "layer-norm",
        [x, gamma],
        n,
        flops=n * 8,
        grads=[
            G("layer-norm-grad", (x, gamma), n * 12, "x"),
            G("layer-norm-grad-weight", (x,), n * 4, "w"),
        ],
    )


def _unary(
    net: _Net, name: str, opcode: str, x: Tensor, flops_per: int, save_out: bool = False
) -> Tensor:
    n = x.numel
    return net.op(
        name,
        opcode,
        [x],
        n,
        flops=n * flops_per,
        grads=[G(f"{opcode}-grad", (OUT,) if save_out else (x,), n * (flops_per + 1), "x")],
    )


def _add(net: _Net, name: str, a: Tensor, b: Tensor) -> Tensor:
    return net.op(name, "add", [a, b], a.numel, flops=a.numel, grads=[PASS, PASS])


def _xent(
    net: _Net,
    name: str,
    logits: Tensor,
    targets: Tensor,
    m: SymExpr,
    classes: int,
    extra: Sequence[Tensor] = (),
) -> Tensor:
    """Softmax cross-entropy to a scalar f32 loss (live-out)."""
    f = m * (5 * classes)
    return net.op(
        name,
        "softmax-cross-entropy",
        [logits, *extra, targets],
        ONE,
        flops=f,
        itemsize=4,
        live_out=True,
        grads=[G("softmax-cross-entropy-grad", (logits, *extra, targets), f, "logits")]
        + [None] * (len(extra) + 1),
    )


def _seed(net: _Net, loss: Tensor) -> Tensor:
    net.phase = "backward"
    i = net.g.add_op("loss/grad_seed", "constant", OpKind.CONSTANT, attrs={"phase": "backward"})
    j = net.g.add_buffer(i, 4, name="loss/grad_seed")
    return Tensor("loss/grad_seed", i, j, ONE, 4, False)


def _check(cond: bool, msg: str, error: type[InputError] = InputError) -> None:
    if not cond:
        raise error(msg)


# -- parameter checks -------------------------------------------------------------------
# Every family's parameters are checked before anything is built, so that a bad call is an
# ``InputError`` (a ``ValueError``) naming the parameter, and a sweep spec can check its
# generator calls when it is read (``check_params``) instead of failing solve by solve.

OPTIMIZERS = ("sgd", "momentum", "adam")
# Larger graphs take minutes to build and gigabytes to hold; past these a call is refused.
MAX_GENERATED_OPS = 5_000_000
MAX_LAYERS = 10_000
_MAY_BE_ZERO = {"seed", "max_skip"}
_LEAST_N = {"random_layered": 3, "layered": 2}  # a source and a sink (and one op between)
_DIM_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")


def _relations(family: str, a: Mapping[str, Any]) -> None:
    """The checks between parameters of one family."""
    if family in ("transformer_train", "transformer_parallel"):
        _check(a["d_model"] % a["heads"] == 0, "d_model must be a multiple of heads")
    if family == "transformer_parallel":
        for what in ("d_model", "heads", "d_ff", "vocab"):
            _check(a[what] % a["tp"] == 0, f"{what} must be a multiple of tp")
    if family == "unet" and a["spatial"] is None:
        k = 2 ** a["levels"]
        _check(a["hw"] % k == 0, f"hw must be a multiple of 2**levels = {k}")


def _check_value(family: str, name: str, kind: str, v: Any) -> None:
    if v is None and "None" in kind:
        return
    if kind.startswith("int"):
        _check(
            isinstance(v, (int, np.integer)) and not isinstance(v, bool),
            f"{name} must be an integer (got {v!r})",
            InputTypeError,
        )
        low = 0 if name in _MAY_BE_ZERO else _LEAST_N.get(family, 1) if name == "n" else 1
        _check(v >= low, f"{name} must be >= {low} (got {v})")
        if name == "n":
            _check(v <= MAX_GENERATED_OPS, f"n={v}: at most {MAX_GENERATED_OPS:,} ops", LimitError)
        if name in ("layers", "levels"):
            _check(v <= MAX_LAYERS, f"{name}={v}: at most {MAX_LAYERS:,}", LimitError)
    elif kind == "float":
        _check(
            isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v >= 0,
            f"{name} must be a finite number >= 0 (got {v!r})",
        )
    elif kind == "bool":
        _check(isinstance(v, bool), f"{name} must be true or false (got {v!r})", InputTypeError)
    elif kind.startswith("str"):
        _check(isinstance(v, str), f"{name} must be a string (got {v!r})", InputTypeError)
        if name == "optimizer":
            _check(v in OPTIMIZERS, f"unknown optimizer {v!r} ({', '.join(OPTIMIZERS)})")
        if name in ("dim", "spatial"):
            _check(bool(_DIM_NAME.match(v)), f"{name}={v!r} is not a dim name")
    elif kind.startswith("tuple"):
        ok = isinstance(v, Sequence) and len(v) == 2
        ok = ok and all(isinstance(x, int) and not isinstance(x, bool) for x in v)
        _check(ok and 0 <= v[0] <= v[1], f"{name} must be two integers 0 <= lo <= hi (got {v!r})")


def check_params(family: str, params: Mapping[str, Any]) -> None:
    """Raise ``InputError`` if ``FAMILIES[family](**params)`` would be refused."""
    fn = FAMILIES[family]
    sig = inspect.signature(fn)
    try:
        bound = sig.bind(**params)
    except TypeError as e:
        raise InputTypeError(f"{family}: {e}") from None
    bound.apply_defaults()
    try:
        for name, v in bound.arguments.items():
            _check_value(family, name, str(sig.parameters[name].annotation), v)
        _relations(family, bound.arguments)
    except InputError as e:
        raise type(e)(f"{family}: {e.reason}") from None


def _validated(fn: Callable[..., Graph]) -> Callable[..., Graph]:
    """``fn`` with ``check_params`` run on its arguments first."""

    @functools.wraps(fn)
    def call(*args, **kwargs) -> Graph:
        bound = inspect.signature(fn).bind(*args, **kwargs)
        check_params(fn.__name__, bound.arguments)
        return fn(*args, **kwargs)

    return call


# ----------------------------------------------------------------------------------------
# 1. transformer_train
# ----------------------------------------------------------------------------------------


@_validated
def transformer_train(
    layers: int = 2,
    d_model: int = 768,
    heads: int = 12,
    d_ff: int = 3072,
    vocab: int = 32000,
    dtype_bytes: int = 2,
    optimizer: str = "adam",
    name: str | None = None,
) -> Graph:
    """One training step of a decoder-only (GPT-style, pre-LN, tied embeddings) transformer.

    Activations are sized over ``b`` (batch) and ``s`` (sequence): hidden states
    ``b*s*d_model``, attention scores and probabilities ``b*heads*s*s``, logits
    ``b*s*vocab``. Forward, backward (every activation a gradient needs is kept), then an
    in-place optimizer update (``adam``: f32 moments; ``momentum``; ``sgd``).
    """
    net = _Net(name or f"transformer_train_{layers}l", dtype_bytes)
    bs = B * S
    tokens = net.input("tokens", bs, itemsize=4)
    targets = net.input("targets", bs, itemsize=4)
    wte = net.weight("wte", vocab * d_model)
    blocks = _block_weights(net, layers, d_model, d_model, d_ff)
    lnf = net.weight("w_lnf", d_model)

    x = _embed(net, wte, tokens, bs, d_model)
    for l, p in enumerate(blocks):
        x = _block(net, f"L{l}", x, p, d_model, bs, (d_model, heads, d_ff))
    h = _layer_norm(net, "lnf", x, lnf)
    logits = _logits(net, h, wte, bs, d_model, vocab)
    loss = _xent(net, "loss", logits, targets, bs, vocab)
    grads = net.backward(loss, _seed(net, loss))
    net.optimizer(grads, optimizer)
    return net.build(
        {
            "generator": "transformer_train",
            "params": dict(
                layers=layers,
                d_model=d_model,
                heads=heads,
                d_ff=d_ff,
                vocab=vocab,
                dtype_bytes=dtype_bytes,
                optimizer=optimizer,
            ),
        }
    )


def _attention(
    net: _Net,
    pre: str,
    h: Tensor,
    wqkv: Tensor,
    wo: Tensor,
    d_in: int,
    d_local: int,
    heads_local: int,
    bs: SymExpr,
) -> Tensor:
    """QKV projection, scores, softmax, probs @ V and the output projection (partial sums
    when the projection is row-parallel)."""
    qkv = _matmul(net, f"{pre}/attn/qkv", h, wqkv, bs, d_in, 3 * d_local)
    att_f = B * S * S * (2 * d_local)  # b * heads * s * s * head_dim * 2
    probs_n = B * S * S * heads_local
    scores = net.op(
        f"{pre}/attn/scores",
        "dot",
        [qkv],
        probs_n,
        flops=att_f,
        grads=[G("dot", (qkv,), att_f * 2, "qk")],
    )
    probs = net.op(
        f"{pre}/attn/softmax",
        "softmax",
        [scores],
        probs_n,
        flops=probs_n * 5,
        grads=[G("softmax-grad", (OUT,), probs_n * 4, "x")],
    )
    ctx = net.op(
        f"{pre}/attn/context",
        "dot",
        [probs, qkv],
        bs * d_local,
        flops=att_f,
        grads=[G("dot", (qkv,), att_f, "probs"), G("dot", (probs,), att_f, "v")],
    )
    return _matmul(net, f"{pre}/attn/out", ctx, wo, bs, d_local, d_in)


def _mlp(
    net: _Net, pre: str, h: Tensor, w1: Tensor, w2: Tensor, d: int, ff_local: int, bs: SymExpr
) -> Tensor:
    a = _matmul(net, f"{pre}/mlp/fc1", h, w1, bs, d, ff_local)
    a = _unary(net, f"{pre}/mlp/gelu", "gelu", a, 8)
    return _matmul(net, f"{pre}/mlp/fc2", a, w2, bs, ff_local, d)


def _block(
    net: _Net,
    pre: str,
    x: Tensor,
    p: dict,
    d: int,
    bs: SymExpr,
    local: tuple[int, int, int],
    comm: _TensorParallel | None = None,
) -> Tensor:
    """One pre-LN layer: attention and MLP, each added to the residual stream. ``local``:
    the rank's QKV width, heads and FFN width; with ``comm`` (tensor parallelism) each
    half enters and leaves the parallel region through its collectives."""
    d_local, heads_local, ff_local = local
    h = _layer_norm(net, f"{pre}/ln1", x, p["ln1"])
    h = comm.enter_tp(f"{pre}/attn", h) if comm else h
    o = _attention(net, pre, h, p["wqkv"], p["wo"], d, d_local, heads_local, bs)
    x = _add(net, f"{pre}/attn/residual", x, comm.leave_tp(f"{pre}/attn", o) if comm else o)
    h = _layer_norm(net, f"{pre}/ln2", x, p["ln2"])
    h = comm.enter_tp(f"{pre}/mlp", h) if comm else h
    o = _mlp(net, pre, h, p["w1"], p["w2"], d, ff_local, bs)
    return _add(net, f"{pre}/mlp/residual", x, comm.leave_tp(f"{pre}/mlp", o) if comm else o)


def _block_weights(net: _Net, layers: int, d_model: int, dl: int, fl: int) -> list[dict]:
    """Each layer's weights (on a tensor-parallel rank: its shards, ``dl`` columns of QKV
    and rows of the output projection, ``fl`` of the MLP's hidden width)."""
    return [
        {
            k: net.weight(f"L{l}/w_{k}", n)
            for k, n in (
                ("ln1", d_model),
                ("wqkv", d_model * 3 * dl),
                ("wo", dl * d_model),
                ("ln2", d_model),
                ("w1", d_model * fl),
                ("w2", fl * d_model),
            )
        }
        for l in range(layers)
    ]


def _embed(net: _Net, wte: Tensor, tokens: Tensor, bs: SymExpr, d_model: int) -> Tensor:
    """The token embedding lookup (its gradient a scatter-add into the table)."""
    return net.op(
        "embed",
        "gather",
        [wte, tokens],
        bs * d_model,
        flops=bs * d_model,
        grads=[G("scatter-add", (tokens,), bs * d_model, "wte"), None],
    )


def _logits(net: _Net, h: Tensor, wte: Tensor, bs: SymExpr, d_model: int, v: int) -> Tensor:
    """Logits over ``v`` vocabulary rows of the tied embedding table."""
    f = bs * (2 * d_model * v)
    return net.op(
        "logits",
        "dot",
        [h, wte],
        bs * v,
        flops=f,
        grads=[G("dot", (wte,), f, "x"), G("dot", (h,), f, "wte")],
    )


# ----------------------------------------------------------------------------------------
# 2. mlp_train
# ----------------------------------------------------------------------------------------


@_validated
def mlp_train(
    layers: int = 4,
    width: int = 1024,
    d_in: int = 784,
    classes: int = 10,
    dtype_bytes: int = 4,
    optimizer: str = "momentum",
    name: str | None = None,
) -> Graph:
    """One training step of an MLP: ``layers`` hidden layers (dot + ReLU) of ``width``,
    softmax cross-entropy, backward, in-place optimizer update. Activations ``b*width``."""
    net = _Net(name or f"mlp_train_{layers}x{width}", dtype_bytes)
    x = net.input("x", B * d_in)
    y = net.input("labels", B, itemsize=4)
    dims = [d_in] + [width] * layers + [classes]
    ws = [net.weight(f"fc{k}/w", a * b + b) for k, (a, b) in enumerate(zip(dims[:-1], dims[1:]))]
    for k, w in enumerate(ws[:-1]):
        x = _matmul(net, f"fc{k}", x, w, B, dims[k] + 1, dims[k + 1])
        x = _unary(net, f"fc{k}/relu", "relu", x, 1, save_out=True)
    logits = _matmul(net, f"fc{layers}", x, ws[-1], B, dims[-2] + 1, classes)
    loss = _xent(net, "loss", logits, y, B, classes)
    grads = net.backward(loss, _seed(net, loss))
    net.optimizer(grads, optimizer)
    return net.build(
        {
            "generator": "mlp_train",
            "params": dict(
                layers=layers,
                width=width,
                d_in=d_in,
                classes=classes,
                dtype_bytes=dtype_bytes,
                optimizer=optimizer,
            ),
        }
    )


# ----------------------------------------------------------------------------------------
# 3. unet
# ----------------------------------------------------------------------------------------


@_validated
def unet(
    levels: int = 3,
    channels: int = 32,
    in_channels: int = 3,
    out_channels: int = 2,
    hw: int = 128,
    spatial: str | None = None,
    backward: bool = False,
    dtype_bytes: int = 2,
    optimizer: str = "sgd",
    name: str | None = None,
) -> Graph:
    """A U-Net: ``levels`` encoder levels (two 3x3 conv+ReLU, keep the skip, 2x2 max-pool),
    a bottleneck, and a decoder (2x2 transposed conv, concat with the skip, two convs),
    then a 1x1 conv to ``out_channels``. Level ``l`` has ``channels * 2**l`` channels.

    Sizes are ``b * C * H * W``; spatial sizes are static (input ``hw`` x ``hw``) unless
    ``spatial`` names a dim: then the bottleneck map is ``spatial x spatial`` (the input is
    ``2**levels`` times that on a side) and every activation is a multiple of it squared.
    ``backward=True`` adds an MSE loss, the backward pass and an in-place update.
    """
    net = _Net(name or f"unet_{levels}x{channels}" + ("_train" if backward else ""), dtype_bytes)

    def area(l: int) -> SymExpr:
        if spatial is None:
            return B * ((hw >> l) ** 2)
        h = SymExpr.dim(spatial)
        return B * h * h * (4 ** (levels - l))

    def conv(nm, x, cin, cout, l, k=3, relu=True):
        w = net.weight(f"{nm}/w", k * k * cin * cout + cout, trainable=backward)
        f = area(l) * (2 * k * k * cin * cout)
        keep = (OUT,) if relu else ()
        return net.op(
            nm,
            "convolution",
            [x, w],
            area(l) * cout,
            flops=f,
            grads=[
                G("conv-backprop-input", (w,) + keep, f, "x"),
                G("conv-backprop-filter", (x,) + keep, f, "w"),
            ],
        )

    x = net.input("image", area(0) * in_channels)
    skips = []
    cin = in_channels
    for l in range(levels):
        c = channels * 2**l
        x = conv(f"enc{l}/conv1", x, cin, c, l)
        x = conv(f"enc{l}/conv2", x, c, c, l)
        skips.append(x)
        n = area(l + 1) * c
        x = net.op(
            f"enc{l}/pool",
            "max-pool",
            [x],
            n,
            flops=n * 4,
            grads=[G("max-pool-grad", (x, OUT), area(l) * c * 2, "x")],
        )
        cin = c
    c = channels * 2**levels
    x = conv("mid/conv1", x, cin, c, levels)
    x = conv("mid/conv2", x, c, c, levels)
    for l in reversed(range(levels)):
        c = channels * 2**l
        w = net.weight(f"dec{l}/up/w", 4 * 2 * c * c + c, trainable=backward)
        f = area(l) * (2 * 2 * c * c)
        up = net.op(
            f"dec{l}/up",
            "conv-transpose",
            [x, w],
            area(l) * c,
            flops=f,
            grads=[G("conv-backprop-input", (w,), f, "x"), G("conv-backprop-filter", (x,), f, "w")],
        )
        cat = net.op(
            f"dec{l}/concat",
            "concatenate",
            [up, skips[l]],
            area(l) * (2 * c),
            grads=[G("slice", (), 0, "up"), G("slice", (), 0, "skip")],
        )
        x = conv(f"dec{l}/conv1", cat, 2 * c, c, l)
        x = conv(f"dec{l}/conv2", x, c, c, l)
    out = conv("head", x, channels, out_channels, 0, k=1, relu=False)
    meta = {
        "generator": "unet",
        "params": dict(
            levels=levels,
            channels=channels,
            in_channels=in_channels,
            out_channels=out_channels,
            hw=hw,
            spatial=spatial,
            backward=backward,
            dtype_bytes=dtype_bytes,
            optimizer=optimizer,
        ),
    }
    if not backward:
        net.g.set_live_out(out.buf)
        return net.build(meta)
    target = net.input("target", area(0) * out_channels)
    n = out.numel
    loss = net.op(
        "loss",
        "mse",
        [out, target],
        ONE,
        flops=n * 3,
        itemsize=4,
        live_out=True,
        grads=[G("mse-grad", (out, target), n * 3, "x"), None],
    )
    grads = net.backward(loss, _seed(net, loss))
    net.optimizer(grads, optimizer)
    return net.build(meta)


# ----------------------------------------------------------------------------------------
# 4. random_layered
# ----------------------------------------------------------------------------------------


@_validated
def random_layered(
    n: int = 100,
    seed: int = 0,
    width: float = 0.3,
    width_var: float = 0.75,
    edge_density: float = 0.2,
    skip_density: float = 0.14,
    max_skip: int = 4,
    size_range: tuple[int, int] = (80, 6150),
    duration_range: tuple[int, int] = (1, 1000),
    dim: str | None = None,
    name: str | None = None,
) -> Graph:
    """A random layered DAG like those of Gagrani et al. (NeurIPS 2022, appendix A).

    One source and one sink around ``n - 2`` inner nodes arranged in layers. The mean
    layer width is ``2 * width * sqrt(n)``; each width is drawn uniformly within
    ``+-width_var`` of it. Every node of a layer gets one predecessor in the layer before
    it, plus each other node there with probability ``edge_density``, plus, for each layer
    2 to ``max_skip`` layers back, a skip edge from a random node of that layer with
    probability ``skip_density``; every node without a
    successor feeds the next layer (or the sink). Output sizes (multiples of 10 in
    ``size_range``) and durations (``attrs['duration']``, integer units in
    ``duration_range``) are uniform; the source and sink take no time. With ``dim`` every
    size is multiplied by that dim. The original order is a random topological order
    (Kahn's algorithm with a random pick among ready nodes). Deterministic per ``seed``.
    """
    rng = np.random.default_rng(seed)
    inner = n - 2
    mean_w = max(1.0, 2.0 * width * np.sqrt(n))
    lo = max(1, int(round(mean_w * (1 - width_var))))
    hi = max(lo, int(round(mean_w * (1 + width_var))))
    layers: list[list[int]] = []
    node = 1
    while node <= inner:
        w = min(int(rng.integers(lo, hi + 1)), inner - node + 1)
        layers.append(list(range(node, node + w)))
        node += w
    sink = n - 1
    preds: dict[int, set[int]] = {v: set() for v in range(n)}
    for v in layers[0]:
        preds[v].add(0)
    for li in range(1, len(layers)):
        prev = layers[li - 1]
        for v in layers[li]:
            preds[v].add(int(rng.choice(prev)))
            for u in prev:
                if rng.random() < edge_density:
                    preds[v].add(u)
            for back in range(2, max_skip + 1):
                if li - back < 0:
                    break
                if rng.random() < skip_density:
                    preds[v].add(int(rng.choice(layers[li - back])))
    has_succ = {u for v in preds for u in preds[v]}
    for li, layer in enumerate(layers):
        for u in layer:
            if u not in has_succ:
                if li + 1 < len(layers):
                    preds[int(rng.choice(layers[li + 1]))].add(u)
                else:
                    preds[sink].add(u)
    preds[sink].update(layers[-1])
    sizes = rng.integers(size_range[0] // 10, size_range[1] // 10 + 1, size=n) * 10
    durs = rng.integers(duration_range[0], duration_range[1] + 1, size=n)
    durs[0] = durs[sink] = 0
    # random topological order
    succs: dict[int, list[int]] = {v: [] for v in range(n)}
    for v, ps in preds.items():
        for u in sorted(ps):
            succs[u].append(v)
    indeg = {v: len(preds[v]) for v in range(n)}
    ready = [0]
    order = []
    while ready:
        v = ready.pop(int(rng.integers(len(ready))))
        order.append(v)
        for s_ in succs[v]:
            indeg[s_] -= 1
            if indeg[s_] == 0:
                ready.append(s_)
    assert len(order) == n

    g = GraphBuilder(name or f"random_layered_n{n}_s{seed}")
    scale = SymExpr.dim(dim) if dim else ONE
    label = {v: ("source" if v == 0 else "sink" if v == sink else f"v{v}") for v in range(n)}
    for v in order:
        ba = sum(int(sizes[u]) for u in preds[v]) + int(sizes[v])
        g.add_op(
            label[v],
            "node",
            OpKind.COMPUTE,
            bytes_accessed=scale * ba,
            attrs={"duration": float(durs[v])},
        )
    for v in order:
        for u in sorted(preds[v]):
            g.add_operand(label[v], label[u])
    for v in order:
        g.add_buffer(
            label[v],
            scale * int(sizes[v]),
            users=[label[s_] for s_ in succs[v]],
            name=label[v],
            live_out=(v == sink),
        )
    g.original_order = list(range(n))
    g.meta.update(
        {
            "generator": "random_layered",
            "params": dict(
                n=n,
                seed=seed,
                width=width,
                width_var=width_var,
                edge_density=edge_density,
                skip_density=skip_density,
                max_skip=max_skip,
                size_range=list(size_range),
                duration_range=list(duration_range),
                dim=dim,
            ),
            "layers": len(layers),
        }
    )
    return g.build()


# ----------------------------------------------------------------------------------------
# 4b. layered: large sparse layered DAGs for scale tests
# ----------------------------------------------------------------------------------------


@_validated
def layered(
    n: int = 1000,
    preds: int = 5,
    seed: int = 0,
    width: int | None = None,
    max_skip: int = 4,
    size_range: tuple[int, int] = (80, 6150),
    name: str | None = None,
) -> Graph:
    """A layered DAG with about ``preds`` predecessors per op, built in time linear in ``n``
    (``random_layered`` draws every pair of adjacent layers, quadratic in the width).

    Layers hold ``width`` ops (default ``2 * 0.3 * sqrt(n)``, the mean width of
    ``random_layered``). Every op of a later layer reads one op of the layer before it and
    ``preds - 1`` more drawn from the ``max_skip`` layers before it (duplicates dropped);
    an op nobody reads feeds a random op of the next layer. Each op defines one buffer of
    a uniform size (multiples of 10 in ``size_range``) that its readers use; the last
    layer's buffers are outputs. The original order is layer by layer (op index order).
    Deterministic per ``seed``.
    """
    rng = np.random.default_rng(seed)
    w = int(width) if width else max(2, int(round(0.6 * np.sqrt(n))))
    w = max(1, min(w, n))
    layer = np.arange(n, dtype=np.int64) // w
    n_layers = int(layer[-1]) + 1
    first = np.arange(n_layers, dtype=np.int64) * w  # first op of each layer
    lsize = np.minimum(w, n - first)
    inner = np.flatnonzero(layer > 0)
    # one predecessor in the layer before, the others up to max_skip layers back
    back = np.ones((len(inner), preds), dtype=np.int64)
    if preds > 1:
        lim = np.minimum(layer[inner], max_skip)[:, None]
        back[:, 1:] = 1 + (rng.random((len(inner), preds - 1)) * lim).astype(np.int64)
    src_layer = layer[inner][:, None] - back
    src = first[src_layer] + (rng.random(src_layer.shape) * lsize[src_layer]).astype(np.int64)
    dst = np.repeat(inner, preds)
    src = src.ravel()
    # ops that nobody reads (except in the last layer) feed a random op of the next layer
    unread = np.ones(n, dtype=bool)
    unread[src] = False
    orphan = np.flatnonzero(unread & (layer < n_layers - 1))
    nxt = layer[orphan] + 1
    extra = first[nxt] + (rng.random(len(orphan)) * lsize[nxt]).astype(np.int64)
    src = np.concatenate([src, orphan])
    dst = np.concatenate([dst, extra])
    key = np.unique(dst * n + src)  # sorted by reader, then by operand
    dst, src = key // n, key % n
    sizes = rng.integers(size_range[0] // 10, size_range[1] // 10 + 1, size=n) * 10
    ptr = np.zeros(n + 1, dtype=np.int64)
    ptr[1:] = np.cumsum(np.bincount(dst, minlength=n))
    by_src = np.argsort(src, kind="stable")
    uptr = np.zeros(n + 1, dtype=np.int64)
    uptr[1:] = np.cumsum(np.bincount(src, minlength=n))
    users = dst[by_src]
    g = GraphBuilder(name or f"layered_n{n}_p{preds}_s{seed}")
    for v in range(n):
        ps = src[ptr[v] : ptr[v + 1]].tolist()
        g.add_op(
            f"v{v}",
            "node",
            OpKind.COMPUTE,
            operands=ps,
            bytes_accessed=int(sizes[ps].sum() + sizes[v]),
        )
    for v in range(n):
        us = users[uptr[v] : uptr[v + 1]].tolist()
        g.add_buffer(v, int(sizes[v]), users=us, name=f"v{v}", live_out=not us)
    g.original_order = list(range(n))
    g.meta.update(
        {
            "generator": "layered",
            "params": dict(
                n=n,
                preds=preds,
                seed=seed,
                width=w,
                max_skip=max_skip,
                size_range=list(size_range),
            ),
            "layers": n_layers,
        }
    )
    return g.build()


# ----------------------------------------------------------------------------------------
# 5. transformer_parallel
# ----------------------------------------------------------------------------------------


class _TensorParallel:
    """Megatron's tensor-parallel communication for one rank of ``transformer_parallel``:
    the f / g operators (all-reduce of an input gradient / of partial sums) or, with
    sequence parallelism, all-gather before and reduce-scatter after the parallel region."""

    def __init__(self, net: _Net, tp_groups: list[list[int]], tp: int, sp: bool, bs, d_model):
        self.net, self.tp_groups, self.tp, self.sp = net, tp_groups, tp, sp
        self.bs, self.d_model = bs, d_model

    def ar(self, nm, x, groups=None, grad=None):
        groups = self.tp_groups if groups is None else groups
        return self.net.collective(nm, "all-reduce", x, x.numel, groups, grad=grad)

    def ag(self, nm, x):  # sequence all-gather; transpose: reduce-scatter
        return self.net.collective(
            nm,
            "all-gather",
            x,
            x.numel * self.tp,
            self.tp_groups,
            grad=lambda dy: self.rs(f"{nm}/grad", dy, grad=False),
        )

    def rs(self, nm, x, grad=True):  # sequence reduce-scatter; transpose: all-gather
        out = self.bs * (self.d_model // self.tp)
        return self.net.collective(
            nm,
            "reduce-scatter",
            x,
            out,
            self.tp_groups,
            grad=(lambda dy: self.ag_plain(f"{nm}/grad", dy)) if grad else None,
        )

    def ag_plain(self, nm, x):
        return self.net.collective(nm, "all-gather", x, x.numel * self.tp, self.tp_groups)

    def enter_tp(self, nm, h):
        """Make the column-parallel input: all-gather (sp) or f (grad all-reduce)."""
        if self.sp:
            return self.ag(f"{nm}/allgather", h)
        self.net.hooks[h] = lambda dy: self.ar(f"{nm}/grad_allreduce", dy)
        return h

    def leave_tp(self, nm, partial):
        """Combine row-parallel partial sums: reduce-scatter (sp) or all-reduce (g)."""
        if self.sp:
            return self.rs(f"{nm}/reducescatter", partial)
        return self.ar(f"{nm}/allreduce", partial, grad=PASS)


def _stage_backward(net: _Net, x, x_leaf, resid, prev_pairs, next_pairs, on_weight_grad):
    """A middle pipeline stage's end: send the activations on, receive their gradient,
    run backward and send the input gradient back."""
    x_out = net.collective("send_activations", "collective-permute", x, resid, next_pairs)
    net.g.set_live_out(x_out.buf)
    net.phase = "backward"
    dy_in = net.input("stage_output_grad", resid)
    dy = net.collective(
        "recv_grad", "collective-permute", dy_in, resid, [[b_, a_] for a_, b_ in next_pairs]
    )
    grads = net.backward(x, dy, on_weight_grad=on_weight_grad)
    # the input gradient goes back to the previous stage
    dx = grads.pop(x_leaf, None)
    if dx is not None:
        dsent = net.collective(
            "send_grad", "collective-permute", dx, resid, [[b_, a_] for a_, b_ in prev_pairs]
        )
        net.g.set_live_out(dsent.buf)
    return grads


@_validated
def transformer_parallel(
    layers: int = 2,
    dp: int = 2,
    tp: int = 4,
    sp: bool = False,
    pp: int = 1,
    d_model: int = 1024,
    heads: int = 16,
    d_ff: int = 4096,
    vocab: int = 32000,
    dtype_bytes: int = 2,
    optimizer: str = "adam",
    name: str | None = None,
) -> Graph:
    """One rank's training step of a Megatron-style transformer (pre-LN, tied embeddings).

    - Tensor parallelism over ``tp`` ranks: column-parallel QKV and FC1, row-parallel
      output projection and FC2 (``heads/tp`` local heads, ``d_ff/tp`` local FFN),
      vocab-parallel embedding and logits (``vocab/tp`` rows), with the cross-entropy
      statistics all-reduced over tp.
    - Without ``sp``: the row-parallel partial sums meet in an all-reduce after attention
      and after the MLP; in backward the input gradients of each column-parallel matmul
      are all-reduced (Megatron's f / g operators).
    - With ``sp`` (sequence parallelism): the residual stream is sharded over the sequence
      (``b*s*d/tp``); an all-gather precedes each column-parallel matmul and a
      reduce-scatter follows each row-parallel one (their transposes in backward).
    - Data parallelism over ``dp`` ranks: every weight gradient is all-reduced over dp as
      soon as it is complete (layer-norm gradients over dp*tp with ``sp``), then the
      optimizer updates in place.
    - ``pp > 1``: the program is a middle pipeline stage: its input activations arrive by
      collective-permute from the previous stage and its output goes to the next one; in
      backward the output gradient arrives and the input gradient is sent back. The
      stage holds ``layers`` layers and no embedding or loss.

    All collectives are async start/done pairs placed back to back in the original order
    (no overlap), which is what an overlap-aware scheduler improves on. ``b`` is the
    per-rank batch.
    """
    net = _Net(
        name
        or f"transformer_dp{dp}_tp{tp}" + ("_sp" if sp else "") + (f"_pp{pp}" if pp > 1 else ""),
        dtype_bytes,
    )
    bs = B * S
    stage = 1 if pp > 1 else 0
    world = dp * tp

    def rank(st, i_dp, i_tp):
        return (st * dp + i_dp) * tp + i_tp

    tp_groups = [[rank(stage, i, j) for j in range(tp)] for i in range(dp)]
    dp_groups = [[rank(stage, i, j) for i in range(dp)] for j in range(tp)]
    all_group = [[rank(stage, i, j) for i in range(dp) for j in range(tp)]]
    resid = bs * (d_model // tp) if sp else bs * d_model  # residual stream per rank

    comm = _TensorParallel(net, tp_groups, tp, sp, bs, d_model)

    dl, fl, hl, vl = d_model // tp, d_ff // tp, heads // tp, vocab // tp
    if pp > 1:
        prev_pairs = [[rank(0, i, j), rank(1, i, j)] for i in range(dp) for j in range(tp)]
        next_pairs = [[rank(1, i, j), rank(2 % pp, i, j)] for i in range(dp) for j in range(tp)]
        x_in = net.input("stage_input", resid)
        x = net.collective("recv_activations", "collective-permute", x_in, resid, prev_pairs)
        x.requires_grad = True
        x.leaf = True
        x_leaf = x
    else:
        tokens = net.input("tokens", bs, itemsize=4)
        targets = net.input("targets", bs, itemsize=4)
        wte = net.weight("wte_shard", vl * d_model)
    blocks = _block_weights(net, layers, d_model, dl, fl)
    if pp == 1:
        lnf = net.weight("w_lnf", d_model)
        x = comm.leave_tp("embed", _embed(net, wte, tokens, bs, d_model))

    for l, p in enumerate(blocks):
        x = _block(net, f"L{l}", x, p, d_model, bs, (dl, hl, fl), comm)

    def dp_reduce(w: Tensor, gw: Tensor) -> Tensor:
        groups = (
            all_group
            if (sp and w.name.split("/")[-1] in ("w_ln1", "w_ln2", "w_lnf"))
            else dp_groups
        )
        if len(groups[0]) <= 1:
            return gw
        return net.collective(f"{w.name}/grad_dp_allreduce", "all-reduce", gw, gw.numel, groups)

    if pp > 1:
        grads = _stage_backward(net, x, x_leaf, resid, prev_pairs, next_pairs, dp_reduce)
    else:
        h = _layer_norm(net, "lnf", x, lnf)
        logits = _logits(net, comm.enter_tp("head", h), wte, bs, d_model, vl)
        stats = net.op("loss/stats", "reduce", [logits], bs * 2, flops=bs * (3 * vl), itemsize=4)
        stats = comm.ar("loss/stats_allreduce", stats)
        loss = _xent(net, "loss", logits, targets, bs, vl, extra=(stats,))
        grads = net.backward(loss, _seed(net, loss), on_weight_grad=dp_reduce)
    net.optimizer(grads, optimizer)
    return net.build(
        {
            "generator": "transformer_parallel",
            "params": dict(
                layers=layers,
                dp=dp,
                tp=tp,
                sp=sp,
                pp=pp,
                d_model=d_model,
                heads=heads,
                d_ff=d_ff,
                vocab=vocab,
                dtype_bytes=dtype_bytes,
                optimizer=optimizer,
            ),
            "world_size": world * pp,
        }
    )


FAMILIES = {
    "transformer_train": transformer_train,
    "mlp_train": mlp_train,
    "unet": unet,
    "random_layered": random_layered,
    "layered": layered,
    "transformer_parallel": transformer_parallel,
}
