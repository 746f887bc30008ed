//! Whole-graph passes inside inner graphs: a loop's step, a branch, a subroutine's body.
//!
//! Rule passes reach inner graphs through the driver, which rewrites every body with the same
//! rules. A whole-graph pass ([`GraphPass`]: fusion, merging loops or branches, marking
//! last-step outputs) sees one graph, so [`in_bodies`] runs it on every inner graph first,
//! innermost first, rebuilds the nodes that hold them, and then runs it on the outer graph.
//! Without it a loop's step would keep every elementwise op as its own node: the interpreter's
//! loop and the native staged loop would then compute (and store) each intermediate value
//! separately, every step.
//!
//! A body's outputs are the graph's outputs for the pass: they are read whole (a loop stacks
//! them, a branch returns them). The scalar programs of `Composite`, `FusedReduce` and
//! `FusedMatMul` are not graphs of tensors, and are left alone.

use crate::driver::PassStats;
use crate::{GraphPass, RewriteError};
use oxtensor_graph::{FrozenGraph, Node, Op, Var, toposort, with_site};
use rustc_hash::FxHashMap;
use std::sync::Arc;

/// Runs `pass` on every inner graph of the graph of `outputs` (innermost first), then on the
/// graph itself; returns the new outputs, in order, and the hits of every run together (node
/// counts are the outer graph's).
pub(crate) fn in_bodies(
    pass: GraphPass,
    outputs: &[Var],
) -> Result<(Vec<Var>, PassStats), RewriteError> {
    let mut run = Bodies {
        pass,
        done: FxHashMap::default(),
        inner: Vec::new(),
    };
    let outputs = run.rebuild(outputs)?;
    let (outputs, mut stats) = pass(&outputs)?;
    for s in run.inner {
        for (name, n) in s.hits {
            *stats.hits.entry(name).or_default() += n;
        }
        for (name, n) in s.rejected {
            *stats.rejected.entry(name).or_default() += n;
        }
    }
    Ok((outputs, stats))
}

/// One run of a pass over the inner graphs of a graph.
struct Bodies {
    pass: GraphPass,
    /// Each body seen, and its new version when the pass changed it.
    done: FxHashMap<FrozenGraph, Option<FrozenGraph>>,
    /// What the pass did in each body.
    inner: Vec<PassStats>,
}

impl Bodies {
    /// The outputs over nodes whose bodies the pass ran on (the same outputs when none
    /// changed): the graph rebuilt bottom-up, each node over its inputs' new values.
    fn rebuild(&mut self, outputs: &[Var]) -> Result<Vec<Var>, RewriteError> {
        let mut memo: FxHashMap<Var, Var> = FxHashMap::default();
        for node in toposort(outputs) {
            let new_op = self.new_op(&node)?;
            let inputs: Vec<Var> = node
                .inputs()
                .iter()
                .map(|v| memo.get(v).cloned().unwrap_or_else(|| v.clone()))
                .collect();
            if new_op.is_none() && inputs.as_slice() == node.inputs() {
                continue;
            }
            let op = match (new_op, node.op()) {
                (Some(op), _) => op,
                (None, Some(op)) => op.clone(),
                (None, None) => continue,
            };
            let site = Arc::from(Var::output_of(&node, 0).site().to_string());
            let new = with_site(site, || Var::apply(op, &inputs)).map_err(|source| {
                RewriteError::Rebuild {
                    pass: "inner graphs",
                    source,
                }
            })?;
            for (i, v) in new.into_iter().enumerate() {
                memo.insert(Var::output_of(&node, i), v);
            }
        }
        Ok(outputs
            .iter()
            .map(|o| memo.get(o).cloned().unwrap_or_else(|| o.clone()))
            .collect())
    }

    /// `node`'s op over the bodies the pass rewrote, or `None` when it holds no body or none
    /// changed.
    fn new_op(&mut self, node: &Node) -> Result<Option<Op>, RewriteError> {
        match node.op() {
            Some(op) => op.with_tensor_bodies(|g| self.body(g)),
            None => Ok(None),
        }
    }

    /// `g` after the pass (its own bodies first), or `None` when the pass changed nothing or
    /// its result does not keep each output's type.
    fn body(&mut self, g: &FrozenGraph) -> Result<Option<FrozenGraph>, RewriteError> {
        if let Some(done) = self.done.get(g) {
            return Ok(done.clone());
        }
        let inner = self.rebuild(g.outputs())?;
        let (outputs, stats) = (self.pass)(&inner)?;
        let changed = outputs.as_slice() != g.outputs()
            && outputs
                .iter()
                .zip(g.outputs())
                .all(|(n, o)| crate::type_fits(o, n));
        let new = match changed {
            true => FrozenGraph::freeze(&g.placeholders(), &outputs).ok(),
            false => None,
        };
        if new.is_some() {
            self.inner.push(stats);
        }
        self.done.insert(g.clone(), new.clone());
        Ok(new)
    }
}
