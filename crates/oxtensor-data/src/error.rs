use crate::DType;

/// Errors from building or viewing tensors.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DataError {
    /// The number of elements does not match the shape.
    #[error("expected {expected} elements for shape {shape:?}, got {got}")]
    Length {
        /// Elements the shape needs.
        expected: usize,
        /// Elements given.
        got: usize,
        /// The requested shape.
        shape: Vec<usize>,
    },
    /// A typed access used the wrong element type.
    #[error("expected a tensor of dtype {expected}, got {got}")]
    DType {
        /// The dtype asked for.
        expected: DType,
        /// The tensor's dtype.
        got: DType,
    },
    /// Shapes cannot be broadcast together.
    #[error("shapes {a:?} and {b:?} cannot be broadcast together")]
    Broadcast {
        /// First shape.
        a: Vec<usize>,
        /// Second shape.
        b: Vec<usize>,
    },
    /// A view would reach outside its storage.
    #[error("view out of bounds: {0}")]
    OutOfBounds(String),
    /// A reshape to an incompatible size.
    #[error("cannot reshape array of size {size} into shape {shape:?}")]
    Reshape {
        /// Elements in the array.
        size: usize,
        /// The requested shape.
        shape: Vec<i64>,
    },
    /// The tensor cannot be written (it is shared or borrowed read-only).
    #[error("tensor storage is not writable")]
    NotWritable,
    /// The total size overflows the address space.
    #[error("tensor of shape {0:?} is too large")]
    TooLarge(Vec<usize>),
}
