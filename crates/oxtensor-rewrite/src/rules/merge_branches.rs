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

/// What a merging pass merges: nodes with equal keys (`None`: never merged) that do not depend
/// on one another, a group at a time, into the node `merge` builds (the replacement of each
/// of their outputs; `None` when it cannot be built).
pub(crate) struct Merging<K> {
    /// The pass's name (for errors).
    pub pass: &'static str,
    /// The name its hits are counted under (one per node merged into another).
    pub hit: &'static str,
    /// The key of a node that may merge with others of the same key.
    pub key: fn(&Node) -> Option<K>,
    /// One node computing what the group computes.
    pub merge: fn(&[Arc<Node>]) -> Option<Replacement>,
}

/// What each output of merged nodes becomes.
pub(crate) type Replacement = FxHashMap<Var, Var>;

/// The first set of two or more nodes with one key in the graph of `outputs` that do not
/// depend on one another (and that could not be merged before).
fn mergeable<K: std::hash::Hash + Eq>(
    outputs: &[Var],
    key: fn(&Node) -> Option<K>,
    failed: &FxHashSet<Vec<u64>>,
) -> Option<Vec<Arc<Node>>> {
    let mut by_key: IndexMap<K, Vec<Arc<Node>>> = IndexMap::new();
    for node in toposort(outputs) {
        if let Some(k) = key(&node) {
            by_key.entry(k).or_default().push(node.clone());
        }
    }
    for (_, nodes) in by_key {
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
            return Some(group);
        }
    }
    None
}

/// Merges the groups `m` describes, one at a time on the graph the previous merge left (so
/// dependencies are always those of the current graph); returns the new outputs, in order,
/// and what happened.
pub(crate) fn merge_independent<K: std::hash::Hash + Eq>(
    outputs: &[Var],
    m: &Merging<K>,
) -> Result<(Vec<Var>, PassStats), RewriteError> {
    let nodes_before = toposort(outputs).len();
    let mut current = outputs.to_vec();
    let mut merged = 0;
    let mut failed: FxHashSet<Vec<u64>> = FxHashSet::default();
    while let Some(group) = mergeable(&current, m.key, &failed) {
        let Some(replace) = (m.merge)(&group) else {
            failed.insert(ids(&group));
            continue;
        };
        current = clone_replace(&current, &replace).map_err(|source| RewriteError::Rebuild {
            pass: m.pass,
            source,
        })?;
        merged += group.len() - 1;
    }
    let mut hits = IndexMap::new();
    if merged > 0 {
        hits.insert(m.hit, merged);
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

/// Merges independent `IfElse` nodes on one condition (see the module documentation), one
/// set at a time on the graph the previous merge left (so dependencies are always those of
/// the current graph); returns the new outputs, in order, and what happened (hits of
/// `merge_ifelse`: one per node merged into another).
pub fn merge_branches(outputs: &[Var]) -> Result<(Vec<Var>, PassStats), RewriteError> {
    merge_independent(
        outputs,
        &Merging {
            pass: "merge_branches",
            hit: "merge_ifelse",
            key: |node| match node.op() {
                Some(Op::IfElse(_)) => node.inputs().first().cloned(),
                _ => None,
            },
            merge: |nodes| merge(nodes.first()?.inputs().first()?, nodes),
        },
    )
}
