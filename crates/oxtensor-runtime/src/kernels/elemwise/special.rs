//! The special functions ([`SpecialFn`]): each element computed by `oxtensor-special`'s `f64`
//! entry point (the same function the native backend calls), its inputs converted to the
//! output float type first and the result rounded to it once, as [`Float::via_f64`] does.

use super::drive::Args;
use super::unsupported;
use crate::KernelError;
use crate::kernels::scalar::Float;
use oxtensor_data::{DType, Tensor};
use oxtensor_graph::{ScalarOp, SpecialFn};
use oxtensor_special::EntryF64;

/// `f` elementwise on `args`, into the float dtype `out`.
pub(super) fn compute(
    op: ScalarOp,
    f: SpecialFn,
    args: &Args<'_>,
    out: DType,
) -> Result<Tensor, KernelError> {
    match out {
        DType::F32 => run::<f32>(f, args),
        DType::F64 => run::<f64>(f, args),
        other => Err(unsupported(op, other)),
    }
}

/// `f` with inputs and output of the float type `T`.
fn run<T: Float>(f: SpecialFn, args: &Args<'_>) -> Result<Tensor, KernelError> {
    let r = |v: f64| T::from_f64(v);
    match f.export().entry {
        EntryF64::Unary(g) => args.map1::<T, T>(|x| r(g(x.to_f64()))),
        EntryF64::Binary(g) => args.map2::<T, T, T>(|a, x| r(g(a.to_f64(), x.to_f64()))),
        EntryF64::Ternary(g) => {
            args.map3::<T, T, T, T>(|a, b, x| r(g(a.to_f64(), b.to_f64(), x.to_f64())))
        }
        EntryF64::Quaternary(g) => {
            args.map4::<T, T>(|a, b, c, x| r(g(a.to_f64(), b.to_f64(), c.to_f64(), x.to_f64())))
        }
    }
}
