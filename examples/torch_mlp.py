"""A small MLP for `cpsched capture --torch` (docs/pytorch.md): `build()` returns the module,
its example input and `from_torch` options (a training step: forward and backward)."""

import torch


def build():
    model = torch.nn.Sequential(
        torch.nn.Linear(256, 1024), torch.nn.GELU(), torch.nn.Linear(1024, 256)
    )
    return model, (torch.randn(64, 256),), {"training": True}
