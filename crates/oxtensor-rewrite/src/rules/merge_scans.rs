//! Merging loops (the `merge_scans` pass):
//!
//! `// scan(f, xs, n), scan(g, xs, n) == scan(λ: (f, g), xs, n)`
//!
//! `Scan` nodes that read the same sequences at the same taps, for the same number of steps,
//! in the same direction, without an `until` condition, and that do not depend on one another
//! become one loop whose step computes both steps: the sequences are walked once, and the
//! steps' work can be fused together. Its states are the first loop's then the second's, its
//! mapped outputs likewise; non-sequences read by both are passed once.
//!
//! A whole-graph pass: finding the loops to merge needs every node of the graph.

use super::merge_branches::{Merging, merge_independent};
use crate::RewriteError;
use crate::driver::PassStats;
use oxtensor_graph::{FrozenGraph, Node, Op, Scan, Var};
use rustc_hash::FxHashMap;
use std::sync::Arc;

/// What loops must share to merge: `n_steps` and the sequences (as variables), the sequences'
/// taps, the direction and the gradient truncation.
type LoopKey = (Vec<Var>, Vec<Vec<i64>>, bool, Option<usize>);

fn key(node: &Node) -> Option<LoopKey> {
    let Some(Op::Scan(s)) = node.op() else {
        return None;
    };
    if s.until || !s.last_only.is_empty() {
        return None;
    }
    let outer = node.inputs()[..1 + s.sequence_taps.len()].to_vec();
    Some((
        outer,
        s.sequence_taps.clone(),
        s.go_backwards,
        s.truncate_gradient,
    ))
}

/// One loop computing what the loops `nodes` (of one key) compute, and the replacement of each
/// of their outputs.
fn merge(nodes: &[Arc<Node>]) -> Option<FxHashMap<Var, Var>> {
    let scans: Vec<&Arc<Scan>> = nodes
        .iter()
        .map(|n| match n.op() {
            Some(Op::Scan(s)) => Some(s),
            _ => None,
        })
        .collect::<Option<_>>()?;
    let first = scans.first()?;
    let n_seq = first.sequence_taps.len();
    let n_seq_taps: usize = first.sequence_taps.iter().map(Vec::len).sum();
    let fresh = |t: &oxtensor_graph::TensorType| Var::input(None, t.clone());
    let seq_in: Vec<Var> = first.body.input_types()[..n_seq_taps]
        .iter()
        .map(fresh)
        .collect();
    // Per loop: its state stand-ins and initial buffers; the other values, each passed once.
    let (mut state_in, mut initial) = (Vec::new(), Vec::new());
    let (mut other_in, mut others): (Vec<Var>, Vec<Var>) = (Vec::new(), Vec::new());
    let mut position: FxHashMap<Var, usize> = FxHashMap::default();
    let (mut states_out, mut mapped_out) = (Vec::new(), Vec::new());
    let mut state_taps = Vec::new();
    for (node, s) in nodes.iter().zip(&scans) {
        let types = s.body.input_types();
        let n_state_taps: usize = s.state_taps.iter().map(Vec::len).sum();
        let mine: Vec<Var> = types[n_seq_taps..n_seq_taps + n_state_taps]
            .iter()
            .map(fresh)
            .collect();
        let outer = node.inputs();
        let n_state = s.state_taps.len();
        initial.extend_from_slice(&outer[1 + n_seq..1 + n_seq + n_state]);
        let mut own: Vec<Var> = seq_in.iter().chain(&mine).cloned().collect();
        for o in &outer[1 + n_seq + n_state..] {
            let at = *position.entry(o.clone()).or_insert_with(|| {
                others.push(o.clone());
                other_in.push(fresh(o.ty()));
                others.len() - 1
            });
            own.push(other_in[at].clone());
        }
        let outs = s.body.instantiate(&own).ok()?;
        states_out.extend_from_slice(&outs[..n_state]);
        mapped_out.extend_from_slice(&outs[n_state..s.n_outputs()]);
        state_in.extend(mine);
        state_taps.extend(s.state_taps.iter().cloned());
    }
    let body_in: Vec<Var> = seq_in
        .iter()
        .chain(&state_in)
        .chain(&other_in)
        .cloned()
        .collect();
    let body_out: Vec<Var> = states_out.iter().chain(&mapped_out).cloned().collect();
    let n_states = states_out.len();
    let op = Op::Scan(Arc::new(Scan {
        body: FrozenGraph::freeze(&body_in, &body_out).ok()?,
        sequence_taps: first.sequence_taps.clone(),
        state_taps,
        n_mapped: mapped_out.len(),
        go_backwards: first.go_backwards,
        until: false,
        truncate_gradient: first.truncate_gradient,
        last_only: Vec::new(),
        name: first.name.clone(),
    }));
    let inputs: Vec<Var> = nodes[0].inputs()[..1 + n_seq]
        .iter()
        .chain(&initial)
        .chain(&others)
        .cloned()
        .collect();
    let merged = Var::apply(op, &inputs).ok()?;
    let mut replace = FxHashMap::default();
    let (mut state_at, mut mapped_at) = (0, n_states);
    for (node, s) in nodes.iter().zip(&scans) {
        for i in 0..s.n_outputs() {
            let at = if i < s.state_taps.len() {
                state_at += 1;
                state_at - 1
            } else {
                mapped_at += 1;
                mapped_at - 1
            };
            let (old, new) = (Var::output_of(node, i), merged.get(at)?.clone());
            if !crate::type_fits(&old, &new) {
                return None;
            }
            replace.insert(old, new);
        }
    }
    Some(replace)
}

/// Merges independent loops over the same sequences (see the module documentation); returns
/// the new outputs, in order, and what happened (hits of `merge_scan`: one per loop merged
/// into another).
pub fn merge_scans(outputs: &[Var]) -> Result<(Vec<Var>, PassStats), RewriteError> {
    merge_independent(
        outputs,
        &Merging {
            pass: "merge_scans",
            hit: "merge_scan",
            key,
            merge,
        },
    )
}
