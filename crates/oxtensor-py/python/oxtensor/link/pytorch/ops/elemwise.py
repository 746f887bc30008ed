"""Elementwise ops (every ``ScalarOp``) and ``Composite`` (its inner scalar graph, applied to
whole tensors: every op in it broadcasts), as eager torch calls.

Torch's type promotion differs from NumPy's (mixed integer/float inputs, 0-d tensors), so
inputs are first cast to the output dtype the graph computed; comparisons cast to the inputs'
common NumPy type. The result is cast to the document's output dtype.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from oxtensor.link.pytorch.dispatch import out_dtypes, register, tensor, torch_dtype


def _int_div(a, b):
    if not a.is_floating_point():
        zero = b == 0
        return torch.where(zero, torch.zeros_like(a), torch.floor_divide(a, torch.where(zero, torch.ones_like(b), b)))
    return torch.floor_divide(a, b)


def _mod(a, b):
    if not a.is_floating_point():
        zero = b == 0
        return torch.where(zero, torch.zeros_like(a), torch.remainder(a, torch.where(zero, torch.ones_like(b), b)))
    return torch.remainder(a, b)


def _variadic(bool_fn, fn):
    def go(*xs):
        step = bool_fn if xs[0].dtype == torch.bool else fn
        out = xs[0]
        for x in xs[1:]:
            out = step(out, x)
        return out

    return go


def _sign(a):
    # torch's sign of NaN is 0; NumPy's is NaN.
    return torch.where(torch.isnan(a), a, torch.sign(a)) if a.is_floating_point() else torch.sign(a)


def _abs(a):
    # torch has no abs of bools; NumPy's is the identity.
    return a if a.dtype == torch.bool else torch.abs(a)


def _gammaln(a):
    # torch's lgamma(-inf) is +inf; SciPy's gammaln(-inf) is -inf.
    return torch.where(a == -math.inf, a, torch.special.gammaln(a))


def _rounding(fn):
    """A rounding function, the identity on integers (which torch does not round)."""
    return lambda a: fn(a) if a.is_floating_point() else a


#: ScalarOp name -> (kind, elementwise function of tensors). kind "cast": inputs cast to the
#: output dtype first; "compare": to their common type.
SCALAR = {
    "Add": ("cast", _variadic(torch.logical_or, torch.add)),
    "Mul": ("cast", _variadic(torch.logical_and, torch.mul)),
    "Sub": ("cast", torch.sub),
    "True_div": ("cast", torch.true_divide),
    "Int_div": ("cast", _int_div),
    "Mod": ("cast", _mod),
    "Pow": ("cast", torch.pow),
    "Neg": ("cast", torch.neg),
    # The modulus of a complex input is real: computed in the input's own type.
    "Abs": ("compare", _abs),
    "Sign": ("cast", _sign),
    "Sqr": ("cast", lambda a: a * a),
    "Sqrt": ("cast", torch.sqrt),
    "Reciprocal": ("cast", torch.reciprocal),
    "Exp": ("cast", torch.exp),
    "Exp2": ("cast", torch.exp2),
    "Expm1": ("cast", torch.expm1),
    "Log": ("cast", torch.log),
    "Log2": ("cast", torch.log2),
    "Log10": ("cast", torch.log10),
    "Log1p": ("cast", torch.log1p),
    "Sin": ("cast", torch.sin),
    "Cos": ("cast", torch.cos),
    "Tan": ("cast", torch.tan),
    "ArcSin": ("cast", torch.asin),
    "ArcCos": ("cast", torch.acos),
    "ArcTan": ("cast", torch.atan),
    "ArcTan2": ("cast", torch.atan2),
    "Sinh": ("cast", torch.sinh),
    "Cosh": ("cast", torch.cosh),
    "Tanh": ("cast", torch.tanh),
    "ArcSinh": ("cast", torch.asinh),
    "ArcCosh": ("cast", torch.acosh),
    "ArcTanh": ("cast", torch.atanh),
    "Sigmoid": ("cast", torch.sigmoid),
    # Not torch.nn.functional.softplus, which returns x itself above a threshold.
    "Softplus": ("cast", lambda a: torch.logaddexp(torch.zeros_like(a), a)),
    "Erf": ("cast", torch.special.erf),
    "Erfc": ("cast", torch.special.erfc),
    "GammaLn": ("cast", _gammaln),
    "Maximum": ("cast", torch.maximum),
    "Minimum": ("cast", torch.minimum),
    "Clip": ("cast", lambda a, lo, hi: torch.minimum(torch.maximum(a, lo), hi)),
    "LT": ("compare", torch.lt),
    "GT": ("compare", torch.gt),
    "LE": ("compare", torch.le),
    "GE": ("compare", torch.ge),
    "EQ": ("compare", torch.eq),
    "NEQ": ("compare", torch.ne),
    "AND": ("cast", torch.bitwise_and),
    "OR": ("cast", torch.bitwise_or),
    "XOR": ("cast", torch.bitwise_xor),
    "Invert": ("cast", torch.bitwise_not),
    "IsNan": ("compare", torch.isnan),
    "IsInf": ("compare", torch.isinf),
    "Floor": ("cast", _rounding(torch.floor)),
    "Ceil": ("cast", _rounding(torch.ceil)),
    "RoundHalfToEven": ("cast", _rounding(torch.round)),
    "Trunc": ("cast", _rounding(torch.trunc)),
    "Real": ("compare", lambda a: torch.real(a) if a.is_complex() else a),
    "Imag": ("compare", lambda a: torch.imag(a) if a.is_complex() else torch.zeros_like(a)),
    "Angle": ("compare", lambda a: torch.angle(a if a.is_complex() or a.is_floating_point() else a.double())),
    "Conj": ("compare", lambda a: torch.conj_physical(a) if a.is_complex() else a),
    "Complex": ("compare", lambda re, im: torch.complex(re.double(), im.double())),
    "ComplexFromPolar": ("compare", lambda r, t: torch.polar(r.double(), t.double())),
}

#: Scalar ops torch has no form of, with the reason given in the error.
MISSING = {}


def scalar_fn(op, out_dtype):
    """The elementwise function of an ``Elemwise`` op (by its scalar name) producing
    ``out_dtype``."""
    name = op["scalar"]
    out = torch_dtype(out_dtype)
    if name == "Cast":
        target = torch_dtype(op["dtype"])
        return lambda a: tensor(a).to(target)
    if name == "Switch":
        return lambda c, a, b: torch.where(tensor(c).to(torch.bool), tensor(a).to(out), tensor(b).to(out))
    if name not in SCALAR:
        why = f": {MISSING[name]}" if name in MISSING else ""
        raise NotImplementedError(f"no PyTorch translation for op Elemwise{{{name}}}{why}")
    kind, fn = SCALAR[name]

    def apply(*args):
        arrays = [tensor(a) for a in args]
        if kind == "cast":
            arrays = [a.to(out) for a in arrays]
        else:
            common = torch_dtype(np.result_type(*[np.dtype(str(a.dtype).removeprefix("torch.")) for a in arrays]))
            arrays = [a.to(common) for a in arrays]
        return tensor(fn(*arrays)).to(out)

    return apply


@register("Elemwise")
def _elemwise(op, node, doc):
    fn = scalar_fn(op, out_dtypes(node)[0])
    return lambda *xs: (fn(*xs),)


@register("Composite")
def _composite(op, node, doc):
    body = doc.frozen(op["body"])
    dtypes = [torch_dtype(d) for d in out_dtypes(node)]
    ranks = [len(t["shape"]) for t in node["types"]]

    def run(*xs):
        outs = body(*xs)
        full = torch.broadcast_shapes(*[tensor(x).shape for x in xs]) if xs else torch.Size()
        return tuple(
            tensor(o).to(d).expand(full) if len(full) == r else tensor(o).to(d)
            for o, d, r in zip(outs, dtypes, ranks)
        )

    return run
