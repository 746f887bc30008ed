"""Elementwise ops (every ``ScalarOp``) and ``Composite`` (its inner scalar graph, applied to
whole arrays: every op in it broadcasts).

Inputs are first cast to the output dtype the graph computed (NumPy's promotion, which JAX's
differs from for mixed integer/float inputs); comparisons cast to the inputs' common type.
When every input is concrete (NumPy values known while tracing, e.g. shapes), NumPy computes
the result so that it stays concrete.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import jax.scipy.special as jsp
import numpy as np

from oxtensor.link.jax.dispatch import is_concrete, out_dtypes, register


def _int_div(xp, a, b):
    if np.issubdtype(a.dtype, np.integer):
        safe = xp.where(b == 0, 1, b)
        return xp.where(b == 0, 0, xp.floor_divide(a, safe))
    return xp.floor_divide(a, b)


def _mod(xp, a, b):
    if np.issubdtype(a.dtype, np.integer):
        safe = xp.where(b == 0, 1, b)
        return xp.where(b == 0, 0, xp.mod(a, safe))
    return xp.mod(a, b)


def _variadic(xp, bool_fn, fn):
    def go(*xs):
        if xs[0].dtype == np.bool_:
            out = xs[0]
            for x in xs[1:]:
                out = bool_fn(xp)(out, x)
            return out
        out = xs[0]
        for x in xs[1:]:
            out = fn(out, x)
        return out

    return go


def _special(name):
    import scipy.special as sp

    np_fn, jnp_fn = getattr(sp, name), getattr(jsp, name)
    return lambda xp: np_fn if xp is np else jnp_fn


def _sigmoid(xp):
    return (lambda x: 1.0 / (1.0 + np.exp(-x))) if xp is np else jax.nn.sigmoid


def _softplus(xp):
    return (lambda x: np.logaddexp(0.0, x)) if xp is np else jax.nn.softplus


def _plain(name):
    return lambda xp: getattr(xp, name)


#: ScalarOp name -> (kind, function of the array module giving the elementwise function).
#: kind "cast": inputs cast to the output dtype first; "compare": to their common type.
SCALAR = {
    "Add": ("cast", lambda xp: _variadic(xp, lambda m: m.logical_or, lambda a, b: a + b)),
    "Mul": ("cast", lambda xp: _variadic(xp, lambda m: m.logical_and, lambda a, b: a * b)),
    "Sub": ("cast", lambda xp: lambda a, b: a - b),
    "True_div": ("cast", lambda xp: lambda a, b: a / b),
    "Int_div": ("cast", lambda xp: lambda a, b: _int_div(xp, a, b)),
    "Mod": ("cast", lambda xp: lambda a, b: _mod(xp, a, b)),
    "Pow": ("cast", _plain("power")),
    "Neg": ("cast", _plain("negative")),
    # The modulus of a complex input is real: computed in the input's own type.
    "Abs": ("compare", _plain("abs")),
    "Sign": ("cast", _plain("sign")),
    "Sqr": ("cast", lambda xp: lambda a: a * a),
    "Sqrt": ("cast", _plain("sqrt")),
    "Reciprocal": ("cast", lambda xp: lambda a: 1 / a),
    "Exp": ("cast", _plain("exp")),
    "Exp2": ("cast", _plain("exp2")),
    "Expm1": ("cast", _plain("expm1")),
    "Log": ("cast", _plain("log")),
    "Log2": ("cast", _plain("log2")),
    "Log10": ("cast", _plain("log10")),
    "Log1p": ("cast", _plain("log1p")),
    "Sin": ("cast", _plain("sin")),
    "Cos": ("cast", _plain("cos")),
    "Tan": ("cast", _plain("tan")),
    "ArcSin": ("cast", _plain("arcsin")),
    "ArcCos": ("cast", _plain("arccos")),
    "ArcTan": ("cast", _plain("arctan")),
    "ArcTan2": ("cast", _plain("arctan2")),
    "Sinh": ("cast", _plain("sinh")),
    "Cosh": ("cast", _plain("cosh")),
    "Tanh": ("cast", _plain("tanh")),
    "ArcSinh": ("cast", _plain("arcsinh")),
    "ArcCosh": ("cast", _plain("arccosh")),
    "ArcTanh": ("cast", _plain("arctanh")),
    "Sigmoid": ("cast", _sigmoid),
    "Softplus": ("cast", _softplus),
    "Erf": ("cast", _special("erf")),
    "Erfc": ("cast", _special("erfc")),
    "GammaLn": ("cast", _special("gammaln")),
    "Maximum": ("cast", _plain("maximum")),
    "Minimum": ("cast", _plain("minimum")),
    "Clip": ("cast", lambda xp: lambda a, lo, hi: xp.minimum(xp.maximum(a, lo), hi)),
    "LT": ("compare", _plain("less")),
    "GT": ("compare", _plain("greater")),
    "LE": ("compare", _plain("less_equal")),
    "GE": ("compare", _plain("greater_equal")),
    "EQ": ("compare", _plain("equal")),
    "NEQ": ("compare", _plain("not_equal")),
    "AND": ("cast", _plain("bitwise_and")),
    "OR": ("cast", _plain("bitwise_or")),
    "XOR": ("cast", _plain("bitwise_xor")),
    "Invert": ("cast", lambda xp: lambda a: xp.logical_not(a) if a.dtype == np.bool_ else xp.invert(a)),
    "IsNan": ("compare", _plain("isnan")),
    "IsInf": ("compare", _plain("isinf")),
    "Floor": ("cast", _plain("floor")),
    "Ceil": ("cast", _plain("ceil")),
    "RoundHalfToEven": ("cast", _plain("round")),
    "Trunc": ("cast", _plain("trunc")),
    "Real": ("compare", _plain("real")),
    "Imag": ("compare", _plain("imag")),
    "Angle": ("compare", _plain("angle")),
    "Conj": ("compare", _plain("conj")),
    "Complex": ("compare", lambda xp: lambda re, im: re + 1j * im),
    "ComplexFromPolar": ("compare", lambda xp: lambda r, t: r * xp.exp(1j * t)),
}


def _xp(args):
    return np if is_concrete(*args) else jnp


def scalar_fn(op, out_dtype):
    """The elementwise function of an ``Elemwise`` op (by its scalar name) producing
    ``out_dtype``."""
    name = op["scalar"]
    if name == "Cast":
        target = np.dtype(op["dtype"])

        def cast(a):
            xp = _xp([a])
            return xp.asarray(a).astype(target)

        return cast
    if name == "Switch":

        def switch(c, a, b):
            xp = _xp([c, a, b])
            return xp.where(xp.asarray(c).astype(bool), xp.asarray(a).astype(out_dtype), xp.asarray(b).astype(out_dtype))

        return switch
    if name not in SCALAR:
        raise NotImplementedError(f"no JAX translation for op Elemwise{{{name}}}")
    kind, make = SCALAR[name]

    def apply(*args):
        xp = _xp(args)
        arrays = [xp.asarray(a) for a in args]
        if kind == "cast":
            arrays = [a.astype(out_dtype) for a in arrays]
        else:
            common = np.result_type(*[a.dtype for a in arrays])
            arrays = [a.astype(common) for a in arrays]
        out = make(xp)(*arrays)
        return xp.asarray(out).astype(out_dtype)

    return apply


@register("Elemwise")
def _elemwise(op, node, doc):
    fn = scalar_fn(op, out_dtypes(node)[0])
    return lambda *xs: (fn(*xs),)


@register("Composite")
def _composite(op, node, doc):
    body = doc.frozen(op["body"])
    dtypes = out_dtypes(node)
    shapes = [t["shape"] for t in node["types"]]

    def run(*xs):
        outs = body(*xs)
        full = jnp.broadcast_shapes(*[jnp.shape(x) for x in xs]) if xs else ()
        return tuple(
            jnp.broadcast_to(jnp.asarray(o).astype(d), full if len(full) == len(s) else jnp.shape(o))
            for o, d, s in zip(outs, dtypes, shapes)
        )

    return run
