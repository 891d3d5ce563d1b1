import json

import numpy as np
import pytest

from cpsched.core.errors import InputError
from cpsched.core.scenarios import (buckets_from_lengths, from_dim_specs, from_json, pick_bucket,
                               static)


def test_dim_specs_product_and_weights():
    sc = from_dim_specs(["s=128,512,2048"], "0.5,0.3,0.2")
    assert sc.names == ("s=128", "s=512", "s=2048")
    assert np.allclose(sc.weights, [0.5, 0.3, 0.2])
    sc2 = from_dim_specs(["b=1,8", "s=128,512"])
    assert len(sc2) == 4 and np.allclose(sc2.weights, 0.25)
    assert sc2.as_dicts()[3] == {"b": 8, "s": 512}


@pytest.mark.parametrize("specs,weights", [(["s"], None), (["s=a"], None), (["s=0"], None),
                                           (["s=1,2"], "1"), (["s=1", "s=2"], None)])
def test_dim_specs_errors(specs, weights):
    with pytest.raises(InputError):
        from_dim_specs(specs, weights)


def test_json_roundtrip(tmp_path):
    sc = buckets_from_lengths("s", [10, 20, 30, 300, 310, 2000], 3, round_to=64)
    p = tmp_path / "sc.json"
    p.write_text(json.dumps(sc.to_json()))
    back = from_json(str(p))
    assert back.names == sc.names and np.array_equal(back.values, sc.values)
    assert np.allclose(back.weights, sc.weights) and np.array_equal(back.lower, sc.lower)


def test_buckets_cover_every_length_and_pick():
    lengths = np.random.default_rng(0).integers(1, 4096, size=1000)
    sc = buckets_from_lengths("s", lengths, 4, round_to=128)
    assert len(sc) == 4 and abs(sc.weights.sum() - 1) < 1e-12
    for n in lengths[:200]:
        k = pick_bucket(sc, {"s": int(n)})
        assert sc.lower[k, 0] <= n <= sc.values[k, 0]
    assert sc.values[:, 0].max() >= lengths.max()


def test_static():
    assert len(static()) == 1 and static().dims == ()


def test_tables_without_dims_keep_their_rows():
    """Two rows and no dims (sizes without symbols): every evaluation has two rows, also
    after a one-row table was evaluated first (both tables' values are empty bytes), and
    the remat lower bound reads both."""
    from helpers import train_chain

    from cpsched.core.scenarios import Scenarios
    from cpsched.cp.remat.problem import min_memory_bound

    g = train_chain(4, 100, 10.0)
    two = Scenarios(("a", "b"), (), np.zeros((2, 0), dtype=np.int64), np.array([0.5, 0.5]))
    assert g.sizes(static()).shape == (1, g.n_buffers)
    assert g.sizes(two).shape == (2, g.n_buffers)
    assert g.transient_bytes(static()).shape == (1, g.n_ops)
    assert g.transient_bytes(two).shape == (2, g.n_ops)
    one, _ = min_memory_bound(g, static())
    both, why = min_memory_bound(g, two)
    assert both.tolist() == [int(one[0])] * 2 and len(why) == 2
