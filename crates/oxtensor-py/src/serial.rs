//! The no-code graph format in Python (`oxtensor-serial`): `_core.serialize` writes variables,
//! updates and givens as a document, `_core.deserialize` reads one back as fresh variables.
//! Pickling (`oxtensor.compile.pickling`), `oxtensor.save`/`load` and the JAX translation all
//! go through these two functions.

use oxtensor_graph::{NodeKind, Var, toposort};
use oxtensor_serial::{Bundle, decode, encode};
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use rustc_hash::FxHashSet;

use crate::errors::{type_err, value_err};
use crate::operand::var_of;
use crate::var::wrap;

/// Registers `serialize` and `deserialize`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(serialize, m)?)?;
    m.add_function(wrap_pyfunction!(deserialize, m)?)?;
    Ok(())
}

fn vars(items: &[Bound<'_, PyAny>], what: &str) -> PyResult<Vec<Var>> {
    items
        .iter()
        .map(|o| var_of(o).ok_or_else(|| type_err(format!("{what} must be symbolic variables"))))
        .collect()
}

fn pairs(items: &[(Bound<'_, PyAny>, Bound<'_, PyAny>)], what: &str) -> PyResult<Vec<(Var, Var)>> {
    items
        .iter()
        .map(|(a, b)| {
            Ok((
                var_of(a).ok_or_else(|| type_err(format!("{what} must be variable pairs")))?,
                var_of(b).ok_or_else(|| type_err(format!("{what} must be variable pairs")))?,
            ))
        })
        .collect()
}

/// The shared generators (with their default updates) that `roots` read, each once.
pub fn generators_read(roots: &[Var]) -> Vec<(Var, Option<Var>)> {
    let mut seen = FxHashSet::default();
    let mut found = Vec::new();
    let mut stack: Vec<Var> = roots.to_vec();
    while let Some(root) = stack.pop() {
        let order = toposort(std::slice::from_ref(&root));
        let leaves = std::iter::once(&root).chain(order.iter().flat_map(|n| n.inputs()));
        for v in leaves {
            if matches!(v.node().kind(), NodeKind::Shared(_))
                && seen.insert(v.clone())
                && let Some(update) = crate::random::generator_entry(v)
            {
                if let Some(u) = &update {
                    stack.push(u.clone());
                }
                found.push((v.clone(), update));
            }
        }
    }
    found
}

/// Writes `inputs`, `outputs`, `updates` and `givens` (lists of variables and of variable
/// pairs) and `meta` (JSON text kept as it is) as a document; the shared generators read are
/// recorded with their default updates.
#[pyfunction]
#[pyo3(signature = (inputs, outputs, updates=Vec::new(), givens=Vec::new(), meta="null"))]
fn serialize(
    inputs: Vec<Bound<'_, PyAny>>,
    outputs: Vec<Bound<'_, PyAny>>,
    updates: Vec<(Bound<'_, PyAny>, Bound<'_, PyAny>)>,
    givens: Vec<(Bound<'_, PyAny>, Bound<'_, PyAny>)>,
    meta: &str,
) -> PyResult<String> {
    let inputs = vars(&inputs, "inputs")?;
    let outputs = vars(&outputs, "outputs")?;
    let updates = pairs(&updates, "updates")?;
    let givens = pairs(&givens, "givens")?;
    let meta =
        serde_json::from_str(meta).map_err(|e| value_err(format!("meta is not JSON: {e}")))?;
    let roots: Vec<Var> = outputs
        .iter()
        .chain(updates.iter().flat_map(|(a, b)| [a, b]))
        .chain(givens.iter().map(|(_, b)| b))
        .cloned()
        .collect();
    Ok(encode(&Bundle {
        generators: generators_read(&roots),
        inputs,
        outputs,
        updates,
        givens,
        meta,
    }))
}

/// Reads a document: `(inputs, outputs, updates, givens, meta)` with fresh variables (shared
/// generators registered with their default updates) and `meta` as JSON text. A corrupt or
/// newer document raises `ValueError` naming the field.
#[pyfunction]
fn deserialize<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyTuple>> {
    let b = decode(text).map_err(|e| value_err(e.to_string()))?;
    for (g, update) in &b.generators {
        crate::random::register_generator(g.clone(), update.clone());
    }
    let wrap_all = |vs: &[Var]| -> PyResult<Vec<Py<PyAny>>> {
        vs.iter().map(|v| wrap(py, v.clone())).collect()
    };
    let wrap_pairs = |ps: &[(Var, Var)]| -> PyResult<Vec<(Py<PyAny>, Py<PyAny>)>> {
        ps.iter()
            .map(|(a, b)| Ok((wrap(py, a.clone())?, wrap(py, b.clone())?)))
            .collect()
    };
    (
        wrap_all(&b.inputs)?,
        wrap_all(&b.outputs)?,
        wrap_pairs(&b.updates)?,
        wrap_pairs(&b.givens)?,
        b.meta.to_string(),
    )
        .into_pyobject(py)
}
