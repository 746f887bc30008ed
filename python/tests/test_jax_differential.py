"""The differential suite for the JAX engine: the seeded random graphs of
``differential_graphs.py`` (elementwise chains with broadcasting, reductions, Composites after
fusion) run in the default mode and in ``mode="JAX"`` and must agree, within the tolerance
stated there."""

import pytest

pytest.importorskip("jax")

from differential_graphs import run_and_compare  # noqa: E402


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("seed", range(30))
def test_random_graphs_agree_with_the_default_mode(seed, dtype):
    run_and_compare(seed, dtype, "JAX")
