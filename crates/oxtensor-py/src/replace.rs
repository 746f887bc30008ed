//! Graph substitution for Python: `oxtensor.clone_replace` (PyTensor's `clone_replace`), which
//! pickling also uses to tie loaded expressions to the shared variables loaded beside them.

use oxtensor_graph::{Var, clone_replace as replace_in};
use pyo3::prelude::*;
use rustc_hash::FxHashMap;

use crate::errors::{graph_err, type_err};
use crate::operand::{as_var, var_of};
use crate::var::wrap;

/// Registers `clone_replace`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(clone_replace, m)?)?;
    Ok(())
}

/// `outputs` rebuilt with each variable of `pairs` (`(old, new)`) replaced by its new one
/// (a value is made a constant). A replacement must have the old variable's type or a more
/// specific one (PyTensor's rule: the same dtype and rank, and static wherever the old one
/// is, with the same extent), so that static shapes can be given to a graph built without
/// them; another type would silently change what the graph computes, so it raises
/// `TypeError` naming both.
#[pyfunction]
fn clone_replace(
    py: Python<'_>,
    outputs: Vec<Bound<'_, PyAny>>,
    pairs: Vec<(Bound<'_, PyAny>, Bound<'_, PyAny>)>,
) -> PyResult<Vec<Py<PyAny>>> {
    let outputs = outputs
        .iter()
        .map(|o| {
            var_of(o).ok_or_else(|| type_err("clone_replace: outputs must be symbolic variables"))
        })
        .collect::<PyResult<Vec<Var>>>()?;
    let mut map = FxHashMap::default();
    for (old, new) in &pairs {
        let old = var_of(old).ok_or_else(|| {
            type_err("clone_replace: each replaced key must be a symbolic variable")
        })?;
        let new = as_var(py, new)?;
        let (was, is) = (old.ty(), new.ty());
        let refines = was.dtype == is.dtype
            && was.ndim() == is.ndim()
            && was
                .shape
                .iter()
                .zip(&is.shape)
                .all(|(w, i)| w.is_none() || w == i);
        if !refines {
            return Err(type_err(format!(
                "clone_replace: cannot replace {} ({}) by {} ({}): the types differ",
                old.describe(),
                old.ty(),
                new.describe(),
                new.ty()
            )));
        }
        map.insert(old, new);
    }
    replace_in(&outputs, &map)
        .map_err(graph_err)?
        .into_iter()
        .map(|v| wrap(py, v))
        .collect()
}
