//! Lowering a function graph to kernels: which nodes run as generated C. Which elementwise
//! programs run inside a reduction, or on the panels of a matrix product, is the graph's
//! decision (`FusedReduce` and `FusedMatMul` nodes, built by the fusion pass); lowering follows
//! it.

use crate::emit::{KernelSource, LoopProgram, Program, StagedLoop};
use oxtensor_data::DType;
use oxtensor_graph::{Axes, FunctionGraph, Node, Op, ReduceOp, Var};
use rustc_hash::FxHashMap;
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
    /// A whole loop.
    Loop(LoopProgram),
    /// A whole loop with a staged step (shared with the executor, which lays out its values).
    Staged(Arc<StagedLoop>),
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
            Kernel::Loop(p) => KernelSource::Loop(p),
            Kernel::Staged(p) => KernelSource::Staged(p),
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
    /// Through elementwise kernel `kernel`, as the epilogue of a `FusedMatMul`'s product: its
    /// operands are the product and the node's inputs after the two matrices.
    Epilogue {
        /// Index into the kernels.
        kernel: usize,
    },
    /// Through reduction kernel `kernel`.
    Reduce {
        /// Index into the kernels.
        kernel: usize,
        /// The reduced axes.
        axes: Axes,
        /// True for a `FusedReduce`, whose inputs are its program's.
        fused: bool,
    },
    /// Through loop kernel `kernel`.
    Loop {
        /// Index into the kernels.
        kernel: usize,
    },
    /// Through staged loop kernel `kernel`.
    Staged {
        /// Index into the kernels.
        kernel: usize,
        /// Its step's values and stages.
        program: Arc<StagedLoop>,
    },
}

/// The kernels of a graph (in schedule order) and how each node runs; nodes not listed run
/// in the interpreter.
pub(crate) struct Lowered {
    /// The kernels.
    pub kernels: Vec<Kernel>,
    /// By node id.
    pub assign: FxHashMap<u64, Assign>,
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
/// costs several times the whole C call; so does a `FusedReduce`.
fn tiny(node: &Node, below: usize) -> bool {
    !matches!(node.op(), Some(Op::Composite(_) | Op::FusedReduce { .. }))
        && node.inputs().iter().all(|v| {
            v.ty()
                .shape
                .iter()
                .try_fold(1usize, |n, d| n.checked_mul((*d)?))
                .is_some_and(|n| n < below)
        })
}

/// The reduction kernel of a `Reduce` or `FusedReduce` node, if C can compute it (complex
/// values run in the interpreter).
fn reduction(node: &Node) -> Option<(Kernel, Axes, bool)> {
    if node.types().iter().any(|t| t.dtype.is_complex()) {
        return None;
    }
    match node.op()? {
        Op::Reduce { op, axes } => {
            let input = node.inputs().first()?.dtype();
            if input.is_complex() {
                return None;
            }
            let kernel = Kernel::Reduce {
                op: *op,
                input,
                fused: None,
            };
            Some((kernel, axes.clone(), false))
        }
        Op::FusedReduce { op, axes, body } => {
            let kernel = Kernel::Reduce {
                op: *op,
                input: body.outputs().first()?.dtype(),
                fused: Some(Program::composite(body)?),
            };
            Some((kernel, axes.clone(), true))
        }
        _ => None,
    }
}

/// Decides the kernels of `graph`, in schedule order.
///
/// Every `Elemwise` and `Composite` node C can compute gets a loop, and every `Reduce` and
/// `FusedReduce` a reduction (a `FusedReduce` computes its program inside the loop, so the
/// program's value is never stored); except single ops whose inputs are all statically
/// smaller than `interpret_below` elements (0-d arithmetic on scalars, say), which run on the
/// interpreter. A `FusedMatMul`'s program gets an elementwise loop the executor runs on each
/// panel of the product. A `Scan` whose step is elementwise becomes one C loop ([`LoopProgram`]); one
/// whose step also holds matrix products, one staged C loop ([`StagedLoop`]).
/// Everything else (including `DimShuffle`, which is a view: its strides are all
/// a consuming kernel needs) runs in the interpreter.
pub(crate) fn lower(graph: &FunctionGraph, interpret_below: usize) -> Lowered {
    let mut kernels = Vec::new();
    let mut assign = FxHashMap::default();
    for node in graph.toposort() {
        let index = kernels.len();
        if let Some(Op::Scan(s)) = node.op() {
            if let Some(p) = LoopProgram::of_scan(s) {
                assign.insert(node.id(), Assign::Loop { kernel: index });
                kernels.push(Kernel::Loop(p));
            } else if let Some(p) = StagedLoop::of_scan(s, &zero_others(node, s)) {
                let program = Arc::new(p);
                let kernel = index;
                assign.insert(
                    node.id(),
                    Assign::Staged {
                        kernel,
                        program: program.clone(),
                    },
                );
                kernels.push(Kernel::Staged(program));
            }
            continue;
        }
        // A product's epilogue always gets C, as a Composite does.
        if let Some(Op::FusedMatMul { body }) = node.op() {
            if let Some(p) = Program::composite(body) {
                assign.insert(node.id(), Assign::Epilogue { kernel: index });
                kernels.push(Kernel::Elemwise(p));
            }
            continue;
        }
        if tiny(node, interpret_below) {
            continue;
        }
        let (kernel, how) = if let Some(p) = program(node) {
            (Kernel::Elemwise(p), Assign::Elemwise { kernel: index })
        } else if let Some((k, axes, fused)) = reduction(node) {
            let how = Assign::Reduce {
                kernel: index,
                axes,
                fused,
            };
            (k, how)
        } else {
            continue;
        };
        assign.insert(node.id(), how);
        kernels.push(kernel);
    }
    Lowered { kernels, assign }
}

/// Per other (loop-invariant) operand of Scan node `node` (of loop `s`), whether it is known
/// to be all zeros.
fn zero_others(node: &Node, s: &oxtensor_graph::Scan) -> Vec<bool> {
    let first = 1 + s.sequence_taps.len() + s.state_taps.len();
    node.inputs()
        .get(first..)
        .unwrap_or_default()
        .iter()
        .map(crate::emit::known_zero)
        .collect()
}
