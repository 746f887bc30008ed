//! `verify_grad` for every differentiable `ScalarOp`, over random shapes with broadcast inputs
//! (extents of 1 and missing leading dimensions), in float64; a few in float32.

use crate::gradient_common;

use gradient_common::{Rng, check};
use oxtensor::ops as b;
use oxtensor::oxtensor_graph::ScalarOp;
use oxtensor::{DType, Tensor, Var};

/// Value range `[lo, hi)` of one input, keeping `gap` away from 0.
#[derive(Copy, Clone)]
struct Range(f64, f64, f64);

const ANY: Range = Range(-2.0, 2.0, 0.1);
const POS: Range = Range(0.2, 2.0, 0.0);
const UNIT: Range = Range(-0.9, 0.9, 0.0);

/// The input ranges on which `op` is smooth, or `None` when it takes no float input. An
/// exhaustive match: a new scalar op needs a line here.
fn domain(op: ScalarOp) -> Option<Vec<Range>> {
    use ScalarOp::*;
    Some(match op {
        Add | Mul => vec![ANY; 3],
        Sub | Maximum | Minimum | Arctan2 | Lt | Gt | Le | Ge | Eq | Neq => vec![ANY, ANY],
        TrueDiv => vec![ANY, Range(-2.0, 2.0, 0.5)],
        // x / y stays strictly between 2 and 3: floor division is locally constant there.
        IntDiv | Mod => vec![Range(2.3, 2.6, 0.0), Range(1.0, 1.1, 0.0)],
        Pow => vec![POS, ANY],
        Neg | Abs | Sign | Sqr | Exp | Exp2 | Expm1 | Sin | Cos | Arctan | Sinh | Cosh | Tanh
        | Arcsinh | Sigmoid | Softplus | Erf | Erfc | IsNan | IsInf | Floor | Ceil
        | RoundHalfEven | Trunc => vec![ANY],
        Sqrt | Log | Log2 | Log10 => vec![POS],
        Reciprocal => vec![Range(-2.0, 2.0, 0.3)],
        Log1p => vec![Range(-0.8, 2.0, 0.0)],
        Tan => vec![Range(-1.2, 1.2, 0.0)],
        Arcsin | Arccos | Arctanh => vec![UNIT],
        Arccosh => vec![Range(1.2, 3.0, 0.0)],
        Gammaln => vec![Range(0.1, 5.0, 0.0)],
        // Of real inputs here; complex ones are checked in complex.rs.
        Real | Imag | Angle | Conj => vec![ANY],
        Complex | ComplexFromPolar => vec![ANY, ANY],
        Clip => vec![ANY, Range(-1.0, -0.3, 0.0), Range(0.3, 1.0, 0.0)],
        Switch => vec![ANY, ANY],
        And | Or | Xor | Invert => return None,
        Cast(_) => vec![ANY],
        // Checked per function, with their own domains, in special_functions.rs.
        Special(_) => return None,
    })
}

/// `op` applied to the inputs (with a constant condition for `switch`), as a float.
fn apply(op: ScalarOp, xs: &[Var], cond: &Var) -> Result<Var, oxtensor::GraphError> {
    let out = match op {
        ScalarOp::Switch => b::switch(cond, &xs[0], &xs[1])?,
        _ => b::elemwise(op, xs)?,
    };
    b::cast(&out, DType::F64)
}

#[test]
fn every_scalar_op_float64_broadcasting() {
    let mut rng = Rng(0x5ca1a7);
    let mut checked = 0;
    for op in ScalarOp::ALL_BUT_CAST {
        let Some(ranges) = domain(op) else { continue };
        for trial in 0..3 {
            let rank = rng.int(0, 3);
            let base = rng.shape(rank);
            let points: Vec<Tensor> = ranges
                .iter()
                .enumerate()
                .map(|(k, r)| {
                    let shape = if k == 0 && trial == 0 {
                        base.clone()
                    } else {
                        rng.broadcast_of(&base)
                    };
                    rng.tensor(&shape, r.0, r.1, r.2)
                })
                .collect();
            // Every input broadcast to less than the base shape: make the first full.
            let mut points = points;
            if points.iter().all(|p| p.shape() != base.as_slice()) {
                points[0] = rng.tensor(&base, ranges[0].0, ranges[0].1, ranges[0].2);
            }
            let mask: Vec<bool> = (0..base.iter().product::<usize>())
                .map(|_| rng.int(0, 1) == 1)
                .collect();
            let cond = Var::constant(Tensor::from_slice(&mask, &base).unwrap());
            check(
                &format!("{op} (trial {trial})"),
                |xs| Ok(apply(op, xs, &cond)?),
                &points,
            );
            checked += 1;
        }
    }
    assert!(checked >= 50 * 3);
}

#[test]
fn casts() {
    let mut rng = Rng(7);
    // float32 → float64 passes the gradient (float32 points: eps 3e-4, tolerance 1e-2).
    let p = rng.tensor(&[3, 2], -2.0, 2.0, 0.0).cast(DType::F32);
    check(
        "cast f32→f64",
        |xs| Ok(b::cast(&b::sqr(&xs[0])?, DType::F64)?),
        &[p],
    );
    // float64 → int32 → float64: locally constant (values away from integers).
    let p = rng.tensor(&[4], 0.2, 0.8, 0.0);
    check(
        "cast to int",
        |xs| {
            Ok(b::add(
                &b::cast(&b::cast(&xs[0], DType::I32)?, DType::F64)?,
                &xs[0],
            )?)
        },
        &[p],
    );
}

#[test]
fn float32_points() {
    let mut rng = Rng(11);
    for op in [
        ScalarOp::Exp,
        ScalarOp::Tanh,
        ScalarOp::Log1p,
        ScalarOp::Sigmoid,
    ] {
        let p = rng.tensor(&[2, 3], -0.7, 0.9, 0.0).cast(DType::F32);
        check(
            &format!("{op} float32"),
            |xs| Ok(b::elemwise(op, xs)?),
            &[p],
        );
    }
    let a = rng.tensor(&[2, 3], 0.5, 1.5, 0.0).cast(DType::F32);
    let c = rng.tensor(&[1, 3], 0.5, 1.5, 0.0).cast(DType::F32);
    check(
        "pow float32 broadcast",
        |xs| Ok(b::pow(&xs[0], &xs[1])?),
        &[a, c],
    );
}

#[test]
fn gammaln_reflection_branch() {
    // Negative non-integers go through the reflection formula of the digamma function.
    let p = Tensor::from_slice(&[-0.5, -1.3, -2.7, 0.3, 7.5], &[5]).unwrap();
    check("gammaln negative", |xs| Ok(b::gammaln(&xs[0])?), &[p]);
}
