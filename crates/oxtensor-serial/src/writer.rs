//! Encoding: the node table, filled in dependency order so every reference points backwards.

use crate::ops::encode_op;
use crate::tensor::{encode_tensor, encode_type};
use oxtensor_graph::{FrozenGraph, NodeKind, Var, toposort};
use rustc_hash::FxHashMap;
use serde_json::{Value, json};
use std::sync::PoisonError;

/// Builds the node table of one document. Each node (leaf or apply) is written once, after
/// everything it refers to (its inputs, the nodes of its inner graphs, its implicit inputs).
#[derive(Default)]
pub struct Encoder {
    nodes: Vec<Value>,
    index: FxHashMap<u64, usize>,
    shared: Vec<Var>,
}

fn names_json(v: &Var, n: usize) -> Value {
    let names: Vec<Value> = (0..n)
        .map(|i| {
            Var::output_of(v.node(), i)
                .name()
                .map_or(Value::Null, |s| json!(&*s))
        })
        .collect();
    Value::Array(names)
}

impl Encoder {
    /// The node table written so far, and the shared variables in it in table order.
    pub fn finish(self) -> (Vec<Value>, Vec<Var>) {
        (self.nodes, self.shared)
    }

    /// A reference `[node, output]` to `v`, writing its node (and all it depends on) first.
    pub fn var(&mut self, v: &Var) -> Value {
        if !self.index.contains_key(&v.node().id()) {
            if v.owner().is_some() {
                self.graph(std::slice::from_ref(v));
            } else {
                self.leaf(v);
            }
        }
        json!([self.index[&v.node().id()], v.index()])
    }

    fn push(&mut self, v: &Var, entry: Value) {
        self.index.insert(v.node().id(), self.nodes.len());
        self.nodes.push(entry);
    }

    fn leaf(&mut self, v: &Var) {
        let name = v.name().map_or(Value::Null, |s| json!(&*s));
        let entry = match v.node().kind() {
            NodeKind::Input => json!({"kind": "input", "type": encode_type(v.ty()), "name": name}),
            NodeKind::Shared(cell) => {
                self.shared.push(v.clone());
                let value = cell.read().unwrap_or_else(PoisonError::into_inner);
                json!({"kind": "shared", "value": encode_tensor(&value), "name": name})
            }
            NodeKind::Placeholder(i) => {
                json!({"kind": "placeholder", "index": i, "type": encode_type(v.ty())})
            }
            NodeKind::Constant(t) => json!({"kind": "constant", "value": encode_tensor(t)}),
            NodeKind::Apply { .. } => unreachable!("apply nodes are written by `graph`"),
        };
        self.push(v, entry);
    }

    /// Writes every node `outputs` depend on.
    pub fn graph(&mut self, outputs: &[Var]) {
        for node in toposort(outputs) {
            if self.index.contains_key(&node.id()) {
                continue;
            }
            let Some(op) = node.op() else { continue };
            let first = Var::output_of(&node, 0);
            let op_json = encode_op(op, self);
            let inputs: Vec<Value> = node.inputs().iter().map(|v| self.var(v)).collect();
            let types: Vec<Value> = node.types().iter().map(encode_type).collect();
            let entry = json!({
                "kind": "apply",
                "op": op_json,
                "inputs": inputs,
                "types": types,
                "names": names_json(&first, node.types().len()),
            });
            self.push(&first, entry);
        }
    }

    /// A frozen graph: `{"inputs": [types], "outputs": [refs]}`.
    pub fn frozen(&mut self, g: &FrozenGraph) -> Value {
        let outputs: Vec<Value> = g.outputs().iter().map(|v| self.var(v)).collect();
        let inputs: Vec<Value> = g.input_types().iter().map(encode_type).collect();
        json!({"inputs": inputs, "outputs": outputs})
    }
}
