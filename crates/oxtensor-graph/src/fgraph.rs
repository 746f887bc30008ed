use crate::{GraphError, Node, NodeKind, Var};
use rustc_hash::{FxHashMap, FxHashSet};
use std::sync::Arc;

/// A function's graph: explicit inputs, outputs, and indexes derived from them (a deterministic
/// topological order of the apply nodes, the shared variables read, the clients of each
/// variable). It is a read-only view over the immutable nodes; rewriting produces a new one.
#[derive(Clone)]
pub struct FunctionGraph {
    inputs: Vec<Var>,
    outputs: Vec<Var>,
    order: Vec<Arc<Node>>,
    shared: Vec<Var>,
    consumed: Vec<Var>,
    clients: FxHashMap<Var, Vec<(usize, usize)>>,
}

/// Apply nodes reachable from `outputs`, inputs before users, in a deterministic order (depth
/// first from the outputs in order, inputs in order). Iterative, so deep chains do not overflow.
pub fn toposort(outputs: &[Var]) -> Vec<Arc<Node>> {
    let mut order = Vec::new();
    let mut done: FxHashSet<u64> = FxHashSet::default();
    let mut stack: Vec<(Arc<Node>, usize)> = Vec::new();
    for out in outputs {
        if out.owner().is_none() || done.contains(&out.node().id()) {
            continue;
        }
        stack.push((out.node().clone(), 0));
        while let Some((node, next)) = stack.pop() {
            let inputs = node.inputs();
            if let Some(child) = inputs[next..]
                .iter()
                .position(|v| v.owner().is_some() && !done.contains(&v.node().id()))
            {
                let child = inputs[next + child].node().clone();
                stack.push((node, next + 1));
                stack.push((child, 0));
            } else if done.insert(node.id()) {
                order.push(node);
            }
        }
    }
    order
}

impl FunctionGraph {
    /// The graph computing `outputs` from `inputs`. Every graph input (a leaf of kind `Input`)
    /// reached from the outputs must be listed; shared variables and constants need not be.
    pub fn new(inputs: Vec<Var>, outputs: Vec<Var>) -> Result<FunctionGraph, GraphError> {
        let order = toposort(&outputs);
        let listed: FxHashSet<&Var> = inputs.iter().collect();
        let mut shared = Vec::new();
        let mut seen_shared = FxHashSet::default();
        let mut clients: FxHashMap<Var, Vec<(usize, usize)>> = FxHashMap::default();
        let mut check_leaf = |v: &Var, shared: &mut Vec<Var>| -> Result<(), GraphError> {
            match v.node().kind() {
                NodeKind::Input | NodeKind::Placeholder(_) if !listed.contains(v) => {
                    Err(GraphError::Invalid {
                        op: "function".into(),
                        message: format!(
                            "the graph depends on {}, which is not among the function's inputs",
                            v.describe()
                        ),
                    })
                }
                NodeKind::Shared(_) if seen_shared.insert(v.clone()) => {
                    shared.push(v.clone());
                    Ok(())
                }
                _ => Ok(()),
            }
        };
        for (pos, node) in order.iter().enumerate() {
            for (k, v) in node.inputs().iter().enumerate() {
                check_leaf(v, &mut shared)?;
                clients.entry(v.clone()).or_default().push((pos, k));
            }
        }
        for v in &outputs {
            check_leaf(v, &mut shared)?;
        }
        Ok(FunctionGraph {
            inputs,
            outputs,
            order,
            shared,
            consumed: Vec::new(),
            clients,
        })
    }

    /// Marks the shared variables among `vars` that this graph reads as *consumed*: the call
    /// replaces their value with an update, so once the graph has read a consumed variable for
    /// the last time its buffer may hold other results (a parameter step `w - lr * g` can run in
    /// `w`'s memory). Variables the graph does not read are ignored.
    #[must_use]
    pub fn with_consumed(mut self, vars: impl IntoIterator<Item = Var>) -> FunctionGraph {
        let vars: Vec<Var> = vars.into_iter().collect();
        self.consumed = self
            .shared
            .iter()
            .filter(|v| vars.contains(v))
            .cloned()
            .collect();
        self
    }

    /// The shared variables whose buffers the call may overwrite (see
    /// [`with_consumed`](Self::with_consumed)), in [`shared_inputs`](Self::shared_inputs) order.
    pub fn consumed(&self) -> &[Var] {
        &self.consumed
    }

    /// The explicit inputs, in call order.
    pub fn inputs(&self) -> &[Var] {
        &self.inputs
    }

    /// The outputs.
    pub fn outputs(&self) -> &[Var] {
        &self.outputs
    }

    /// Apply nodes in execution order.
    pub fn toposort(&self) -> &[Arc<Node>] {
        &self.order
    }

    /// Shared variables the outputs read, in first-use order.
    pub fn shared_inputs(&self) -> &[Var] {
        &self.shared
    }

    /// Where `v` is used: (position in [`toposort`](Self::toposort), input index).
    pub fn clients(&self, v: &Var) -> &[(usize, usize)] {
        self.clients.get(v).map_or(&[], Vec::as_slice)
    }
}

/// Rebuilds `outputs` with each key of `replace` substituted by its value (PyTensor's
/// `clone_replace`, used for `givens`). Nodes not depending on a replaced variable are reused.
#[track_caller]
pub fn clone_replace(
    outputs: &[Var],
    replace: &FxHashMap<Var, Var>,
) -> Result<Vec<Var>, GraphError> {
    let mut map: FxHashMap<Var, Var> = replace.clone();
    for node in toposort(outputs) {
        let inputs = node.inputs();
        if !inputs.iter().any(|v| map.contains_key(v)) {
            continue;
        }
        let new_inputs: Vec<Var> = inputs
            .iter()
            .map(|v| map.get(v).cloned().unwrap_or_else(|| v.clone()))
            .collect();
        let op = node.op().cloned().ok_or_else(|| GraphError::Invalid {
            op: "clone_replace".into(),
            message: "leaf in toposort".into(),
        })?;
        let new_outs = Var::apply(op, &new_inputs)?;
        for (i, nv) in new_outs.into_iter().enumerate() {
            // A replaced variable stays replaced, even when its own inputs were replaced too.
            map.entry(Var::output_of(&node, i)).or_insert(nv);
        }
    }
    Ok(outputs
        .iter()
        .map(|v| map.get(v).cloned().unwrap_or_else(|| v.clone()))
        .collect())
}
