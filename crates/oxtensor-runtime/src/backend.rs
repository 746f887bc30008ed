use crate::RuntimeError;
use oxtensor_data::Tensor;
use oxtensor_graph::{FunctionGraph, Node};
use std::sync::Arc;
use std::time::Duration;

/// Something that turns a rewritten [`FunctionGraph`] into an [`Executable`]: the interpreter,
/// generated native code, a JIT, later a GPU. Everything above this trait (graph building,
/// rewriting, scheduling, the `Function` wrapper) is shared by all backends.
pub trait Backend: Send + Sync {
    /// A short name (`"interp"`, `"native"`), used by modes and printing.
    fn name(&self) -> &'static str;

    /// Compiles the graph. Values are passed to the executable in the order: the graph's
    /// explicit inputs, then its shared inputs.
    fn compile(&self, graph: &FunctionGraph) -> Result<Arc<dyn Executable>, RuntimeError>;
}

/// A compiled graph. Safe to call from several threads at once.
pub trait Executable: Send + Sync {
    /// Runs on `values` (explicit inputs, then shared inputs); a value that does not fit its
    /// input's type (dtype, rank, static extents) is an error, never a kernel call. Returns one
    /// tensor per graph output. A consumed shared variable's value
    /// ([`FunctionGraph::consumed`]) may have its storage overwritten when nothing but it and
    /// one more handle (the variable's own, which the caller must not read until it stores the
    /// update) holds that storage; every other value is left untouched.
    fn run(&self, values: Vec<Tensor>) -> Result<Vec<Tensor>, RuntimeError> {
        self.run_timed(values, None)
    }

    /// [`Executable::run`], and with `times` (one entry per node of
    /// [`Executable::schedule`]) adds each node's wall time to its entry: this is what
    /// `profile=True` reports.
    fn run_timed(
        &self,
        values: Vec<Tensor>,
        times: Option<&mut [Duration]>,
    ) -> Result<Vec<Tensor>, RuntimeError>;

    /// [`Executable::run`], offering `outs[j]` (when given) as the buffer of graph output `j`
    /// (see [`Plan::execute_into`](crate::Plan::execute_into), whose guarantees the caller
    /// gives): a backend that writes an output there returns a tensor sharing that storage. The
    /// default ignores the buffers.
    fn run_into(
        &self,
        values: Vec<Tensor>,
        outs: &[Option<Tensor>],
    ) -> Result<Vec<Tensor>, RuntimeError> {
        let _ = outs;
        self.run(values)
    }

    /// The nodes in the order they run, as [`Executable::run`] times them.
    fn schedule(&self) -> Vec<Arc<Node>>;
}
