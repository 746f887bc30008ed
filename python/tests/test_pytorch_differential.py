"""The differential suite for the PyTorch engine: the seeded random graphs of
``differential_graphs.py`` run in the default mode and in ``mode="PYTORCH"`` and must agree,
within the tolerance stated there; and through ``pytorch_funcify`` of the default-mode function,
whose graph holds the fusion's Composites and fused reductions. Skipped where torch is not
installed (CI)."""

import pytest

pytest.importorskip("torch")

import oxtensor  # noqa: E402
from differential_graphs import build, compare, run_and_compare  # noqa: E402
from oxtensor.link.pytorch import pytorch_funcify  # noqa: E402


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("seed", range(30))
def test_random_graphs_agree_with_the_default_mode(seed, dtype):
    run_and_compare(seed, dtype, "PYTORCH")


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("seed", range(30))
def test_fused_random_graphs_agree_through_pytorch_funcify(seed, dtype):
    inputs, outputs, values = build(seed, dtype)
    ref = oxtensor.function(inputs, outputs, on_unused_input="ignore")
    got = [t.numpy() for t in pytorch_funcify(ref)(*values)]
    compare(ref(*values), got, dtype)
