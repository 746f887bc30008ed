//! The elementwise kernel (`Op::Elemwise`): every [`ScalarOp`] with NumPy/SciPy semantics,
//! broadcasting under PyTensor's static-1 rule.
//!
//! A call checks the runtime shapes ([`layout`]), dispatches once on the dtypes, and runs one
//! monomorphic loop ([`drive`]) whose per-element work is a function from [`super::scalar`].
//! Each input becomes an [`operand`]: read in place when it is already a contiguous run of the
//! computation dtype, repeated when it is a broadcast scalar, and otherwise gathered (and
//! converted) block by block into a small scratch buffer. The blocks are plain slices, so the
//! loops vectorise; outputs above [`super::PARALLEL_THRESHOLD`] elements are split across
//! threads.
//!
//! [`elemwise_in_place`] writes the output into a donated input's buffer instead of a fresh
//! one (the memory plan's `Call::donor`). Every position holding the donor then reads it from
//! the output block itself, copying the block's values into its scratch buffer before the
//! loop overwrites them, so no slice of the donor coexists with the output being written.
//!
//! Which dtype a loop computes in follows the op's [`oxtensor_graph::ScalarKind`]: arithmetic,
//! float, bitwise, select and convert ops compute in the output dtype (inputs converted with
//! NumPy `astype` semantics); predicates compare in the promoted input dtype.

mod complex;
mod drive;
mod layout;
mod operand;
mod special;

use super::KernelCtx;
use super::scalar::{self, Arith, Float};
use crate::KernelError;
use drive::Args;
use oxtensor_data::{DType, Tensor, dispatch_dtype, result_type};
use oxtensor_graph::{Arity, ScalarOp};

/// Runs `$body` with `$T` bound to the Rust type of a numeric (integer or float) dtype, or
/// `$bool` for `bool`.
macro_rules! numeric {
    ($dt:expr, $T:ident => $body:expr, bool => $bool:expr) => {
        match $dt {
            DType::Bool => $bool,
            DType::I8 => {
                type $T = i8;
                $body
            }
            DType::I16 => {
                type $T = i16;
                $body
            }
            DType::I32 => {
                type $T = i32;
                $body
            }
            DType::I64 => {
                type $T = i64;
                $body
            }
            DType::U8 => {
                type $T = u8;
                $body
            }
            DType::U16 => {
                type $T = u16;
                $body
            }
            DType::U32 => {
                type $T = u32;
                $body
            }
            DType::U64 => {
                type $T = u64;
                $body
            }
            DType::F32 => {
                type $T = f32;
                $body
            }
            DType::F64 => {
                type $T = f64;
                $body
            }
            DType::C64 | DType::C128 => Err(complex_elsewhere()),
        }
    };
}

/// The error of the real dtypes' loops for a complex dtype, which [`complex::compute`] takes
/// before them.
fn complex_elsewhere() -> KernelError {
    KernelError::Value("complex values reached a loop for real dtypes".into())
}

/// Runs `$body` with `$T` bound to the Rust type of a float dtype, or fails for another.
macro_rules! float {
    ($op:expr, $dt:expr, $T:ident => $body:expr) => {
        match $dt {
            DType::F32 => {
                type $T = f32;
                $body
            }
            DType::F64 => {
                type $T = f64;
                $body
            }
            other => Err(unsupported($op, other)),
        }
    };
}

/// Runs `$body` with `$T` bound to the Rust type of an integer or bool dtype, or fails for a
/// float.
macro_rules! bitwise {
    ($op:expr, $dt:expr, $T:ident => $body:expr) => {
        match $dt {
            DType::Bool => {
                type $T = bool;
                $body
            }
            DType::I8 => {
                type $T = i8;
                $body
            }
            DType::I16 => {
                type $T = i16;
                $body
            }
            DType::I32 => {
                type $T = i32;
                $body
            }
            DType::I64 => {
                type $T = i64;
                $body
            }
            DType::U8 => {
                type $T = u8;
                $body
            }
            DType::U16 => {
                type $T = u16;
                $body
            }
            DType::U32 => {
                type $T = u32;
                $body
            }
            DType::U64 => {
                type $T = u64;
                $body
            }
            other @ (DType::F32 | DType::F64 | DType::C64 | DType::C128) => {
                Err(unsupported($op, other))
            }
        }
    };
}

/// The error for an output dtype the op is not defined for (the graph's type inference rejects
/// these; a kernel called directly must not compute something arbitrary).
fn unsupported(op: ScalarOp, dtype: DType) -> KernelError {
    KernelError::Value(format!("{op} is not defined with a {dtype} output"))
}

/// A float-kind op of one input: `$f` maps an input value (converted to the output float
/// type `T`) to the output.
macro_rules! float1 {
    ($op:expr, $args:expr, $out:expr, |$x:ident: $T:ident| $f:expr) => {
        float!($op, $out, $T => $args.map1::<$T, $T>(|$x: $T| $f))
    };
}

