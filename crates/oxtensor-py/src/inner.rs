//! The inner-graph ops for Python: `OpFromGraph` (the core of
//! `oxtensor.compile.builders.OpFromGraph`) and `ifelse` (`oxtensor.ifelse.ifelse`).

use oxtensor_graph::{OpFromGraph, Var, ifelse as build_ifelse};
use pyo3::prelude::*;
use std::sync::Arc;

use crate::errors::graph_err;
use crate::site::at_user_site;
use crate::var::{as_var, wrap};

/// Registers the inner-graph builders.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyOpFromGraph>()?;
    m.add_function(wrap_pyfunction!(ifelse, m)?)?;
    Ok(())
}

/// Variables from a sequence of Python variables (or values, made constants).
fn vars(py: Python<'_>, items: &Bound<'_, PyAny>) -> PyResult<Vec<Var>> {
    items.try_iter()?.map(|item| as_var(py, &item?)).collect()
}

fn wrap_all(py: Python<'_>, vs: Vec<Var>) -> PyResult<Vec<Py<PyAny>>> {
    vs.into_iter().map(|v| wrap(py, v)).collect()
}

/// A graph used as one op: built once from `inputs` and `outputs`, then called on variables.
#[pyclass(frozen, name = "_OpFromGraph", module = "oxtensor._core")]
pub struct PyOpFromGraph {
    op: Arc<OpFromGraph>,
}

#[pymethods]
impl PyOpFromGraph {
    /// Freezes the graph; with `pullback`, a gradient graph `grads` built from the inputs, the
    /// outputs and `output_grads` (placeholders for the cotangents); with `pushforward`, a
    /// forward rule `output_tangents` built from the inputs and `tangents` (placeholders for
    /// the inputs' tangents).
    #[new]
    #[pyo3(signature = (
        inputs, outputs, name=None, output_grads=None, grads=None, tangents=None,
        output_tangents=None
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        inputs: &Bound<'_, PyAny>,
        outputs: &Bound<'_, PyAny>,
        name: Option<&str>,
        output_grads: Option<&Bound<'_, PyAny>>,
        grads: Option<&Bound<'_, PyAny>>,
        tangents: Option<&Bound<'_, PyAny>>,
        output_tangents: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyOpFromGraph> {
        let (ins, outs) = (vars(py, inputs)?, vars(py, outputs)?);
        let mut op = OpFromGraph::new(&ins, &outs, name).map_err(graph_err)?;
        if let (Some(og), Some(g)) = (output_grads, grads) {
            let (og, g) = (vars(py, og)?, vars(py, g)?);
            op = op.with_pullback(&ins, &outs, &og, &g).map_err(graph_err)?;
        }
        if let (Some(t), Some(ot)) = (tangents, output_tangents) {
            let (t, ot) = (vars(py, t)?, vars(py, ot)?);
            op = op.with_pushforward(&ins, &t, &ot).map_err(graph_err)?;
        }
        Ok(PyOpFromGraph { op: Arc::new(op) })
    }

    /// The op applied to `args`: one node; its outputs.
    fn call(&self, py: Python<'_>, args: &Bound<'_, PyAny>) -> PyResult<Vec<Py<PyAny>>> {
        let args = vars(py, args)?;
        let outs = at_user_site(py, || self.op.call(&args)).map_err(graph_err)?;
        wrap_all(py, outs)
    }

    /// The body expanded over `args` (`inline=True`).
    fn inline(&self, py: Python<'_>, args: &Bound<'_, PyAny>) -> PyResult<Vec<Py<PyAny>>> {
        let args = vars(py, args)?;
        let outs = at_user_site(py, || self.op.inline(&args)).map_err(graph_err)?;
        wrap_all(py, outs)
    }

    /// Explicit inputs a call takes.
    #[getter]
    fn n_inputs(&self) -> usize {
        self.op.n_explicit()
    }

    /// Outputs of a call.
    #[getter]
    fn n_outputs(&self) -> usize {
        self.op.body.outputs().len()
    }

    /// Equal bodies (and names, and gradients) make equal ops.
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<PyOpFromGraph>()
            .is_ok_and(|o| o.get().op == self.op)
    }

    fn __hash__(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.op.hash(&mut h);
        h.finish()
    }
}

/// `ifelse(cond, then, else)` on lists of variables: the outputs of one lazy IfElse node.
#[pyfunction]
fn ifelse(
    py: Python<'_>,
    cond: &Bound<'_, PyAny>,
    then: &Bound<'_, PyAny>,
    otherwise: &Bound<'_, PyAny>,
) -> PyResult<Vec<Py<PyAny>>> {
    let c = as_var(py, cond)?;
    let (t, e) = (vars(py, then)?, vars(py, otherwise)?);
    let outs = at_user_site(py, || build_ifelse(&c, &t, &e)).map_err(graph_err)?;
    wrap_all(py, outs)
}
