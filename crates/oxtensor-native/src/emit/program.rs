//! Scalar programs: the per-element work of an `Elemwise` or `Composite` node as C
//! statements over the node's input values.

use super::scalar::{ctype, expr, literal};
use oxtensor_data::DType;
use oxtensor_graph::{FrozenGraph, NodeKind, Op, ScalarOp, Var, toposort};
use rustc_hash::FxHashMap;

/// The body of an elementwise loop: inputs are read into `x0, x1, …` (of the input dtypes),
/// each statement defines `t0, t1, …`, and the outputs are C expressions of their dtypes.
#[derive(PartialEq)]
pub(crate) struct Program {
    /// The dtype of each input value.
    pub inputs: Vec<DType>,
    /// `const T tK = expr;` lines, in order.
    pub stmts: Vec<String>,
    /// Conditions that must be false for every element (otherwise the node fails).
    pub errors: Vec<String>,
    /// Each output's expression and dtype.
    pub outputs: Vec<(String, DType)>,
}

impl Program {
    /// One scalar op on the inputs (an `Elemwise` node), or `None` if C cannot compute it.
    pub fn elemwise(op: ScalarOp, inputs: &[DType], out: DType) -> Option<Program> {
        let args: Vec<(String, DType)> = inputs
            .iter()
            .enumerate()
            .map(|(i, &d)| (format!("x{i}"), d))
            .collect();
        let e = expr(op, &args, out)?;
        Some(Program {
            inputs: inputs.to_vec(),
            stmts: vec![format!("const {} t0 = {};", ctype(out), e.value)],
            errors: e.error.into_iter().collect(),
            outputs: vec![("t0".to_string(), out)],
        })
    }

    /// The inner graph of a `Composite` inlined as statements, or `None` if some inner node
    /// cannot be computed in C (or reads something other than placeholders and one-element
    /// constants).
    pub fn composite(g: &FrozenGraph) -> Option<Program> {
        let mut names: FxHashMap<Var, String> = FxHashMap::default();
        let value = |v: &Var, names: &FxHashMap<Var, String>| -> Option<String> {
            match v.node().kind() {
                NodeKind::Placeholder(i) => Some(format!("x{i}")),
                NodeKind::Constant(c) => literal(c),
                _ => names.get(v).cloned(),
            }
        };
        let mut stmts = Vec::new();
        let mut errors = Vec::new();
        for node in toposort(g.outputs()) {
            let Some(Op::Elemwise(op)) = node.op() else {
                return None;
            };
            let args = node
                .inputs()
                .iter()
                .map(|v| Some((value(v, &names)?, v.dtype())))
                .collect::<Option<Vec<_>>>()?;
            let out = node.types().first()?.dtype;
            let e = expr(*op, &args, out)?;
            let name = format!("t{}", stmts.len());
            stmts.push(format!("const {} {name} = {};", ctype(out), e.value));
            errors.extend(e.error);
            names.insert(Var::output_of(&node, 0), name);
        }
        let outputs = g
            .outputs()
            .iter()
            .map(|o| Some((value(o, &names)?, o.dtype())))
            .collect::<Option<Vec<_>>>()?;
        Some(Program {
            inputs: g.input_types().iter().map(|t| t.dtype).collect(),
            stmts,
            errors,
            outputs,
        })
    }
}
