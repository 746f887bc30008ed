"""Random draws have no PyTorch translation: oxtensor draws NumPy's streams (PCG64, NumPy's
algorithms), which ``torch.Generator`` does not reproduce, and a graph run in PyTorch must give
the numbers it gives everywhere else. A graph with a draw fails to compile in
``mode="PYTORCH"``, naming the op."""

from __future__ import annotations

from oxtensor.link.pytorch.dispatch import register


@register("Random")
def _random(op, node, doc):
    raise NotImplementedError(
        f"no PyTorch translation for op Random{{{op['dist']}}}: oxtensor draws NumPy's random streams, "
        "which torch's generators do not reproduce"
    )
