"""oxtensor: a symbolic tensor compiler with PyTensor's Python API.

A PyTensor program runs by changing its imports::

    import oxtensor as pytensor
    import oxtensor.tensor as pt

    x = pt.dvector("x")
    f = pytensor.function([x], pt.sum(x**2))
    f([1.0, 2.0, 3.0])  # array(14.)

Graphs are built and compiled by the Rust core (``oxtensor._core``); this package mirrors
PyTensor's public names: ``function``, ``shared``, ``config``, ``Mode``, ``In``,
``dprint``/``printing.debugprint``, and ``oxtensor.tensor`` (``pt``).
"""

import os as _os

from oxtensor import _core

_core._set_package_dir(_os.path.dirname(_os.path.abspath(__file__)) + _os.sep)

from oxtensor.configdefaults import config  # noqa: E402
from oxtensor.compile.function import Function, function  # noqa: E402
from oxtensor.compile.io import In, Out  # noqa: E402
from oxtensor.compile.mode import Mode, get_mode  # noqa: E402
from oxtensor.compile.sharedvalue import shared  # noqa: E402
from oxtensor.printing import debugprint, dprint, pp  # noqa: E402
from oxtensor import tensor  # noqa: E402
from oxtensor import printing  # noqa: E402
from oxtensor import gradient  # noqa: E402
from oxtensor.gradient import Lop, Rop, grad, pullback, pushforward  # noqa: E402
from oxtensor.compile.builders import OpFromGraph  # noqa: E402
from oxtensor.compile.pickling import SerializationError, load, save  # noqa: E402
from oxtensor.ifelse import ifelse  # noqa: E402
from oxtensor import raise_op  # noqa: E402
from oxtensor.graph import clone_replace  # noqa: E402
from oxtensor.scan.basic import scan  # noqa: E402  (the function: ``oxtensor.scan`` as in PyTensor)
from oxtensor.scan.views import foldl, foldr, map, reduce  # noqa: E402

__version__ = "0.1.0"

__all__ = [
    "config",
    "function",
    "Function",
    "In",
    "Out",
    "Mode",
    "get_mode",
    "shared",
    "debugprint",
    "dprint",
    "pp",
    "printing",
    "tensor",
    "gradient",
    "grad",
    "Lop",
    "Rop",
    "pullback",
    "pushforward",
    "OpFromGraph",
    "ifelse",
    "raise_op",
    "clone_replace",
    "scan",
    "map",
    "reduce",
    "foldl",
    "foldr",
    "save",
    "load",
    "SerializationError",
]
