//! Symbolic differentiation: `oxtensor._core.grad`, `jacobian`, `hessian` and `pushforward`,
//! forwarding to
//! [`oxtensor::gradient`].

use oxtensor::gradient::{
    self, DisconnectedInputs, GradError, GradOptions, Gradient, NullGradients, ReturnDisconnected,
};
use oxtensor_graph::Var;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

use crate::errors::{graph_err, value_err};
use crate::site::at_user_site;
use crate::var::{var_of, wrap};

pyo3::create_exception!(
    oxtensor,
    NullTypeGradError,
    PyTypeError,
    "A gradient that is mathematically undefined was asked for (PyTensor's NullType gradient, e.g. through undefined_grad)."
);

/// Registers the gradient functions and `NullTypeGradError`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("NullTypeGradError", m.py().get_type::<NullTypeGradError>())?;
    m.add_function(wrap_pyfunction!(grad, m)?)?;
    m.add_function(wrap_pyfunction!(jacobian, m)?)?;
    m.add_function(wrap_pyfunction!(hessian, m)?)?;
    m.add_function(wrap_pyfunction!(pushforward, m)?)?;
    Ok(())
}

/// A differentiation error as a Python exception (`NullTypeGradError`, a `TypeError`, for an
/// undefined gradient; `TypeError` for a non-scalar cost or a bad seed; `ValueError`
/// otherwise, as PyTensor).
fn grad_err(e: GradError) -> PyErr {
    match e {
        GradError::Graph(g) => graph_err(g),
        e @ GradError::Undefined { .. } => NullTypeGradError::new_err(e.to_string()),
        other if other.is_type_error() => PyTypeError::new_err(other.to_string()),
        other => PyValueError::new_err(other.to_string()),
    }
}

