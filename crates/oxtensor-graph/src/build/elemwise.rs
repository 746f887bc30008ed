//! Elementwise builders: rank padding for NumPy-style broadcasting, and one function per
//! [`ScalarOp`] under its PyTensor name.

use super::{Built, Scalar, scalar_like};
use crate::{Op, ScalarOp, Var};
use oxtensor_data::DType;
use smallvec::SmallVec;

/// Left-pads `x` with broadcastable dimensions up to rank `ndim` (NumPy's right alignment).
#[track_caller]
pub fn pad_rank(x: &Var, ndim: usize) -> Built {
    if x.ndim() >= ndim {
        return Ok(x.clone());
    }
    let lead = ndim - x.ndim();
    let order = (0..ndim).map(|d| d.checked_sub(lead)).collect();
    Var::apply1(Op::DimShuffle { order }, std::slice::from_ref(x))
}

/// Applies a scalar op elementwise, first padding inputs to a common rank.
#[track_caller]
pub fn elemwise(op: ScalarOp, inputs: &[Var]) -> Built {
    let ndim = inputs.iter().map(Var::ndim).max().unwrap_or(0);
    let padded: SmallVec<[Var; 3]> = inputs
        .iter()
        .map(|v| pad_rank(v, ndim))
        .collect::<Result<_, _>>()?;
    Var::apply1(Op::Elemwise(op), &padded)
}

/// A binary op between a tensor and a number literal (`x + 1.0`), the number on either side,
/// typed by [`scalar_like`] (as PyTensor and the Python front end: `int8 + 300` is `int16`).
#[track_caller]
pub fn with_scalar(op: ScalarOp, x: &Var, s: impl Into<Scalar>, scalar_first: bool) -> Built {
    let c = scalar_like(s.into(), x.dtype());
    if scalar_first {
        elemwise(op, &[c, x.clone()])
    } else {
        elemwise(op, &[x.clone(), c])
    }
}

/// Converts to `dtype` (NumPy `astype`); returns `x` itself when already of that dtype.
#[track_caller]
pub fn cast(x: &Var, dtype: DType) -> Built {
    if x.dtype() == dtype {
        Ok(x.clone())
    } else {
        elemwise(ScalarOp::Cast(dtype), std::slice::from_ref(x))
    }
}

