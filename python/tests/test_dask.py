"""A compiled function on a Dask cluster (the recipe of ``docs/serialization.md``): scattered
to two worker processes, mapped over chunks of data, results gathered and equal to the local
ones. Dask hands the workers arrays built from its message frames (read-only, possibly
unaligned), which the function takes as they are. Skipped when dask.distributed is absent."""

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")

import oxtensor  # noqa: E402
import oxtensor.tensor as pt  # noqa: E402


def _apply(fn, chunk):
    return fn(chunk)


def test_map_a_compiled_function_over_chunks_on_a_local_cluster():
    x = pt.matrix("x")
    w = oxtensor.shared(np.linspace(-1.0, 1.0, 4), name="w")
    f = oxtensor.function([x], [pt.tanh(x @ w).sum(), pt.max(x, axis=0)])
    data = np.random.default_rng(3).normal(size=(600, 4))
    chunks = np.array_split(data, 6)
    want = [f(c) for c in chunks]
    with distributed.LocalCluster(
        n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None
    ) as cluster, distributed.Client(cluster) as client:
        [remote_f] = client.scatter([f], broadcast=True)
        futures = client.map(_apply, [remote_f] * len(chunks), chunks)
        got = client.gather(futures)
    for w_, g in zip(want, got):
        np.testing.assert_array_equal(w_[0], g[0])
        np.testing.assert_array_equal(w_[1], g[1])
