//! Run-time checks for Python (`oxtensor.raise_op`): `_core.check_and_raise(x, conds, exc,
//! msg)` builds an [`Op::CheckAndRaise`](oxtensor_graph::Op::CheckAndRaise), and a failed check
//! becomes the Python exception its kind names ([`raised`]).
//!
//! The graph holds the exception's kind as text (see [`oxtensor_graph::Check`]); the pure-Python
//! `oxtensor.raise_op` keeps the table from kinds to classes (builtin names, and keys it
//! registers for a user's classes), so the class a user passed — PyMC's `ParameterValueError`,
//! say — is the class raised.

use oxtensor::oxtensor_runtime::KernelError;
use oxtensor::{Error, RuntimeError};
use oxtensor_graph::Check;
use oxtensor_graph::build::check::check_and_raise as build_check;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::errors::graph_err;
use crate::operand::as_var;
use crate::site::at_user_site;
use crate::var::wrap;

/// Registers the builder.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(check_and_raise, m)?)?;
    Ok(())
}

/// `x` checked by `conds` (0-d each): a call computing it raises the exception of kind `exc`
/// (a key of `oxtensor.raise_op`'s table) with `msg` when a condition is false.
#[pyfunction]
fn check_and_raise(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    conds: Vec<Bound<'_, PyAny>>,
    exc: &str,
    msg: &str,
) -> PyResult<Py<PyAny>> {
    let x = as_var(py, x)?;
    let conds = conds
        .iter()
        .map(|c| as_var(py, c))
        .collect::<PyResult<Vec<_>>>()?;
    let v =
        at_user_site(py, || build_check(&x, &conds, Check::new(exc, msg))).map_err(graph_err)?;
    wrap(py, v)
}

/// The Python exception of a failed check, when `e` is one (its innermost error, inside loops
/// too): `oxtensor.raise_op._exception(kind, msg, note)` builds it, with the whole error
/// (naming the node and where it was created) as a note, so `str(exc)` is the message alone,
/// as in PyTensor. `None` for any other error.
pub fn raised(e: &Error) -> Option<PyErr> {
    let Error::Runtime(r) = e else {
        return None;
    };
    let RuntimeError::Kernel {
        source: KernelError::Raised { exc, msg },
        ..
    } = r.root()
    else {
        return None;
    };
    let whole = e.to_string();
    Some(Python::attach(|py| {
        py.import("oxtensor.raise_op")
            .and_then(|m| m.call_method1("_exception", (exc.as_str(), msg.as_str(), whole)))
            .map(|e| PyErr::from_value(e))
            .unwrap_or_else(|_| PyValueError::new_err(format!("{exc}: {msg}")))
    }))
}
