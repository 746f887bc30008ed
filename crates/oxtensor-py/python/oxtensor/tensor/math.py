"""Elementwise functions, reductions and products of ``oxtensor.tensor``, under PyTensor's
names. Python numbers passed as operands are weak scalars: they take the dtype of the tensor
they meet (``x_float32 + 1.5`` stays ``float32``)."""

from __future__ import annotations

from oxtensor import _core

__all__ = [
    "sum",
    "prod",
    "mean",
    "var",
    "std",
    "max",
    "min",
    "argmax",
    "argmin",
    "all",
    "any",
    "dot",
    "matmul",
    "outer",
    "switch",
    "where",
    "clip",
    "round",
    "add",
    "mul",
    "isclose",
    "allclose",
]


def _unary(pt_name, core_name, doc):
    def f(x):
        return _core.elemwise(core_name, x)

    f.__name__ = f.__qualname__ = pt_name
    f.__doc__ = doc
    f.__module__ = __name__
    globals()[pt_name] = f
    __all__.append(pt_name)
    return f


def _binary(pt_name, core_name, doc):
    def f(a, b):
        return _core.elemwise(core_name, a, b)

    f.__name__ = f.__qualname__ = pt_name
    f.__doc__ = doc
    f.__module__ = __name__
    globals()[pt_name] = f
    __all__.append(pt_name)
    return f


_UNARY = [
    ("abs", "abs", "Absolute value."),
    ("neg", "neg", "``-x``."),
    ("sgn", "sign", "Sign of ``x`` (-1, 0 or 1)."),
    ("sign", "sign", "Sign of ``x`` (-1, 0 or 1)."),
    ("sqr", "sqr", "``x * x``."),
    ("square", "sqr", "``x * x``."),
    ("sqrt", "sqrt", "Square root."),
    ("reciprocal", "reciprocal", "``1 / x``."),
    ("inv", "reciprocal", "``1 / x``."),
    ("exp", "exp", "``e**x``."),
    ("exp2", "exp2", "``2**x``."),
    ("expm1", "expm1", "``exp(x) - 1``, accurate near 0."),
    ("log", "log", "Natural logarithm."),
    ("log2", "log2", "Base-2 logarithm."),
    ("log10", "log10", "Base-10 logarithm."),
    ("log1p", "log1p", "``log(1 + x)``, accurate near 0."),
    ("sin", "sin", "Sine."),
    ("cos", "cos", "Cosine."),
    ("tan", "tan", "Tangent."),
    ("arcsin", "arcsin", "Inverse sine."),
    ("arccos", "arccos", "Inverse cosine."),
    ("arctan", "arctan", "Inverse tangent."),
    ("sinh", "sinh", "Hyperbolic sine."),
    ("cosh", "cosh", "Hyperbolic cosine."),
    ("tanh", "tanh", "Hyperbolic tangent."),
    ("arcsinh", "arcsinh", "Inverse hyperbolic sine."),
    ("arccosh", "arccosh", "Inverse hyperbolic cosine."),
    ("arctanh", "arctanh", "Inverse hyperbolic tangent."),
    ("sigmoid", "sigmoid", "Logistic sigmoid ``1 / (1 + exp(-x))``, stable for large ``|x|``."),
    ("expit", "sigmoid", "Logistic sigmoid (same as ``sigmoid``)."),
    ("softplus", "softplus", "``log(1 + exp(x))``, stable for large ``|x|``."),
    ("log1pexp", "softplus", "``log(1 + exp(x))`` (same as ``softplus``)."),
    ("erf", "erf", "Error function."),
    ("erfc", "erfc", "Complementary error function ``1 - erf(x)``."),
    ("gammaln", "gammaln", "``log|Gamma(x)|``."),
    ("invert", "invert", "Bitwise (logical on bools) not."),
    ("bitwise_not", "invert", "Bitwise (logical on bools) not."),
    ("isnan", "isnan", "True where NaN."),
    ("isinf", "isinf", "True where infinite."),
    ("floor", "floor", "Round down."),
    ("ceil", "ceil", "Round up."),
    ("trunc", "trunc", "Round toward zero."),
    ("round_half_to_even", "round", "Round half to even (``np.round``)."),
    ("real", "real", "The real part of a complex number (the value itself for a real one)."),
    ("imag", "imag", "The imaginary part of a complex number (zero for a real one)."),
    ("angle", "angle", "The argument of a complex number, in radians (``float64``, as PyTensor)."),
    ("conj", "conj", "The complex conjugate."),
    ("conjugate", "conj", "The complex conjugate."),
]

