"""Special functions (``ScalarOp::Special``) in PyTorch: ``torch.special`` where it has the
function, a short identity where one holds (``gamma = ±exp(gammaln)``, ``beta`` and ``poch``
through ``gammaln``, ``chi2sf(x, k) = gammaincc(k/2, x/2)``, ``erfcinv`` through ``ndtri``, ``polygamma``
one integer order at a time), NaN wherever an argument is NaN. They agree with ours within 1e-9,
but at the poles of Γ (the non-positive integers), where the identities for ``beta``, ``betaln``,
``poch`` and ``polygamma`` give NaN, and for ``polygamma`` orders in the hundreds (torch's
overflows).

The regularized incomplete beta function, its and the incomplete gamma functions' inverses,
the shape derivative of the incomplete gamma function (``gammainc_grad``), the parameter
derivatives of ``betainc`` and ``hyp2f1`` (``betainc_da``, ``betainc_db``, ``hyp2f1_da``,
``hyp2f1_db``, ``hyp2f1_dc``), Owen's T, the hypergeometric ``hyp2f1`` and the Bessel functions of real order (``iv``,
``ive``, ``jv``, ``kn``, ``kv``, ``kve``) have no torch implementation: a graph using them fails
at compile time naming the op.
"""
from __future__ import annotations

import math

import torch

from oxtensor.link.pytorch.ops.elemwise import MISSING, SCALAR

sp = torch.special


def _gamma(x):
    # Γ is negative on (-1, 0), (-3, -2), ...: where floor(x) is odd. Its poles: ±inf at ±0
    # (as SciPy), NaN at the negative integers and at -inf.
    odd = torch.remainder(torch.floor(x), 2) == 1
    sign = torch.where((x < 0) & odd, -torch.ones_like(x), torch.ones_like(x))
    value = sign * torch.exp(torch.lgamma(x))
    value = torch.where(x == 0, torch.copysign(torch.full_like(x, math.inf), x), value)
    return torch.where((x < 0) & (x == torch.floor(x)), torch.full_like(x, math.nan), value)


def _polygamma(n, x):
    # torch takes one integer order per call; a non-integer or negative order gives NaN, as in our op.
    n, x = torch.broadcast_tensors(n, x)
    out = torch.full_like(x, math.nan)
    for order in torch.unique(n).tolist():
        if math.isfinite(order) and order >= 0 and order == math.floor(order):
            out = torch.where(n == order, sp.polygamma(int(order), x), out)
    return out


def _log1mexp(x):
    return torch.where(x > -math.log(2.0), torch.log(-torch.expm1(x)), torch.log1p(-torch.exp(x)))


def _betaln(a, b):
    return torch.lgamma(a) + torch.lgamma(b) - torch.lgamma(a + b)


def _gamma_sign(x):
    return torch.sign(_gamma(x))


def _poch(z, m):
    # Γ(z+m)/Γ(z) through gammaln, so that large z does not overflow.
    return _gamma_sign(z + m) * _gamma_sign(z) * torch.exp(torch.lgamma(z + m) - torch.lgamma(z))


def _beta(a, b):
    sign = _gamma_sign(a) * _gamma_sign(b) * _gamma_sign(a + b)
    return sign * torch.exp(_betaln(a, b))


def _trigamma(x):
    # torch gives huge finite values at the poles (the non-positive integers); ours give inf.
    pole = (x <= 0) & (x == torch.floor(x))
    return torch.where(pole, torch.full_like(x, math.inf), sp.polygamma(1, x))


def _nan_in(fn):
    """``fn`` giving NaN wherever an argument is NaN (some torch.special functions do not)."""

    def go(*xs):
        out = fn(*xs)
        for x in xs:
            out = torch.where(torch.isnan(x), torch.full_like(out, math.nan), out)
        return out

    return go


SPECIAL = {
    "Gamma": _gamma,
    "Psi": sp.digamma,
    "TriGamma": _trigamma,
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
    "Poch": _poch,
}

SCALAR.update({name: ("cast", _nan_in(fn)) for name, fn in SPECIAL.items()})
MISSING.update({
    name: "torch.special has no such function"
    for name in ["BetaInc", "BetaIncInv", "GammaIncInv", "GammaIncCInv", "GammaIncGrad", "Owens_t",
                 "Hyp2F1", "Iv", "Ive", "Jv", "Kn", "Kv", "Kve", "BetaIncDa", "BetaIncDb",
                 "Hyp2F1Da", "Hyp2F1Db", "Hyp2F1Dc"]
})
