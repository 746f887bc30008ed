"""Loops: ``scan`` and its views ``map``, ``reduce``, ``foldl``, ``foldr`` (PyTensor's
``pytensor.scan`` package). ``oxtensor.scan`` is the function, as in PyTensor; this package is
reached by import (``from oxtensor.scan.utils import until``)."""

from oxtensor.scan.basic import scan
from oxtensor.scan.utils import until
from oxtensor.scan.views import foldl, foldr, map, reduce

__all__ = ["scan", "until", "map", "reduce", "foldl", "foldr"]
