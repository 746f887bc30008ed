//! Running the inner-graph ops ([`OpFromGraph`](oxtensor_graph::OpFromGraph) and
//! [`IfElse`](oxtensor_graph::IfElse)): each body is compiled by the backend compiling the
//! function, once per distinct body (bodies are frozen graphs, so equal bodies are the same
//! key), and run as a nested executable. An `IfElse` runs only the branch its condition picks.

use crate::{Backend, Executable, KernelError, RuntimeError};
use oxtensor_data::Tensor;
use oxtensor_graph::{FrozenGraph, FunctionGraph, Node, Op};
use rustc_hash::FxHashMap;
use std::sync::{Arc, Mutex, Weak};

/// A backend's compiled bodies, shared by every function it compiles: a body used by several
/// call sites, or by several functions alive at once, is compiled once. Entries hold the
/// executables weakly, so a body is freed with the last function using it.
#[derive(Default)]
pub struct BodyCache(Mutex<FxHashMap<FrozenGraph, Weak<dyn Executable>>>);

impl BodyCache {
    /// The compiled `body`: the cached one while any function still holds it, else compiled
    /// now by `backend` (whose passes then apply inside the body too).
    fn get(
        &self,
        backend: &dyn Backend,
        body: &FrozenGraph,
    ) -> Result<Arc<dyn Executable>, RuntimeError> {
        if let Some(exec) = self.lock().get(body).and_then(Weak::upgrade) {
            return Ok(exec);
        }
        let graph = FunctionGraph::new(body.placeholders(), body.outputs().to_vec())
            .map_err(|e| RuntimeError::Unsupported(format!("an inner graph is invalid: {e}")))?;
        let exec = backend.compile(&graph)?;
        let mut map = self.lock();
        map.retain(|_, e| e.strong_count() > 0);
        map.insert(body.clone(), Arc::downgrade(&exec));
        Ok(exec)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, FxHashMap<FrozenGraph, Weak<dyn Executable>>> {
        // A panic while holding the lock leaves the map consistent (entries are whole).
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The compiled bodies of one function's inner-graph nodes.
#[derive(Default)]
pub struct InnerBodies(FxHashMap<FrozenGraph, Arc<dyn Executable>>);

impl InnerBodies {
    /// Compiles, through `backend` and its `cache`, the body of every inner-graph node of
    /// `graph` (nested bodies are compiled by the bodies' own compilation).
    pub fn compile(
        backend: &dyn Backend,
        cache: &BodyCache,
        graph: &FunctionGraph,
    ) -> Result<InnerBodies, RuntimeError> {
        Self::compile_except(backend, cache, graph, |_| false)
    }

    /// As [`InnerBodies::compile`], but not the bodies of the nodes `skip` picks: those the
    /// backend runs its own way, leaving only the rare cases its code does not take to
    /// [`run_interpreted`] (so their bodies are not compiled twice).
    pub fn compile_except(
        backend: &dyn Backend,
        cache: &BodyCache,
        graph: &FunctionGraph,
        skip: impl Fn(&Node) -> bool,
    ) -> Result<InnerBodies, RuntimeError> {
        let mut map = FxHashMap::default();
        for node in graph.toposort().iter().filter(|n| !skip(n)) {
            for body in node.op().map(Op::tensor_bodies).unwrap_or_default() {
                if !map.contains_key(body) {
                    map.insert(body.clone(), cache.get(backend, body)?);
                }
            }
        }
        Ok(InnerBodies(map))
    }

    /// Runs `node` on `args` when it is an inner-graph node (`None` otherwise).
    pub fn run(&self, node: &Node, args: &[&Tensor]) -> Option<Result<Vec<Tensor>, RuntimeError>> {
        self.run_op(node.op()?, args)
    }

    /// Runs `op` on `args` when it is an inner-graph op (`None` otherwise).
    fn run_op(&self, op: &Op, args: &[&Tensor]) -> Option<Result<Vec<Tensor>, RuntimeError>> {
        let (body, args) = match op {
            Op::OpFromGraph(o) => (&o.body, args),
            Op::Scan(s) => {
                let exec = self.0.get(&s.body)?;
                return Some(crate::scan::run(s, exec.as_ref(), args));
            }
            Op::IfElse(b) => match args.split_first() {
                Some((cond, rest)) => match truth(cond) {
                    Ok(true) => (&b.then_branch, rest),
                    Ok(false) => (&b.else_branch, rest),
                    Err(e) => return Some(Err(e)),
                },
                None => return None,
            },
            _ => return None,
        };
        let exec = self.0.get(body)?;
        Some(exec.run(args.iter().map(|t| (*t).clone()).collect()))
    }
}

/// The truth of a 0-d condition (non-zero, as NumPy's `bool`; NaN is true).
fn truth(cond: &Tensor) -> Result<bool, RuntimeError> {
    cond.to_vec_as::<bool>()
        .first()
        .copied()
        .ok_or_else(|| RuntimeError::Unsupported("an IfElse condition has no element".into()))
}

/// Runs an inner-graph op with its bodies compiled by the interpreter (process-wide cache):
/// the reference, and the fallback of a backend that runs such a node its own way and hands
/// it back in the cases its code does not take. `None` when `op` has no inner graph.
pub fn run_interpreted(op: &Op, args: &[&Tensor]) -> Option<Result<Vec<Tensor>, RuntimeError>> {
    let mut map = FxHashMap::default();
    for body in op.tensor_bodies() {
        match interpreted().get(&crate::Interpreter, body) {
            Ok(exec) => map.insert(body.clone(), exec),
            Err(e) => return Some(Err(e)),
        };
    }
    InnerBodies(map).run_op(op, args)
}

/// The interpreter's compiled bodies of `op` (none when it has no inner graph), for a caller
/// that runs `op` many times through [`run_interpreted`] (a native loop calling back a step's
/// `IfElse`): the process-wide cache holds bodies weakly, so while the caller keeps these, no
/// run compiles them again.
pub fn interpreted_bodies(op: &Op) -> Result<Vec<Arc<dyn Executable>>, RuntimeError> {
    op.tensor_bodies()
        .into_iter()
        .map(|body| interpreted().get(&crate::Interpreter, body))
        .collect()
}

/// The process-wide cache of bodies the interpreter compiled for [`run_interpreted`].
fn interpreted() -> &'static BodyCache {
    static CACHE: std::sync::OnceLock<BodyCache> = std::sync::OnceLock::new();
    CACHE.get_or_init(BodyCache::default)
}

/// Evaluates an inner-graph op outside a compiled function (constant folding, `eval_node`):
/// its bodies are compiled by the interpreter on the spot.
pub(crate) fn eval_alone(op: &Op, args: &[&Tensor]) -> Result<Vec<Tensor>, KernelError> {
    match run_interpreted(op, args) {
        Some(result) => result.map_err(|e| KernelError::Value(e.to_string())),
        None => Err(KernelError::Value(format!(
            "{op} has no inner graph to run"
        ))),
    }
}
