//! Types, dtypes and tensor values in the format.
//!
//! A type is `{"dtype": "float64", "shape": [null, 3]}` (`null`: extent known only at run
//! time). A value is `{"dtype", "shape", "data"}` with `data` the elements in C order as
//! little-endian bytes, base64-encoded (bools one byte, 0 or 1).

use crate::SerialError;
use crate::json::{Obj, obj};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use oxtensor_data::{C64, C128, DType, Tensor};
use oxtensor_graph::TensorType;
use serde_json::{Value, json};

/// A dtype's name in the format (NumPy's).
pub fn encode_dtype(d: DType) -> Value {
    Value::String(d.name().to_string())
}

/// Reads a dtype name.
pub fn decode_dtype(value: &Value, at: &str) -> Result<DType, SerialError> {
    let name = value
        .as_str()
        .ok_or_else(|| SerialError::invalid(at, "expected a dtype name"))?;
    DType::from_name(name)
        .filter(|d| d.name() == name)
        .ok_or_else(|| SerialError::invalid(at, format!("unknown dtype {name:?}")))
}

/// A type in the format.
pub fn encode_type(t: &TensorType) -> Value {
    json!({"dtype": t.dtype.name(), "shape": t.shape.to_vec()})
}

/// Reads a type.
pub fn decode_type(value: &Value, at: &str) -> Result<TensorType, SerialError> {
    let o = obj(value, at)?;
    let dtype = decode_dtype(o.get("dtype")?, &o.path("dtype"))?;
    let shape = o.opt_usizes("shape")?;
    Ok(TensorType::new(dtype, &shape))
}

/// A value in the format (always contiguous, little-endian).
pub fn encode_tensor(t: &Tensor) -> Value {
    let mut bytes = t.to_bytes();
    if cfg!(target_endian = "big") {
        // Complex values are two floats, each stored little-endian.
        for chunk in bytes.chunks_mut(t.dtype().real_part().size()) {
            chunk.reverse();
        }
    }
    json!({"dtype": t.dtype().name(), "shape": t.shape(), "data": STANDARD.encode(&bytes)})
}

macro_rules! from_le {
    ($ty:ty, $bytes:expr, $shape:expr) => {{
        let values: Vec<$ty> = $bytes
            .chunks_exact(std::mem::size_of::<$ty>())
            .map(|c| {
                let mut a = [0u8; std::mem::size_of::<$ty>()];
                a.copy_from_slice(c);
                <$ty>::from_le_bytes(a)
            })
            .collect();
        Tensor::from_slice(&values, $shape)
    }};
}

/// A complex tensor from little-endian bytes: pairs of parts, real first.
macro_rules! complex_from_le {
    ($part:ty, $c:ty, $bytes:expr, $shape:expr) => {{
        let size = std::mem::size_of::<$part>();
        let part = |c: &[u8]| {
            let mut a = [0u8; std::mem::size_of::<$part>()];
            a.copy_from_slice(c);
            <$part>::from_le_bytes(a)
        };
        let values: Vec<$c> = $bytes
            .chunks_exact(2 * size)
            .map(|c| <$c>::new(part(&c[..size]), part(&c[size..])))
            .collect();
        Tensor::from_slice(&values, $shape)
    }};
}

/// Reads a value, checking that `data` holds exactly the bytes its dtype and shape need.
pub fn decode_tensor(value: &Value, at: &str) -> Result<Tensor, SerialError> {
    let o: Obj<'_> = obj(value, at)?;
    let dtype = decode_dtype(o.get("dtype")?, &o.path("dtype"))?;
    let shape = o.usizes("shape")?;
    let bytes = STANDARD
        .decode(o.str("data")?)
        .map_err(|e| SerialError::invalid(&o.path("data"), format!("corrupt base64: {e}")))?;
    let expected = shape
        .iter()
        .try_fold(dtype.size(), |acc, &d| acc.checked_mul(d))
        .ok_or_else(|| SerialError::invalid(&o.path("shape"), "the shape is too large"))?;
    if bytes.len() != expected {
        return Err(SerialError::invalid(
            &o.path("data"),
            format!(
                "{} bytes for a {dtype} tensor of shape {shape:?}, which needs {expected}",
                bytes.len()
            ),
        ));
    }
    let made = match dtype {
        DType::Bool => {
            if bytes.iter().any(|&b| b > 1) {
                return Err(SerialError::invalid(
                    &o.path("data"),
                    "a bool element is neither 0 nor 1",
                ));
            }
            let values: Vec<bool> = bytes.iter().map(|&b| b == 1).collect();
            Tensor::from_slice(&values, &shape)
        }
        DType::I8 => from_le!(i8, bytes, &shape),
        DType::I16 => from_le!(i16, bytes, &shape),
        DType::I32 => from_le!(i32, bytes, &shape),
        DType::I64 => from_le!(i64, bytes, &shape),
        DType::U8 => from_le!(u8, bytes, &shape),
        DType::U16 => from_le!(u16, bytes, &shape),
        DType::U32 => from_le!(u32, bytes, &shape),
        DType::U64 => from_le!(u64, bytes, &shape),
        DType::F32 => from_le!(f32, bytes, &shape),
        DType::F64 => from_le!(f64, bytes, &shape),
        DType::C64 => complex_from_le!(f32, C64, bytes, &shape),
        DType::C128 => complex_from_le!(f64, C128, bytes, &shape),
    };
    made.map_err(|e| SerialError::invalid(at, e.to_string()))
}