/// An `f64` function applied to float-kind inputs (see [`Float::via_f64`]).
macro_rules! via_f64 {
    ($op:expr, $args:expr, $out:expr, $f:expr) => {
        float1!($op, $args, $out, |x: T| x.via_f64($f))
    };
}

/// A predicate of two inputs, comparing in their promoted dtype.
macro_rules! compare {
    ($op:expr, $args:expr, $out:expr, |$a:ident, $b:ident| $f:expr) => {{
        expect_bool($op, $out)?;
        let promoted = result_type($args.dtype(0), $args.dtype(1));
        dispatch_dtype!(promoted, P => $args.map2::<P, P, bool>(|$a: P, $b: P| $f))
    }};
}

/// The error for a predicate whose output type is not `bool`.
fn expect_bool(op: ScalarOp, out: DType) -> Result<(), KernelError> {
    if out == DType::Bool {
        Ok(())
    } else {
        Err(unsupported(op, out))
    }
}

/// Fails with NumPy's error if an integer `power` has a negative exponent (input 1 converted
/// to the output dtype `T`) anywhere.
fn check_int_exponents<T: Arith>(args: &Args<'_>) -> Result<(), KernelError> {
    if T::DTYPE.is_signed_int() && args.any::<T>(1, <T as Arith>::below_zero)? {
        return Err(KernelError::Value(
            "Integers to negative integer powers are not allowed.".into(),
        ));
    }
    Ok(())
}

/// Checks the number of inputs against the op's arity.
fn check_arity(op: ScalarOp, n: usize) -> Result<(), KernelError> {
    let ok = match op.arity() {
        Arity::Fixed(k) => n == k,
        Arity::Variadic => n >= 1,
    };
    if ok {
        Ok(())
    } else {
        Err(KernelError::Value(format!(
            "{op} takes {} inputs, got {n}",
            match op.arity() {
                Arity::Fixed(k) => k.to_string(),
                Arity::Variadic => "at least 1".into(),
            }
        )))
    }
}

/// Applies `op` elementwise with broadcasting; the output dtype is `ctx.output_types[0].dtype`.
///
/// Inputs may have any strides (negative, zero) and offsets, and any dtypes; they must have
/// equal rank, and runtime extents must agree except where an input's static type declares
/// extent 1 (`ctx.input_types`), which stretches. A mismatch is a [`KernelError::Shape`]
/// naming the inputs, their shapes and the dimension. Integer `power` with a negative
/// exponent is a [`KernelError::Value`], as in NumPy. Nothing here panics on input data.
pub fn elemwise(
    op: ScalarOp,
    inputs: &[&Tensor],
    ctx: &KernelCtx<'_>,
) -> Result<Tensor, KernelError> {
    let out = output_dtype(op, inputs, ctx)?;
    run(op, &Args::new(inputs, ctx.input_types)?, out)
}

/// Like [`elemwise`], but writes the result into `inputs[donor]`'s buffer and returns that
/// tensor, when the buffer can hold it: owned storage, C-contiguous, of the output's shape and
/// dtype, and any other position holding it is the
/// same view. Otherwise (or for the few results not computed by a loop, such as an empty
/// output) the result is a fresh tensor, as from [`elemwise`]; the values are the same.
///
/// # Safety
/// For the duration of the call, nothing else may read or write the elements of
/// `inputs[donor]`: no slice or pointer into them may be in use, on this thread or another.
/// (The memory plan guarantees this for `Call::donor`.)
pub unsafe fn elemwise_in_place(
    op: ScalarOp,
    inputs: &[&Tensor],
    ctx: &KernelCtx<'_>,
    donor: usize,
) -> Result<Tensor, KernelError> {
    let out = output_dtype(op, inputs, ctx)?;
    // SAFETY: the `Args` lives only for this call, during which our caller guarantees that
    // nothing else reads or writes the donor's elements.
    let args = unsafe { Args::in_place(inputs, ctx.input_types, donor)? };
    run(op, &args, out)
}

/// Checks the arity and returns the output dtype.
fn output_dtype(
    op: ScalarOp,
    inputs: &[&Tensor],
    ctx: &KernelCtx<'_>,
) -> Result<DType, KernelError> {
    check_arity(op, inputs.len())?;
    Ok(ctx
        .output_types
        .first()
        .ok_or_else(|| KernelError::Value(format!("{op}: the node has no output type")))?
        .dtype)
}

/// Computes `op` on laid-out `args` into an output of dtype `out`.
fn run(op: ScalarOp, args: &Args<'_>, out: DType) -> Result<Tensor, KernelError> {
    if args.numel() == 0 {
        return Ok(Tensor::zeros(out, args.shape())?);
    }
    let result = compute(op, args, out)?;
    debug_assert_eq!(result.dtype(), out, "{op} ({:?})", op.kind());
    Ok(result)
}

