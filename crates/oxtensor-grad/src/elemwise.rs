//! Pullbacks of the scalar functions applied by `Elemwise`: one exhaustive `match` over
//! [`ScalarOp`].
//!
//! Each rule returns the gradient with the *output's* (broadcast) shape; the driver sums it back
//! over the dimensions an input was broadcast along and casts it to the input's gradient dtype.
//! Derivatives of float-valued functions are computed in the output's float type (an integer
//! input of `log` is differentiated as if it were real, as PyTensor does). The conventions at
//! kinks follow PyTensor and are listed in the crate documentation.

use crate::rules::{Term, grads, per_input, uniform};
use crate::util::{drop_where, fconst, keep_where, rsub, scale, shift};
use oxtensor_graph::build::{self as b, Built};
use oxtensor_graph::{GraphError, ScalarOp, SpecialFn, Var};
use std::f64::consts::{FRAC_2_SQRT_PI, LN_2, LN_10};

/// The pullback of `op` applied elementwise to `inputs`, producing `z`, with cotangent `g`.
pub(crate) fn pullback(
    op: ScalarOp,
    inputs: &[Var],
    z: &Var,
    g: &Var,
    wanted: &[bool],
) -> Result<Vec<Term>, GraphError> {
    match crate::complex::pullback(op, inputs, z, g, wanted) {
        Some(terms) => terms,
        None => real_pullback(op, inputs, z, g, wanted),
    }
}

