"""Special functions (``ScalarOp::Special``) in PyTorch: ``torch.special`` where it has the
function, a short identity where one holds (``gamma = ±exp(gammaln)``, ``beta`` and ``poch``
through it, ``chi2sf(x, k) = gammaincc(k/2, x/2)``, ``erfcinv`` through ``ndtri``, ``polygamma``
one integer order at a time), and nothing otherwise: the regularized incomplete beta function,
its and the incomplete gamma functions' inverses, Owen's T, the hypergeometric ``hyp2f1`` and
the Bessel functions of real order (``iv``, ``ive``, ``jv``, ``kn``, ``kv``, ``kve``) have no
torch implementation, so a graph using them fails at compile time naming the op.
"""

from __future__ import annotations

import math

import torch

from oxtensor.link.pytorch.ops.elemwise import MISSING, SCALAR

sp = torch.special


def _gamma(x):
    # Γ is negative on (-1, 0), (-3, -2), ...: where floor(x) is odd.
    odd = torch.remainder(torch.floor(x), 2) == 1
    sign = torch.where((x < 0) & odd, -torch.ones_like(x), torch.ones_like(x))
    return sign * torch.exp(torch.lgamma(x))


def _polygamma(n, x):
    # torch takes one integer order per call; a non-integer or negative order gives NaN, as in our op.
    n, x = torch.broadcast_tensors(n, x)
    out = torch.full_like(x, math.nan)
    for order in torch.unique(n).tolist():
        if order >= 0 and order == math.floor(order):
            out = torch.where(n == order, sp.polygamma(int(order), x), out)
    return out


def _log1mexp(x):
    return torch.where(x > -math.log(2.0), torch.log(-torch.expm1(x)), torch.log1p(-torch.exp(x)))


def _betaln(a, b):
    return torch.lgamma(a) + torch.lgamma(b) - torch.lgamma(a + b)


def _beta(a, b):
    sign = torch.sign(_gamma(a)) * torch.sign(_gamma(b)) * torch.sign(_gamma(a + b))
    return sign * torch.exp(_betaln(a, b))


SPECIAL = {
    "Gamma": _gamma,
    "Psi": sp.digamma,
    "TriGamma": lambda x: sp.polygamma(1, x),
    "PolyGamma": _polygamma,
    "GammaInc": sp.gammainc,
    "GammaIncC": sp.gammaincc,
    "Beta": _beta,
    "BetaLn": _betaln,
    "Erfinv": sp.erfinv,
    "Erfcinv": lambda y: -sp.ndtri(y / 2) / math.sqrt(2.0),
    "Erfcx": sp.erfcx,
    "I0": sp.i0,
    "I1": sp.i1,
    "J0": sp.bessel_j0,
    "J1": sp.bessel_j1,
    "Chi2SF": lambda x, k: sp.gammaincc(k / 2, x / 2),
    "Log1mexp": _log1mexp,
    "XLogY": sp.xlogy,
    "XLog1PY": sp.xlog1py,
    "Logit": sp.logit,
    "Factorial": lambda x: torch.where(x < 0, torch.zeros_like(x), _gamma(x + 1)),
    "Poch": lambda z, m: _gamma(z + m) / _gamma(z),
}

SCALAR.update({name: ("cast", fn) for name, fn in SPECIAL.items()})
MISSING.update({
    name: "torch.special has no such function"
    for name in ["BetaInc", "BetaIncInv", "GammaIncInv", "GammaIncCInv", "Owens_t", "Hyp2F1",
                 "Iv", "Ive", "Jv", "Kn", "Kv", "Kve"]
})