/// The exhaustive match: one loop per op, after one dispatch on the dtype.
// The comparison closures are instantiated for every dtype, `bool` included.
#[allow(clippy::bool_comparison)]
fn compute(op: ScalarOp, args: &Args<'_>, out: DType) -> Result<Tensor, KernelError> {
    use ScalarOp::*;
    if let Some(result) = complex::compute(op, args, out) {
        return result;
    }
    let not_bool = || Err(unsupported(op, DType::Bool));
    match op {
        // Arithmetic: computed in the output dtype; bools are logical where NumPy allows them.
        Add => numeric!(out,
            T => args.fold::<T>(<T as Arith>::add),
            bool => args.fold::<bool>(|a, b| a | b)),
        Mul => numeric!(out,
            T => args.fold::<T>(<T as Arith>::mul),
            bool => args.fold::<bool>(|a, b| a & b)),
        Sub => numeric!(out,
            T => args.map2::<T, T, T>(<T as Arith>::sub),
            bool => not_bool()),
        IntDiv => numeric!(out,
            T => args.map2::<T, T, T>(<T as Arith>::floor_div),
            bool => not_bool()),
        Mod => numeric!(out,
            T => args.map2::<T, T, T>(<T as Arith>::modulo),
            bool => not_bool()),
        Pow => numeric!(out,
            T => {
                check_int_exponents::<T>(args)?;
                args.map2::<T, T, T>(<T as Arith>::power)
            },
            bool => not_bool()),
        Neg => numeric!(out,
            T => args.map1::<T, T>(<T as Arith>::neg),
            bool => not_bool()),
        Abs => numeric!(out,
            T => args.map1::<T, T>(<T as Arith>::absolute),
            bool => args.map1::<bool, bool>(|x| x)),
        Sign => numeric!(out,
            T => args.map1::<T, T>(<T as Arith>::sign),
            bool => not_bool()),
        Sqr => numeric!(out,
            T => args.map1::<T, T>(<T as Arith>::square),
            bool => not_bool()),
        Maximum => numeric!(out,
            T => args.map2::<T, T, T>(<T as Arith>::np_maximum),
            bool => args.map2::<bool, bool, bool>(|a, b| a | b)),
        Minimum => numeric!(out,
            T => args.map2::<T, T, T>(<T as Arith>::np_minimum),
            bool => args.map2::<bool, bool, bool>(|a, b| a & b)),
        Clip => numeric!(out,
            T => args.map3::<T, T, T, T>(<T as Arith>::clip),
            bool => args.map3::<bool, bool, bool, bool>(|x, lo, hi| (x | lo) & hi)),

        // Float: inputs converted to the output float type.
        TrueDiv => float!(op, out, T => args.map2::<T, T, T>(T::div)),
        Arctan2 => float!(op, out, T => args.map2::<T, T, T>(|a, b| a.via_f64_2(b, f64::atan2))),
        Sqrt => float1!(op, args, out, |x: T| x.sqrt()),
        Reciprocal => float1!(op, args, out, |x: T| x.recip()),
        Floor => float1!(op, args, out, |x: T| x.floor()),
        Ceil => float1!(op, args, out, |x: T| x.ceil()),
        Trunc => float1!(op, args, out, |x: T| x.trunc()),
        RoundHalfEven => float1!(op, args, out, |x: T| x.round_half_even()),
        Exp => via_f64!(op, args, out, f64::exp),
        Exp2 => via_f64!(op, args, out, f64::exp2),
        Expm1 => via_f64!(op, args, out, f64::exp_m1),
        Log => via_f64!(op, args, out, f64::ln),
        Log2 => via_f64!(op, args, out, f64::log2),
        Log10 => via_f64!(op, args, out, f64::log10),
        Log1p => via_f64!(op, args, out, f64::ln_1p),
        Sin => via_f64!(op, args, out, f64::sin),
        Cos => via_f64!(op, args, out, f64::cos),
        Tan => via_f64!(op, args, out, f64::tan),
        Arcsin => via_f64!(op, args, out, f64::asin),
        Arccos => via_f64!(op, args, out, f64::acos),
        Arctan => via_f64!(op, args, out, f64::atan),
        Sinh => via_f64!(op, args, out, f64::sinh),
        Cosh => via_f64!(op, args, out, f64::cosh),
        Tanh => via_f64!(op, args, out, f64::tanh),
        Arcsinh => via_f64!(op, args, out, scalar::arcsinh),
        Arccosh => via_f64!(op, args, out, scalar::arccosh),
        Arctanh => via_f64!(op, args, out, scalar::arctanh),
        Sigmoid => via_f64!(op, args, out, scalar::sigmoid),
        Softplus => via_f64!(op, args, out, scalar::softplus),
        Erf => via_f64!(op, args, out, scalar::erf),
        Erfc => via_f64!(op, args, out, scalar::erfc),
        Gammaln => via_f64!(op, args, out, scalar::gammaln),

        // Predicates: compared in the promoted input dtype.
        Lt => compare!(op, args, out, |a, b| a < b),
        Gt => compare!(op, args, out, |a, b| a > b),
        Le => compare!(op, args, out, |a, b| a <= b),
        Ge => compare!(op, args, out, |a, b| a >= b),
        Eq => compare!(op, args, out, |a, b| a == b),
        Neq => compare!(op, args, out, |a, b| a != b),
        IsNan | IsInf => {
            expect_bool(op, out)?;
            match args.dtype(0) {
                DType::F32 => args.map1::<f32, bool>(if op == IsNan {
                    Float::is_nan
                } else {
                    Float::is_inf
                }),
                DType::F64 => args.map1::<f64, bool>(if op == IsNan {
                    Float::is_nan
                } else {
                    Float::is_inf
                }),
                // Integers and bools are never NaN or infinite.
                _ => Ok(Tensor::zeros(DType::Bool, args.shape())?),
            }
        }

        // Bitwise (logical on bools), in the output dtype.
        And => bitwise!(op, out, T => args.map2::<T, T, T>(|a, b| a & b)),
        Or => bitwise!(op, out, T => args.map2::<T, T, T>(|a, b| a | b)),
        Xor => bitwise!(op, out, T => args.map2::<T, T, T>(|a, b| a ^ b)),
        Invert => bitwise!(op, out, T => args.map1::<T, T>(|a| !a)),

        // Select: the condition is true where non-zero (NaN included), whatever its dtype.
        Switch => {
            dispatch_dtype!(out, T => args.map3::<bool, T, T, T>(|c, a, b| if c { a } else { b }))
        }

        // Convert: NumPy `astype`, done by reading the input as the output dtype.
        Cast(_) => dispatch_dtype!(out, T => args.map1::<T, T>(|x| x)),

        // Complex parts and constructors: always computed by `complex::compute` above.
        Real | Imag | Angle | Conj | Complex | ComplexFromPolar => Err(unsupported(op, out)),

        // Special functions: oxtensor-special's f64 definitions, inputs converted to the output
        // float type first.
        Special(f) => special::compute(op, f, args, out),
    }
}

