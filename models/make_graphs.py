"""Write the bundled generator graphs to ``models/graphs/*.json`` (cpsched JSON format).

Run from the repository root with the project's Python::

    python models/make_graphs.py            # (re)write models/graphs/
    python models/make_graphs.py --check    # exit 1 if a bundled file is out of date

Each file carries its shape scenarios (``scenarios``) and the generator call that made it
(``meta.generator``, ``meta.params``), so ``cpsched`` commands need no ``--dim`` options.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from cpsched.core.scenarios import from_dim_specs  # noqa: E402
from cpsched.writers.json_graph import graph_to_dict  # noqa: E402
from cpsched import generators as gen  # noqa: E402

# file name -> (generator, keyword arguments, scenario dim specs)
BUNDLE = {
    "transformer_train_2l.json": (gen.transformer_train, dict(layers=2),
                                  ["b=8", "s=128,512,2048"]),
    "mlp_train.json": (gen.mlp_train, dict(layers=4, width=1024), ["b=32,256,2048"]),
    "unet.json": (gen.unet, dict(levels=3, channels=32, hw=128), ["b=1,8,32"]),
    "unet_train.json": (gen.unet, dict(levels=3, channels=32, hw=128, backward=True),
                        ["b=1,8,32"]),
    "random_layered_n50_s0.json": (gen.random_layered, dict(n=50, seed=0), []),
    "random_layered_n250_s1.json": (gen.random_layered, dict(n=250, seed=1), []),
    "transformer_dp_tp.json": (gen.transformer_parallel, dict(layers=2, dp=2, tp=4),
                               ["b=4", "s=128,512,2048"]),
    "transformer_dp_tp_sp_pp.json": (gen.transformer_parallel,
                                     dict(layers=2, dp=2, tp=4, sp=True, pp=2),
                                     ["b=4", "s=128,512,2048"]),
}


def build(fname: str) -> dict:
    fn, kwargs, dims = BUNDLE[fname]
    graph = fn(**kwargs)
    scenarios = from_dim_specs(dims) if dims else None
    return graph_to_dict(graph, scenarios)


def text_of(data: dict) -> str:
    return json.dumps(data, indent=1) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(HERE, "graphs"))
    ap.add_argument("--check", action="store_true",
                    help="compare with the files on disk instead of writing")
    a = ap.parse_args(argv)
    os.makedirs(a.out, exist_ok=True)
    stale = []
    for fname in BUNDLE:
        text = text_of(build(fname))
        path = os.path.join(a.out, fname)
        if a.check:
            try:
                with open(path) as f:
                    same = f.read() == text
            except OSError:
                same = False
            if not same:
                stale.append(fname)
            continue
        with open(path, "w") as f:
            f.write(text)
        print(f"wrote {fname}")
    if stale:
        print("out of date: " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
