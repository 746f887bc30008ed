//! Reduction fusion, the last step of the `fusion` pass:
//!
//! `// sum(f(x, y)) == FusedReduce{sum, f(i0, i1)}(x, y)` where nothing else reads `f(x, y)`.
//!
//! A reduction that is the only reader of an elementwise node (an `Elemwise`, or a `Composite`
//! built by elementwise fusion just before) becomes one [`Op::FusedReduce`] node over the
//! elementwise node's inputs, whose body is the elementwise program. Every backend then
//! computes the program inside the reduction's loop and never stores its value: the
//! interpreter block by block, the native backend in one generated loop. The decision is made
//! here once, so the backends only follow it, and `debugprint` and `OXTENSOR_DUMP_PASS` show
//! it.
//!
//! Not fused: an elementwise value that is a graph output or has another reader (it must be
//! stored anyway), and reductions reading anything else (a `DimShuffle` of a value, say).

use crate::RewriteError;
use oxtensor_graph::{FrozenGraph, Node, Op, TensorType, Var, toposort, with_site};
use rustc_hash::FxHashMap;
use std::sync::Arc;

/// The elementwise program computing output `output` of `node` (an `Elemwise` or a
/// `Composite`), as a body for [`Op::FusedReduce`] with one input per input of the node (the
/// epilogue fusion builds its bodies from it too).
pub(super) fn program(node: &Node, output: usize) -> Option<FrozenGraph> {
    match node.op()? {
        Op::Elemwise(s) => {
            let inputs: Vec<Var> = node
                .inputs()
                .iter()
                .map(|v| Var::input(None, TensorType::scalar(v.dtype())))
                .collect();
            let value = Var::apply1(Op::Elemwise(*s), &inputs).ok()?;
            FrozenGraph::freeze(&inputs, &[value]).ok()
        }
        Op::Composite(g) => {
            let out = g.outputs().get(output)?.clone();
            FrozenGraph::freeze(&g.placeholders(), &[out]).ok()
        }
        _ => None,
    }
}

/// Replaces each reduction that is the only reader of an elementwise node by a
/// [`Op::FusedReduce`] (see the module documentation); returns the new outputs, in order,
/// and how many reductions were fused.
pub(crate) fn fuse_reductions(outputs: &[Var]) -> Result<(Vec<Var>, usize), RewriteError> {
    let order = toposort(outputs);
    let reads = read_counts(&order, outputs);
    let mut memo: FxHashMap<Var, Var> = FxHashMap::default();
    let new_var = |memo: &FxHashMap<Var, Var>, v: &Var| memo.get(v).cloned().unwrap_or(v.clone());
    let mut fused = 0;
    for node in &order {
        let Some(op) = node.op() else {
            continue;
        };
        let replacement = match (op, node.inputs()) {
            (Op::Reduce { op: r, axes }, [x])
                if x.owner().is_some() && reads.get(&x.node().id()) == Some(&1) =>
            {
                program(x.node(), x.index()).map(|body| {
                    let producer_inputs: Vec<Var> = x
                        .node()
                        .inputs()
                        .iter()
                        .map(|v| new_var(&memo, v))
                        .collect();
                    let fused_op = Op::FusedReduce {
                        op: *r,
                        axes: axes.clone(),
                        body,
                    };
                    let old = Var::output_of(node, 0);
                    with_site(Arc::from(old.site().to_string()), || {
                        Var::apply1(fused_op, &producer_inputs)
                    })
                    .ok()
                    .filter(|new| crate::type_fits(&old, new))
                })
            }
            _ => None,
        };
        if let Some(new) = replacement.flatten() {
            fused += 1;
            memo.insert(Var::output_of(node, 0), new);
            continue;
        }
        carry(node, op, &mut memo)?;
    }
    Ok((outputs.iter().map(|o| new_var(&memo, o)).collect(), fused))
}

/// How many times each node's values are read in `order` (the graph of `outputs`): by nodes,
/// and as graph outputs. A value read once by the node fusing it need not be stored.
pub(super) fn read_counts(order: &[Arc<Node>], outputs: &[Var]) -> FxHashMap<u64, usize> {
    let mut reads: FxHashMap<u64, usize> = FxHashMap::default();
    for v in order.iter().flat_map(|n| n.inputs()).chain(outputs) {
        *reads.entry(v.node().id()).or_default() += 1;
    }
    reads
}

/// Carries a node a fusion step leaves alone into the new graph: applies its op to its inputs'
/// replacements in `memo` and records its new outputs there (nothing when no input changed).
pub(super) fn carry(
    node: &Arc<Node>,
    op: &Op,
    memo: &mut FxHashMap<Var, Var>,
) -> Result<(), RewriteError> {
    let inputs: Vec<Var> = node
        .inputs()
        .iter()
        .map(|v| memo.get(v).cloned().unwrap_or(v.clone()))
        .collect();
    if inputs.as_slice() == node.inputs() {
        return Ok(());
    }
    let outs = Var::apply(op.clone(), &inputs).map_err(|source| RewriteError::Rebuild {
        pass: "fusion",
        source,
    })?;
    for (k, w) in outs.into_iter().enumerate() {
        memo.insert(Var::output_of(node, k), w);
    }
    Ok(())
}
