//! Lowering a function graph to kernels: which nodes run as generated C, and which
//! elementwise producers are computed inside the reduction that consumes them.

use crate::emit::{KernelSource, Program};
use oxtensor_data::DType;
use oxtensor_graph::{Axes, FunctionGraph, Node, Op, ReduceOp, Var};
use rustc_hash::{FxHashMap, FxHashSet};
use std::sync::Arc;

/// A kernel of the translation unit.
pub(crate) enum Kernel {
    /// An elementwise loop.
    Elemwise(Program),
    /// A reduction, possibly with its elementwise producer fused in.
    Reduce {
        /// The combining function.
        op: ReduceOp,
        /// The dtype of the reduced input.
        input: DType,
        /// The producer's program.
        fused: Option<Program>,
    },
}

impl Kernel {
    /// The view [`crate::emit`] generates code from.
    pub fn source(&self) -> KernelSource<'_> {
        match self {
            Kernel::Elemwise(p) => KernelSource::Elemwise(p),
            Kernel::Reduce { op, input, fused } => KernelSource::Reduce {
                op: *op,
                input: *input,
                fused: fused.as_ref(),
            },
        }
    }
}

/// How one node runs.
pub(crate) enum Assign {
    /// Through elementwise kernel `kernel`.
    Elemwise {
        /// Index into the kernels.
        kernel: usize,
    },
    /// Through reduction kernel `kernel`.
    Reduce {
        /// Index into the kernels.
        kernel: usize,
        /// The reduced axes.
        axes: Axes,
        /// The elementwise node computed inside the reduction, whose inputs are the kernel's.
        producer: Option<Arc<Node>>,
    },
    /// Nothing: an elementwise producer computed by the reduction that consumes it.
    Fused,
}

/// The kernels of a graph (in schedule order) and how each node runs; nodes not listed run
/// in the interpreter.
pub(crate) struct Lowered {
    /// The kernels.
    pub kernels: Vec<Kernel>,
    /// By node id.
    pub assign: FxHashMap<u64, Assign>,
}

/// A reduction found while lowering, before kernels are numbered.
struct Reduction {
    op: ReduceOp,
    axes: Axes,
    input: DType,
    fused: Option<(Arc<Node>, Program)>,
}

/// The program of an elementwise node, if C can compute it.
fn program(node: &Node) -> Option<Program> {
    match node.op()? {
        Op::Elemwise(s) => {
            let inputs: Vec<DType> = node.inputs().iter().map(Var::dtype).collect();
            Program::elemwise(*s, &inputs, node.types().first()?.dtype)
        }
        Op::Composite(g) => Program::composite(g),
        _ => None,
    }
}

/// True when `node` is a single elementwise op or a reduction whose inputs all have a static
/// shape of fewer than `below` elements: it runs on the interpreter's kernel (see
/// [`crate::NativeConfig::interpret_below`]), so it needs no C. A Composite always gets C: the
/// interpreter evaluates its inner ops one kernel call at a time, which on a few elements
/// costs several times the whole C call.
fn tiny(node: &Node, below: usize) -> bool {
    !matches!(node.op(), Some(Op::Composite(_)))
        && node.inputs().iter().all(|v| {
            v.ty()
                .shape
                .iter()
                .try_fold(1usize, |n, d| n.checked_mul((*d)?))
                .is_some_and(|n| n < below)
        })
}

/// Decides the kernels of `graph`.
///
/// Every `Elemwise` and `Composite` node C can compute gets a loop; every `Reduce` gets a
/// reduction; except single ops whose inputs are all statically smaller than
/// `interpret_below` elements (0-d arithmetic on scalars, say), which run on the interpreter.
/// A reduction whose input is the only output of such a node, used nowhere else
/// (not by another node, not as a graph output), computes that node's program inside its
/// loop, so the elementwise result is never stored. Everything else (including `DimShuffle`,
/// which is a view: its strides are all a consuming kernel needs) runs in the interpreter.
pub(crate) fn lower(graph: &FunctionGraph, interpret_below: usize) -> Lowered {
    let outputs: FxHashSet<&Var> = graph.outputs().iter().collect();
    let mut programs: FxHashMap<u64, Program> = FxHashMap::default();
    let mut reductions: FxHashMap<u64, Reduction> = FxHashMap::default();
    for node in graph.toposort() {
        if tiny(node, interpret_below) {
            continue;
        }
        if let Some(p) = program(node) {
            programs.insert(node.id(), p);
            continue;
        }
        let Some(Op::Reduce { op, axes }) = node.op() else {
            continue;
        };
        let Some(x) = node.inputs().first() else {
            continue;
        };
        let producer = x.owner().and(Some(x.node()));
        let fusable = producer.is_some_and(|p| {
            p.types().len() == 1
                && programs.contains_key(&p.id())
                && graph.clients(x).len() == 1
                && !outputs.contains(x)
        });
        let fused = match producer {
            Some(p) if fusable => programs.remove(&p.id()).map(|prog| (p.clone(), prog)),
            _ => None,
        };
        let reduction = Reduction {
            op: *op,
            axes: axes.clone(),
            input: x.dtype(),
            fused,
        };
        reductions.insert(node.id(), reduction);
    }
    let mut kernels = Vec::new();
    let mut assign = FxHashMap::default();
    for node in graph.toposort() {
        if let Some(p) = programs.remove(&node.id()) {
            assign.insert(
                node.id(),
                Assign::Elemwise {
                    kernel: kernels.len(),
                },
            );
            kernels.push(Kernel::Elemwise(p));
        } else if let Some(r) = reductions.remove(&node.id()) {
            let Reduction {
                op,
                axes,
                input,
                fused,
            } = r;
            let (producer, fused) = match fused {
                Some((p, prog)) => {
                    assign.insert(p.id(), Assign::Fused);
                    (Some(p), Some(prog))
                }
                None => (None, None),
            };
            assign.insert(
                node.id(),
                Assign::Reduce {
                    kernel: kernels.len(),
                    axes,
                    producer,
                },
            );
            kernels.push(Kernel::Reduce { op, input, fused });
        }
    }
    Lowered { kernels, assign }
}
