use std::fmt;

/// The element type of a tensor.
///
/// The names follow NumPy (`float64`, `int32`, `complex128`, …). `Bool` is stored as one byte
/// holding 0 or 1; a complex element is its real part followed by its imaginary part, as in
/// NumPy and C99. Room is left for `float16` and `bfloat16`: they will be new variants here,
/// and the exhaustive matches over `DType` list every place to extend.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    /// One byte, 0 or 1.
    Bool,
    /// Signed 8-bit integer.
    I8,
    /// Signed 16-bit integer.
    I16,
    /// Signed 32-bit integer.
    I32,
    /// Signed 64-bit integer.
    I64,
    /// Unsigned 8-bit integer.
    U8,
    /// Unsigned 16-bit integer.
    U16,
    /// Unsigned 32-bit integer.
    U32,
    /// Unsigned 64-bit integer.
    U64,
    /// IEEE single precision.
    F32,
    /// IEEE double precision.
    F64,
    /// A complex number of two `float32` parts (NumPy's `complex64`).
    C64,
    /// A complex number of two `float64` parts (NumPy's `complex128`).
    C128,
}

impl DType {
    /// Every real (non-complex) dtype, in promotion-table order.
    pub const REAL: [DType; 11] = [
        DType::Bool,
        DType::I8,
        DType::I16,
        DType::I32,
        DType::I64,
        DType::U8,
        DType::U16,
        DType::U32,
        DType::U64,
        DType::F32,
        DType::F64,
    ];

    /// The complex dtypes.
    pub const COMPLEX: [DType; 2] = [DType::C64, DType::C128];

    /// Size of one element in bytes.
    pub const fn size(self) -> usize {
        match self {
            DType::Bool | DType::I8 | DType::U8 => 1,
            DType::I16 | DType::U16 => 2,
            DType::I32 | DType::U32 | DType::F32 => 4,
            DType::I64 | DType::U64 | DType::F64 | DType::C64 => 8,
            DType::C128 => 16,
        }
    }

    /// True for `float32` and `float64`.
    pub const fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::F64)
    }

    /// True for `complex64` and `complex128`.
    pub const fn is_complex(self) -> bool {
        matches!(self, DType::C64 | DType::C128)
    }

    /// True for the floats and the complex types: the dtypes that float-valued functions
    /// (`exp`, true division, ...) keep.
    pub const fn is_inexact(self) -> bool {
        self.is_float() || self.is_complex()
    }

    /// The dtype of a complex type's real and imaginary parts (`complex64` → `float32`); any
    /// other dtype is returned unchanged. This is the result type of `abs`, `real`, `imag` and
    /// `angle`.
    pub const fn real_part(self) -> DType {
        match self {
            DType::C64 => DType::F32,
            DType::C128 => DType::F64,
            d => d,
        }
    }

    /// The complex type whose parts have this float type (`float32` → `complex64`; `float64`
    /// → `complex128`); complex types are returned unchanged and any other dtype gives
    /// `complex128`, NumPy's default complex type.
    pub const fn complex_of(self) -> DType {
        match self {
            DType::F32 | DType::C64 => DType::C64,
            _ => DType::C128,
        }
    }

    /// True for the signed and unsigned integer types (not `bool`).
    pub const fn is_int(self) -> bool {
        self.is_signed_int() || self.is_unsigned_int()
    }

    /// True for `int8` … `int64`.
    pub const fn is_signed_int(self) -> bool {
        matches!(self, DType::I8 | DType::I16 | DType::I32 | DType::I64)
    }

    /// True for `uint8` … `uint64`.
    pub const fn is_unsigned_int(self) -> bool {
        matches!(self, DType::U8 | DType::U16 | DType::U32 | DType::U64)
    }

    /// True for `bool`.
    pub const fn is_bool(self) -> bool {
        matches!(self, DType::Bool)
    }

    /// The NumPy name of the dtype (`"float64"`).
    pub const fn name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::I8 => "int8",
            DType::I16 => "int16",
            DType::I32 => "int32",
            DType::I64 => "int64",
            DType::U8 => "uint8",
            DType::U16 => "uint16",
            DType::U32 => "uint32",
            DType::U64 => "uint64",
            DType::F32 => "float32",
            DType::F64 => "float64",
            DType::C64 => "complex64",
            DType::C128 => "complex128",
        }
    }

    /// Parses a NumPy dtype name; also accepts PyTensor's short forms (`"floatX"` is resolved by
    /// the caller, not here).
    pub fn from_name(name: &str) -> Option<DType> {
        Some(match name {
            "bool" => DType::Bool,
            "int8" => DType::I8,
            "int16" => DType::I16,
            "int32" => DType::I32,
            "int64" => DType::I64,
            "uint8" => DType::U8,
            "uint16" => DType::U16,
            "uint32" => DType::U32,
            "uint64" => DType::U64,
            "float32" => DType::F32,
            "float64" => DType::F64,
            "complex64" => DType::C64,
            "complex128" => DType::C128,
            _ => return None,
        })
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
