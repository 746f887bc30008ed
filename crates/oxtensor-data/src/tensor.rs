use crate::broadcast::{StridedIndex, broadcast_strides, contiguous_strides};
use crate::{DType, DataError, Element, Storage};
use smallvec::SmallVec;
use std::sync::Arc;

/// A tensor's shape: one extent per dimension.
pub type Shape = SmallVec<[usize; 4]>;
/// A tensor's strides, in elements (not bytes); may be zero (broadcast) or negative (reversed).
pub type Strides = SmallVec<[isize; 4]>;

/// A dtype-erased, strided n-dimensional array.
///
/// Cloning is cheap and shares the storage: a `Tensor` is a view. Kernels write only into
/// storage they hold uniquely (see [`Tensor::data_mut`]), so values seen through other views
/// never change under them.
pub struct Tensor {
    dtype: DType,
    shape: Shape,
    strides: Strides,
    offset: usize,
    storage: Arc<Storage>,
}

impl Clone for Tensor {
    /// Shares the storage and copies the extents and strides as plain slices (`SmallVec`'s own
    /// `clone` goes element by element, which showed in the per-call path of small functions).
    fn clone(&self) -> Tensor {
        Tensor {
            dtype: self.dtype,
            shape: Shape::from_slice(&self.shape),
            strides: Strides::from_slice(&self.strides),
            offset: self.offset,
            storage: Arc::clone(&self.storage),
        }
    }
}

fn checked_numel(shape: &[usize]) -> Result<usize, DataError> {
    shape
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .filter(|n| n.checked_mul(8).is_some_and(|b| b <= isize::MAX as usize))
        .ok_or_else(|| DataError::TooLarge(shape.to_vec()))
}

impl Tensor {
    /// A zero-filled contiguous tensor.
    pub fn zeros(dtype: DType, shape: &[usize]) -> Result<Tensor, DataError> {
        let n = checked_numel(shape)?;
        Ok(Tensor {
            dtype,
            shape: shape.into(),
            strides: contiguous_strides(shape),
            offset: 0,
            storage: Arc::new(
                Storage::try_zeroed(n * dtype.size())
                    .ok_or_else(|| DataError::TooLarge(shape.to_vec()))?,
            ),
        })
    }

    /// A contiguous tensor whose elements are not initialised, for a kernel to overwrite.
    ///
    /// # Safety
    /// Every element must be written (through [`Tensor::data_ptr`], the storage being this
    /// tensor's alone) before anything reads it or the tensor is handed on; see
    /// [`Storage::try_uninit`].
    pub unsafe fn uninit(dtype: DType, shape: &[usize]) -> Result<Tensor, DataError> {
        let n = checked_numel(shape)?;
        // SAFETY: forwarded to the caller.
        let storage = unsafe { Storage::try_uninit(n * dtype.size()) };
        Ok(Tensor {
            dtype,
            shape: shape.into(),
            strides: contiguous_strides(shape),
            offset: 0,
            storage: Arc::new(storage.ok_or_else(|| DataError::TooLarge(shape.to_vec()))?),
        })
    }

    /// A contiguous tensor whose elements are written by `fill` (which receives them zeroed).
    pub fn build<T: Element>(
        shape: &[usize],
        fill: impl FnOnce(&mut [T]),
    ) -> Result<Tensor, DataError> {
        let mut t = Tensor::zeros(T::DTYPE, shape)?;
        let data = t.data_mut::<T>().ok_or(DataError::NotWritable)?;
        fill(data);
        Ok(t)
    }

    /// A contiguous tensor holding `data` in C order.
    pub fn from_slice<T: Element>(data: &[T], shape: &[usize]) -> Result<Tensor, DataError> {
        let n = checked_numel(shape)?;
        if n != data.len() {
            return Err(DataError::Length {
                expected: n,
                got: data.len(),
                shape: shape.to_vec(),
            });
        }
        Tensor::build::<T>(shape, |out| out.copy_from_slice(data))
    }

    /// A zero-dimensional tensor holding `value`.
    pub fn scalar<T: Element>(value: T) -> Tensor {
        let mut t = Tensor {
            dtype: T::DTYPE,
            shape: Shape::new(),
            strides: Strides::new(),
            offset: 0,
            storage: Arc::new(Storage::zeroed(T::DTYPE.size())),
        };
        if let Some(d) = t.data_mut::<T>() {
            d[0] = value;
        }
        t
    }

