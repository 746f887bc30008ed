"""Compiling functions: ``function``, ``In``/``Out``, ``Mode``, ``shared``."""

from oxtensor.compile.builders import OpFromGraph
from oxtensor.compile.function import Function, function
from oxtensor.compile.io import In, Out
from oxtensor.compile.mode import FAST_COMPILE, FAST_RUN, Mode, get_mode
from oxtensor.compile.sharedvalue import SharedVariable, shared

__all__ = [
    "OpFromGraph",
    "Function",
    "function",
    "In",
    "Out",
    "Mode",
    "get_mode",
    "FAST_RUN",
    "FAST_COMPILE",
    "SharedVariable",
    "shared",
]
