//! Reusing the small output arrays a caller has let go of.
//!
//! A sampler calls one function in a loop and drops each result before (or soon after) the next
//! call; making a fresh NumPy array (its capsule, its boxed tensor) and freeing the last one
//! costs more than the computation on small arrays. So each output of a function remembers the
//! last two arrays it returned, and when one of them is held by nobody else any more (its
//! reference count is ours alone, no weak reference, no view, no buffer export — each of those
//! holds a reference or shows in `weakreflist`) and still looks exactly as returned (a plain,
//! writable, C-contiguous `ndarray` of the output's dtype and shape), the new values are copied
//! into it and it is returned again. Two arrays, because `y = f(x)` in a loop still holds the
//! previous result while the next call runs.
//!
//! Better still, before a call each output lends such a released array's buffer to the executor
//! ([`Recycler::lend`], `oxtensor::Function::call_into`): a kernel computing the output writes
//! straight into it, and the array is returned without allocating or copying anything.
//!
//! Only outputs of at most [`REUSE_BYTES`] are refilled by copying: for larger ones the copy
//! would cost more than the allocation it saves. Larger arrays are remembered for lending only,
//! which saves more than the allocation: a fresh buffer of many megabytes comes from the kernel
//! as untouched pages, and faulting them in costs as much as the loop that fills them (and does
//! not scale with threads). A remembered array keeps its memory alive until the output returns
//! another one, or until [`Recycler::forget`] (`Function.free()`), as PyTensor's functions keep
//! their output storage between calls.

use numpy::npyffi::{
    self, NPY_ARRAY_ALIGNED, NPY_ARRAY_C_CONTIGUOUS, NPY_ARRAY_WRITEABLE, NpyTypes,
};
use oxtensor_data::{Tensor, dispatch_dtype};
use pyo3::ffi;
use pyo3::prelude::*;
use std::sync::Arc;

use crate::convert::{CAPSULE_NAME, output_array, typenum_of};

/// The largest output (in bytes) whose released arrays are refilled by copying.
pub const REUSE_BYTES: usize = 4096;

/// A remembered array and a tensor over its whole buffer (C-contiguous, the shape and dtype it
/// was returned with; sharing the storage of the tensor its capsule owns).
pub struct Kept {
    array: Py<PyAny>,
    tensor: Tensor,
}

impl Kept {
    /// The buffer, as the tensor lent to the executor.
    pub fn buffer(&self) -> Tensor {
        self.tensor.clone()
    }
}

/// Loans in a row that came back unused (the backend does not write this output into a lent
/// buffer, e.g. an output that is an input) after which an output stops lending.
const GIVE_UP_LENDING: usize = 4;

/// Output arrays of one function output, for reuse once released (see the module docs): the
/// arrays it returned last (up to two) and which to replace next. The function keeps these
/// under the one lock of its call state, taken once per call.
#[derive(Default)]
pub struct Recycler {
    kept: [Option<Kept>; 2],
    next: usize,
    /// Loans in a row that came back unused.
    misses: usize,
}

/// `t`'s elements in C order into `dst`, which has room for them.
///
/// # Safety
/// `dst` must be valid for writes of `t.numel()` elements of `t`'s dtype, suitably aligned, and
/// not overlap `t`'s storage.
unsafe fn copy_into(t: &Tensor, dst: *mut u8) {
    dispatch_dtype!(t.dtype(), T => {
        let dst = dst.cast::<T>();
        if let Some(src) = t.as_slice::<T>() {
            // SAFETY: the caller guarantees room for `numel` elements that do not overlap the
            // source, which is `numel` contiguous elements of `T`.
            unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), dst, src.len()) };
        } else {
            let base = t.storage().as_ptr().cast::<T>();
            for (i, off) in t.offsets().enumerate() {
                // SAFETY: `off` addresses an element of the tensor's own view inside its
                // storage; `i < numel`, inside the destination (the caller's guarantee).
                unsafe { *dst.add(i) = *base.add(off) };
            }
        }
    });
}

/// Whether the kept array (held by the pool) can take values of `t`'s dtype and shape: see the
/// module docs.
fn reusable(py: Python<'_>, kept: &Kept, t: &Tensor) -> bool {
    let obj = kept.array.as_ptr();
    // SAFETY: `obj` is a live object (the pool holds a reference to it); reading its reference
    // count and type, and NumPy's `ndarray` type object, is allowed while attached to the
    // interpreter.
    let (refcnt, ty, ndarray) = unsafe {
        (
            ffi::Py_REFCNT(obj),
            ffi::Py_TYPE(obj),
            npyffi::get_type_object(py, NpyTypes::PyArray_Type),
        )
    };
    if refcnt != 1 || ty != ndarray {
        return false;
    }
    // SAFETY: the object's type is exactly `ndarray` (checked above), so it has NumPy's array
    // struct layout; `descr` is never null for a live array, and `dimensions`/`strides` hold
    // `nd` entries.
    let (f, typenum, byteorder) = unsafe {
        let f = &(*obj.cast::<npyffi::PyArrayObject>()).fields;
        let d = &(*f.descr).fields;
        (f, d.type_num, d.byteorder as u8)
    };
    let wanted = NPY_ARRAY_WRITEABLE | NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED;
    let nd = f.nd as usize;
    let foreign = if cfg!(target_endian = "little") {
        b'>'
    } else {
        b'<'
    };
    if f.flags & wanted != wanted
        || !f.weakreflist.is_null()
        || f.data.cast::<u8>().cast_const() != kept.tensor.data_ptr()
        || typenum != typenum_of(t.dtype())
        || byteorder == foreign
        || nd != t.ndim()
        || t.numel() * t.dtype().size() > kept.tensor.numel() * kept.tensor.dtype().size()
    {
        return false;
    }
    if nd == 0 {
        return true;
    }
    // SAFETY: an array of rank `nd > 0` has `nd` extents and strides.
    let (dims, strides) = unsafe {
        (
            std::slice::from_raw_parts(f.dimensions, nd),
            std::slice::from_raw_parts(f.strides, nd),
        )
    };
    let mut step = t.dtype().size() as isize;
    for d in (0..nd).rev() {
        let extent = t.shape()[d];
        if dims[d] != extent as isize || (extent > 1 && strides[d] != step) {
            return false;
        }
        step *= extent as isize;
    }
    true
}

