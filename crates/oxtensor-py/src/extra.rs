//! Extra ops and gradient markers for Python: `_core.extra(name, inputs, ...)` builds one of
//! [`oxtensor_graph::build::extra`] (cumsum, sort, unique, …; the pure-Python
//! `oxtensor.tensor.extra_ops` and `sort` hold PyTensor's signatures and normalise the
//! arguments), and `_core.grad_marker(kind, x, lo, hi)` builds `zero_grad`,
//! `disconnected_grad`, `grad_clip` or `undefined_grad`.

use oxtensor::gradient::{self, GradError};
use oxtensor_graph::build::extra as ex;
use oxtensor_graph::{GraphError, Var};
use pyo3::prelude::*;

use crate::errors::{graph_err, value_err};
use crate::site::at_user_site;
use crate::var::{as_var, wrap};

/// Registers the extra-op and gradient-marker builders.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(extra, m)?)?;
    m.add_function(wrap_pyfunction!(grad_marker, m)?)?;
    Ok(())
}

/// Builds extra op `name` on `inputs`; returns its outputs as a list.
#[pyfunction]
#[pyo3(signature = (
    name, inputs, axis=None, right=false, return_index=false, return_inverse=false,
    return_counts=false, minlength=0, n=1
))]
#[allow(clippy::too_many_arguments)]
fn extra(
    py: Python<'_>,
    name: &str,
    inputs: Vec<Option<Bound<'_, PyAny>>>,
    axis: Option<i64>,
    right: bool,
    return_index: bool,
    return_inverse: bool,
    return_counts: bool,
    minlength: usize,
    n: usize,
) -> PyResult<Vec<Py<PyAny>>> {
    let xs: Vec<Option<Var>> = inputs
        .iter()
        .map(|x| x.as_ref().map(|x| as_var(py, x)).transpose())
        .collect::<PyResult<_>>()?;
    let arg = |i: usize| required(&xs, i, name);
    let x = arg(0)?;
    let one = |b: Result<Var, GraphError>| b.map(|v| vec![v]);
    let outs = at_user_site(py, || -> PyResult<Vec<Var>> {
        let built = match name {
            "cumsum" => one(ex::cumsum(x, axis)),
            "cumprod" => one(ex::cumprod(x, axis)),
            "sort" => one(ex::sort(x, axis)),
            "argsort" => one(ex::argsort(x, axis)),
            "searchsorted" => one(ex::searchsorted(
                x,
                arg(1)?,
                right,
                xs.get(2).and_then(Option::as_ref),
            )),
            "repeat" => one(ex::repeat(x, arg(1)?, axis)),
            "unique" => {
                ex::unique(x, return_index, return_inverse, return_counts).map(|v| v.into_vec())
            }
            "bincount" => one(ex::bincount(
                x,
                xs.get(1).and_then(Option::as_ref),
                minlength,
            )),
            "nonzero" => one(ex::nonzero(x)),
            "take_along_axis" => one(ex::take_along_axis(x, arg(1)?, axis)),
            "diff" => one(ex::diff(x, n, axis.unwrap_or(-1))),
            other => return Err(value_err(format!("unknown extra op {other:?}"))),
        };
        built.map_err(graph_err)
    })?;
    outs.into_iter().map(|v| wrap(py, v)).collect()
}

/// Argument `i` of extra op `name`, which must be given.
fn required<'a>(xs: &'a [Option<Var>], i: usize, name: &str) -> PyResult<&'a Var> {
    xs.get(i)
        .and_then(Option::as_ref)
        .ok_or_else(|| value_err(format!("{name}: argument {i} is missing")))
}

fn marker_err(e: GradError) -> PyErr {
    match e {
        GradError::Graph(g) => graph_err(g),
        other => value_err(other.to_string()),
    }
}

/// Builds gradient marker `kind` (`"zero"`, `"disconnected"`, `"clip"` with bounds `lo`, `hi`)
/// on `x`.
#[pyfunction]
#[pyo3(signature = (kind, x, lo=None, hi=None))]
fn grad_marker(
    py: Python<'_>,
    kind: &str,
    x: &Bound<'_, PyAny>,
    lo: Option<&Bound<'_, PyAny>>,
    hi: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    let x = as_var(py, x)?;
    let v = match (kind, lo, hi) {
        ("zero", _, _) => at_user_site(py, || gradient::zero_grad(&x)),
        ("disconnected", _, _) => at_user_site(py, || gradient::disconnected_grad(&x)),
        ("undefined", _, _) => at_user_site(py, || gradient::undefined_grad(&x)),
        ("clip", Some(lo), Some(hi)) => {
            let (lo, hi) = (as_var(py, lo)?, as_var(py, hi)?);
            at_user_site(py, || gradient::grad_clip(&x, &lo, &hi))
        }
        (other, _, _) => {
            return Err(value_err(format!(
                "unknown gradient marker {other:?} (or grad_clip without both bounds)"
            )));
        }
    }
    .map_err(marker_err)?;
    wrap(py, v)
}
