//! `profile=True`: where a compiled function spends its time, per call and per node, for any
//! backend (PyTensor's `ProfileStats`, smaller).

use oxtensor_graph::{Node, Op, Var};
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// Collects a profiled function's timings across calls.
pub(crate) struct Recorder {
    name: Option<String>,
    backend: &'static str,
    rewrite_time: Duration,
    compile_time: Duration,
    nodes: Vec<Arc<Node>>,
    totals: Mutex<Totals>,
}

#[derive(Default)]
struct Totals {
    calls: u64,
    call_time: Duration,
    node_time: Vec<Duration>,
}

impl Recorder {
    /// A recorder for a function whose backend runs `nodes` in this order.
    pub(crate) fn new(
        name: Option<String>,
        backend: &'static str,
        rewrite_time: Duration,
        compile_time: Duration,
        nodes: Vec<Arc<Node>>,
    ) -> Recorder {
        let totals = Totals {
            node_time: vec![Duration::ZERO; nodes.len()],
            ..Totals::default()
        };
        Recorder {
            name,
            backend,
            rewrite_time,
            compile_time,
            nodes,
            totals: Mutex::new(totals),
        }
    }

    /// A zeroed per-node buffer for one call.
    pub(crate) fn buffer(&self) -> Vec<Duration> {
        vec![Duration::ZERO; self.nodes.len()]
    }

    /// Adds one call: its total wall time and its per-node times.
    pub(crate) fn record(&self, call_time: Duration, node_time: &[Duration]) {
        let mut t = self.totals.lock().unwrap_or_else(PoisonError::into_inner);
        t.calls += 1;
        t.call_time += call_time;
        for (acc, d) in t.node_time.iter_mut().zip(node_time) {
            *acc += *d;
        }
    }

    /// The timings so far.
    pub(crate) fn snapshot(&self) -> Profile {
        let t = self.totals.lock().unwrap_or_else(PoisonError::into_inner);
        Profile {
            name: self.name.clone(),
            backend: self.backend,
            rewrite_time: self.rewrite_time,
            compile_time: self.compile_time,
            calls: t.calls,
            call_time: t.call_time,
            nodes: self
                .nodes
                .iter()
                .zip(&t.node_time)
                .map(|(n, &time)| NodeTime {
                    op: n.op().map_or_else(String::new, op_class),
                    node: label(n),
                    time,
                })
                .collect(),
        }
    }
}

/// The time spent in one scheduled node over all profiled calls.
#[derive(Clone, Debug)]
pub struct NodeTime {
    /// The op's kind (`Elemwise{exp}`, `Composite`, `MatMul`, …), for grouping.
    pub op: String,
    /// The node: its op and its inputs.
    pub node: String,
    /// Total wall time in this node.
    pub time: Duration,
}

/// A profiled function's timings (`Function::profile`): compile time, calls, and the time of
/// every node as the backend ran it.
#[derive(Clone, Debug)]
pub struct Profile {
    /// The function's name, if it has one.
    pub name: Option<String>,
    /// The backend that ran it.
    pub backend: &'static str,
    /// Time spent rewriting the graph.
    pub rewrite_time: Duration,
    /// Time the backend spent compiling the rewritten graph.
    pub compile_time: Duration,
    /// Completed calls.
    pub calls: u64,
    /// Total wall time of those calls, argument checks and updates included.
    pub call_time: Duration,
    /// Every scheduled node, in execution order.
    pub nodes: Vec<NodeTime>,
}

impl Profile {
    /// A readable report: totals, then ops and nodes by decreasing time.
    pub fn summary(&self) -> String {
        let mut s = String::new();
        let name = self
            .name
            .as_ref()
            .map_or_else(String::new, |n| format!(" '{n}'"));
        let in_nodes: Duration = self.nodes.iter().map(|n| n.time).sum();
        let per_call = |d: Duration| d.as_secs_f64() / self.calls.max(1) as f64;
        let _ = writeln!(s, "Function profile{name} (backend {})", self.backend);
        let _ = writeln!(
            s,
            "  compile: {:.3} ms rewriting, {:.3} ms in the backend",
            ms(self.rewrite_time),
            ms(self.compile_time)
        );
        let _ = writeln!(
            s,
            "  {} calls, {:.6} s in total, {:.3} µs per call; {:.1}% of it inside nodes",
            self.calls,
            self.call_time.as_secs_f64(),
            per_call(self.call_time) * 1e6,
            percent(in_nodes, self.call_time)
        );
        let mut ops: Vec<(String, Duration, usize)> = Vec::new();
        for n in &self.nodes {
            match ops.iter_mut().find(|(op, _, _)| *op == n.op) {
                Some(entry) => {
                    entry.1 += n.time;
                    entry.2 += 1;
                }
                None => ops.push((n.op.clone(), n.time, 1)),
            }
        }
        ops.sort_by_key(|op| std::cmp::Reverse(op.1));
        let _ = writeln!(
            s,
            "\nOps\n  <% time> <sum %> <time s> <per call s> <nodes> <op>"
        );
        let mut cumulative = Duration::ZERO;
        for (op, time, count) in &ops {
            cumulative += *time;
            let _ = writeln!(
                s,
                "  {:>6.1}% {:>6.1}% {:>10.6} {:>12.3e} {:>7} {op}",
                percent(*time, in_nodes),
                percent(cumulative, in_nodes),
                time.as_secs_f64(),
                per_call(*time),
                count
            );
        }
        let mut order: Vec<usize> = (0..self.nodes.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(self.nodes[i].time));
        let _ = writeln!(
            s,
            "\nNodes\n  <% time> <sum %> <time s> <per call s> <#> <node>"
        );
        let mut cumulative = Duration::ZERO;
        for i in order {
            let n = &self.nodes[i];
            cumulative += n.time;
            let _ = writeln!(
                s,
                "  {:>6.1}% {:>6.1}% {:>10.6} {:>12.3e} {:>4} {}",
                percent(n.time, in_nodes),
                percent(cumulative, in_nodes),
                n.time.as_secs_f64(),
                per_call(n.time),
                i,
                n.node
            );
        }
        s
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn percent(part: Duration, whole: Duration) -> f64 {
    if whole.is_zero() {
        0.0
    } else {
        100.0 * part.as_secs_f64() / whole.as_secs_f64()
    }
}

/// The op's kind, without the inner program of a Composite (which is in the node's label).
fn op_class(op: &Op) -> String {
    match op {
        Op::Composite(_) => "Composite".into(),
        op => op.to_string(),
    }
}

/// `Op(input, …)`, each input by its name or the op that computes it.
fn label(node: &Node) -> String {
    let op = node.op().map_or_else(String::new, ToString::to_string);
    let inputs: Vec<String> = node.inputs().iter().map(input_label).collect();
    format!("{op}({})", inputs.join(", "))
}

fn input_label(v: &Var) -> String {
    if let Some(name) = v.name() {
        return name.to_string();
    }
    match v.node().op() {
        Some(op) => op_class(op),
        None => v.ty().to_string(),
    }
}
