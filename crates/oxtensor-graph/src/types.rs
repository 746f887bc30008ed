use oxtensor_data::DType;
use smallvec::SmallVec;
use std::fmt;

/// A static shape: one entry per dimension, `Some(n)` when the extent is known when the graph
/// is built, `None` when it is only known at run time.
pub type StaticShape = SmallVec<[Option<usize>; 4]>;

/// The type of a graph variable: element type, rank, and the statically known extents.
///
/// Only a dimension of static extent 1 broadcasts (PyTensor's rule), so the type alone tells
/// whether an elementwise op may stretch it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TensorType {
    /// Element type.
    pub dtype: DType,
    /// Static extents.
    pub shape: StaticShape,
}

impl TensorType {
    /// A type with the given dtype and static extents.
    pub fn new(dtype: DType, shape: &[Option<usize>]) -> TensorType {
        TensorType {
            dtype,
            shape: shape.into(),
        }
    }

    /// A type of rank `ndim` with no static extents.
    pub fn of_rank(dtype: DType, ndim: usize) -> TensorType {
        TensorType {
            dtype,
            shape: smallvec::smallvec![None; ndim],
        }
    }

    /// A zero-dimensional type.
    pub fn scalar(dtype: DType) -> TensorType {
        TensorType {
            dtype,
            shape: SmallVec::new(),
        }
    }

    /// The rank.
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    /// Which dimensions may broadcast (static extent 1).
    pub fn broadcastable(&self) -> SmallVec<[bool; 4]> {
        self.shape.iter().map(|d| *d == Some(1)).collect()
    }

    /// True when a runtime value of this `shape` and dtype fits the type.
    pub fn accepts(&self, dtype: DType, shape: &[usize]) -> bool {
        dtype == self.dtype
            && shape.len() == self.ndim()
            && self
                .shape
                .iter()
                .zip(shape)
                .all(|(s, &d)| s.is_none_or(|s| s == d))
    }

    /// The same type with another dtype.
    pub fn with_dtype(&self, dtype: DType) -> TensorType {
        TensorType {
            dtype,
            shape: self.shape.clone(),
        }
    }
}

/// PyTensor-style rendering: `Vector(float64, shape=(?,))`.
impl fmt::Display for TensorType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.ndim() {
            0 => "Scalar",
            1 => "Vector",
            2 => "Matrix",
            _ => "Tensor",
        };
        let dims: Vec<String> = self
            .shape
            .iter()
            .map(|d| d.map_or("?".into(), |v| v.to_string()))
            .collect();
        let comma = if dims.len() == 1 { "," } else { "" };
        write!(
            f,
            "{kind}({}, shape=({}{comma}))",
            self.dtype,
            dims.join(", ")
        )
    }
}
