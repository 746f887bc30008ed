//! The elementwise ops that involve complex numbers: every op with a complex input or output,
//! and the ops that take complex numbers apart or build them (`real`, `imag`, `angle`,
//! `conj`, `complex`, `complex_from_polar`) whatever their inputs.
//!
//! Casts, `switch` and comparisons need nothing of their own (a complex element converts
//! and orders like any other), so they stay with the real dtypes' loops.

use super::drive::Args;
use super::unsupported;
use crate::KernelError;
use crate::kernels::complex::{self, ComplexFloat};
use crate::kernels::scalar::Arith;
use oxtensor_data::{C64, C128, DType, Element, Tensor};
use oxtensor_graph::ScalarOp;

/// Runs `$body` with `$C` bound to the Rust type of a complex dtype, or fails for another.
macro_rules! complex {
    ($op:expr, $dt:expr, $C:ident => $body:expr) => {
        match $dt {
            DType::C64 => {
                type $C = C64;
                $body
            }
            DType::C128 => {
                type $C = C128;
                $body
            }
            other => Err(unsupported($op, other)),
        }
    };
}

/// Runs `$body` with `$R` bound to the Rust type of a float dtype, or fails for another.
macro_rules! real {
    ($op:expr, $dt:expr, $R:ident => $body:expr) => {
        match $dt {
            DType::F32 => {
                type $R = f32;
                $body
            }
            DType::F64 => {
                type $R = f64;
                $body
            }
            other => Err(unsupported($op, other)),
        }
    };
}

/// Computes `op` when complex numbers are involved; `None` when they are not (or when the
/// real dtypes' loop is also right for them), so the caller runs its own loops.
pub(super) fn compute(
    op: ScalarOp,
    args: &Args<'_>,
    out: DType,
) -> Option<Result<Tensor, KernelError>> {
    use ScalarOp::*;
    let complex_in = (0..args.len()).any(|i| args.dtype(i).is_complex());
    Some(match op {
        Real => same_value(args, out),
        Conj if !out.is_complex() => same_value(args, out),
        Imag if complex_in => real!(op, out, R => args.map1::<C128, R>(|z| R::from_f64(z.im))),
        // A loop, not a fresh zero tensor, so a donated buffer is used as for any other op.
        Imag => oxtensor_data::dispatch_dtype!(out, T => args.map1::<T, T>(|_| T::default())),
        Angle => real!(op, out, R => args.map1::<C128, R>(|z| R::from_f64(z.im.atan2(z.re)))),
        Complex => complex!(op, out, C => {
            args.map2::<f64, f64, C>(|re, im| C::from_c128(C128::new(re, im)))
        }),
        ComplexFromPolar => complex!(op, out, C => {
            args.map2::<f64, f64, C>(|r, t| C::from_c128(C128::new(r * t.cos(), r * t.sin())))
        }),
        Conj if out.is_complex() => complex!(op, out, C => args.map1::<C, C>(C::conj)),
        _ if !complex_in && !out.is_complex() => return None,
        Cast(_) | Switch | Lt | Gt | Le | Ge | Eq | Neq | Conj => return None,
        IsNan => args.map1::<C128, bool>(|z| z.re.is_nan() || z.im.is_nan()),
        IsInf => args.map1::<C128, bool>(|z| z.re.is_infinite() || z.im.is_infinite()),
        Abs => real!(op, out, R => args.map1::<C128, R>(|z| R::from_f64(z.re.hypot(z.im)))),
        Add => complex!(op, out, C => args.fold::<C>(<C as Arith>::add)),
        Mul => complex!(op, out, C => args.fold::<C>(<C as Arith>::mul)),
        Sub => complex!(op, out, C => args.map2::<C, C, C>(<C as Arith>::sub)),
        Pow => complex!(op, out, C => args.map2::<C, C, C>(<C as Arith>::power)),
        Neg => complex!(op, out, C => args.map1::<C, C>(<C as Arith>::neg)),
        Sign => complex!(op, out, C => args.map1::<C, C>(<C as Arith>::sign)),
        Sqr => complex!(op, out, C => args.map1::<C, C>(<C as Arith>::square)),
        Maximum => complex!(op, out, C => args.map2::<C, C, C>(<C as Arith>::np_maximum)),
        Minimum => complex!(op, out, C => args.map2::<C, C, C>(<C as Arith>::np_minimum)),
        Clip => complex!(op, out, C => args.map3::<C, C, C, C>(<C as Arith>::clip)),
        TrueDiv => complex!(op, out, C => args.map2::<C, C, C>(<C as ComplexFloat>::div)),
        other => match complex::unary(other) {
            Some(f) => complex!(op, out, C => args.map1::<C, C>(|z| z.via_c128(f))),
            None => Err(unsupported(op, out)),
        },
    })
}

/// Each value converted to the output dtype: `real` (the conversion to a real dtype keeps the
/// real part) and the conjugate of a real number.
fn same_value(args: &Args<'_>, out: DType) -> Result<Tensor, KernelError> {
    oxtensor_data::dispatch_dtype!(out, T => args.map1::<T, T>(|x| x))
}