// Each family computes in the dtype described above, and rejects output dtypes it has no
// meaning for.
#[cfg(test)]
mod tests {
    use super::*;
    use oxtensor_graph::TensorType;

    fn run(op: ScalarOp, inputs: &[&Tensor], out: DType) -> Result<Tensor, KernelError> {
        let input_types: Vec<TensorType> = inputs
            .iter()
            .map(|t| TensorType::new(t.dtype(), &vec![None; t.ndim()]))
            .collect();
        let output_types = [TensorType::new(
            out,
            &vec![None; inputs.first().map_or(0, |t| t.ndim())],
        )];
        let ctx = KernelCtx {
            input_types: &input_types,
            output_types: &output_types,
        };
        elemwise(op, inputs, &ctx)
    }

    #[test]
    fn kinds_pick_their_computation_dtype() {
        let a = Tensor::from_slice(&[-7i64, 7, 3], &[3]).unwrap();
        let b = Tensor::from_slice(&[2u64, 2, u64::MAX], &[3]).unwrap();
        // int64 < uint64 compares in float64 (their promoted type).
        let lt = run(ScalarOp::Lt, &[&a, &b], DType::Bool).unwrap();
        assert_eq!(lt.to_vec::<bool>().unwrap(), vec![true, false, true]);
        let a8 = Tensor::from_slice(&[-7i8, 7, 3], &[3]).unwrap();
        let q = run(ScalarOp::IntDiv, &[&a8, &a8], DType::I8).unwrap();
        assert_eq!(q.to_vec::<i8>().unwrap(), vec![1, 1, 1]);
        let e = run(ScalarOp::Exp, &[&a8], DType::F32).unwrap();
        assert_eq!(e.dtype(), DType::F32);
        assert!(run(ScalarOp::Exp, &[&a8], DType::I8).is_err());
        assert!(run(ScalarOp::Sub, &[&lt, &lt], DType::Bool).is_err());
        assert!(run(ScalarOp::And, &[&e, &e], DType::F32).is_err());
        assert!(run(ScalarOp::Lt, &[&a, &a], DType::I64).is_err());
        assert!(run(ScalarOp::Add, &[], DType::I64).is_err());
        assert!(run(ScalarOp::Sub, &[&a], DType::I64).is_err());
    }
}
