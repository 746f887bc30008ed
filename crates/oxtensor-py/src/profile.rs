//! `Function.profile`: the timings of a function compiled with `profile=True`.

use oxtensor::Function;
use pyo3::prelude::*;

/// A profiled function's timings (PyTensor's `ProfileStats`): read live, so every access sees
/// the calls made so far.
#[pyclass(frozen, name = "ProfileStats", module = "oxtensor.compile.profiling")]
pub struct PyProfile {
    pub(crate) f: Function,
}

impl PyProfile {
    fn snapshot(&self) -> PyResult<oxtensor::Profile> {
        self.f.profile().ok_or_else(|| {
            pyo3::exceptions::PyRuntimeError::new_err("this function is not profiled")
        })
    }
}

#[pymethods]
impl PyProfile {
    /// Prints the report (totals, then ops and nodes by decreasing time) to `file`
    /// (default `sys.stderr`, as PyTensor).
    #[pyo3(signature = (file = None))]
    fn summary(&self, py: Python<'_>, file: Option<Bound<'_, PyAny>>) -> PyResult<()> {
        let text = self.snapshot()?.summary();
        let file = match file {
            Some(f) => f,
            None => py.import("sys")?.getattr("stderr")?,
        };
        file.call_method1("write", (text,))?;
        Ok(())
    }

    /// The report as a string.
    fn summary_text(&self) -> PyResult<String> {
        Ok(self.snapshot()?.summary())
    }

    /// Completed calls.
    #[getter]
    fn fct_callcount(&self) -> PyResult<u64> {
        Ok(self.snapshot()?.calls)
    }

    /// Total seconds in those calls.
    #[getter]
    fn fct_call_time(&self) -> PyResult<f64> {
        Ok(self.snapshot()?.call_time.as_secs_f64())
    }

    /// Seconds spent compiling: rewriting plus the backend.
    #[getter]
    fn compile_time(&self) -> PyResult<f64> {
        let p = self.snapshot()?;
        Ok((p.rewrite_time + p.compile_time).as_secs_f64())
    }

    /// Seconds spent rewriting the graph.
    #[getter]
    fn rewrite_time(&self) -> PyResult<f64> {
        Ok(self.snapshot()?.rewrite_time.as_secs_f64())
    }

    /// The backend that ran the function.
    #[getter]
    fn backend(&self) -> PyResult<&'static str> {
        Ok(self.snapshot()?.backend)
    }

    /// `(node, op, seconds)` for every scheduled node, in execution order.
    #[getter]
    fn apply_time(&self) -> PyResult<Vec<(String, String, f64)>> {
        Ok(self
            .snapshot()?
            .nodes
            .into_iter()
            .map(|n| (n.node, n.op, n.time.as_secs_f64()))
            .collect())
    }

    fn __repr__(&self) -> PyResult<String> {
        let p = self.snapshot()?;
        Ok(format!(
            "<ProfileStats: {} calls, {:.6} s, backend {}>",
            p.calls,
            p.call_time.as_secs_f64(),
            p.backend
        ))
    }
}
