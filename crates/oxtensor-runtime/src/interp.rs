use crate::kernels::{self, KernelCtx};
use crate::{Backend, BodyCache, Executable, InnerBodies, KernelError, Plan, RuntimeError};
use oxtensor_data::Tensor;
use oxtensor_graph::{FunctionGraph, Node, Op, TensorType};
use smallvec::SmallVec;
use std::sync::Arc;
use std::time::Duration;

/// The reference backend: runs each node's kernel in schedule order. Every other backend and
/// every rewrite is tested against it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Interpreter;

struct InterpExecutable {
    plan: Plan,
    /// The compiled bodies of its inner-graph nodes.
    inner: InnerBodies,
    /// The schedule.
    nodes: Vec<Arc<Node>>,
}

/// Evaluates one node with the reference kernels, attributing failures to the node.
pub fn eval_node(node: &Node, args: &[&Tensor]) -> Result<Vec<Tensor>, RuntimeError> {
    with_ctx(node, |op, ctx| kernels::eval(op, args, ctx))
}

/// Like [`eval_node`], but output 0 may be written into `args[donor]`'s buffer (see
/// [`kernels::eval_in_place`]).
///
/// # Safety
/// For the duration of the call, nothing else may read or write the elements of
/// `args[donor]`, as [`kernels::eval_in_place`] requires.
pub unsafe fn eval_node_in_place(
    node: &Node,
    args: &[&Tensor],
    donor: usize,
) -> Result<Vec<Tensor>, RuntimeError> {
    // SAFETY: our caller's guarantee is the one `eval_in_place` asks for.
    with_ctx(node, |op, ctx| unsafe {
        kernels::eval_in_place(op, args, ctx, donor)
    })
}

/// Runs `kernel` with the node's op and static types, attributing a failure to the node.
fn with_ctx(
    node: &Node,
    kernel: impl FnOnce(&Op, &KernelCtx<'_>) -> Result<Vec<Tensor>, KernelError>,
) -> Result<Vec<Tensor>, RuntimeError> {
    let Some(op) = node.op() else {
        return Err(RuntimeError::Unsupported(
            "a leaf was scheduled as a node".into(),
        ));
    };
    let input_types: SmallVec<[TensorType; 4]> =
        node.inputs().iter().map(|v| v.ty().clone()).collect();
    let ctx = KernelCtx {
        input_types: &input_types,
        output_types: node.types(),
    };
    kernel(op, &ctx).map_err(|source| RuntimeError::Kernel {
        op: op.to_string(),
        var: describe_node(node),
        source,
    })
}

fn describe_node(node: &Node) -> String {
    let names: Vec<String> = node.inputs().iter().map(|v| format!("{v:?}")).collect();
    let named: Vec<String> = node
        .output_names()
        .iter()
        .map(|n| format!("'{n}' from "))
        .collect();
    format!(
        "{}inputs ({}), created at {}",
        named.concat(),
        names.join(", "),
        node.site()
    )
}

impl Executable for InterpExecutable {
    fn run_timed(
        &self,
        values: Vec<Tensor>,
        times: Option<&mut [Duration]>,
    ) -> Result<Vec<Tensor>, RuntimeError> {
        self.plan.execute(values, times, |call| {
            if let Some(result) = self.inner.run(call.node, call.args) {
                return result;
            }
            match call.donor {
                // SAFETY: the plan offers a donor only when nothing outside this call uses the
                // tensor's storage (its only other handle, if any, is a consumed shared
                // variable's, locked by the caller) and lends it to this call alone (the slot
                // is freed right after), so nothing else reads or writes its elements.
                Some(k) => unsafe { eval_node_in_place(call.node, call.args, k) },
                None => eval_node(call.node, call.args),
            }
        })
    }

    fn schedule(&self) -> Vec<Arc<Node>> {
        self.nodes.clone()
    }
}

impl Backend for Interpreter {
    fn name(&self) -> &'static str {
        "interp"
    }

    fn compile(&self, graph: &FunctionGraph) -> Result<Arc<dyn Executable>, RuntimeError> {
        let plan = Plan::new(graph);
        let nodes = plan.schedule().cloned().collect();
        static BODIES: std::sync::OnceLock<BodyCache> = std::sync::OnceLock::new();
        let inner = InnerBodies::compile(self, BODIES.get_or_init(BodyCache::default), graph)?;
        Ok(Arc::new(InterpExecutable { plan, inner, nodes }))
    }
}
