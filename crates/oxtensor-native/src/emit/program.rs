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

    /// The inner graph of a `Composite` (or any graph of `Elemwise` and `Composite` nodes: a
    /// loop's step) inlined as statements, or `None` if some inner node cannot be computed in
    /// C (or reads something other than placeholders and one-element constants).
    pub fn composite(g: &FrozenGraph) -> Option<Program> {
        let inputs: Vec<(String, DType)> = g
            .input_types()
            .iter()
            .enumerate()
            .map(|(i, t)| (format!("x{i}"), t.dtype))
            .collect();
        let mut stmts = Vec::new();
        let mut errors = Vec::new();
        let outputs = inline(g, &inputs, &mut stmts, &mut errors)?;
        Some(Program {
            inputs: inputs.iter().map(|i| i.1).collect(),
            stmts,
            errors,
            outputs: outputs
                .into_iter()
                .zip(g.outputs().iter().map(Var::dtype))
                .collect(),
        })
    }
}

/// Appends to `stmts` the statements computing `g` on the C values `inputs` (one per
/// placeholder), nested Composites inlined; returns the C expression of each output.
pub(super) fn inline(
    g: &FrozenGraph,
    inputs: &[(String, DType)],
    stmts: &mut Vec<String>,
    errors: &mut Vec<String>,
) -> Option<Vec<String>> {
    let mut names: FxHashMap<Var, String> = FxHashMap::default();
    let value = |v: &Var, names: &FxHashMap<Var, String>| -> Option<String> {
        match v.node().kind() {
            NodeKind::Placeholder(i) => inputs.get(*i).map(|x| x.0.clone()),
            NodeKind::Constant(c) => literal(c),
            _ => names.get(v).cloned(),
        }
    };
    for node in toposort(g.outputs()) {
        let args = node
            .inputs()
            .iter()
            .map(|v| Some((value(v, &names)?, v.dtype())))
            .collect::<Option<Vec<_>>>()?;
        match node.op()? {
            Op::Elemwise(op) => {
                let out = node.types().first()?.dtype;
                let e = expr(*op, &args, out)?;
                let name = format!("t{}", stmts.len());
                stmts.push(format!("const {} {name} = {};", ctype(out), e.value));
                errors.extend(e.error);
                names.insert(Var::output_of(&node, 0), name);
            }
            Op::Composite(h) => {
                let outs = inline(h, &args, stmts, errors)?;
                for (k, o) in outs.into_iter().enumerate() {
                    names.insert(Var::output_of(&node, k), o);
                }
            }
            // A scalar given broadcastable dimensions (how a builder aligns ranks) is, per
            // element, the same scalar.
            Op::DimShuffle { .. } if node.inputs().first()?.ty().ndim() == 0 => {
                let (value, _) = args.into_iter().next()?;
                names.insert(Var::output_of(&node, 0), value);
            }
            _ => return None,
        }
    }
    g.outputs().iter().map(|o| value(o, &names)).collect()
}
