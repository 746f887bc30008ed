//! NumPy arrays in and out.
//!
//! In: an `ndarray` whose layout the [`Tensor`] can describe (aligned, native byte order, strides
//! that are multiples of the item size, a supported dtype) is wrapped without a copy, as external
//! [`Storage`] that keeps the array alive; its fields are read straight from NumPy's array
//! struct. Bool arrays are copied so that every byte is 0 or 1, as `Tensor` requires. A Python
//! number for a float64 or int64 input becomes a 0-d tensor directly
//! ([`python_number_to_tensor`]). Anything else (lists, other scalars, byte-swapped or unaligned
//! arrays, other dtypes) goes through `oxtensor._convert`, which applies PyTensor's conversion
//! rules and hands back a plain array.
//!
//! Out: a tensor whose storage nobody else holds becomes an `ndarray` over the Rust buffer; a
//! capsule owning the tensor is the array's base object, so dropping the array frees the buffer.
//! A tensor that shares its storage (with an input, a constant, a shared variable or another
//! output) is copied first.

use numpy::npyffi::{
    self, NPY_ARRAY_ALIGNED, NPY_ARRAY_WRITEABLE, NPY_TYPES, NpyTypes, PY_ARRAY_API, npy_intp,
};
use oxtensor_data::{DType, Shape, Storage, StridedIndex, Strides, Tensor, dispatch_dtype};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyFloat, PyInt, PyString};
use pyo3::{ffi, intern};
use smallvec::SmallVec;
use std::ffi::{CStr, c_int, c_long, c_void};
use std::ptr::NonNull;
use std::sync::Arc;

use crate::errors::value_err;

/// Registers the conversion helpers exposed for tests.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_roundtrip, m)?)?;
    m.add_function(wrap_pyfunction!(_wrapped_address, m)?)?;
    Ok(())
}

/// How the call path would wrap `a`: `(address of its first element, borrowed)`, where
/// `borrowed` is true when the tensor reads the array's own memory (no copy); used by tests.
#[pyfunction]
fn _wrapped_address(py: Python<'_>, a: &Bound<'_, PyAny>) -> PyResult<(usize, bool)> {
    if !is_ndarray(py, a) {
        return Err(crate::errors::type_err("expected an ndarray"));
    }
    Ok(match ndarray_to_tensor(a) {
        Some(t) => (t.data_ptr() as usize, !t.storage().is_owned()),
        None => (0, false),
    })
}

/// Wraps an array as a tensor and returns it as an array again (zero-copy where possible);
/// used by the tests to check both directions.
#[pyfunction]
fn _roundtrip<'py>(py: Python<'py>, a: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let t = any_to_tensor(py, a, None)?;
    output_array(py, t)
}

const LONG_IS_64: bool = std::mem::size_of::<c_long>() == 8;

/// The dtype of a NumPy type number, when oxtensor supports it.
pub fn dtype_of_typenum(t: c_int) -> Option<DType> {
    const B: c_int = NPY_TYPES::NPY_BOOL as c_int;
    const I8: c_int = NPY_TYPES::NPY_BYTE as c_int;
    const U8: c_int = NPY_TYPES::NPY_UBYTE as c_int;
    const I16: c_int = NPY_TYPES::NPY_SHORT as c_int;
    const U16: c_int = NPY_TYPES::NPY_USHORT as c_int;
    const I32: c_int = NPY_TYPES::NPY_INT as c_int;
    const U32: c_int = NPY_TYPES::NPY_UINT as c_int;
    const IL: c_int = NPY_TYPES::NPY_LONG as c_int;
    const UL: c_int = NPY_TYPES::NPY_ULONG as c_int;
    const ILL: c_int = NPY_TYPES::NPY_LONGLONG as c_int;
    const ULL: c_int = NPY_TYPES::NPY_ULONGLONG as c_int;
    const F32: c_int = NPY_TYPES::NPY_FLOAT as c_int;
    const F64: c_int = NPY_TYPES::NPY_DOUBLE as c_int;
    const C64: c_int = NPY_TYPES::NPY_CFLOAT as c_int;
    const C128: c_int = NPY_TYPES::NPY_CDOUBLE as c_int;
    Some(match t {
        B => DType::Bool,
        I8 => DType::I8,
        U8 => DType::U8,
        I16 => DType::I16,
        U16 => DType::U16,
        I32 => DType::I32,
        U32 => DType::U32,
        IL => {
            if LONG_IS_64 {
                DType::I64
            } else {
                DType::I32
            }
        }
        UL => {
            if LONG_IS_64 {
                DType::U64
            } else {
                DType::U32
            }
        }
        ILL => DType::I64,
        ULL => DType::U64,
        F32 => DType::F32,
        F64 => DType::F64,
        C64 => DType::C64,
        C128 => DType::C128,
        _ => return None,
    })
}