/// A tensor sharing the buffer of an array made by `output_array` (its base is the capsule that
/// owns the tensor), when that buffer is C-contiguous from the start of its owned storage.
fn buffer_of(array: &Bound<'_, PyAny>) -> Option<Tensor> {
    let obj = array.as_ptr();
    // SAFETY: `array` was made by `output_array`, so it is an `ndarray` (NumPy's array struct
    // layout); its base, when it is a capsule named `CAPSULE_NAME`, holds a boxed `Tensor`
    // (see `convert::tensor_to_array`) that lives as long as the array, which we hold.
    let t = unsafe {
        let base = (*obj.cast::<npyffi::PyArrayObject>()).fields.base;
        if base.is_null() || ffi::PyCapsule_CheckExact(base) == 0 {
            return None;
        }
        let p = ffi::PyCapsule_GetPointer(base, CAPSULE_NAME.as_ptr());
        if p.is_null() {
            ffi::PyErr_Clear();
            return None;
        }
        (*p.cast::<Tensor>()).clone()
    };
    (t.is_contiguous() && t.offset() == 0 && t.storage().is_owned()).then_some(t)
}

impl Recycler {
    /// Remembers `kept` in a free place, or in place of the older array; returns what it
    /// replaced (for the caller to drop after its lock: freeing an array may run arbitrary
    /// code).
    fn put(&mut self, kept: Kept) -> Option<Kept> {
        let i = match self.kept.iter().position(Option::is_none) {
            Some(free) => free,
            None => {
                let i = self.next;
                self.next = 1 - i;
                i
            }
        };
        self.kept[i].replace(kept)
    }

    /// A released array whose buffer the executor may write this call's output into, taken out
    /// of the pool until [`Recycler::array`] gets it back.
    pub fn lend(&mut self, py: Python<'_>) -> Option<Kept> {
        if self.misses >= GIVE_UP_LENDING {
            return None;
        }
        let i = self
            .kept
            .iter()
            .position(|k| k.as_ref().is_some_and(|k| reusable(py, k, &k.tensor)))?;
        self.kept[i].take()
    }

    /// Takes the remembered arrays out (their memory is freed once the caller holds none of
    /// them and the returned pair is dropped).
    pub fn forget(&mut self) -> [Option<Kept>; 2] {
        self.next = 0;
        std::mem::take(&mut self.kept)
    }

    /// Puts back an array [`Recycler::lend`] took out, unused; returns the array it replaced.
    pub fn give_back(&mut self, kept: Kept) -> Option<Kept> {
        self.put(kept)
    }

    /// An array of `t`'s values: the lent array when the executor wrote `t` into its buffer,
    /// else a remembered array nobody else holds any more, refilled, or a fresh one
    /// (remembered in place of the older one).
    pub fn array<'py>(
        &mut self,
        py: Python<'py>,
        t: Tensor,
        lent: Option<Kept>,
    ) -> PyResult<Bound<'py, PyAny>> {
        if let Some(kept) = lent {
            if Arc::ptr_eq(t.storage(), kept.tensor.storage()) {
                // The executor wrote this output into the lent buffer. Its handles: `t`, the
                // kept tensor and the array's capsule. Any other (a second output, an update
                // stored in a shared variable) still reads it: the array is then forgotten
                // (never lent or refilled again) and the caller gets a copy.
                let alone = Arc::strong_count(t.storage()) == 3
                    && t.data_ptr() == kept.tensor.data_ptr()
                    && t.dtype() == kept.tensor.dtype()
                    && t.shape() == kept.tensor.shape()
                    && t.is_contiguous();
                if !alone {
                    drop(kept);
                    return output_array(py, t);
                }
                drop(t);
                self.misses = 0;
                let array = kept.array.bind(py).clone();
                drop(self.put(kept));
                return Ok(array);
            }
            self.misses += 1;
            drop(self.put(kept));
        }
        let refill = t.numel() * t.dtype().size() <= REUSE_BYTES;
        for kept in self.kept.iter().flatten().filter(|_| refill) {
            if !Arc::ptr_eq(kept.tensor.storage(), t.storage()) && reusable(py, kept, &t) {
                // SAFETY: `reusable` found the array held by the pool alone (so nothing reads
                // its memory meanwhile), C-contiguous with `t`'s shape and dtype, over the
                // kept tensor's buffer, which is large enough; that buffer is the array's own
                // (a capsule-held tensor's storage), not `t`'s (checked just before).
                unsafe { copy_into(&t, kept.tensor.data_ptr().cast_mut()) };
                return Ok(kept.array.bind(py).clone());
            }
        }
        let array = output_array(py, t)?;
        if let Some(tensor) = buffer_of(&array) {
            drop(self.put(Kept {
                array: array.clone().unbind(),
                tensor,
            }));
        }
        Ok(array)
    }
}
