//! The data layer of oxtensor: element types, NumPy's type promotion, and the dtype-erased
//! strided [`Tensor`] that every backend reads and writes.
//!
//! Nothing here knows about graphs. A `Tensor` is a view (shape, element strides, offset) on a
//! reference-counted [`Storage`]; views share storage, and storage is either owned (64-byte
//! aligned) or borrowed from an external owner (a NumPy array) that it keeps alive.

mod broadcast;
mod complex;
mod dtype;
#[macro_use]
mod element;
mod error;
mod print;
mod promote;
mod storage;
mod tensor;

pub use broadcast::{StridedIndex, broadcast_shapes, broadcast_strides, contiguous_strides};
pub use complex::{C64, C128, Complex};
pub use dtype::DType;
pub use element::Element;
pub use error::DataError;
pub use promote::{result_type, upgrade_to_float};
pub use storage::Storage;
pub use tensor::{Shape, Strides, Tensor};
