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
//! Only outputs of at most [`REUSE_BYTES`] are remembered: for larger ones the copy would cost
//! more than the allocation it saves, and a remembered array keeps its memory alive.

use numpy::npyffi::{
    self, NPY_ARRAY_ALIGNED, NPY_ARRAY_C_CONTIGUOUS, NPY_ARRAY_WRITEABLE, NpyTypes,
};
use oxtensor_data::{Tensor, dispatch_dtype};
use pyo3::ffi;
use pyo3::prelude::*;
use std::sync::Mutex;

use crate::convert::{output_array, typenum_of};

/// The largest output (in bytes) whose arrays are reused.
pub const REUSE_BYTES: usize = 4096;

/// A remembered array: the array and the bytes its buffer holds.
struct Kept {
    array: Py<PyAny>,
    bytes: usize,
}

/// The arrays one output returned last (up to two), and which to replace next.
#[derive(Default)]
struct Pool {
    kept: [Option<Kept>; 2],
    next: usize,
}

/// Output arrays of one function output, for reuse once released (see the module docs).
#[derive(Default)]
pub struct Recycler(Mutex<Pool>);

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

/// Whether `array` (held by the pool) can take `t`'s values: see the module docs.
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
    if f.flags & wanted != wanted
        || !f.weakreflist.is_null()
        || typenum != typenum_of(t.dtype())
        || byteorder == b'>' && cfg!(target_endian = "little")
        || byteorder == b'<' && cfg!(target_endian = "big")
        || nd != t.ndim()
        || t.numel() * t.dtype().size() > kept.bytes
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

impl Recycler {
    /// An array of `t`'s values: a remembered array nobody else holds any more, refilled, or a
    /// fresh one (remembered in place of the older one).
    pub fn array<'py>(&self, py: Python<'py>, t: Tensor) -> PyResult<Bound<'py, PyAny>> {
        let bytes = t.numel() * t.dtype().size();
        if bytes > REUSE_BYTES {
            return output_array(py, t);
        }
        // A call on another thread holding the pool just makes a fresh array.
        let Ok(mut pool) = self.0.try_lock() else {
            return output_array(py, t);
        };
        for kept in pool.kept.iter().flatten() {
            if reusable(py, kept, &t) {
                let obj = kept.array.as_ptr();
                // SAFETY: `reusable` found the array held by the pool alone (so nothing reads
                // its memory meanwhile), C-contiguous with `t`'s shape and dtype and its buffer
                // (`kept.bytes`, made for it by `output_array`) large enough; the buffer is the
                // array's own (a capsule-held tensor's storage), never `t`'s.
                unsafe {
                    let data = (*obj.cast::<npyffi::PyArrayObject>()).fields.data;
                    copy_into(&t, data.cast::<u8>());
                }
                return Ok(kept.array.bind(py).clone());
            }
        }
        let array = output_array(py, t)?;
        let i = pool.next;
        pool.next = 1 - i;
        let old = pool.kept[i].replace(Kept {
            array: array.clone().unbind(),
            bytes,
        });
        drop(pool);
        // Released after the lock: freeing an array may run arbitrary code.
        drop(old);
        Ok(array)
    }
}
