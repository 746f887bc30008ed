//! The special functions and the stable log-sum-exp family for `pt.special` and `pt`: the table
//! of special functions (from which the Python package defines one function per entry) and the
//! builders of the composite functions (`logsumexp`, `softmax`, `log_softmax`, `logaddexp`,
//! `gammau`, `gammal`).

use oxtensor_graph::SpecialFn;
use oxtensor_graph::build;
use pyo3::prelude::*;

use crate::builders::axes_arg;
use crate::errors::value_err;
use crate::site::at_user_site;
use crate::var::{as_var, operand, resolve, wrap_built};
use oxtensor_graph::Var;

/// Registers the functions.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(special_functions, m)?)?;
    m.add_function(wrap_pyfunction!(logsumexp, m)?)?;
    m.add_function(wrap_pyfunction!(softmax, m)?)?;
    m.add_function(wrap_pyfunction!(log_softmax, m)?)?;
    m.add_function(wrap_pyfunction!(logaddexp, m)?)?;
    m.add_function(wrap_pyfunction!(gammau, m)?)?;
    m.add_function(wrap_pyfunction!(gammal, m)?)?;
    Ok(())
}

/// Every special function as `(python_name, parameter_names)`, in table order.
#[pyfunction]
fn special_functions() -> Vec<(&'static str, Vec<&'static str>)> {
    SpecialFn::ALL
        .iter()
        .map(|f| (f.py_name(), f.export().params.to_vec()))
        .collect()
}

/// `log(sum(exp(x), axis, keepdims))`, stable.
#[pyfunction]
#[pyo3(signature = (x, axis=None, keepdims=false))]
fn logsumexp(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    axis: Option<&Bound<'_, PyAny>>,
    keepdims: bool,
) -> PyResult<Py<PyAny>> {
    let v = as_var(py, x)?;
    let axes = axes_arg(axis)?;
    wrap_built(
        py,
        at_user_site(py, || build::logsumexp(&v, axes.as_deref(), keepdims)),
    )
}

/// `exp(x) / sum(exp(x), axis)`, stable.
#[pyfunction]
#[pyo3(signature = (x, axis=None))]
fn softmax(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    axis: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    let v = as_var(py, x)?;
    let axes = axes_arg(axis)?;
    wrap_built(py, at_user_site(py, || build::softmax(&v, axes.as_deref())))
}

/// `log(softmax(x, axis))`, stable.
#[pyfunction]
#[pyo3(signature = (x, axis=None))]
fn log_softmax(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    axis: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    let v = as_var(py, x)?;
    let axes = axes_arg(axis)?;
    wrap_built(
        py,
        at_user_site(py, || build::log_softmax(&v, axes.as_deref())),
    )
}

/// The two operands as variables, Python numbers typed as weak scalars against the other
/// operand (as in `x + 1.5`).
fn pair(py: Python<'_>, a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> PyResult<(Var, Var)> {
    let ops = vec![operand(py, a)?, operand(py, b)?];
    let mut vars = resolve(py, ops, 0)?.into_iter();
    match (vars.next(), vars.next()) {
        (Some(a), Some(b)) => Ok((a, b)),
        _ => Err(value_err("expected two operands")),
    }
}

/// `log(exp(a) + exp(b))`, stable.
#[pyfunction]
fn logaddexp(py: Python<'_>, a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    let (a, b) = pair(py, a, b)?;
    wrap_built(py, at_user_site(py, || build::logaddexp(&a, &b)))
}

/// The upper incomplete gamma function `Γ(k, x)`.
#[pyfunction]
fn gammau(py: Python<'_>, k: &Bound<'_, PyAny>, x: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    let (k, x) = pair(py, k, x)?;
    wrap_built(py, at_user_site(py, || build::gammau(&k, &x)))
}

/// The lower incomplete gamma function `γ(k, x)`.
#[pyfunction]
fn gammal(py: Python<'_>, k: &Bound<'_, PyAny>, x: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    let (k, x) = pair(py, k, x)?;
    wrap_built(py, at_user_site(py, || build::gammal(&k, &x)))
}
