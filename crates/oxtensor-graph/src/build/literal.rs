//! The dtypes of number literals, PyTensor's rules in one place for Rust and Python: a literal
//! meeting tensors adopts their dtype (a weak scalar) unless it is an integer that does not fit
//! their integer type; a literal standing alone gets the smallest type PyTensor gives it.

use super::{Scalar, weak_constant};
use crate::Var;
use oxtensor_data::{DType, Tensor, result_type};

/// The smallest signed integer dtype holding `i` (PyTensor's type of an integer literal).
pub fn smallest_int(i: i64) -> DType {
    if i8::try_from(i).is_ok() {
        DType::I8
    } else if i16::try_from(i).is_ok() {
        DType::I16
    } else if i32::try_from(i).is_ok() {
        DType::I32
    } else {
        DType::I64
    }
}

/// True when the integer `i` is a value of the integer dtype `d` (always for non-integers).
fn int_fits(i: i64, d: DType) -> bool {
    match d {
        DType::I8 => i8::try_from(i).is_ok(),
        DType::I16 => i16::try_from(i).is_ok(),
        DType::I32 => i32::try_from(i).is_ok(),
        DType::U8 => u8::try_from(i).is_ok(),
        DType::U16 => u16::try_from(i).is_ok(),
        DType::U32 => u32::try_from(i).is_ok(),
        DType::U64 => i >= 0,
        _ => true,
    }
}

/// The constant for a number meeting tensors of dtype `like`: a weak scalar of that dtype
/// ([`weak_constant`]), except an integer that does not fit `like`'s integer type, which gets
/// the smallest signed integer type holding it — so `int8_tensor + 300` promotes to `int16`,
/// as in PyTensor, instead of wrapping around.
#[track_caller]
pub fn scalar_like(s: Scalar, like: DType) -> Var {
    match s {
        Scalar::Int(i) if like.is_int() && !int_fits(i, like) => {
            Var::constant(Tensor::scalar(i).cast(smallest_int(i)))
        }
        _ => weak_constant(s, like),
    }
}

/// A number standing alone (no tensor to adapt to), typed as PyTensor types literals: `bool`;
/// the smallest signed integer type holding an int; a float is `float32` when `float_x` is
/// `float32` or the value is exact in `float32`, else `float64`.
#[track_caller]
pub fn literal(s: Scalar, float_x: DType) -> Var {
    let t = match s {
        Scalar::Bool(b) => Tensor::scalar(b),
        Scalar::Int(i) => Tensor::scalar(i).cast(smallest_int(i)),
        Scalar::Float(f) => {
            if float_x == DType::F32 || f64::from(f as f32) == f {
                Tensor::scalar(f as f32)
            } else {
                Tensor::scalar(f)
            }
        }
    };
    Var::constant(t)
}

/// One operand of an elementwise op as a front end sees it: a variable, or a number literal
/// whose dtype depends on the variables it meets.
#[derive(Clone, Debug)]
pub enum Operand {
    /// A symbolic tensor.
    Var(Var),
    /// A number literal.
    Scalar(Scalar),
}

/// Turns operands into variables: numbers adopt ([`scalar_like`]) the promoted dtype of the
/// variables among the operands from position `skip` on (`switch` skips its condition); with no
/// such variable they are typed as literals ([`literal`], with `float_x` for floats).
#[track_caller]
pub fn resolve(ops: Vec<Operand>, skip: usize, float_x: DType) -> Vec<Var> {
    let like = ops
        .iter()
        .skip(skip)
        .filter_map(|o| match o {
            Operand::Var(v) => Some(v.dtype()),
            Operand::Scalar(_) => None,
        })
        .reduce(result_type);
    ops.into_iter()
        .map(|o| match (o, like) {
            (Operand::Var(v), _) => v,
            (Operand::Scalar(s), Some(like)) => scalar_like(s, like),
            (Operand::Scalar(s), None) => literal(s, float_x),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TensorType;
    use crate::build::with_scalar;

    #[test]
    fn literals_follow_pytensor() {
        let x8 = Var::input(Some("x"), TensorType::new(DType::I8, &[None]));
        let add = |s: Scalar| {
            with_scalar(crate::ScalarOp::Add, &x8, s, false)
                .expect("add")
                .dtype()
        };
        assert_eq!(add(Scalar::Int(3)), DType::I8);
        assert_eq!(add(Scalar::Int(300)), DType::I16);
        assert_eq!(add(Scalar::Int(100_000)), DType::I32);
        assert_eq!(add(Scalar::Float(0.5)), DType::F64);
        let u8v = Var::input(Some("u"), TensorType::new(DType::U8, &[None]));
        let neg = with_scalar(crate::ScalarOp::Add, &u8v, -1, false).expect("add");
        assert_eq!(neg.dtype(), DType::I16, "uint8 + int8 literal");
        assert_eq!(literal(Scalar::Float(0.5), DType::F64).dtype(), DType::F32);
        assert_eq!(literal(Scalar::Float(0.1), DType::F64).dtype(), DType::F64);
        assert_eq!(literal(Scalar::Float(0.1), DType::F32).dtype(), DType::F32);
        assert_eq!(literal(Scalar::Int(-129), DType::F64).dtype(), DType::I16);
        let f32v = Var::input(Some("f"), TensorType::new(DType::F32, &[None]));
        let vars = resolve(
            vec![Operand::Scalar(Scalar::Float(0.1)), Operand::Var(f32v)],
            0,
            DType::F64,
        );
        assert_eq!(
            vars[0].dtype(),
            DType::F32,
            "a float literal adopts float32"
        );
    }
}
