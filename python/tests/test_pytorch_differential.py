"""The differential suite for the PyTorch engine: the seeded random graphs of
``differential_graphs.py`` run in the default mode and in ``mode="PYTORCH"`` and must agree,
within the tolerance stated there. Skipped where torch is not installed (CI)."""

import pytest

pytest.importorskip("torch")

from differential_graphs import run_and_compare  # noqa: E402


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("seed", range(30))
def test_random_graphs_agree_with_the_default_mode(seed, dtype):
    run_and_compare(seed, dtype, "PYTORCH")