fn vars(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<Var>> {
    obj.try_iter()?
        .map(|i| {
            let i = i?;
            var_of(&i).ok_or_else(|| {
                crate::errors::type_err(format!(
                    "{what} must be symbolic variables, got {}",
                    i.repr().map(|r| r.to_string()).unwrap_or_default()
                ))
            })
        })
        .collect()
}

fn options(
    obj_consider_constant: &Bound<'_, PyAny>,
    disconnected_inputs: &str,
    return_disconnected: &str,
    null_gradients: &str,
    known_grads: &Bound<'_, PyAny>,
) -> PyResult<GradOptions> {
    let disconnected_inputs = match disconnected_inputs {
        "raise" => DisconnectedInputs::Raise,
        "warn" => DisconnectedInputs::Warn,
        "ignore" => DisconnectedInputs::Ignore,
        other => {
            return Err(value_err(format!(
                "disconnected_inputs must be 'raise', 'warn' or 'ignore', got {other:?}"
            )));
        }
    };
    let return_disconnected = match return_disconnected {
        "zero" => ReturnDisconnected::Zero,
        "none" => ReturnDisconnected::None,
        "disconnected" => ReturnDisconnected::Disconnected,
        other => {
            return Err(value_err(format!(
                "return_disconnected must be 'zero', 'none' or 'disconnected', got {other:?}"
            )));
        }
    };
    let null_gradients = match null_gradients {
        "raise" => NullGradients::Raise,
        "return" => NullGradients::Return,
        other => {
            return Err(value_err(format!(
                "null_gradients must be 'raise' or 'return', got {other:?}"
            )));
        }
    };
    let mut known = Vec::new();
    for item in known_grads.try_iter()? {
        let (k, v): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item?.extract()?;
        match (var_of(&k), var_of(&v)) {
            (Some(k), Some(v)) => known.push((k, v)),
            _ => {
                return Err(crate::errors::type_err(
                    "known_grads must map variables to gradient variables",
                ));
            }
        }
    }
    Ok(GradOptions {
        consider_constant: vars(obj_consider_constant, "consider_constant")?,
        disconnected_inputs,
        known_grads: known,
        return_disconnected,
        null_gradients,
    })
}

/// PyTensor's `grad`: the gradients of the scalar `cost` (or `None` with `known_grads`) with
/// respect to each of `wrt`; `None` entries for disconnected inputs under
/// `return_disconnected="none"`.
#[pyfunction]
#[pyo3(signature = (cost, wrt, consider_constant, disconnected_inputs="raise", return_disconnected="zero", null_gradients="raise", known_grads=None))]
#[allow(clippy::too_many_arguments)]
fn grad(
    py: Python<'_>,
    cost: &Bound<'_, PyAny>,
    wrt: &Bound<'_, PyAny>,
    consider_constant: &Bound<'_, PyAny>,
    disconnected_inputs: &str,
    return_disconnected: &str,
    null_gradients: &str,
    known_grads: Option<&Bound<'_, PyAny>>,
) -> PyResult<Vec<Option<Py<PyAny>>>> {
    let cost =
        if cost.is_none() {
            None
        } else {
            Some(var_of(cost).ok_or_else(|| {
                crate::errors::type_err("grad: the cost must be a symbolic variable")
            })?)
        };
    let wrt = vars(wrt, "grad: wrt")?;
    let empty = pyo3::types::PyList::empty(py);
    let opts = options(
        consider_constant,
        disconnected_inputs,
        return_disconnected,
        null_gradients,
        known_grads.unwrap_or(empty.as_any()),
    )?;
    let grads =
        at_user_site(py, || gradient::grad(cost.as_ref(), &wrt, &opts)).map_err(grad_err)?;
    grads
        .into_iter()
        .map(|g| match g {
            Gradient::Var(v) => wrap(py, v).map(Some),
            Gradient::None | Gradient::Disconnected | Gradient::Undefined(_) => Ok(None),
        })
        .collect()
}

/// Shared by `jacobian` and `hessian`: converts the arguments, builds the derivative with
/// `derive` at the user's site, and wraps the results.
fn second_order(
    what: &str,
    of_name: &str,
    of: &Bound<'_, PyAny>,
    wrt: &Bound<'_, PyAny>,
    consider_constant: &Bound<'_, PyAny>,
    disconnected_inputs: &str,
    derive: impl FnOnce(&Var, &[Var], &GradOptions) -> Result<Vec<Var>, GradError>,
) -> PyResult<Vec<Py<PyAny>>> {
    let v = var_of(of).ok_or_else(|| {
        crate::errors::type_err(format!("{what}: the {of_name} must be a variable"))
    })?;
    let wrt = vars(wrt, &format!("{what}: wrt"))?;
    let py = of.py();
    let empty = pyo3::types::PyList::empty(py);
    let opts = options(
        consider_constant,
        disconnected_inputs,
        "zero",
        "raise",
        empty.as_any(),
    )?;
    let out = at_user_site(py, || derive(&v, &wrt, &opts)).map_err(grad_err)?;
    out.into_iter().map(|v| wrap(py, v)).collect()
}

/// PyTensor's `jacobian`: one variable per `wrt`, of shape `expression.shape + wrt.shape`.
#[pyfunction]
#[pyo3(signature = (expression, wrt, consider_constant, disconnected_inputs="raise"))]
fn jacobian(
    expression: &Bound<'_, PyAny>,
    wrt: &Bound<'_, PyAny>,
    consider_constant: &Bound<'_, PyAny>,
    disconnected_inputs: &str,
) -> PyResult<Vec<Py<PyAny>>> {
    second_order(
        "jacobian",
        "expression",
        expression,
        wrt,
        consider_constant,
        disconnected_inputs,
        gradient::jacobian,
    )
}

/// PyTensor's `hessian`: one variable per `wrt`, of shape `wrt.shape + wrt.shape`.
#[pyfunction]
#[pyo3(signature = (cost, wrt, consider_constant, disconnected_inputs="raise"))]
fn hessian(
    cost: &Bound<'_, PyAny>,
    wrt: &Bound<'_, PyAny>,
    consider_constant: &Bound<'_, PyAny>,
    disconnected_inputs: &str,
) -> PyResult<Vec<Py<PyAny>>> {
    second_order(
        "hessian",
        "cost",
        cost,
        wrt,
        consider_constant,
        disconnected_inputs,
        gradient::hessian,
    )
}

/// PyTensor's `pushforward` (`Rop`): the Jacobian-vector products of `outputs` with respect to
/// `wrt` in the directions `tangents` (one per `wrt`), one variable per output.
#[pyfunction]
fn pushforward(
    py: Python<'_>,
    outputs: &Bound<'_, PyAny>,
    wrt: &Bound<'_, PyAny>,
    tangents: &Bound<'_, PyAny>,
) -> PyResult<Vec<Py<PyAny>>> {
    let outputs = vars(outputs, "outputs")?;
    let wrt = vars(wrt, "wrt")?;
    let tangents = vars(tangents, "tangents")?;
    let jvps =
        at_user_site(py, || gradient::pushforward(&outputs, &wrt, &tangents)).map_err(grad_err)?;
    jvps.into_iter().map(|v| wrap(py, v)).collect()
}
