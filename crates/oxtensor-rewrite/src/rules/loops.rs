//! Rules on loops (`Scan`).
//!
//! A rule is offered each output of a `Scan` node on its own and returns that output of the
//! node it builds (interning makes it one node for all outputs).

use crate::rule::OpKind;
use crate::{Root, Rule, RuleCtx};
use oxtensor_graph::build;
use oxtensor_graph::{FrozenGraph, NodeKind, Op, Scan, Var, toposort};
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

/// True when every node of `g` is an elementwise op or a Composite: the step computes each
/// element from the same element of its inputs.
fn elementwise(g: &FrozenGraph) -> bool {
    toposort(g.outputs())
        .iter()
        .all(|n| matches!(n.op(), Some(Op::Elemwise(_) | Op::Composite(_))))
}

/// True when `v` is, or is computed from, a placeholder numbered below `n`.
fn reads_placeholder_below(v: &Var, n: usize) -> bool {
    let below = |x: &Var| matches!(x.node().kind(), NodeKind::Placeholder(i) if *i < n);
    below(v)
        || toposort(std::slice::from_ref(v))
            .iter()
            .any(|node| node.inputs().iter().any(below))
}

// map(λ x_t, w: f(x_t, w), xs, w) → f(xs, w[None])   (f elementwise: one op over every step)
//
// Only for a map (no state, no `until`) reading each sequence at tap 0, forwards, over all of
// its entries (`n_steps` left to the sequences), of sequences of one known length when there
// are several; every step value has one rank, so the step's ops apply as they are to the
// stacked values, each non-sequence given a leading broadcast axis.
fn scan_map_to_elemwise(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let (Op::Scan(s), inputs) = v.owner()? else {
        return None;
    };
    let n_steps = inputs.first()?.constant_value()?.item::<i64>()?;
    if !s.state_taps.is_empty()
        || s.until
        || s.go_backwards
        || n_steps >= 0
        || s.sequence_taps.iter().any(|t| t.as_slice() != [0])
        || !elementwise(&s.body)
    {
        return None;
    }
    let sequences = &inputs[1..1 + s.sequence_taps.len()];
    let lengths: FxHashSet<Option<usize>> = sequences.iter().map(|q| q.ty().shape[0]).collect();
    if sequences.is_empty()
        || (sequences.len() > 1 && (lengths.len() > 1 || lengths.contains(&None)))
    {
        return None;
    }
    let rank = s.body.input_types().first()?.ndim();
    if s.body.input_types().iter().any(|t| t.ndim() != rank)
        || s.body.outputs().iter().any(|o| o.ty().ndim() != rank)
    {
        return None;
    }
    // An output that reads no sequence is one value for all steps, not one per step.
    let output = s.body.outputs().get(v.index())?;
    if !reads_placeholder_below(output, sequences.len()) {
        return None;
    }
    let others = inputs[1 + sequences.len()..]
        .iter()
        .map(|o| build::expand_dims(o, 0).ok())
        .collect::<Option<Vec<Var>>>()?;
    let args: Vec<Var> = sequences.iter().cloned().chain(others).collect();
    s.body.instantiate(&args).ok()?.into_iter().nth(v.index())
}

/// The loop rules.
pub const RULES: &[Rule] = &[
    Rule::new(
        "scan_hoist_invariants",
        Root::Op(OpKind::Scan),
        scan_hoist_invariants,
    ),
    Rule::new(
        "scan_map_to_elemwise",
        Root::Op(OpKind::Scan),
        scan_map_to_elemwise,
    ),
];
