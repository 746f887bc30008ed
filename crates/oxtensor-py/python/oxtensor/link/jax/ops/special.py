"""Special functions (``ScalarOp::Special``) in JAX: ``jax.scipy.special`` where it has the
function, a short identity where one holds exactly (``trigamma = polygamma(1, ·)``,
``chi2sf(x, k) = gammaincc(k/2, x/2)``), and nothing otherwise: the Bessel functions of real
order (``iv``, ``ive``, ``jv``, ``kn``, ``kv``, ``kve``, ``j0``, ``j1``) and the inverses of the
incomplete gamma and beta functions have no JAX implementation, so a graph using them fails at
compile time naming the op. So do the parameter derivatives of ``betainc`` and ``hyp2f1``
(``betainc_da``, ``betainc_db``, ``hyp2f1_da``, ``hyp2f1_db``, ``hyp2f1_dc``, what the gradients
of those functions with respect to their parameters build): JAX's ``betainc`` has no gradient
in a and b, and the autodiff derivative of its ``hyp2f1`` has not been validated here.

Concrete inputs (values known while tracing) go through SciPy, as the other elementwise ops go
through NumPy, so they stay concrete.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import jax.scipy.special as jsp
import numpy as np
import scipy.special as sp

from oxtensor.link.jax.ops.elemwise import SCALAR


def _both(np_fn, jax_fn):
    return lambda xp: jax_fn if xp is jnp else np_fn


def _same(name):
    return _both(getattr(sp, name), getattr(jsp, name))


def _polygamma(n, x):
    # JAX takes integer orders only; a non-integer order gives NaN, as in our op.
    whole = jnp.floor(n)
    return jnp.where(whole == n, jsp.polygamma(whole.astype(jnp.int32), x), jnp.nan)


def _log1mexp(m):
    return lambda x: m.where(x > -math.log(2.0), m.log(-m.expm1(x)), m.log1p(-m.exp(x)))


#: The special functions' op names -> how to build them, merged into the elementwise table.
SPECIAL = {
    "Gamma": _same("gamma"),
    "Psi": _same("digamma"),
    "TriGamma": _both(lambda x: sp.polygamma(1, x), lambda x: jsp.polygamma(1, x)),
    "PolyGamma": _both(sp.polygamma, _polygamma),
    "GammaInc": _same("gammainc"),
    "GammaIncC": _same("gammaincc"),
    # SciPy has no ∂P/∂a; JAX's own (what jax.grad of gammainc uses) serves concrete inputs too.
    "GammaIncGrad": _both(lambda a, x: np.asarray(jax.lax.igamma_grad_a(a, x)), jax.lax.igamma_grad_a),
    "Beta": _same("beta"),
    "BetaLn": _same("betaln"),
    "BetaInc": _same("betainc"),
    "Erfinv": _same("erfinv"),
    "Erfcinv": _both(sp.erfcinv, lambda y: -jsp.ndtri(y / 2) / math.sqrt(2.0)),
    "Erfcx": _same("erfcx"),
    "I0": _same("i0"),
    "I1": _same("i1"),
    "Owens_t": _same("owens_t"),
    "Hyp2F1": _same("hyp2f1"),
    "Chi2SF": _both(lambda x, k: sp.chdtrc(k, x), lambda x, k: jsp.gammaincc(k / 2, x / 2)),
    "Log1mexp": lambda xp: _log1mexp(xp),
    "XLogY": _same("xlogy"),
    "XLog1PY": _same("xlog1py"),
    "Logit": _same("logit"),
    "Factorial": _both(lambda x: sp.factorial(x, exact=False), lambda x: jsp.factorial(x)),
    "Poch": _same("poch"),
}

SCALAR.update({name: ("cast", make) for name, make in SPECIAL.items()})
