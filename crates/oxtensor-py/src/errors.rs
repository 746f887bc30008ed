//! Rust errors as Python exceptions: `TypeError` for dtype, rank, arity and keyword problems
//! ([`oxtensor::Error::is_type_error`]), `IndexError` for bad indices, `ValueError` for shapes and
//! everything else found at run time, except a singular, indefinite or non-converging matrix:
//! `numpy.linalg.LinAlgError` (a `ValueError` subclass), as NumPy and SciPy raise, and a random
//! draw whose range overflows: `OverflowError`, as NumPy's `uniform` raises. A failed run-time
//! check (`oxtensor.raise_op`) raises its own exception class ([`crate::check::raised`]).
//! Warnings a kernel recorded during a call (`oxtensor_runtime::warnings`) become
//! `RuntimeWarning`s.

use oxtensor::oxtensor_runtime::KernelError;
use oxtensor::{Error, GraphError, RuntimeError};
use pyo3::exceptions::{
    PyIndexError, PyOverflowError, PyRuntimeWarning, PyTypeError, PyValueError,
};
use pyo3::prelude::*;
use std::ffi::CString;

pyo3::import_exception!(numpy.linalg, LinAlgError);

/// True for a linear-algebra kernel's failure on the values of a matrix (the messages of
/// `oxtensor_linalg::LinalgError::{Singular, NotPositiveDefinite, NoConvergence}`).
fn is_linalg_failure(r: &RuntimeError) -> bool {
    matches!(r, RuntimeError::Kernel { source: KernelError::Value(m), .. }
        if m.contains(" is singular") || m.contains(" is not positive definite") || m.contains("did not converge"))
}

/// True for a random draw whose range is not finite (`oxtensor_random::RandomError`'s
/// "range exceeds valid bounds", NumPy's `OverflowError` message).
fn is_overflow(r: &RuntimeError) -> bool {
    matches!(r, RuntimeError::Kernel { source: KernelError::Value(m), .. }
        if m.contains("range exceeds valid bounds"))
}

/// A graph-building error as a Python exception.
pub fn graph_err(e: GraphError) -> PyErr {
    let msg = e.to_string();
    match &e {
        GraphError::DType { .. } | GraphError::Rank { .. } | GraphError::Arity { .. } => {
            PyTypeError::new_err(msg)
        }
        GraphError::Invalid { op, .. } if op.starts_with("Subtensor") => PyIndexError::new_err(msg),
        GraphError::Shape { .. } | GraphError::Invalid { .. } => PyValueError::new_err(msg),
    }
}

/// A facade error (compiling or calling a function) as a Python exception.
pub fn ox_err(e: Error) -> PyErr {
    if let Some(raised) = crate::check::raised(&e) {
        return raised;
    }
    match e {
        Error::Graph(g) => graph_err(g),
        Error::Runtime(ref r)
            if matches!(
                r.root(),
                RuntimeError::Kernel {
                    source: KernelError::Index(_),
                    ..
                }
            ) =>
        {
            PyIndexError::new_err(e.to_string())
        }
        Error::Runtime(ref r) if is_linalg_failure(r.root()) => LinAlgError::new_err(e.to_string()),
        Error::Runtime(ref r) if is_overflow(r.root()) => PyOverflowError::new_err(e.to_string()),
        other if other.is_type_error() => PyTypeError::new_err(other.to_string()),
        other => PyValueError::new_err(other.to_string()),
    }
}

/// A `TypeError` with `msg`.
pub fn type_err(msg: impl Into<String>) -> PyErr {
    PyTypeError::new_err(msg.into())
}

/// A `ValueError` with `msg`.
pub fn value_err(msg: impl Into<String>) -> PyErr {
    PyValueError::new_err(msg.into())
}

/// Shows the warnings a call's kernels recorded as NumPy would: each a `RuntimeWarning`
/// (`invalid value encountered in sqrt`, ...) at the caller. An error only when a warnings
/// filter turns one into an exception.
pub fn runtime_warnings(py: Python<'_>, messages: Vec<String>) -> PyResult<()> {
    for m in messages {
        let text =
            CString::new(m.replace('\0', " ")).map_err(|e| PyValueError::new_err(e.to_string()))?;
        PyErr::warn(py, &py.get_type::<PyRuntimeWarning>(), &text, 1)?;
    }
    Ok(())
}