/// The pullback of `op` when every value is real (the rule of [`pullback`] for real inputs,
/// which [`crate::complex`] also reuses for holomorphic ops).
pub(crate) fn real_pullback(
    op: ScalarOp,
    inputs: &[Var],
    z: &Var,
    g: &Var,
    wanted: &[bool],
) -> Result<Vec<Term>, GraphError> {
    use ScalarOp::*;
    // The first input, converted to the output's float type for float-valued functions.
    let xf = || b::cast(&inputs[0], z.dtype());
    let unary = |f: &dyn Fn() -> Built| grads(wanted, |_| f());
    match op {
        Add => grads(wanted, |_| Ok(g.clone())),
        Sub => grads(wanted, |k| if k == 0 { Ok(g.clone()) } else { b::neg(g) }),
        // d(a·b·c)/db = a·c: the cotangent times every other factor, as one n-ary product.
        Mul => grads(wanted, |k| {
            let mut factors = vec![g.clone()];
            factors.extend(
                inputs
                    .iter()
                    .enumerate()
                    .filter(|(j, _)| *j != k)
                    .map(|(_, v)| v.clone()),
            );
            b::elemwise(Mul, &factors)
        }),
        TrueDiv => {
            let (x, y) = (&inputs[0], &inputs[1]);
            grads(wanted, |k| {
                if k == 0 {
                    b::true_div(g, y)
                } else {
                    b::neg(&b::true_div(&b::mul(g, x)?, &b::sqr(y)?)?)
                }
            })
        }
        // Floor division is a step function of both inputs.
        IntDiv => Ok(uniform(wanted, Term::Zero)),
        // x mod y = x − y·⌊x/y⌋, with ⌊x/y⌋ locally constant.
        Mod => {
            let (x, y) = (&inputs[0], &inputs[1]);
            grads(wanted, |k| {
                if k == 0 {
                    Ok(g.clone())
                } else {
                    b::neg(&b::mul(&b::int_div(x, y)?, g)?)
                }
            })
        }
        // d(xʸ)/dx = y·xʸ⁻¹; d(xʸ)/dy = log(x)·xʸ, taken as 0 where x = 0 (PyTensor).
        Pow => {
            let (x, y) = (&inputs[0], &inputs[1]);
            grads(wanted, |k| {
                if k == 0 {
                    let y_minus_1 = b::with_scalar(Sub, y, 1, false)?;
                    b::elemwise(Mul, &[g.clone(), y.clone(), b::pow(x, &y_minus_1)?])
                } else {
                    let d = b::elemwise(Mul, &[g.clone(), b::log(x)?, z.clone()])?;
                    drop_where(&b::eq(x, &fconst(0.0, x))?, &d)
                }
            })
        }
        Neg => unary(&|| b::neg(g)),
        // sign(0) = 0: the subgradient 0 at the kink, as PyTensor and JAX.
        Abs => unary(&|| b::mul(g, &b::sign(&inputs[0])?)),
        Sign | Floor | Ceil | RoundHalfEven | Trunc => Ok(uniform(wanted, Term::Zero)),
        Sqr => unary(&|| b::elemwise(Mul, &[g.clone(), inputs[0].clone(), fconst(2.0, g)])),
        // 1 / (2√x): infinite at 0, as PyTensor.
        Sqrt => unary(&|| b::true_div(&scale(g, 0.5)?, z)),
        Reciprocal => unary(&|| b::neg(&b::true_div(g, &b::sqr(&xf()?)?)?)),
        Exp => unary(&|| b::mul(g, z)),
        Exp2 => unary(&|| b::elemwise(Mul, &[g.clone(), z.clone(), fconst(LN_2, z)])),
        Expm1 => unary(&|| b::mul(g, &shift(z, 1.0)?)),
        Log => unary(&|| b::true_div(g, &xf()?)),
        Log2 => unary(&|| b::true_div(g, &scale(&xf()?, LN_2)?)),
        Log10 => unary(&|| b::true_div(g, &scale(&xf()?, LN_10)?)),
        Log1p => unary(&|| b::true_div(g, &shift(&xf()?, 1.0)?)),
        Sin => unary(&|| b::mul(g, &b::cos(&xf()?)?)),
        Cos => unary(&|| b::neg(&b::mul(g, &b::sin(&xf()?)?)?)),
        // tan' = 1 + tan².
        Tan => unary(&|| b::mul(g, &shift(&b::sqr(z)?, 1.0)?)),
        Arcsin => unary(&|| b::true_div(g, &b::sqrt(&rsub(1.0, &b::sqr(&xf()?)?)?)?)),
        Arccos => unary(&|| b::neg(&b::true_div(g, &b::sqrt(&rsub(1.0, &b::sqr(&xf()?)?)?)?)?)),
        Arctan => unary(&|| b::true_div(g, &shift(&b::sqr(&xf()?)?, 1.0)?)),
        // atan2(a, b): ∂/∂a = b / (a² + b²), ∂/∂b = −a / (a² + b²).
        Arctan2 => {
            let a = b::cast(&inputs[0], z.dtype())?;
            let c = b::cast(&inputs[1], z.dtype())?;
            let denom = b::add(&b::sqr(&a)?, &b::sqr(&c)?)?;
            grads(wanted, |k| {
                if k == 0 {
                    b::true_div(&b::mul(g, &c)?, &denom)
                } else {
                    b::neg(&b::true_div(&b::mul(g, &a)?, &denom)?)
                }
            })
        }
        Sinh => unary(&|| b::mul(g, &b::cosh(&xf()?)?)),
        Cosh => unary(&|| b::mul(g, &b::sinh(&xf()?)?)),
        // tanh' = 1 − tanh².
        Tanh => unary(&|| b::mul(g, &rsub(1.0, &b::sqr(z)?)?)),
        Arcsinh => unary(&|| b::true_div(g, &b::sqrt(&shift(&b::sqr(&xf()?)?, 1.0)?)?)),
        Arccosh => unary(&|| b::true_div(g, &b::sqrt(&shift(&b::sqr(&xf()?)?, -1.0)?)?)),
        Arctanh => unary(&|| b::true_div(g, &rsub(1.0, &b::sqr(&xf()?)?)?)),
        // σ' = σ(1 − σ).
        Sigmoid => unary(&|| b::elemwise(Mul, &[g.clone(), z.clone(), rsub(1.0, z)?])),
        Softplus => unary(&|| b::mul(g, &b::sigmoid(&xf()?)?)),
        Erf => unary(&|| erf_grad(g, &xf()?, FRAC_2_SQRT_PI)),
        Erfc => unary(&|| erf_grad(g, &xf()?, -FRAC_2_SQRT_PI)),
        // d log|Γ(x)| / dx = ψ(x), the digamma function.
        Gammaln => unary(&|| b::mul(g, &b::special(SpecialFn::Psi, &[xf()?])?)),
        // The complex family's rules are in `crate::complex`, which takes them first.
        Real | Imag | Angle | Conj | Complex | ComplexFromPolar => Ok(uniform(
            wanted,
            Term::Undefined(format!("{op}: rule missing")),
        )),
        // The gradient goes to the input equal to the output; at ties to the first one only
        // (PyTensor's `eq(out, x) * gz`, `(1 - eq(out, x)) * gz`), so it is never counted twice.
        Maximum | Minimum => {
            let first = b::eq(z, &inputs[0])?;
            grads(wanted, |k| {
                if k == 0 {
                    keep_where(&first, g)
                } else {
                    drop_where(&first, g)
                }
            })
        }
        // Passes to x inside the closed interval [lo, hi] (so at the bounds too); to lo below it
        // and to hi above it (PyTensor).
        Clip => {
            let (x, lo, hi) = (&inputs[0], &inputs[1], &inputs[2]);
            grads(wanted, |k| match k {
                0 => keep_where(&b::and(&b::ge(x, lo)?, &b::le(x, hi)?)?, g),
                1 => keep_where(&b::lt(x, lo)?, g),
                _ => keep_where(&b::gt(x, hi)?, g),
            })
        }
        // The condition selects but is locally constant: connected, zero gradient.
        Switch => {
            let cond = &inputs[0];
            per_input(wanted, |k| match k {
                0 => Ok(Term::Zero),
                1 => keep_where(cond, g).map(Term::Grad),
                _ => drop_where(cond, g).map(Term::Grad),
            })
        }
        // Boolean- and integer-valued functions: locally constant.
        Lt | Gt | Le | Ge | Eq | Neq | And | Or | Xor | Invert | IsNan | IsInf => {
            Ok(uniform(wanted, Term::Zero))
        }
        // A conversion to a float or complex type passes the gradient (the driver casts it
        // back); one to an integer or bool is a step function.
        Cast(dtype) => {
            if dtype.is_inexact() {
                grads(wanted, |_| Ok(g.clone()))
            } else {
                Ok(uniform(wanted, Term::Zero))
            }
        }
        Special(f) => crate::special_fns::pullback(f, inputs, z, g, wanted),
    }
}

/// `g · scale · exp(−x²)`: the derivative of `erf` (`scale = 2/√π`) or `erfc` (`−2/√π`).
fn erf_grad(g: &Var, x: &Var, scale: f64) -> Built {
    let e = b::exp(&b::neg(&b::sqr(x)?)?)?;
    b::elemwise(ScalarOp::Mul, &[g.clone(), e, fconst(scale, x)])
}