_BINARY = [
    ("sub", "sub", "``a - b``."),
    ("true_div", "true_div", "``a / b`` (always a float)."),
    ("true_divide", "true_div", "``a / b`` (always a float)."),
    ("int_div", "int_div", "``a // b`` (floor division)."),
    ("floor_div", "int_div", "``a // b`` (floor division)."),
    ("floor_divide", "int_div", "``a // b`` (floor division)."),
    ("mod", "mod", "``a % b`` (sign of the divisor)."),
    ("pow", "pow", "``a ** b``."),
    ("power", "pow", "``a ** b``."),
    ("arctan2", "arctan2", "``arctan(a / b)`` in the right quadrant."),
    ("complex", "complex", "The complex number ``real + imag * 1j`` from its two real parts."),
    (
        "complex_from_polar",
        "complex_from_polar",
        "The complex number ``abs * exp(1j * angle)`` from its polar form.",
    ),
    ("maximum", "maximum", "Elementwise larger (NaN propagates)."),
    ("minimum", "minimum", "Elementwise smaller (NaN propagates)."),
    ("lt", "lt", "``a < b``."),
    ("less", "lt", "``a < b``."),
    ("gt", "gt", "``a > b``."),
    ("greater", "gt", "``a > b``."),
    ("le", "le", "``a <= b``."),
    ("less_equal", "le", "``a <= b``."),
    ("ge", "ge", "``a >= b``."),
    ("greater_equal", "ge", "``a >= b``."),
    ("eq", "eq", "``a == b`` elementwise."),
    ("equal", "eq", "``a == b`` elementwise."),
    ("neq", "neq", "``a != b`` elementwise."),
    ("not_equal", "neq", "``a != b`` elementwise."),
    ("and_", "and", "Bitwise (logical on bools) and."),
    ("bitwise_and", "and", "Bitwise (logical on bools) and."),
    ("or_", "or", "Bitwise (logical on bools) or."),
    ("bitwise_or", "or", "Bitwise (logical on bools) or."),
    ("xor", "xor", "Bitwise (logical on bools) exclusive or."),
    ("bitwise_xor", "xor", "Bitwise (logical on bools) exclusive or."),
]

for _spec in _UNARY:
    _unary(*_spec)
for _spec in _BINARY:
    _binary(*_spec)


#: The table's functions SciPy does not have, described.
_NOT_IN_SCIPY = {
    "gammainc_grad": "∂ gammainc(a, x) / ∂a (PyTensor's ``gammainc_grad``)",
    "betainc_da": "∂ betainc(a, b, x) / ∂a (PyTensor's ``betainc_grad(a, b, x, True)``)",
    "betainc_db": "∂ betainc(a, b, x) / ∂b (PyTensor's ``betainc_grad(a, b, x, False)``)",
    "hyp2f1_da": "∂ hyp2f1(a, b, c, x) / ∂a (PyTensor's ``hyp2f1_grad(..., wrt=[0])``)",
    "hyp2f1_db": "∂ hyp2f1(a, b, c, x) / ∂b (PyTensor's ``hyp2f1_grad(..., wrt=[1])``)",
    "hyp2f1_dc": "∂ hyp2f1(a, b, c, x) / ∂c (PyTensor's ``hyp2f1_grad(..., wrt=[2])``)",
}


def _special(pt_name, core_name, params):
    """Defines ``pt_name(*params)``: the special function ``core_name`` of oxtensor-special."""

    def f(*args):
        if len(args) != len(params):
            raise TypeError(
                f"{pt_name}() takes {len(params)} arguments ({', '.join(params)}), "
                f"got {len(args)}"
            )
        return _core.elemwise(core_name, *args)

    f.__name__ = f.__qualname__ = pt_name
    what = _NOT_IN_SCIPY.get(core_name, f"``scipy.special.{core_name}({', '.join(params)})``")
    f.__doc__ = f"{what} elementwise (computed by oxtensor-special; integer inputs give floats)."
    f.__module__ = __name__
    globals()[pt_name] = f
    __all__.append(pt_name)
    return f


# One function per entry of the special-function table (oxtensor_graph::SpecialFn), plus
# PyTensor's aliases.
for _name, _params in _core.special_functions():
    _special(_name, _name, tuple(_params))
_special("digamma", "psi", ("x",))
_special("tri_gamma", "trigamma", ("x",))


def gammau(k, x):
    """The upper incomplete gamma function ``gammaincc(k, x) * gamma(k)``."""
    return _core.gammau(k, x)


def gammal(k, x):
    """The lower incomplete gamma function ``gammainc(k, x) * gamma(k)``."""
    return _core.gammal(k, x)