/// The NumPy type number of a dtype (64-bit integers as `long` where it is 64 bits, as NumPy
/// itself names them).
pub fn typenum_of(d: DType) -> c_int {
    let t = match d {
        DType::Bool => NPY_TYPES::NPY_BOOL,
        DType::I8 => NPY_TYPES::NPY_BYTE,
        DType::U8 => NPY_TYPES::NPY_UBYTE,
        DType::I16 => NPY_TYPES::NPY_SHORT,
        DType::U16 => NPY_TYPES::NPY_USHORT,
        DType::I32 => NPY_TYPES::NPY_INT,
        DType::U32 => NPY_TYPES::NPY_UINT,
        DType::I64 if LONG_IS_64 => NPY_TYPES::NPY_LONG,
        DType::I64 => NPY_TYPES::NPY_LONGLONG,
        DType::U64 if LONG_IS_64 => NPY_TYPES::NPY_ULONG,
        DType::U64 => NPY_TYPES::NPY_ULONGLONG,
        DType::F32 => NPY_TYPES::NPY_FLOAT,
        DType::F64 => NPY_TYPES::NPY_DOUBLE,
        DType::C64 => NPY_TYPES::NPY_CFLOAT,
        DType::C128 => NPY_TYPES::NPY_CDOUBLE,
    };
    t as c_int
}

/// True when `obj` is an `ndarray` (or a subclass).
#[inline]
pub fn is_ndarray(py: Python<'_>, obj: &Bound<'_, PyAny>) -> bool {
    // SAFETY: attached to the interpreter; `obj` is a valid object pointer for the call.
    unsafe { npyffi::PyArray_Check(py, obj.as_ptr()) != 0 }
}

#[cfg(target_endian = "little")]
const FOREIGN_BYTEORDER: u8 = b'>';
#[cfg(target_endian = "big")]
const FOREIGN_BYTEORDER: u8 = b'<';

/// A Python `float` (or subclass, e.g. `numpy.float64`) for a float64 input, or a Python `int`
/// for an int64 input (or a float64 one it converts to exactly), as the 0-d tensor that
/// `oxtensor._convert.coerce` would make, without the round trip through Python: samplers pass
/// step sizes and the like as plain Python numbers on every call. `None` for anything else,
/// which then takes the general conversion.
#[inline]
pub fn python_number_to_tensor(obj: &Bound<'_, PyAny>, dtype: DType) -> Option<Tensor> {
    if let Ok(f) = obj.cast::<PyFloat>() {
        return (dtype == DType::F64).then(|| Tensor::scalar(f.value()));
    }
    // Exactly `int`: `bool` is a subclass with its own conversion rules.
    let v: i64 = obj.cast_exact::<PyInt>().ok()?.extract().ok()?;
    match dtype {
        DType::I64 => Some(Tensor::scalar(v)),
        // Integers up to 2^53 in magnitude are exactly representable: the conversion `coerce`
        // accepts because it loses nothing.
        DType::F64 if v.unsigned_abs() <= 1 << 53 => Some(Tensor::scalar(v as f64)),
        _ => None,
    }
}

/// The fields of an `ndarray` its wrapping as a tensor is made from.
struct ArrayFields<'a> {
    data: *mut c_void,
    dims: &'a [npy_intp],
    strides: &'a [npy_intp],
    flags: c_int,
    typenum: c_int,
    byteorder: u8,
}

