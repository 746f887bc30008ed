use crate::kernels::{self, KernelCtx};
use crate::{Backend, BodyCache, Executable, InnerBodies, KernelError, Plan, RuntimeError};
use oxtensor_data::Tensor;
use oxtensor_graph::{FunctionGraph, Node, Op, TensorType};
use rustc_hash::FxHashMap;
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
    /// The schedule, to find a deferred producer by position.
    nodes: Vec<Arc<Node>>,
    /// Per schedule position, what the executor does with the node.
    fusion: Vec<Fusion>,
}

/// How a reduction of an elementwise expression runs in one pass
/// ([`kernels::reduce_of_elemwise`]): the producer is deferred and the reduction computes it.
#[derive(Clone, Copy)]
enum Fusion {
    /// An ordinary node.
    None,
    /// An `Elemwise`/`Composite` read only by one `Reduce`: its inputs are kept for it.
    Deferred,
    /// That `Reduce`, reading output `output` of the producer at schedule position `producer`.
    Reduce { producer: usize, output: usize },
}

impl Fusion {
    /// Pairs each `Reduce` with the elementwise producer whose outputs nothing else reads.
    fn plan(graph: &FunctionGraph, plan: &Plan) -> Vec<Fusion> {
        let nodes: Vec<&Arc<Node>> = plan.schedule().collect();
        let position: FxHashMap<u64, usize> =
            nodes.iter().enumerate().map(|(i, n)| (n.id(), i)).collect();
        let mut readers: FxHashMap<u64, usize> = FxHashMap::default();
        for v in nodes.iter().flat_map(|n| n.inputs()).chain(graph.outputs()) {
            *readers.entry(v.node().id()).or_default() += 1;
        }
        let mut fusion = vec![Fusion::None; nodes.len()];
        for (i, n) in nodes.iter().enumerate() {
            let (Some(Op::Reduce { .. }), Some(x)) = (n.op(), n.inputs().first()) else {
                continue;
            };
            let p = x.node();
            let elementwise = matches!(p.op(), Some(Op::Elemwise(_) | Op::Composite(_)));
            if elementwise
                && readers.get(&p.id()) == Some(&1)
                && let Some(&at) = position.get(&p.id())
            {
                fusion[at] = Fusion::Deferred;
                fusion[i] = Fusion::Reduce {
                    producer: at,
                    output: x.index(),
                };
            }
        }
        fusion
    }
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

/// Runs `reduce` over output `output` of the elementwise `producer` on its `inputs`, in one
/// pass; errors are attributed to the producer when it fails, else to the reduction.
fn reduce_fused(
    producer: &Node,
    output: usize,
    reduce: &Node,
    inputs: &[Tensor],
) -> Result<Vec<Tensor>, RuntimeError> {
    let (Some(p_op), Some(r_op @ Op::Reduce { op, axes })) = (producer.op(), reduce.op()) else {
        return Err(RuntimeError::Unsupported(
            "a fused reduction lost its producer".into(),
        ));
    };
    let args: Vec<&Tensor> = inputs.iter().collect();
    let input_types: Vec<_> = producer.inputs().iter().map(|v| v.ty().clone()).collect();
    let ctx = KernelCtx {
        input_types: &input_types,
        output_types: producer.types(),
    };
    match kernels::reduce_of_elemwise(p_op, output, *op, axes, &args, &ctx) {
        Ok(t) => Ok(vec![t]),
        Err(source) => Err(RuntimeError::Kernel {
            op: r_op.to_string(),
            var: describe_node(reduce),
            source,
        }),
    }
}

fn describe_node(node: &Node) -> String {
    let names: Vec<String> = node.inputs().iter().map(|v| format!("{v:?}")).collect();
    format!("inputs ({}), created at {}", names.join(", "), node.site())
}

impl Executable for InterpExecutable {
    fn run_timed(
        &self,
        values: Vec<Tensor>,
        times: Option<&mut [Duration]>,
    ) -> Result<Vec<Tensor>, RuntimeError> {
        let placeholder = Tensor::scalar(false);
        // The inputs of deferred producers, by schedule position, until their reduction runs.
        let mut deferred: Vec<(usize, Vec<Tensor>)> = Vec::new();
        self.plan.execute(values, times, |call| {
            match self.fusion.get(call.index).copied().unwrap_or(Fusion::None) {
                Fusion::Deferred => {
                    let inputs = call.args.iter().map(|t| (*t).clone()).collect();
                    deferred.push((call.index, inputs));
                    return Ok(vec![placeholder.clone(); call.node.types().len()]);
                }
                Fusion::Reduce { producer, output } => {
                    let at = deferred.iter().position(|(i, _)| *i == producer);
                    if let (Some(at), Some(p)) = (at, self.nodes.get(producer)) {
                        let (_, inputs) = deferred.swap_remove(at);
                        return reduce_fused(p, output, call.node, &inputs);
                    }
                }
                Fusion::None => {}
            }
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
        let fusion = Fusion::plan(graph, &plan);
        let nodes = plan.schedule().cloned().collect();
        static BODIES: std::sync::OnceLock<BodyCache> = std::sync::OnceLock::new();
        let inner = InnerBodies::compile(self, BODIES.get_or_init(BodyCache::default), graph)?;
        Ok(Arc::new(InterpExecutable {
            plan,
            inner,
            nodes,
            fusion,
        }))
    }
}
