"""``oxtensor.tensor.special``, as ``pytensor.tensor.special``: softmax and its logarithm,
and the special functions PyTensor gathers there."""

from __future__ import annotations

from oxtensor import _core
from oxtensor.tensor.math import (  # noqa: F401
    beta,
    betaln,
    erfcx,
    expit,
    factorial,
    gamma,
    gammaln,
    logit,
    logsumexp,
    poch,
    sigmoid,
    xlog1py,
    xlogy,
)

__all__ = [
    "softmax",
    "log_softmax",
    "logsumexp",
    "beta",
    "betaln",
    "erfcx",
    "expit",
    "factorial",
    "gamma",
    "gammaln",
    "logit",
    "poch",
    "sigmoid",
    "xlog1py",
    "xlogy",
]


def softmax(c, axis=None):
    """``exp(c - max) / sum(exp(c - max))`` over ``axis`` (``None``: all axes)."""
    return _core.softmax(c, axis)


def log_softmax(c, axis=None):
    """``c - max - log(sum(exp(c - max)))`` over ``axis`` (``None``: all axes)."""
    return _core.log_softmax(c, axis)