def logaddexp(*xs):
    """``log(exp(x0) + exp(x1) + ...)``, computed pairwise without overflow."""
    if len(xs) < 2:
        raise TypeError("logaddexp() needs at least two arguments")
    out = xs[0]
    for x in xs[1:]:
        out = _core.logaddexp(out, x)
    return out


def logsumexp(x, axis=None, keepdims=False):
    """``log(sum(exp(x), axis))``, computed as ``m + log(sum(exp(x - m)))`` with ``m`` the
    maximum over ``axis`` (so it neither overflows nor underflows)."""
    return _core.logsumexp(x, axis, keepdims)


__all__ += ["gammau", "gammal", "logaddexp", "logsumexp"]


def add(*terms):
    """``a + b + ...``."""
    return _core.elemwise("add", *terms)


def mul(*terms):
    """``a * b * ...``."""
    return _core.elemwise("mul", *terms)


def switch(cond, ift, iff):
    """``ift`` where ``cond`` is true, else ``iff``."""
    return _core.elemwise("switch", cond, ift, iff)


def where(cond, ift, iff):
    """``np.where(cond, ift, iff)`` (same as ``switch``)."""
    return _core.elemwise("switch", cond, ift, iff)


def clip(x, min, max):
    """``x`` limited to ``[min, max]``."""
    return _core.elemwise("clip", x, min, max)


def round(a, mode=None):
    """Rounds half to even (default, ``np.round``) or ``mode="half_away_from_zero"``."""
    return _core.round(a, mode)


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``|a - b| <= atol + rtol * |b|`` elementwise (``np.isclose``)."""
    close = _core.elemwise("le", abs(sub(a, b)), add(atol, mul(rtol, abs(b))))
    if equal_nan:
        close = or_(close, and_(isnan(a), isnan(b)))
    return close


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True when every element is close (``np.allclose``)."""
    return all(isclose(a, b, rtol, atol, equal_nan))


def sum(input, axis=None, dtype=None, keepdims=False, acc_dtype=None):
    """Sum over ``axis`` (``None``: all; an int or a tuple; negatives count from the end)."""
    return _core.reduce("sum", input, axis, keepdims, dtype)


def prod(input, axis=None, dtype=None, keepdims=False, acc_dtype=None, no_zeros_in_input=False):
    """Product over ``axis``."""
    return _core.reduce("prod", input, axis, keepdims, dtype)


def mean(input, axis=None, dtype=None, keepdims=False, acc_dtype=None):
    """Mean over ``axis`` (integers give ``float64``)."""
    return _core.reduce("mean", input, axis, keepdims, dtype)


def var(input, axis=None, ddof=0, keepdims=False, corrected=False):
    """Variance over ``axis`` with ``ddof`` delta degrees of freedom."""
    return _core.moment(False, input, axis, ddof, keepdims, corrected)


def std(input, axis=None, ddof=0, keepdims=False, corrected=False):
    """Standard deviation over ``axis``."""
    return _core.moment(True, input, axis, ddof, keepdims, corrected)


def max(x, axis=None, keepdims=False):
    """Maximum over ``axis`` (NaN propagates)."""
    return _core.reduce("max", x, axis, keepdims)


def min(x, axis=None, keepdims=False):
    """Minimum over ``axis`` (NaN propagates)."""
    return _core.reduce("min", x, axis, keepdims)


def all(x, axis=None, keepdims=False):
    """True where every element over ``axis`` is true."""
    return _core.reduce("all", x, axis, keepdims)


def any(x, axis=None, keepdims=False):
    """True where any element over ``axis`` is true."""
    return _core.reduce("any", x, axis, keepdims)


def argmax(x, axis=None, keepdims=False):
    """Index of the largest element along ``axis`` (``None``: of the flattened tensor)."""
    return _core.argreduce(True, x, axis, keepdims)


def argmin(x, axis=None, keepdims=False):
    """Index of the smallest element along ``axis`` (``None``: of the flattened tensor)."""
    return _core.argreduce(False, x, axis, keepdims)


def dot(l, r):
    """``np.dot`` for tensors of rank at most 2."""
    return _core.dot(l, r)


def matmul(x1, x2):
    """``np.matmul`` (batched, with broadcasting of leading dimensions)."""
    return _core.matmul(x1, x2)


def outer(x, y):
    """Outer product of two vectors."""
    return _core.outer(x, y)


from oxtensor.tensor._math_extra import *  # noqa: E402,F401,F403
from oxtensor.tensor._math_extra import __all__ as _extra_all  # noqa: E402

__all__ += _extra_all