impl<'a> ArrayFields<'a> {
    /// Reads `obj`'s fields; the caller has checked it is an `ndarray` (`is_ndarray`).
    #[inline]
    fn read(obj: &'a Bound<'_, PyAny>) -> ArrayFields<'a> {
        let arr = obj.as_ptr().cast::<npyffi::PyArrayObject>();
        // SAFETY: `obj` is an ndarray (the caller's check), so it has NumPy's array struct
        // layout; we only read its fields while holding a reference to it, which the borrow
        // `'a` outlives. `descr` is never null for a live array, and `dimensions`/`strides`
        // point at `nd` entries when `nd > 0`.
        unsafe {
            let f = &(*arr).fields;
            let descr = &(*f.descr).fields;
            let nd = f.nd as usize;
            let (dims, strides): (&[npy_intp], &[npy_intp]) = if nd == 0 {
                (&[], &[])
            } else {
                (
                    std::slice::from_raw_parts(f.dimensions, nd),
                    std::slice::from_raw_parts(f.strides, nd),
                )
            };
            ArrayFields {
                data: f.data.cast(),
                dims,
                strides,
                flags: f.flags,
                typenum: descr.type_num,
                byteorder: descr.byteorder as u8,
            }
        }
    }

    /// The dtype, when the array can be read in place (supported, aligned, native order).
    #[inline]
    fn dtype(&self) -> Option<DType> {
        let dtype = dtype_of_typenum(self.typenum)?;
        (self.flags & NPY_ARRAY_ALIGNED != 0 && self.byteorder != FOREIGN_BYTEORDER)
            .then_some(dtype)
    }
}

/// Whether `t`, made by [`ndarray_to_tensor`] from the array `obj` on an earlier call (so its
/// storage keeps `obj` alive), still describes `obj` exactly: same dtype, first element,
/// extents and strides. A tensor that does can be used again instead of wrapping the array
/// anew (the caller's array may have been reshaped in place or given a new buffer since).
#[inline]
pub fn still_wraps(obj: &Bound<'_, PyAny>, t: &Tensor) -> bool {
    let f = ArrayFields::read(obj);
    let item = t.dtype().size() as isize;
    f.dtype() == Some(t.dtype())
        && f.data.cast::<u8>().cast_const() == t.data_ptr()
        && f.dims.len() == t.ndim()
        && f.dims.iter().zip(t.shape()).all(|(&d, &e)| d == e as isize)
        && f.strides
            .iter()
            .zip(t.strides())
            .all(|(&s, &e)| s == e * item)
}

/// Wraps an `ndarray` as a tensor without copying, or `None` when its dtype or layout needs a
/// conversion first (the caller then goes through `oxtensor._convert`).
///
/// The tensor's storage keeps the array alive and is read-only, so kernels never write into the
/// caller's memory.
#[inline]
pub fn ndarray_to_tensor(obj: &Bound<'_, PyAny>) -> Option<Tensor> {
    let f = ArrayFields::read(obj);
    let dtype = f.dtype()?;
    let (data, dims, strides) = (f.data, f.dims, f.strides);
    let item = dtype.size() as isize;
    let mut shape = Shape::new();
    let mut estrides = Strides::new();
    let (mut lo, mut hi) = (0isize, 0isize);
    for (&d, &s) in dims.iter().zip(strides) {
        if d < 0 || s % item != 0 {
            return None;
        }
        let es = s / item;
        shape.push(d as usize);
        estrides.push(es);
        if d > 0 {
            let span = (d - 1).checked_mul(es)?;
            if span < 0 {
                lo = lo.checked_add(span)?;
            } else {
                hi = hi.checked_add(span)?;
            }
        }
    }
    if shape.contains(&0) {
        return Tensor::zeros(dtype, &shape).ok();
    }
    let offset = (-lo) as usize;
    // SAFETY: NumPy guarantees every element addressed by the array's shape and strides lies in
    // its buffer; `lo` (≤ 0) elements from `data` is the lowest such address.
    let base = unsafe { data.cast::<u8>().offset(lo * item) };
    if dtype == DType::Bool {
        // Normalise: the tensor's contract needs every bool byte to be 0 or 1.
        return Tensor::build::<bool>(&shape, |out| {
            for (o, off) in out
                .iter_mut()
                .zip(StridedIndex::new(&shape, &estrides, offset))
            {
                // SAFETY: `off` addresses an element of the array (see above).
                *o = unsafe { *base.add(off) } != 0;
            }
        })
        .ok();
    }
    let bytes = ((hi - lo) as usize + 1) * item as usize;
    let ptr = NonNull::new(base)?;
    let keep_alive: Box<dyn std::any::Any + Send + Sync> = Box::new(obj.clone().unbind());
    // SAFETY: the buffer spans `bytes` bytes from `base` (the array's lowest to highest element)
    // and stays valid while the array object, kept alive by `keep_alive`, exists. The storage
    // is read-only (`writable = false`), so Rust never writes through it. Elements addressed by
    // `shape`/`estrides`/`offset` are exactly the array's, inside the storage.
    unsafe {
        let storage = Storage::external(ptr, bytes, keep_alive, false);
        Some(Tensor::from_storage(
            dtype,
            &shape,
            &estrides,
            offset,
            Arc::new(storage),
        ))
    }
}

