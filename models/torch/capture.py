"""Capture the PyTorch corpus: every graph Inductor schedules for each program below.

    python models/torch/capture.py --corpus            # all programs (make torch-corpus)
    python models/torch/capture.py --only gpt2_train   # some (comma separated)
    python models/torch/capture.py --list

Needs the torch environment (``make torch-env``: torch, torchvision, transformers,
torch_geometric). Writes ``NAME.PART.torch.json.gz`` here and ``manifest.json``. Models from
libraries are built from their own constructors or configs with random weights (nothing is
downloaded); where a model is cut down to keep the stored graphs small (fewer layers,
narrower, smaller images or vocabularies), its manifest entry says so. Two are the full
models at the batch sizes of PyTorch PR #134874 (AlexNet bs 128 and VGG16 bs 64, training).
The U-Net, the MLP, the scatter GCN and the attention block are written here; the
torch_geometric models break into several graphs under ``torch.compile`` (each is kept).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))

import torch  # noqa: E402
from torch import nn  # noqa: E402

from cpsched.readers.torch_frontend import capture_records, write_records  # noqa: E402
from cpsched.readers.torch_graph import graph_from_torch_dict  # noqa: E402

torch.manual_seed(0)


# -- programs written here -------------------------------------------------------------------


class MLP(nn.Module):
    def __init__(self, width=512, depth=4):
        super().__init__()
        layers = []
        for _ in range(depth):
            layers += [nn.Linear(width, width), nn.GELU()]
        self.net = nn.Sequential(*layers, nn.Linear(width, 10))

    def forward(self, x):
        return self.net(x)


class AttentionBlock(nn.Module):
    """A pre-norm transformer block (attention + MLP), for dynamic sequence lengths."""

    def __init__(self, d=128, heads=4):
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).chunk(3, dim=-1)
        q, k, v = (t.reshape(b, s, self.heads, d // self.heads).transpose(1, 2) for t in (q, k, v))
        att = torch.softmax(q @ k.transpose(-1, -2) / (d // self.heads) ** 0.5, dim=-1)
        x = x + self.proj((att @ v).transpose(1, 2).reshape(b, s, d))
        return x + self.mlp(self.norm2(x))


class ResBlock(nn.Module):
    def __init__(self, cin, cout, tdim):
        super().__init__()
        self.n1, self.n2 = nn.GroupNorm(8, cin), nn.GroupNorm(8, cout)
        self.c1, self.c2 = nn.Conv2d(cin, cout, 3, padding=1), nn.Conv2d(cout, cout, 3, padding=1)
        self.t = nn.Linear(tdim, cout)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x, temb):
        h = self.c1(torch.nn.functional.silu(self.n1(x)))
        h = h + self.t(temb)[:, :, None, None]
        h = self.c2(torch.nn.functional.silu(self.n2(h)))
        return h + self.skip(x)


class SelfAttention2d(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.norm = nn.GroupNorm(8, c)
        self.qkv, self.out = nn.Conv2d(c, 3 * c, 1), nn.Conv2d(c, c, 1)

    def forward(self, x):
        b, c, h, w = x.shape
        q, k, v = self.qkv(self.norm(x)).reshape(b, 3, c, h * w).unbind(1)
        att = torch.softmax(q.transpose(1, 2) @ k / c**0.5, dim=-1)
        return x + self.out((v @ att.transpose(1, 2)).reshape(b, c, h, w))


class UNet(nn.Module):
    """A DDPM-style diffusion U-Net (timestep embedding, residual blocks, attention at the
    lowest resolution, skip connections), two levels, 32 -> 64 channels."""

    def __init__(self, ch=32, tdim=128):
        super().__init__()
        self.tdim = tdim
        self.temb = nn.Sequential(nn.Linear(tdim, tdim), nn.SiLU(), nn.Linear(tdim, tdim))
        self.inp = nn.Conv2d(3, ch, 3, padding=1)
        self.d1, self.d2 = ResBlock(ch, ch, tdim), ResBlock(ch, 2 * ch, tdim)
        self.down = nn.Conv2d(ch, ch, 3, stride=2, padding=1)
        self.mid, self.attn = ResBlock(2 * ch, 2 * ch, tdim), SelfAttention2d(2 * ch)
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.u2, self.u1 = ResBlock(4 * ch, ch, tdim), ResBlock(2 * ch, ch, tdim)
        self.out = nn.Sequential(nn.GroupNorm(8, ch), nn.SiLU(), nn.Conv2d(ch, 3, 3, padding=1))

    def forward(self, x, t):
        half = self.tdim // 2
        dtype = torch.get_default_dtype()  # float32; float64 for a float64 reference step
        freqs = torch.exp(-torch.arange(half, dtype=dtype) * (9.21 / half))
        arg = t[:, None].to(dtype) * freqs[None]
        temb = self.temb(torch.cat([arg.sin(), arg.cos()], dim=-1))
        h0 = self.d1(self.inp(x), temb)
        h1 = self.d2(self.down(h0), temb)
        m = self.attn(self.mid(h1, temb))
        u = self.u2(torch.cat([m, h1], dim=1), temb)
        u = self.u1(torch.cat([self.up(u), h0], dim=1), temb)
        return self.out(u)


class ScatterGCN(nn.Module):
    """Graph convolution by explicit scatter: messages gathered along edges, summed into
    their targets with ``index_add`` and normalised by in-degree (``scatter_add``)."""

    def __init__(self, dims=(64, 128, 128, 16)):
        super().__init__()
        self.lins = nn.ModuleList(nn.Linear(a, b) for a, b in zip(dims, dims[1:]))

    def forward(self, x, edge_index):
        src, dst = edge_index
        deg = torch.zeros(x.shape[0], dtype=x.dtype).scatter_add(
            0, dst, torch.ones_like(dst, dtype=x.dtype)
        )
        norm = deg.clamp(min=1).rsqrt()
        for k, lin in enumerate(self.lins):
            h = lin(x)
            msg = h[src] * norm[src, None]
            x = torch.zeros_like(h).index_add(0, dst, msg) * norm[:, None]
            if k < len(self.lins) - 1:
                x = torch.relu(x)
        return x


# -- programs from libraries -------------------------------------------------------------------


def _tv(name, **kw):
    import torchvision

    return getattr(torchvision.models, name)(**kw)


def _gpt2(n_layer=2):
    from transformers import GPT2Config, GPT2LMHeadModel

    cfg = GPT2Config(n_layer=n_layer, n_embd=128, n_head=4, vocab_size=2048, n_positions=512)
    return GPT2LMHeadModel(cfg)


def _llama():
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(
        num_hidden_layers=2,
        hidden_size=128,
        intermediate_size=344,
        num_attention_heads=4,
        num_key_value_heads=2,
        vocab_size=2048,
        max_position_embeddings=512,
    )
    return LlamaForCausalLM(cfg)


def _bert():
    from transformers import BertConfig, BertForSequenceClassification

    cfg = BertConfig(
        num_hidden_layers=2,
        hidden_size=128,
        intermediate_size=512,
        num_attention_heads=4,
        vocab_size=2048,
        max_position_embeddings=512,
    )
    return BertForSequenceClassification(cfg)


def _t5():
    from transformers import T5Config, T5ForConditionalGeneration

    cfg = T5Config(
        num_layers=2,
        num_decoder_layers=2,
        d_model=128,
        d_ff=512,
        d_kv=32,
        num_heads=4,
        vocab_size=2048,
    )
    return T5ForConditionalGeneration(cfg)


def _vit():
    from transformers import ViTConfig, ViTForImageClassification

    cfg = ViTConfig(
        image_size=64,
        patch_size=8,
        num_hidden_layers=2,
        hidden_size=128,
        intermediate_size=512,
        num_attention_heads=4,
        num_labels=10,
    )
    return ViTForImageClassification(cfg)


class _Logits(nn.Module):
    """A transformers model called with keyword inputs, returning its logits."""

    def __init__(self, model, *keys):
        super().__init__()
        self.model, self.keys = model, keys

    def forward(self, *args):
        return self.model(**dict(zip(self.keys, args))).logits


def _gnn(kind="gcn"):
    from torch_geometric.nn import GATConv, GCNConv

    class GNN(nn.Module):
        def __init__(self):
            super().__init__()
            conv = {
                "gcn": lambda i, o: GCNConv(i, o),
                "gat": lambda i, o: GATConv(i, o, heads=2, concat=False),
            }[kind]
            self.c1, self.c2, self.c3 = conv(64, 128), conv(128, 128), conv(128, 16)

        def forward(self, x, edge_index):
            x = torch.relu(self.c1(x, edge_index))
            x = torch.relu(self.c2(x, edge_index))
            return self.c3(x, edge_index)

    return GNN()


def _tokens(b, s):
    return torch.randint(0, 2048, (b, s))


def _graph(n=2000, e=16000):
    g = torch.Generator().manual_seed(1)
    return torch.randn(n, 64, generator=g), torch.randint(0, n, (2, e), generator=g)


# name -> (build () -> (module, inputs, options), source, notes)
PROGRAMS = {
    "alexnet_train_bs128": (
        lambda: (_tv("alexnet"), (torch.randn(128, 3, 224, 224),), {"training": True}),
        "torchvision.models.alexnet",
        "full model, batch 128, 224x224 (PR #134874's row)",
    ),
    "vgg16_train_bs64": (
        lambda: (_tv("vgg16"), (torch.randn(64, 3, 224, 224),), {"training": True}),
        "torchvision.models.vgg16",
        "full model, batch 64, 224x224 (PR #134874's row)",
    ),
    "resnet50_train": (
        lambda: (_tv("resnet50"), (torch.randn(8, 3, 128, 128),), {"training": True}),
        "torchvision.models.resnet50",
        "full model, batch 8, 128x128 images",
    ),
    "resnet50_infer": (
        lambda: (_tv("resnet50").eval(), (torch.randn(8, 3, 224, 224),), {}),
        "torchvision.models.resnet50",
        "full model, batch 8, 224x224, eval mode",
    ),
    "mobilenet_v3_infer": (
        lambda: (_tv("mobilenet_v3_large").eval(), (torch.randn(8, 3, 224, 224),), {}),
        "torchvision.models.mobilenet_v3_large",
        "full model, batch 8, 224x224, eval mode",
    ),
    "mobilenet_v3_small_train": (
        lambda: (_tv("mobilenet_v3_small"), (torch.randn(8, 3, 128, 128),), {"training": True}),
        "torchvision.models.mobilenet_v3_small",
        "full model, batch 8, 128x128",
    ),
    "gpt2_train": (
        lambda: (_Logits(_gpt2(), "input_ids"), (_tokens(4, 128),), {"training": True}),
        "transformers.GPT2LMHeadModel (config)",
        "2 layers, width 128, 4 heads, vocabulary 2048; batch 4, sequence 128",
    ),
    "gpt2_infer_dynamic_seq": (
        lambda: (
            _Logits(_gpt2().eval(), "input_ids"),
            (_tokens(2, 128),),
            {"dynamic_shapes": {0: {1: torch.export.Dim("seq", min=16, max=512)}}},
        ),
        "transformers.GPT2LMHeadModel (config)",
        "2 layers, width 128; batch 2, sequence length symbolic in [16, 512] (hint 128)",
    ),
    "llama_train": (
        lambda: (_Logits(_llama(), "input_ids"), (_tokens(4, 128),), {"training": True}),
        "transformers.LlamaForCausalLM (config)",
        "2 layers, width 128, 4 heads / 2 KV heads, vocabulary 2048; batch 4, sequence 128",
    ),
    "llama_infer": (
        lambda: (_Logits(_llama().eval(), "input_ids"), (_tokens(2, 256),), {}),
        "transformers.LlamaForCausalLM (config)",
        "2 layers, width 128; batch 2, sequence 256",
    ),
    "bert_train": (
        lambda: (_Logits(_bert(), "input_ids"), (_tokens(8, 128),), {"training": True}),
        "transformers.BertForSequenceClassification (config)",
        "2 layers, width 128, 4 heads, vocabulary 2048; batch 8, sequence 128",
    ),
    "bert_infer_dynamic_seq": (
        lambda: (
            _Logits(_bert().eval(), "input_ids"),
            (_tokens(4, 128),),
            {"dynamic_shapes": {0: {1: torch.export.Dim("seq", min=16, max=512)}}},
        ),
        "transformers.BertForSequenceClassification (config)",
        "2 layers, width 128; batch 4, sequence length symbolic in [16, 512] (hint 128)",
    ),
    "t5_infer": (
        lambda: (
            _Logits(_t5().eval(), "input_ids", "decoder_input_ids"),
            (_tokens(2, 128), _tokens(2, 32)),
            {},
        ),
        "transformers.T5ForConditionalGeneration (config)",
        "2+2 layers, width 128, 4 heads, vocabulary 2048; batch 2, 128 source / 32 target tokens",
    ),
    "vit_train": (
        lambda: (_Logits(_vit(), "pixel_values"), (torch.randn(8, 3, 64, 64),), {"training": True}),
        "transformers.ViTForImageClassification (config)",
        "2 layers, width 128, 64x64 images in 8x8 patches; batch 8",
    ),
    "unet_train": (
        lambda: (
            UNet(),
            (torch.randn(4, 3, 32, 32), torch.randint(0, 1000, (4,))),
            {"training": True},
        ),
        "written here (DDPM-style diffusion U-Net)",
        "32/64 channels, two levels, attention at 16x16; batch 4, 32x32 images",
    ),
    "gcn_train": (
        lambda: (_gnn("gcn"), _graph(), {"training": True}),
        "torch_geometric.nn.GCNConv (scatter-add message passing)",
        "3 layers 64 -> 128 -> 128 -> 16 on a random graph of 2,000 nodes, 16,000 edges",
    ),
    "gat_infer": (
        lambda: (_gnn("gat").eval(), _graph(), {}),
        "torch_geometric.nn.GATConv (scatter softmax)",
        "3 layers, 2 heads averaged, random graph of 2,000 nodes, 16,000 edges",
    ),
    "gnn_scatter_train": (
        lambda: (ScatterGCN(), _graph(), {"training": True}),
        "written here (GCN by index_add / scatter_add)",
        "3 layers 64 -> 128 -> 128 -> 16 on a random graph of 2,000 nodes, 16,000 edges",
    ),
    "mlp_train": (
        lambda: (MLP(), (torch.randn(64, 512),), {"training": True}),
        "written here",
        "4 hidden layers of 512, batch 64",
    ),
    "attention_train_dynamic_seq": (
        lambda: (
            AttentionBlock(),
            (torch.randn(4, 128, 128),),
            {
                "training": True,
                "dynamic_shapes": {0: {1: torch.export.Dim("seq", min=16, max=1024)}},
            },
        ),
        "written here (pre-norm transformer block)",
        "width 128, 4 heads; batch 4, sequence length symbolic in [16, 1024] (hint 128)",
    ),
}


def capture(name: str) -> dict:
    build, source, notes = PROGRAMS[name]
    module, inputs, options = build()
    t0 = time.perf_counter()
    records = capture_records(module, *inputs, **options)
    seconds = time.perf_counter() - t0
    for rec in records:
        rec["name"] = f"{name}.{rec['part']}"
    files = write_records(records, HERE, name)
    graphs = []
    for rec, path in zip(records, files):
        g = graph_from_torch_dict(rec)
        graphs.append(
            {
                "file": os.path.basename(path),
                "part": rec["part"],
                "nodes": len(rec["nodes"]),
                "ops": g.n_ops,
                "buffers": g.n_buffers,
                "inductor_peak_bytes": rec["inductor"]["peak"],
                "symbols": {
                    k: {x: v[x] for x in ("hint", "min", "max")}
                    for k, v in rec.get("symbols", {}).items()
                },
            }
        )
    print(f"{name}: {len(records)} graph(s), {seconds:.1f} s", flush=True)
    return {
        "source": source,
        "notes": notes,
        "training": bool(options.get("training", False)),
        "dynamic": "dynamic_shapes" in options,
        "graphs": graphs,
    }


# AOTAutograd's activation_memory_budget: the training programs captured at each budget
# (models/torch/remat/), for the remat comparison of benchmarks/bench_torch.py
REMAT_PROGRAMS = ("mlp_train", "gpt2_train", "bert_train", "unet_train")
REMAT_BUDGETS = (0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 0.7, 0.9, 1.0)


def capture_remat(name: str) -> dict:
    from torch._functorch import config as functorch_config

    build, source, notes = PROGRAMS[name]
    folder = os.path.join(HERE, "remat")
    os.makedirs(folder, exist_ok=True)
    out = {}
    for budget in REMAT_BUDGETS:
        module, inputs, options = build()
        with functorch_config.patch(activation_memory_budget=budget):
            records = capture_records(module, *inputs, **options)
        stem = f"{name}.b{budget:g}"
        for rec in records:
            rec["name"] = f"{stem}.{rec['part']}"
            rec["activation_memory_budget"] = budget
        files = write_records(records, folder, stem)
        out[f"{budget:g}"] = [os.path.basename(f) for f in files]
    print(f"{name}: {len(REMAT_BUDGETS)} budgets", flush=True)
    return {"source": source, "notes": notes, "budgets": out}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", action="store_true", help="capture every program")
    ap.add_argument("--only", help="comma-separated program names")
    ap.add_argument("--list", action="store_true")
    ap.add_argument(
        "--remat",
        action="store_true",
        help="capture the training programs at AOTAutograd's activation memory budgets",
    )
    args = ap.parse_args(argv)
    if args.remat:
        manifest = {
            "torch_version": torch.__version__,
            "captured_with": "python models/torch/capture.py --remat (make torch-corpus)",
            "budgets": list(REMAT_BUDGETS),
            "programs": {n: capture_remat(n) for n in REMAT_PROGRAMS},
        }
        with open(os.path.join(HERE, "remat", "manifest.json"), "w") as f:
            json.dump(manifest, f, indent=1)
            f.write("\n")
        return 0
    if args.list:
        print("\n".join(PROGRAMS))
        return 0
    names = list(PROGRAMS) if args.corpus else [n for n in (args.only or "").split(",") if n]
    unknown = [n for n in names if n not in PROGRAMS]
    if unknown or not names:
        ap.error(f"unknown programs {unknown}" if unknown else "give --corpus or --only")
    path = os.path.join(HERE, "manifest.json")
    manifest = json.load(open(path)) if os.path.exists(path) else {}
    programs = manifest.get("programs", {})
    for name in names:
        programs[name] = capture(name)
        manifest = {
            "torch_version": torch.__version__,
            "captured_with": "python models/torch/capture.py --corpus (make torch-corpus)",
            "programs": {k: programs[k] for k in PROGRAMS if k in programs},
        }
        tmp = path + ".tmp"
        with open(tmp, "w") as f:  # after every program: a failure keeps the others
            json.dump(manifest, f, indent=1)
            f.write("\n")
        os.replace(tmp, path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
