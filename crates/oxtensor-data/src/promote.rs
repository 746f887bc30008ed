use crate::DType;

/// NumPy's `result_type` for two array dtypes: the smallest dtype that holds every value of both.
///
/// Mixed signed/unsigned integers widen (`int8 + uint8 → int16`, `int64 + uint64 → float64`);
/// integers with `float32` stay `float32` up to 16-bit integers and become `float64` above.
pub fn result_type(a: DType, b: DType) -> DType {
    use DType::*;
    if a == b {
        return a;
    }
    if a.is_bool() {
        return b;
    }
    if b.is_bool() {
        return a;
    }
    if a.is_complex() || b.is_complex() {
        // A complex result whose parts have the float type the real parts promote to.
        return result_type(a.real_part(), b.real_part()).complex_of();
    }
    let bits = |d: DType| d.size() * 8;
    match (a.is_float(), b.is_float()) {
        (true, true) => {
            if bits(a) >= bits(b) {
                a
            } else {
                b
            }
        }
        (true, false) | (false, true) => {
            let (f, i) = if a.is_float() { (a, b) } else { (b, a) };
            // float32 represents every 8- and 16-bit integer exactly; wider ones need float64.
            if f == F64 || bits(i) >= 32 { F64 } else { F32 }
        }
        (false, false) => {
            if a.is_signed_int() == b.is_signed_int() {
                if bits(a) >= bits(b) { a } else { b }
            } else {
                let (s, u) = if a.is_signed_int() { (a, b) } else { (b, a) };
                if bits(s) > bits(u) {
                    s
                } else {
                    match bits(u) {
                        8 => I16,
                        16 => I32,
                        32 => I64,
                        _ => F64,
                    }
                }
            }
        }
    }
}

/// The float type that a float-valued function (`exp`, `sqrt`, true division, …) returns for an
/// input of this dtype, following PyTensor: floats and complex types keep their type, `bool`
/// and 8/16-bit integers become `float32`, wider integers `float64`.
pub fn upgrade_to_float(d: DType) -> DType {
    use DType::*;
    match d {
        F32 | F64 | C64 | C128 => d,
        Bool | I8 | U8 | I16 | U16 => F32,
        I32 | U32 | I64 | U64 => F64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `np.result_type(a, b)` for every pair, as printed by NumPy 2.x, in `DType::REAL` order.
    const NUMPY_TABLE: [[&str; 11]; 11] = [
        [
            "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
            "float32", "float64",
        ],
        [
            "int8", "int8", "int16", "int32", "int64", "int16", "int32", "int64", "float64",
            "float32", "float64",
        ],
        [
            "int16", "int16", "int16", "int32", "int64", "int16", "int32", "int64", "float64",
            "float32", "float64",
        ],
        [
            "int32", "int32", "int32", "int32", "int64", "int32", "int32", "int64", "float64",
            "float64", "float64",
        ],
        [
            "int64", "int64", "int64", "int64", "int64", "int64", "int64", "int64", "float64",
            "float64", "float64",
        ],
        [
            "uint8", "int16", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
            "float32", "float64",
        ],
        [
            "uint16", "int32", "int32", "int32", "int64", "uint16", "uint16", "uint32", "uint64",
            "float32", "float64",
        ],
        [
            "uint32", "int64", "int64", "int64", "int64", "uint32", "uint32", "uint32", "uint64",
            "float64", "float64",
        ],
        [
            "uint64", "float64", "float64", "float64", "float64", "uint64", "uint64", "uint64",
            "uint64", "float64", "float64",
        ],
        [
            "float32", "float32", "float32", "float64", "float64", "float32", "float32", "float64",
            "float64", "float32", "float64",
        ],
        [
            "float64", "float64", "float64", "float64", "float64", "float64", "float64", "float64",
            "float64", "float64", "float64",
        ],
    ];

    #[test]
    fn matches_numpy_result_type_table() {
        for (i, a) in DType::REAL.iter().enumerate() {
            for (j, b) in DType::REAL.iter().enumerate() {
                assert_eq!(
                    result_type(*a, *b).name(),
                    NUMPY_TABLE[i][j],
                    "result_type({a}, {b})"
                );
            }
        }
    }

    /// `np.result_type(c, d)` for `c` complex64 and complex128 and every `d` in `DType::REAL`
    /// then `DType::COMPLEX` order, as printed by NumPy 2.x.
    const NUMPY_COMPLEX: [[&str; 13]; 2] = [
        [
            "complex64",
            "complex64",
            "complex64",
            "complex128",
            "complex128",
            "complex64",
            "complex64",
            "complex128",
            "complex128",
            "complex64",
            "complex128",
            "complex64",
            "complex128",
        ],
        ["complex128"; 13],
    ];

    #[test]
    fn complex_promotion_matches_numpy() {
        let all: Vec<DType> = DType::REAL.into_iter().chain(DType::COMPLEX).collect();
        for (i, c) in DType::COMPLEX.iter().enumerate() {
            for (j, d) in all.iter().enumerate() {
                assert_eq!(result_type(*c, *d).name(), NUMPY_COMPLEX[i][j], "{c}, {d}");
                assert_eq!(result_type(*d, *c).name(), NUMPY_COMPLEX[i][j], "{d}, {c}");
            }
        }
    }

    #[test]
    fn promotion_is_commutative_and_idempotent() {
        for a in DType::REAL.into_iter().chain(DType::COMPLEX) {
            assert_eq!(result_type(a, a), a);
            for b in DType::REAL.into_iter().chain(DType::COMPLEX) {
                assert_eq!(result_type(a, b), result_type(b, a));
            }
        }
    }
}