macro_rules! unary_builders {
    ($($(#[$doc:meta])* $name:ident => $op:ident;)*) => {
        $(
            $(#[$doc])*
            #[track_caller]
            pub fn $name(x: &Var) -> Built {
                elemwise(ScalarOp::$op, std::slice::from_ref(x))
            }
        )*
    };
}

macro_rules! binary_builders {
    ($($(#[$doc:meta])* $name:ident => $op:ident;)*) => {
        $(
            $(#[$doc])*
            #[track_caller]
            pub fn $name(a: &Var, b: &Var) -> Built {
                elemwise(ScalarOp::$op, &[a.clone(), b.clone()])
            }
        )*
    };
}

unary_builders! {
    /// `-x`.
    neg => Neg;
    /// `|x|`.
    abs => Abs;
    /// Sign of `x` (−1, 0, 1).
    sign => Sign;
    /// `x * x`.
    sqr => Sqr;
    /// `√x`.
    sqrt => Sqrt;
    /// `1 / x`.
    reciprocal => Reciprocal;
    /// `eˣ`.
    exp => Exp;
    /// `2ˣ`.
    exp2 => Exp2;
    /// `eˣ − 1`, accurate near 0.
    expm1 => Expm1;
    /// Natural logarithm.
    log => Log;
    /// Base-2 logarithm.
    log2 => Log2;
    /// Base-10 logarithm.
    log10 => Log10;
    /// `log(1 + x)`, accurate near 0.
    log1p => Log1p;
    /// Sine.
    sin => Sin;
    /// Cosine.
    cos => Cos;
    /// Tangent.
    tan => Tan;
    /// Inverse sine.
    arcsin => Arcsin;
    /// Inverse cosine.
    arccos => Arccos;
    /// Inverse tangent.
    arctan => Arctan;
    /// Hyperbolic sine.
    sinh => Sinh;
    /// Hyperbolic cosine.
    cosh => Cosh;
    /// Hyperbolic tangent.
    tanh => Tanh;
    /// Inverse hyperbolic sine.
    arcsinh => Arcsinh;
    /// Inverse hyperbolic cosine.
    arccosh => Arccosh;
    /// Inverse hyperbolic tangent.
    arctanh => Arctanh;
    /// Logistic sigmoid, stable for large |x|.
    sigmoid => Sigmoid;
    /// `log(1 + eˣ)`, stable for large |x|.
    softplus => Softplus;
    /// Error function.
    erf => Erf;
    /// Complementary error function.
    erfc => Erfc;
    /// `log|Γ(x)|`.
    gammaln => Gammaln;
    /// Bitwise (logical for bools) not.
    invert => Invert;
    /// True where NaN.
    isnan => IsNan;
    /// True where ±∞.
    isinf => IsInf;
    /// Round down.
    floor => Floor;
    /// Round up.
    ceil => Ceil;
    /// Round half to even (`np.round`).
    round => RoundHalfEven;
    /// Round toward zero.
    trunc => Trunc;
    /// The real part of a complex number (the value itself for a real input).
    real => Real;
    /// The imaginary part of a complex number (zero for a real input).
    imag => Imag;
    /// The argument of a complex number, in radians.
    angle => Angle;
    /// The complex conjugate.
    conj => Conj;
}

binary_builders! {
    /// `a + b`.
    add => Add;
    /// `a − b`.
    sub => Sub;
    /// `a · b`.
    mul => Mul;
    /// `a / b` (always a float).
    true_div => TrueDiv;
    /// `a // b` (floor division).
    int_div => IntDiv;
    /// `a % b` (sign of the divisor).
    modulo => Mod;
    /// `a ** b`.
    pow => Pow;
    /// `atan2(a, b)`.
    arctan2 => Arctan2;
    /// The complex number `re + im·i` from its two real parts.
    complex => Complex;
    /// The complex number `modulus·e^(angle·i)` from its polar form.
    complex_from_polar => ComplexFromPolar;
    /// Elementwise larger.
    maximum => Maximum;
    /// Elementwise smaller.
    minimum => Minimum;
    /// `a < b`.
    lt => Lt;
    /// `a > b`.
    gt => Gt;
    /// `a <= b`.
    le => Le;
    /// `a >= b`.
    ge => Ge;
    /// `a == b` elementwise.
    eq => Eq;
    /// `a != b` elementwise.
    neq => Neq;
    /// Bitwise (logical for bools) and.
    and => And;
    /// Bitwise (logical for bools) or.
    or => Or;
    /// Bitwise (logical for bools) exclusive or.
    xor => Xor;
}

/// `where(cond, a, b)`: `a` where `cond` is true, else `b`.
#[track_caller]
pub fn switch(cond: &Var, a: &Var, b: &Var) -> Built {
    elemwise(ScalarOp::Switch, &[cond.clone(), a.clone(), b.clone()])
}

/// `clip(x, lo, hi)`.
#[track_caller]
pub fn clip(x: &Var, lo: &Var, hi: &Var) -> Built {
    elemwise(ScalarOp::Clip, &[x.clone(), lo.clone(), hi.clone()])
}

/// A fused elementwise program: `inner_outputs` computed from the 0-d `inner_inputs` with
/// elementwise ops, applied to `inputs` (padded to a common rank) as one `Composite` node.
#[track_caller]
pub fn composite(
    inner_inputs: &[Var],
    inner_outputs: &[Var],
    inputs: &[Var],
) -> Result<SmallVec<[Var; 1]>, crate::GraphError> {
    let graph = crate::FrozenGraph::freeze(inner_inputs, inner_outputs)?;
    let ndim = inputs.iter().map(Var::ndim).max().unwrap_or(0);
    let padded: SmallVec<[Var; 3]> = inputs
        .iter()
        .map(|v| pad_rank(v, ndim))
        .collect::<Result<_, _>>()?;
    Var::apply(Op::Composite(graph), &padded)
}