/// A contiguous copy that owns its storage.
pub fn deep_copy(t: &Tensor) -> PyResult<Tensor> {
    dispatch_dtype!(t.dtype(), T => {
        let built = if let Some(src) = t.as_slice::<T>() {
            Tensor::build::<T>(t.shape(), |out| out.copy_from_slice(src))
        } else {
            let base = t.storage().as_ptr().cast::<T>();
            Tensor::build::<T>(t.shape(), |out| {
                for (o, off) in out.iter_mut().zip(t.offsets()) {
                    // SAFETY: offsets of the tensor's own view lie inside its storage, which
                    // holds elements of type T (the tensor's dtype).
                    *o = unsafe { *base.add(off) };
                }
            })
        };
        built.map_err(|e| value_err(e.to_string()))
    })
}

/// The tensor itself when its storage belongs to oxtensor, else a copy (for values that outlive
/// the call: shared variables, constants, defaults).
pub fn owned(t: Tensor) -> PyResult<Tensor> {
    if t.storage().is_owned() {
        Ok(t)
    } else {
        deep_copy(&t)
    }
}

/// The name of the capsules that own the tensors behind the arrays we return.
pub(crate) const CAPSULE_NAME: &CStr = c"oxtensor.Tensor";

unsafe extern "C" fn drop_tensor_capsule(capsule: *mut ffi::PyObject) {
    // SAFETY: called by Python exactly once when the capsule dies; its pointer was made by
    // `Box::into_raw(Box<Tensor>)` in `tensor_to_array` under the same name.
    unsafe {
        let p = ffi::PyCapsule_GetPointer(capsule, CAPSULE_NAME.as_ptr());
        if p.is_null() {
            ffi::PyErr_Clear();
        } else {
            drop(Box::from_raw(p.cast::<Tensor>()));
        }
    }
}

/// An `ndarray` over the tensor's buffer; a capsule owning the tensor is its base object.
///
/// The caller decides whether writing is safe: `writable` must only be true when nothing else
/// reads the storage (it is uniquely held by `t`).
pub fn tensor_to_array<'py>(
    py: Python<'py>,
    t: Tensor,
    writable: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let item = t.dtype().size() as npy_intp;
    let mut dims: SmallVec<[npy_intp; 4]> = t.shape().iter().map(|&d| d as npy_intp).collect();
    let mut strides: SmallVec<[npy_intp; 4]> =
        t.strides().iter().map(|&s| s as npy_intp * item).collect();
    let nd = dims.len() as c_int;
    let data = t.data_ptr().cast_mut().cast::<c_void>();
    let flags = if writable { NPY_ARRAY_WRITEABLE } else { 0 };
    let typenum = typenum_of(t.dtype());
    let boxed = Box::into_raw(Box::new(t));
    // SAFETY: attached to the interpreter. `PyArray_DescrFromType` returns a new reference that
    // `PyArray_NewFromDescr` steals. `dims`/`strides` hold `nd` entries describing the tensor's
    // view, and `data` points at its first element inside storage kept alive by the capsule
    // (which owns the boxed tensor and becomes the array's base; `PyArray_SetBaseObject`
    // steals it even on failure). On every failure path the references made here are released
    // and the tensor is freed exactly once (by the capsule destructor, or directly if the
    // capsule could not be made).
    unsafe {
        let capsule = ffi::PyCapsule_New(
            boxed.cast::<c_void>(),
            CAPSULE_NAME.as_ptr(),
            Some(drop_tensor_capsule),
        );
        if capsule.is_null() {
            drop(Box::from_raw(boxed));
            return Err(PyErr::fetch(py));
        }
        let descr = PY_ARRAY_API.PyArray_DescrFromType(py, typenum);
        if descr.is_null() {
            ffi::Py_DECREF(capsule);
            return Err(PyErr::fetch(py));
        }
        let subtype = npyffi::get_type_object(py, NpyTypes::PyArray_Type);
        let arr = PY_ARRAY_API.PyArray_NewFromDescr(
            py,
            subtype,
            descr,
            nd,
            dims.as_mut_ptr(),
            strides.as_mut_ptr(),
            data,
            flags,
            std::ptr::null_mut(),
        );
        if arr.is_null() {
            ffi::Py_DECREF(capsule);
            return Err(PyErr::fetch(py));
        }
        if PY_ARRAY_API.PyArray_SetBaseObject(py, arr.cast::<npyffi::PyArrayObject>(), capsule) < 0
        {
            ffi::Py_DECREF(arr);
            return Err(PyErr::fetch(py));
        }
        Ok(Bound::from_owned_ptr(py, arr))
    }
}

