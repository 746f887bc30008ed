//! Rules on loops (`Scan`).
//!
//! A rule is offered each output of a `Scan` node on its own and returns that output of the
//! node it builds (interning makes it one node for all outputs).

use crate::rule::OpKind;
use crate::{Root, Rule, RuleCtx};
use oxtensor_graph::{FrozenGraph, Op, Scan, Var, toposort};
use rustc_hash::FxHashSet;
use std::sync::Arc;

// scan(step(x_t, h, f(w)), others=[w]) → scan(step(x_t, h, v), others=[w, f(w)])
//   (work that reads no sequence or state is the same at every step: it runs once, before)
//
// As PyTensor's `scan_push_out_non_seq`, this runs the moved work even when the loop takes no
// step.
fn scan_hoist_invariants(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let (Op::Scan(s), inputs) = v.owner()? else {
        return None;
    };
    let body = &s.body;
    let placeholders = body.placeholders();
    let n_taps = s.n_tap_inputs();
    // What varies from step to step: the taps and everything computed from them.
    let mut varies: FxHashSet<Var> = placeholders[..n_taps].iter().cloned().collect();
    let nodes = toposort(body.outputs());
    let mut invariant: FxHashSet<u64> = FxHashSet::default();
    for node in &nodes {
        if node.inputs().iter().any(|x| varies.contains(x)) {
            varies.extend((0..node.types().len()).map(|k| Var::output_of(node, k)));
        } else {
            invariant.insert(node.id());
        }
    }
    // The invariant values the step still reads (or returns).
    let mut frontier: Vec<Var> = Vec::new();
    let mut seen: FxHashSet<Var> = FxHashSet::default();
    let mut keep = |x: &Var| {
        if x.owner().is_some() && invariant.contains(&x.node().id()) && seen.insert(x.clone()) {
            frontier.push(x.clone());
        }
    };
    for node in nodes.iter().filter(|n| !invariant.contains(&n.id())) {
        node.inputs().iter().for_each(&mut keep);
    }
    body.outputs().iter().for_each(&mut keep);
    if frontier.is_empty() {
        return None;
    }
    let outer_others = &inputs[inputs.len() - s.n_other()..];
    let hoisted = FrozenGraph::freeze(&placeholders[n_taps..], &frontier)
        .ok()?
        .instantiate(outer_others)
        .ok()?;
    let inner_inputs: Vec<Var> = placeholders.iter().cloned().chain(frontier).collect();
    let op = Op::Scan(Arc::new(Scan {
        body: FrozenGraph::freeze(&inner_inputs, body.outputs()).ok()?,
        ..Scan::clone(s)
    }));
    let node_inputs: Vec<Var> = inputs.iter().cloned().chain(hoisted).collect();
    Var::apply(op, &node_inputs)
        .ok()?
        .into_iter()
        .nth(v.index())
}

/// The loop rules.
pub const RULES: &[Rule] = &[Rule::new(
    "scan_hoist_invariants",
    Root::Op(OpKind::Scan),
    scan_hoist_invariants,
)];
