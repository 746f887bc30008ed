//! Rules on lazy branches (`IfElse`), beyond the constant condition (`useless`).
//!
//! Each keeps the laziness users rely on: nothing moves out of a branch unless the other
//! branch computes it too, so whichever branch is taken, the same work (and the same errors)
//! happen as before. A rule is offered each output of an `IfElse` node on its own and returns
//! that output of the node it builds (interning makes it one node for all outputs).

use crate::rule::OpKind;
use crate::{Root, Rule, RuleCtx};
use oxtensor_graph::{FrozenGraph, IfElse, Op, Var, clone_replace, toposort};
use rustc_hash::{FxHashMap, FxHashSet};
use std::sync::Arc;

/// The parts of an `IfElse` output: the op, the condition and the branch arguments.
fn ifelse(v: &Var) -> Option<(&Arc<IfElse>, &Var, &[Var])> {
    match v.owner()? {
        (Op::IfElse(b), [cond, args @ ..]) => Some((b, cond, args)),
        _ => None,
    }
}

/// Output `index` of a new `IfElse` of the two branches on `cond` and `args`.
fn rebuild(
    cond: &Var,
    args: &[Var],
    then_branch: FrozenGraph,
    else_branch: FrozenGraph,
    index: usize,
) -> Option<Var> {
    let op = Op::IfElse(Arc::new(IfElse {
        then_branch,
        else_branch,
    }));
    let inputs: Vec<Var> = std::iter::once(cond.clone())
        .chain(args.iter().cloned())
        .collect();
    Var::apply(op, &inputs).ok()?.into_iter().nth(index)
}

// ifelse(c, a, a) → a   (both branches compute the same value: no branch is needed for it)
fn ifelse_same_branches(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let (b, _, args) = ifelse(v)?;
    let i = v.index();
    if b.then_branch.outputs().get(i)? != b.else_branch.outputs().get(i)? {
        return None;
    }
    let one = FrozenGraph::freeze(
        &b.then_branch.placeholders(),
        &[b.then_branch.outputs()[i].clone()],
    )
    .ok()?;
    one.instantiate(args).ok()?.into_iter().next()
}

// ifelse(c, f(g(x)), h(g(x))) → ifelse(c, f(y), h(y)) with y = g(x)   (computed either way)
fn ifelse_hoist_common(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let (b, cond, args) = ifelse(v)?;
    let (then, other) = (&b.then_branch, &b.else_branch);
    let in_else: FxHashSet<u64> = toposort(other.outputs()).iter().map(|n| n.id()).collect();
    let then_nodes = toposort(then.outputs());
    let common: FxHashSet<u64> = then_nodes
        .iter()
        .map(|n| n.id())
        .filter(|id| in_else.contains(id))
        .collect();
    if common.is_empty() {
        return None;
    }
    // The common values read by something that stays in a branch, or returned by one.
    let mut frontier: Vec<Var> = Vec::new();
    let mut seen: FxHashSet<Var> = FxHashSet::default();
    let mut keep = |x: &Var| {
        if x.owner().is_some() && common.contains(&x.node().id()) && seen.insert(x.clone()) {
            frontier.push(x.clone());
        }
    };
    for branch in [then, other] {
        for node in toposort(branch.outputs()) {
            if !common.contains(&node.id()) {
                node.inputs().iter().for_each(&mut keep);
            }
        }
        branch.outputs().iter().for_each(&mut keep);
    }
    let placeholders = then.placeholders();
    let hoisted = FrozenGraph::freeze(&placeholders, &frontier)
        .ok()?
        .instantiate(args)
        .ok()?;
    let inner_inputs: Vec<Var> = placeholders.into_iter().chain(frontier).collect();
    let new_then = FrozenGraph::freeze(&inner_inputs, then.outputs()).ok()?;
    let new_else = FrozenGraph::freeze(&inner_inputs, other.outputs()).ok()?;
    let all_args: Vec<Var> = args.iter().cloned().chain(hoisted).collect();
    rebuild(cond, &all_args, new_then, new_else, v.index())
}

/// `branch` with each `IfElse` it computes on the outer condition `cond` (seen from outside
/// through `args`) replaced by that node's `then` or `else` side, which `cond` is known to pick
/// there; `None` when it has none.
fn known_condition(
    branch: &FrozenGraph,
    args: &[Var],
    cond: &Var,
    then_side: bool,
) -> Option<FrozenGraph> {
    let placeholders = branch.placeholders();
    let mut replace: FxHashMap<Var, Var> = FxHashMap::default();
    for node in toposort(branch.outputs()) {
        let (Some(Op::IfElse(inner)), [inner_cond, inner_args @ ..]) = (node.op(), node.inputs())
        else {
            continue;
        };
        let seen_outside = FrozenGraph::freeze(&placeholders, std::slice::from_ref(inner_cond))
            .ok()?
            .instantiate(args)
            .ok()?;
        if seen_outside.first() != Some(cond) {
            continue;
        }
        let side = if then_side {
            &inner.then_branch
        } else {
            &inner.else_branch
        };
        for (i, value) in side.instantiate(inner_args).ok()?.into_iter().enumerate() {
            replace.insert(Var::output_of(&node, i), value);
        }
    }
    if replace.is_empty() {
        return None;
    }
    let outs = clone_replace(branch.outputs(), &replace).ok()?;
    FrozenGraph::freeze(&placeholders, &outs).ok()
}

// ifelse(c, f(ifelse(c, a, b)), g(ifelse(c, d, e))) → ifelse(c, f(a), g(e))   (inside branches)
fn ifelse_known_condition_inside(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let (b, cond, args) = ifelse(v)?;
    let new_then = known_condition(&b.then_branch, args, cond, true);
    let new_else = known_condition(&b.else_branch, args, cond, false);
    if new_then.is_none() && new_else.is_none() {
        return None;
    }
    let new_then = new_then.unwrap_or_else(|| b.then_branch.clone());
    let new_else = new_else.unwrap_or_else(|| b.else_branch.clone());
    rebuild(cond, args, new_then, new_else, v.index())
}

/// The branch rules.
pub const RULES: &[Rule] = &[
    Rule::new(
        "ifelse_same_branches",
        Root::Op(OpKind::IfElse),
        ifelse_same_branches,
    ),
    Rule::new(
        "ifelse_known_condition_inside",
        Root::Op(OpKind::IfElse),
        ifelse_known_condition_inside,
    ),
    Rule::new(
        "ifelse_hoist_common",
        Root::Op(OpKind::IfElse),
        ifelse_hoist_common,
    ),
];
