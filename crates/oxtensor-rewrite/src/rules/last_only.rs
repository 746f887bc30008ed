//! The whole-graph pass marking the outputs of loops of which only the last step is used.
//!
//! A `Scan` returns every step's values, but a reduction written as a loop (a running sum, the
//! final state of a recurrence, the carries of a gradient's backward loop) is read only at
//! `[-1]`. Which outputs those are depends on every reader of the output, so this is a pass
//! over the whole graph rather than a rule. It sets [`Scan::last_only`]; a backend then keeps
//! a ring of the rows the loop still reads instead of the whole trajectory (the native C loop
//! does), and the readers' `[-1]` still reads the last value. Like every whole-graph pass it
//! runs inside loop steps too (`crate::bodies`), where the outputs a step returns are read
//! whole.

use crate::RewriteError;
use crate::driver::{PassStats, StopReason};
use indexmap::IndexMap;
use oxtensor_graph::{IndexEntry, Op, Scan, Var, clone_replace, toposort};
use rustc_hash::{FxHashMap, FxHashSet};
use std::sync::Arc;

/// True when `reader` takes `[-1]` of its first input `v` and nothing else of it.
fn reads_last(reader: &oxtensor_graph::Node, v: &Var) -> bool {
    let (Some(Op::Subtensor(spec)), [x, index]) = (reader.op(), reader.inputs()) else {
        return false;
    };
    x == v
        && index != v
        && spec.as_slice() == [IndexEntry::Index]
        && index.constant_value().and_then(|c| c.item::<i64>()) == Some(-1)
}

/// Marks the loop outputs every reader takes only `[-1]` of, and those nothing reads (module
/// documentation).
pub fn scan_last_only(outputs: &[Var]) -> Result<(Vec<Var>, PassStats), RewriteError> {
    let nodes = toposort(outputs);
    let nodes_before = nodes.len();
    let mut readers: FxHashMap<Var, Vec<usize>> = FxHashMap::default();
    for (at, node) in nodes.iter().enumerate() {
        for v in node.inputs() {
            readers.entry(v.clone()).or_default().push(at);
        }
    }
    let returned: FxHashSet<&Var> = outputs.iter().collect();
    let mut replace: FxHashMap<Var, Var> = FxHashMap::default();
    let mut marked = 0;
    for node in &nodes {
        let Some(Op::Scan(s)) = node.op() else {
            continue;
        };
        let marks: Vec<bool> = (0..s.n_outputs())
            .map(|i| {
                let v = Var::output_of(node, i);
                s.keeps_last_only(i)
                    || (!returned.contains(&v)
                        && readers
                            .get(&v)
                            .is_none_or(|rs| rs.iter().all(|&r| reads_last(&nodes[r], &v))))
            })
            .collect();
        if marks == s.last_only || !marks.contains(&true) {
            continue;
        }
        let op = Op::Scan(Arc::new(Scan {
            last_only: marks,
            ..Scan::clone(s)
        }));
        let Ok(new) = Var::apply(op, node.inputs()) else {
            continue;
        };
        for (i, v) in new.into_iter().enumerate() {
            replace.insert(Var::output_of(node, i), v);
        }
        marked += 1;
    }
    let current = if replace.is_empty() {
        outputs.to_vec()
    } else {
        clone_replace(outputs, &replace).map_err(|source| RewriteError::Rebuild {
            pass: "scan_last_only",
            source,
        })?
    };
    let mut hits = IndexMap::new();
    if marked > 0 {
        hits.insert("scan_last_only", marked);
    }
    let stats = PassStats {
        sweeps: 1,
        stop: StopReason::Fixpoint,
        hits,
        rejected: IndexMap::new(),
        nodes_before,
        nodes_after: toposort(&current).len(),
    };
    Ok((current, stats))
}
