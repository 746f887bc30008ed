//! The Python subclasses of `TensorVariable` for the two kinds of variable that hold a value:
//! constants (`TensorConstant`, read through `.data`) and shared variables
//! (`TensorSharedVariable`, read and replaced with `get_value` / `set_value`).

use pyo3::intern;
use pyo3::prelude::*;

use crate::convert::{self, owned};
use crate::errors::type_err;
use crate::var::PyVar;

/// A constant (PyTensor's `TensorConstant`); its value is `.data`.
#[pyclass(frozen, extends = PyVar, name = "TensorConstant", module = "oxtensor.tensor.variable")]
pub struct PyConstant;

/// A shared variable (PyTensor's `TensorSharedVariable`): a value that persists across calls,
/// read with `get_value` and replaced with `set_value` or by a function's `updates`.
#[pyclass(frozen, extends = PyVar, name = "TensorSharedVariable", module = "oxtensor.tensor.sharedvar")]
pub struct PyShared;

#[pymethods]
impl PyConstant {
    /// The constant's value (a read-only array).
    #[getter]
    fn data<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let v = &slf.as_super().get().v;
        match v.constant_value() {
            Some(t) => convert::readonly_array(slf.py(), t.clone()),
            None => Err(type_err("not a constant")),
        }
    }

    /// Same as `data`.
    #[getter]
    fn value<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        Self::data(slf)
    }
}

#[pymethods]
impl PyShared {
    /// The current value: a fresh writable copy, or with `borrow=True` a read-only view of the
    /// stored value (no copy).
    #[pyo3(signature = (borrow=false, return_internal_type=false))]
    fn get_value<'py>(
        slf: &Bound<'py, Self>,
        borrow: bool,
        return_internal_type: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let _ = return_internal_type;
        let py = slf.py();
        let v = &slf.as_super().get().v;
        let t = oxtensor::get_value(v).map_err(crate::errors::ox_err)?;
        if borrow {
            convert::readonly_array(py, t)
        } else {
            convert::tensor_to_array(py, convert::deep_copy(&t)?, true)
        }
    }

    /// Replaces the value. Lossless dtype conversions are applied (ints into a float variable,
    /// Python floats into `floatX`); a lossy one or another rank is a `TypeError`. The value is
    /// always copied (`borrow` is accepted for compatibility).
    #[pyo3(signature = (value, borrow=false))]
    fn set_value(slf: &Bound<'_, Self>, value: &Bound<'_, PyAny>, borrow: bool) -> PyResult<()> {
        let _ = borrow;
        let py = slf.py();
        let v = &slf.as_super().get().v;
        let arr = convert::helpers(py)?
            .getattr(intern!(py, "coerce"))?
            .call1((value, v.dtype().name(), py.None()))
            .map_err(|e| crate::function::prefix_err(py, e, &v.describe()))?;
        let t = owned(convert::plain_array_to_tensor(py, &arr)?)?;
        oxtensor::set_value(v, t).map_err(crate::errors::ox_err)
    }

    /// The shared variable's value container is not exposed; use `get_value`/`set_value`.
    #[getter]
    fn _is_shared(&self) -> bool {
        true
    }
}
