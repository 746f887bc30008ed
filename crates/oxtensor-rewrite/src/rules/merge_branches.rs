//! Merging lazy branches (the `merge_branches` pass):
//!
//! `// ifelse(c, a, b), ifelse(c, d, e) == ifelse(c, [a, d], [b, e])`
//!
//! `IfElse` nodes on the same condition variable that do not depend on one another become one
//! node whose branches compute both nodes' sides: the condition is tested once, and the
//! branches' work can be fused together. Laziness is kept: whichever side the condition picks,
//! the merged node computes exactly what the separate nodes computed. (An `IfElse` inside a
//! branch, on the condition of the branch, is resolved by the `branches` rules instead.)
//!
//! A whole-graph pass: finding the nodes to merge needs every node of the graph.

use crate::RewriteError;
use crate::driver::{PassStats, StopReason};
use indexmap::IndexMap;
use oxtensor_graph::{FrozenGraph, IfElse, Node, Op, Var, clone_replace, toposort};
use rustc_hash::{FxHashMap, FxHashSet};
use std::sync::Arc;

/// True when a value of `a` is computed on the way to one of `b`'s inputs.
fn depends_on(b: &Node, a: &Node) -> bool {
    toposort(b.inputs()).iter().any(|n| n.id() == a.id())
}

/// One `IfElse` computing what the `IfElse` nodes `nodes` (same condition) compute, and the
/// replacement of each of their outputs; `None` when it cannot be built.
fn merge(cond: &Var, nodes: &[Arc<Node>]) -> Option<FxHashMap<Var, Var>> {
    let mut args: Vec<Var> = Vec::new();
    let mut position: FxHashMap<Var, usize> = FxHashMap::default();
    for node in nodes {
        for x in &node.inputs()[1..] {
            position.entry(x.clone()).or_insert_with(|| {
                args.push(x.clone());
                args.len() - 1
            });
        }
    }
    let fresh: Vec<Var> = args
        .iter()
        .map(|x| Var::input(None, x.ty().clone()))
        .collect();
    let mut sides: [Vec<Var>; 2] = [Vec::new(), Vec::new()];
    for node in nodes {
        let Some(Op::IfElse(b)) = node.op() else {
            return None;
        };
        let own: Vec<Var> = node.inputs()[1..]
            .iter()
            .map(|x| fresh[position[x]].clone())
            .collect();
        sides[0].extend(b.then_branch.instantiate(&own).ok()?);
        sides[1].extend(b.else_branch.instantiate(&own).ok()?);
    }
    let op = Op::IfElse(Arc::new(IfElse {
        then_branch: FrozenGraph::freeze(&fresh, &sides[0]).ok()?,
        else_branch: FrozenGraph::freeze(&fresh, &sides[1]).ok()?,
    }));
    let inputs: Vec<Var> = std::iter::once(cond.clone()).chain(args).collect();
    let mut merged = Var::apply(op, &inputs).ok()?.into_iter();
    let mut replace = FxHashMap::default();
    for node in nodes {
        for i in 0..node.types().len() {
            let new = merged.next()?;
            let old = Var::output_of(node, i);
            if !crate::type_fits(&old, &new) {
                return None;
            }
            replace.insert(old, new);
        }
    }
    Some(replace)
}

/// The ids of a set of nodes.
fn ids(nodes: &[Arc<Node>]) -> Vec<u64> {
    nodes.iter().map(|n| n.id()).collect()
}

/// The first set of two or more `IfElse` nodes on one condition of the graph of `outputs`
/// that do not depend on one another (and that could not be merged before), and that
/// condition.
fn mergeable(outputs: &[Var], failed: &FxHashSet<Vec<u64>>) -> Option<(Var, Vec<Arc<Node>>)> {
    let mut by_condition: IndexMap<Var, Vec<Arc<Node>>> = IndexMap::new();
    for node in toposort(outputs) {
        if let (Some(Op::IfElse(_)), Some(cond)) = (node.op(), node.inputs().first()) {
            by_condition
                .entry(cond.clone())
                .or_default()
                .push(node.clone());
        }
    }
    for (cond, nodes) in by_condition {
        // Greedily, in order: a node joins the first group none of whose members it depends
        // on or feeds.
        let mut groups: Vec<Vec<Arc<Node>>> = Vec::new();
        for node in nodes {
            let free = groups.iter_mut().find(|g| {
                g.iter()
                    .all(|m| !depends_on(&node, m) && !depends_on(m, &node))
            });
            match free {
                Some(g) => g.push(node),
                None => groups.push(vec![node]),
            }
        }
        if let Some(group) = groups
            .into_iter()
            .find(|g| g.len() > 1 && !failed.contains(&ids(g)))
        {
            return Some((cond, group));
        }
    }
    None
}

/// Merges independent `IfElse` nodes on one condition (see the module documentation), one
/// set at a time on the graph the previous merge left (so dependencies are always those of
/// the current graph); returns the new outputs, in order, and what happened (hits of
/// `merge_ifelse`: one per node merged into another).
pub fn merge_branches(outputs: &[Var]) -> Result<(Vec<Var>, PassStats), RewriteError> {
    let nodes_before = toposort(outputs).len();
    let mut current = outputs.to_vec();
    let mut merged = 0;
    let mut failed: FxHashSet<Vec<u64>> = FxHashSet::default();
    while let Some((cond, group)) = mergeable(&current, &failed) {
        let Some(replace) = merge(&cond, &group) else {
            failed.insert(ids(&group));
            continue;
        };
        current = clone_replace(&current, &replace).map_err(|source| RewriteError::Rebuild {
            pass: "merge_branches",
            source,
        })?;
        merged += group.len() - 1;
    }
    let mut hits = IndexMap::new();
    if merged > 0 {
        hits.insert("merge_ifelse", merged);
    }
    let nodes_after = toposort(&current).len();
    let stats = PassStats {
        sweeps: 1,
        stop: StopReason::Fixpoint,
        hits,
        rejected: IndexMap::new(),
        nodes_before,
        nodes_after,
    };
    Ok((current, stats))
}