    /// A contiguous tensor of `shape` filled with `value`.
    pub fn full<T: Element>(value: T, shape: &[usize]) -> Result<Tensor, DataError> {
        Tensor::build::<T>(shape, |out| out.fill(value))
    }

    /// Wraps external memory as a tensor (a NumPy array's buffer).
    ///
    /// # Safety
    /// `storage` must satisfy [`Storage::external`]'s contract, and every element addressed by
    /// `shape`, `strides` and `offset` must lie inside it; for `Bool`, every byte must be 0 or 1.
    pub unsafe fn from_storage(
        dtype: DType,
        shape: &[usize],
        strides: &[isize],
        offset: usize,
        storage: Arc<Storage>,
    ) -> Tensor {
        Tensor {
            dtype,
            shape: shape.into(),
            strides: strides.into(),
            offset,
            storage,
        }
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// The extents.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The element strides.
    pub fn strides(&self) -> &[isize] {
        &self.strides
    }

    /// Offset of the first element in the storage, in elements.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// Number of dimensions.
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    /// Number of elements.
    pub fn numel(&self) -> usize {
        self.shape.iter().product()
    }

    /// The shared storage.
    pub fn storage(&self) -> &Arc<Storage> {
        &self.storage
    }

    /// True when the elements are laid out densely in C order starting at `offset`.
    pub fn is_contiguous(&self) -> bool {
        if self.numel() <= 1 {
            return true;
        }
        let mut expected = 1isize;
        for (&d, &s) in self.shape.iter().zip(&self.strides).rev() {
            if d != 1 {
                if s != expected {
                    return false;
                }
                expected *= d as isize;
            }
        }
        true
    }

    fn check_dtype<T: Element>(&self) -> Result<(), DataError> {
        if T::DTYPE == self.dtype {
            Ok(())
        } else {
            Err(DataError::DType {
                expected: T::DTYPE,
                got: self.dtype,
            })
        }
    }

    /// Pointer to the first element.
    pub fn data_ptr(&self) -> *const u8 {
        // SAFETY: `offset` addresses an element inside the storage (an invariant of every
        // constructor and view), so the offset pointer stays within the allocation.
        unsafe { self.storage.as_ptr().add(self.offset * self.dtype.size()) }
    }

    /// The elements as a slice, when contiguous and of type `T`.
    pub fn as_slice<T: Element>(&self) -> Option<&[T]> {
        if self.check_dtype::<T>().is_err() || !self.is_contiguous() {
            return None;
        }
        let n = self.numel();
        if n == 0 {
            return Some(&[]);
        }
        // SAFETY: dtype matches T, the view is contiguous so its n elements lie in the storage
        // from `offset`, the storage is 64-byte aligned (or a NumPy buffer aligned for its
        // dtype), and no one writes to shared storage.
        Some(unsafe { std::slice::from_raw_parts(self.data_ptr() as *const T, n) })
    }

    /// The elements as a mutable slice, when this tensor owns its storage uniquely, is
    /// contiguous, and is of type `T`. Used by kernels to fill fresh outputs and to work in place.
    pub fn data_mut<T: Element>(&mut self) -> Option<&mut [T]> {
        if self.check_dtype::<T>().is_err() || !self.is_contiguous() {
            return None;
        }
        let n = self.numel();
        let offset = self.offset;
        let storage = Arc::get_mut(&mut self.storage)?;
        let ptr = storage.as_mut_ptr()?;
        if n == 0 {
            return Some(&mut []);
        }
        // SAFETY: unique access to the storage (get_mut), dtype checked, contiguous range
        // [offset, offset + n) lies inside the storage.
        Some(unsafe { std::slice::from_raw_parts_mut((ptr as *mut T).add(offset), n) })
    }

    /// Reads the element at a multi-index. Panics if the index is out of bounds or the dtype
    /// is not `T` (a programming error, not a user error).
    pub fn get<T: Element>(&self, index: &[usize]) -> T {
        self.check_dtype::<T>().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(index.len(), self.ndim(), "index rank");
        let mut off = self.offset as isize;
        for ((&i, &d), &s) in index.iter().zip(&self.shape).zip(&self.strides) {
            assert!(i < d, "index {i} out of bounds for extent {d}");
            off += i as isize * s;
        }
        // SAFETY: every index component is within its extent, so `off` is inside the storage.
        unsafe { *(self.storage.as_ptr() as *const T).offset(off) }
    }

    /// Element offsets (into the storage, in elements) in C order.
    pub fn offsets(&self) -> StridedIndex {
        StridedIndex::new(&self.shape, &self.strides, self.offset)
    }

    /// Copies the elements out in C order. The dtype must be `T`.
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>, DataError> {
        self.check_dtype::<T>()?;
        if let Some(s) = self.as_slice::<T>() {
            return Ok(s.to_vec());
        }
        let base = self.storage.as_ptr() as *const T;
        // SAFETY: every offset produced by the view's own shape/strides lies in the storage.
        Ok(self.offsets().map(|o| unsafe { *base.add(o) }).collect())
    }

    /// Copies the elements out in C order, converted to `T` with NumPy cast semantics.
    pub fn to_vec_as<T: Element>(&self) -> Vec<T> {
        dispatch_dtype!(self.dtype, S => {
            let base = self.storage.as_ptr() as *const S;
            // SAFETY: as in `to_vec`, with the tensor's own element type S.
            self.offsets().map(|o| T::cast_from(unsafe { *base.add(o) })).collect()
        })
    }

    /// The single element of a one-element tensor, converted to `T`.
    pub fn item<T: Element>(&self) -> Option<T> {
        (self.numel() == 1).then(|| self.to_vec_as::<T>()[0])
    }

    /// A C-contiguous copy (or `self` when already contiguous and starting at offset 0).
    pub fn to_contiguous(&self) -> Tensor {
        if self.is_contiguous() {
            return self.clone();
        }
        dispatch_dtype!(self.dtype, T => {
            let base = self.storage.as_ptr() as *const T;
            let mut out = Tensor::zeros(T::DTYPE, &self.shape).expect("same size as an existing tensor");
            if let Some(dst) = out.data_mut::<T>() {
                for (d, o) in dst.iter_mut().zip(self.offsets()) {
                    // SAFETY: offsets of this view lie inside its storage.
                    *d = unsafe { *base.add(o) };
                }
            }
            out
        })
    }

    /// A converted copy (NumPy `astype`).
    pub fn cast(&self, dtype: DType) -> Tensor {
        if dtype == self.dtype {
            return self.clone();
        }
        dispatch_dtype!(dtype, T => {
            let values = self.to_vec_as::<T>();
            Tensor::from_slice(&values, &self.shape).expect("same size as an existing tensor")
        })
    }

    /// A view with other shape, strides and offset on the same storage, checked to stay in bounds.
    pub fn view(
        &self,
        shape: &[usize],
        strides: &[isize],
        offset: usize,
    ) -> Result<Tensor, DataError> {
        if shape.len() != strides.len() {
            return Err(DataError::OutOfBounds(format!(
                "shape {shape:?} with strides {strides:?}"
            )));
        }
        let cap = self.storage.len() / self.dtype.size().max(1);
        if shape.contains(&0) {
            return Ok(Tensor {
                dtype: self.dtype,
                shape: shape.into(),
                strides: strides.into(),
                offset: 0,
                storage: self.storage.clone(),
            });
        }
        let (mut lo, mut hi) = (offset as isize, offset as isize);
        for (&d, &s) in shape.iter().zip(strides) {
            let span = (d as isize - 1)
                .checked_mul(s)
                .ok_or_else(|| DataError::OutOfBounds("stride overflow".into()))?;
            if span < 0 { lo += span } else { hi += span }
        }
        if lo < 0 || hi as usize >= cap {
            return Err(DataError::OutOfBounds(format!(
                "shape {shape:?}, strides {strides:?}, offset {offset} reaches elements {lo}..={hi} of {cap}"
            )));
        }
        Ok(Tensor {
            dtype: self.dtype,
            shape: shape.into(),
            strides: strides.into(),
            offset,
            storage: self.storage.clone(),
        })
    }

    /// The same elements under a new shape: a view when contiguous, else a copy.
    pub fn reshape(&self, shape: &[usize]) -> Result<Tensor, DataError> {
        let n = checked_numel(shape)?;
        if n != self.numel() {
            return Err(DataError::Reshape {
                size: self.numel(),
                shape: shape.iter().map(|&d| d as i64).collect(),
            });
        }
        let base = self.to_contiguous();
        let offset = base.offset;
        base.view(shape, &contiguous_strides(shape), offset)
    }

    /// A view with dimensions permuted: output dim `i` is input dim `axes[i]`.
    pub fn permute(&self, axes: &[usize]) -> Tensor {
        let shape: Shape = axes.iter().map(|&a| self.shape[a]).collect();
        let strides: Strides = axes.iter().map(|&a| self.strides[a]).collect();
        Tensor {
            shape,
            strides,
            ..self.clone()
        }
    }

    /// A read-only view stretched to `shape` by NumPy broadcasting (zero strides).
    pub fn broadcast_to(&self, shape: &[usize]) -> Result<Tensor, DataError> {
        let strides = broadcast_strides(&self.shape, &self.strides, shape).ok_or_else(|| {
            DataError::Broadcast {
                a: self.shape.to_vec(),
                b: shape.to_vec(),
            }
        })?;
        Ok(Tensor {
            shape: shape.into(),
            strides,
            ..self.clone()
        })
    }

    /// True when both have the same dtype, shape and bitwise-equal elements (NaNs with equal bits
    /// compare equal). For tests and constant interning.
    pub fn bits_eq(&self, other: &Tensor) -> bool {
        self.dtype == other.dtype
            && self.shape == other.shape
            && self.to_bytes() == other.to_bytes()
    }

    /// The elements' bytes in C order.
    pub fn to_bytes(&self) -> Vec<u8> {
        let c = self.to_contiguous();
        let n = c.numel() * c.dtype.size();
        if n == 0 {
            return Vec::new();
        }
        // SAFETY: a contiguous view holds n bytes from its data pointer.
        unsafe { std::slice::from_raw_parts(c.data_ptr(), n) }.to_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn views_share_storage_and_check_bounds() {
        let t = Tensor::from_slice(&[1.0f64, 2., 3., 4., 5., 6.], &[2, 3]).unwrap();
        let tt = t.permute(&[1, 0]);
        assert_eq!(tt.to_vec::<f64>().unwrap(), vec![1., 4., 2., 5., 3., 6.]);
        assert!(!tt.is_contiguous());
        assert!(Arc::ptr_eq(t.storage(), tt.storage()));
        let rev = t.view(&[3], &[-1], 2).unwrap();
        assert_eq!(rev.to_vec::<f64>().unwrap(), vec![3., 2., 1.]);
        assert!(t.view(&[7], &[1], 0).is_err());
        assert!(t.view(&[3], &[-1], 1).is_err());
    }

    #[test]
    fn owned_storage_is_aligned_and_cast_follows_numpy() {
        let t = Tensor::from_slice(&[-1.7f64, 2.5, 300.0], &[3]).unwrap();
        assert_eq!(t.data_ptr() as usize % 64, 0);
        assert_eq!(
            t.cast(DType::I32).to_vec::<i32>().unwrap(),
            vec![-1, 2, 300]
        );
        assert_eq!(
            t.cast(DType::Bool).to_vec::<bool>().unwrap(),
            vec![true, true, true]
        );
        let i = Tensor::from_slice(&[300i64, -1], &[2]).unwrap();
        assert_eq!(i.cast(DType::U8).to_vec::<u8>().unwrap(), vec![44, 255]);
    }

    #[test]
    fn shared_storage_is_not_mutable() {
        let mut t = Tensor::zeros(DType::F32, &[4]).unwrap();
        assert!(t.data_mut::<f32>().is_some());
        let keep = t.clone();
        assert!(t.data_mut::<f32>().is_none());
        drop(keep);
        assert!(t.data_mut::<f64>().is_none(), "wrong dtype");
    }

    #[test]
    fn reshape_and_broadcast() {
        let t = Tensor::from_slice(&[1i32, 2, 3], &[3, 1]).unwrap();
        let b = t.broadcast_to(&[2, 3, 2]).unwrap();
        assert_eq!(
            b.to_vec::<i32>().unwrap(),
            vec![1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3]
        );
        assert!(t.reshape(&[4]).is_err());
        assert_eq!(t.reshape(&[1, 3]).unwrap().shape(), &[1, 3]);
        assert!(Tensor::zeros(DType::F64, &[usize::MAX, 2]).is_err());
        // Representable but far beyond this machine's memory: an error, not an abort.
        assert!(matches!(
            Tensor::zeros(DType::F64, &[1 << 45]),
            Err(DataError::TooLarge(_))
        ));
    }
}
