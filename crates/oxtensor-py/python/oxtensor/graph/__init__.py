"""Graph manipulation, as ``pytensor.graph``: :func:`clone_replace`."""

from oxtensor.graph.replace import clone_replace

__all__ = ["clone_replace"]
