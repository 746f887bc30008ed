use crate::fgraph::{clone_replace, toposort};
use crate::{GraphError, NodeKind, TensorType, Var};
use rustc_hash::FxHashMap;
use std::hash::{Hash, Hasher};

/// An inner graph (the body of a fused Composite, an OpFromGraph or a Scan) frozen into a value.
///
/// Its inputs are positional placeholders interned by position and type, so the outputs of two
/// structurally equal inner graphs are the same variables: equality and hashing are O(1)
/// pointer work, whatever variables the graphs were first built from. A frozen graph is never
/// edited; optimizing one produces a new one.
#[derive(Clone)]
pub struct FrozenGraph {
    input_types: Vec<TensorType>,
    outputs: Vec<Var>,
}

impl FrozenGraph {
    /// Freezes the graph from `inputs` to `outputs`. Every graph input the outputs depend on
    /// must be among `inputs`; shared variables are not allowed inside (pass them as inputs).
    #[track_caller]
    pub fn freeze(inputs: &[Var], outputs: &[Var]) -> Result<FrozenGraph, GraphError> {
        let map: FxHashMap<Var, Var> = inputs
            .iter()
            .enumerate()
            .map(|(i, v)| (v.clone(), Var::placeholder(i, v.ty().clone())))
            .collect();
        let outputs = clone_replace(outputs, &map)?;
        for node in toposort(&outputs) {
            for v in node.inputs() {
                if matches!(v.node().kind(), NodeKind::Input | NodeKind::Shared(_)) {
                    return Err(GraphError::Invalid {
                        op: "FrozenGraph".into(),
                        message: format!(
                            "the inner graph reads {}, which is not among its inputs",
                            v.describe()
                        ),
                    });
                }
            }
        }
        Ok(FrozenGraph {
            input_types: inputs.iter().map(|v| v.ty().clone()).collect(),
            outputs,
        })
    }

    /// The types of the positional inputs.
    pub fn input_types(&self) -> &[TensorType] {
        &self.input_types
    }

    /// The outputs, over placeholders.
    pub fn outputs(&self) -> &[Var] {
        &self.outputs
    }

    /// The placeholders standing for the inputs.
    pub fn placeholders(&self) -> Vec<Var> {
        self.input_types
            .iter()
            .enumerate()
            .map(|(i, t)| Var::placeholder(i, t.clone()))
            .collect()
    }

    /// The outputs with the placeholders replaced by `inputs` (inlining the inner graph).
    #[track_caller]
    pub fn instantiate(&self, inputs: &[Var]) -> Result<Vec<Var>, GraphError> {
        if inputs.len() != self.input_types.len() {
            return Err(GraphError::Arity {
                op: "FrozenGraph".into(),
                expected: self.input_types.len().to_string(),
                got: inputs.len(),
            });
        }
        let map: FxHashMap<Var, Var> = self
            .placeholders()
            .into_iter()
            .zip(inputs.iter().cloned())
            .collect();
        clone_replace(&self.outputs, &map)
    }
}

impl PartialEq for FrozenGraph {
    fn eq(&self, other: &FrozenGraph) -> bool {
        self.input_types == other.input_types && self.outputs == other.outputs
    }
}

impl Eq for FrozenGraph {}

impl Hash for FrozenGraph {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.input_types.len().hash(state);
        self.outputs.hash(state);
    }
}

impl std::fmt::Debug for FrozenGraph {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "FrozenGraph({} inputs, {:?})",
            self.input_types.len(),
            self.outputs
        )
    }
}

/// Renders a scalar inner-graph variable as an infix expression over `i0, i1, …` (how
/// `debugprint` shows a Composite, as PyTensor does).
pub(crate) fn render_scalar(v: &Var) -> String {
    use crate::{Op, ScalarOp};
    if let NodeKind::Placeholder(i) = v.node().kind() {
        return format!("i{i}");
    }
    if let Some(c) = v.constant_value() {
        return format!(
            "{:?}",
            c.to_vec_as::<f64>().first().copied().unwrap_or(f64::NAN)
        );
    }
    let Some((op, inputs)) = v.owner() else {
        return format!("{v:?}");
    };
    let args: Vec<String> = inputs.iter().map(render_scalar).collect();
    let infix = |sym: &str| format!("({})", args.join(&format!(" {sym} ")));
    match op {
        Op::Elemwise(ScalarOp::Add) => infix("+"),
        Op::Elemwise(ScalarOp::Sub) => infix("-"),
        Op::Elemwise(ScalarOp::Mul) => infix("*"),
        Op::Elemwise(ScalarOp::TrueDiv) => infix("/"),
        Op::Elemwise(ScalarOp::Pow) => infix("**"),
        Op::Elemwise(ScalarOp::Neg) => format!("(-{})", args.join("")),
        Op::Elemwise(s) => format!("{}({})", s.name().to_lowercase(), args.join(", ")),
        other => format!("{other}({})", args.join(", ")),
    }
}