/// True when the view repeats elements (a stride of 0 on a dimension longer than 1).
fn overlaps(t: &Tensor) -> bool {
    t.shape()
        .iter()
        .zip(t.strides())
        .any(|(&d, &s)| s == 0 && d > 1)
}

/// A function output (or a value handed to the user) as a fresh, writable `ndarray`: zero-copy
/// when the tensor holds its oxtensor-owned storage alone, else a copy.
pub fn output_array<'py>(py: Python<'py>, t: Tensor) -> PyResult<Bound<'py, PyAny>> {
    let exclusive = Arc::strong_count(t.storage()) == 1 && t.storage().is_owned() && !overlaps(&t);
    let t = if exclusive { t } else { deep_copy(&t)? };
    tensor_to_array(py, t, true)
}

/// A read-only `ndarray` viewing the tensor (zero-copy; `get_value(borrow=True)`).
pub fn readonly_array<'py>(py: Python<'py>, t: Tensor) -> PyResult<Bound<'py, PyAny>> {
    tensor_to_array(py, t, false)
}

static CONVERT_MODULE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();

/// The pure-Python conversion helpers (`oxtensor._convert`).
pub fn helpers(py: Python<'_>) -> PyResult<&Bound<'_, PyModule>> {
    CONVERT_MODULE
        .get_or_try_init(py, || {
            py.import(intern!(py, "oxtensor._convert"))
                .map(Bound::unbind)
        })
        .map(|m| m.bind(py))
}

/// Any array-like as a tensor: `np.asarray(obj, dtype)` (through `oxtensor._convert.as_array`),
/// then wrapped. The result may borrow the array's memory; use [`owned`] to keep it.
pub fn any_to_tensor(
    py: Python<'_>,
    obj: &Bound<'_, PyAny>,
    dtype: Option<DType>,
) -> PyResult<Tensor> {
    if dtype.is_none()
        && is_ndarray(py, obj)
        && let Some(t) = ndarray_to_tensor(obj)
    {
        return Ok(t);
    }
    let dt = dtype.map(|d| PyString::new(py, d.name()));
    let arr = helpers(py)?
        .getattr(intern!(py, "as_array"))?
        .call1((obj, dt))?;
    plain_array_to_tensor(py, &arr)
}

/// Wraps an array returned by the Python helpers, which guarantee a supported dtype and layout.
pub fn plain_array_to_tensor(py: Python<'_>, arr: &Bound<'_, PyAny>) -> PyResult<Tensor> {
    if !is_ndarray(py, arr) {
        return Err(value_err(
            "internal error: conversion did not produce an array",
        ));
    }
    ndarray_to_tensor(arr).ok_or_else(|| {
        value_err(format!(
            "arrays of dtype {} are not supported",
            arr.getattr("dtype")
                .map(|d| d.to_string())
                .unwrap_or_default()
        ))
    })
}

/// Parses a dtype name (NumPy's, or `"floatX"` resolved by the caller).
pub fn parse_dtype(name: &str) -> PyResult<DType> {
    DType::from_name(name).ok_or_else(|| {
        crate::errors::type_err(format!(
            "unsupported dtype {name:?}: oxtensor supports bool, int8-64, uint8-64, float32 and float64"
        ))
    })
}
