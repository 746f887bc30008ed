//! `scan` for Python: the core of `oxtensor.scan` (the Python layer turns PyTensor's
//! `sequences`/`outputs_info`/`non_sequences` and `fn`'s results into this call).

use oxtensor_graph::build::expand_dims;
use oxtensor_graph::{ScanSpec, Var, clone_replace, scan as build_scan};
use pyo3::prelude::*;
use rustc_hash::FxHashMap;

use crate::errors::graph_err;
use crate::site::at_user_site;
use crate::var::{as_var, wrap};

/// Registers `scan`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(scan, m)?)?;
    Ok(())
}

fn vars(py: Python<'_>, items: &Bound<'_, PyAny>) -> PyResult<Vec<Var>> {
    items.try_iter()?.map(|item| as_var(py, &item?)).collect()
}

/// One loop node. `outputs` are `fn`'s results: each state's next value, then the mapped
/// outputs; `until` the stop condition; `updates` pairs of a shared variable and its value
/// after a step. Each updated shared variable becomes one more state (initial value: the
/// variable's), read inside the step wherever the step read the variable. Returns the node's
/// outputs: the states (given ones, then one per update), then the mapped outputs.
#[pyfunction]
#[pyo3(signature = (
    tap_inputs, sequence_taps, state_taps, other_inputs, outputs, n_mapped, until, n_steps,
    sequences, initial, others, go_backwards, name, updates, truncate_gradient = None
))]
#[allow(clippy::too_many_arguments)]
fn scan(
    py: Python<'_>,
    tap_inputs: &Bound<'_, PyAny>,
    sequence_taps: Vec<Vec<i64>>,
    mut state_taps: Vec<Vec<i64>>,
    other_inputs: &Bound<'_, PyAny>,
    outputs: &Bound<'_, PyAny>,
    n_mapped: usize,
    until: Option<&Bound<'_, PyAny>>,
    n_steps: &Bound<'_, PyAny>,
    sequences: &Bound<'_, PyAny>,
    initial: &Bound<'_, PyAny>,
    others: &Bound<'_, PyAny>,
    go_backwards: bool,
    name: Option<&str>,
    updates: Vec<(Bound<'_, PyAny>, Bound<'_, PyAny>)>,
    truncate_gradient: Option<usize>,
) -> PyResult<Vec<Py<PyAny>>> {
    let mut tap_inputs = vars(py, tap_inputs)?;
    let other_inputs = vars(py, other_inputs)?;
    let outputs = vars(py, outputs)?;
    let until = until.map(|u| as_var(py, u)).transpose()?;
    let n_steps = as_var(py, n_steps)?;
    let sequences = vars(py, sequences)?;
    let mut initial = vars(py, initial)?;
    let others = vars(py, others)?;
    let n_states = outputs.len() - n_mapped.min(outputs.len());
    let mut stand_ins: FxHashMap<Var, Var> = FxHashMap::default();
    let mut next_values = Vec::new();
    for (shared, value) in &updates {
        let (shared, value) = (as_var(py, shared)?, as_var(py, value)?);
        let inner = Var::input(shared.name().as_deref(), shared.ty().clone());
        tap_inputs.push(inner.clone());
        state_taps.push(vec![-1]);
        initial.push(expand_dims(&shared, 0).map_err(graph_err)?);
        stand_ins.insert(shared, inner);
        next_values.push(value);
    }
    let body: Vec<Var> = outputs[..n_states]
        .iter()
        .chain(&next_values)
        .chain(&outputs[n_states..])
        .chain(&until)
        .cloned()
        .collect();
    let body = clone_replace(&body, &stand_ins).map_err(graph_err)?;
    let outs = at_user_site(py, || {
        build_scan(ScanSpec {
            tap_inputs: &tap_inputs,
            sequence_taps,
            state_taps,
            other_inputs: &other_inputs,
            outputs: &body,
            n_mapped,
            until: until.is_some(),
            n_steps,
            sequences: &sequences,
            initial: &initial,
            others: &others,
            go_backwards,
            truncate_gradient,
            name,
        })
    })
    .map_err(graph_err)?;
    outs.into_iter().map(|v| wrap(py, v)).collect()
}
