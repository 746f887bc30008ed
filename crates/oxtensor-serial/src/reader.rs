//! Decoding: the node table read in order, each reference checked to point at an earlier
//! node, each apply node rebuilt through the graph builder (which checks arity, dtypes and
//! shapes) and its declared output types compared with the ones the builder infers.

use crate::SerialError;
use crate::json::{Obj, array, obj, usize_of};
use crate::ops::decode_op;
use crate::tensor::{decode_tensor, decode_type};
use oxtensor_graph::{FrozenGraph, NodeKind, Op, Scan, Var, toposort};
use serde_json::Value;
use smallvec::SmallVec;

/// The nodes read so far, each as its output variables.
#[derive(Default)]
pub struct Decoder {
    nodes: Vec<SmallVec<[Var; 1]>>,
}

impl Decoder {
    /// The variable a reference `[node, output]` names.
    pub fn var(&self, value: &Value, at: &str) -> Result<Var, SerialError> {
        let pair = array(value, at)?;
        let [node, out] = pair else {
            return Err(SerialError::invalid(
                at,
                "expected a reference [node, output]",
            ));
        };
        let node = usize_of(node, at)?;
        let out = usize_of(out, at)?;
        let outputs = self.nodes.get(node).ok_or_else(|| {
            SerialError::invalid(at, format!("node {node} is not defined before it is used"))
        })?;
        outputs
            .get(out)
            .cloned()
            .ok_or_else(|| SerialError::invalid(at, format!("node {node} has no output {out}")))
    }

    /// A reference that must name a shared variable.
    pub fn shared_ref(&self, value: &Value, at: &str) -> Result<Var, SerialError> {
        let v = self.var(value, at)?;
        if v.shared_value().is_none() {
            return Err(SerialError::invalid(at, "expected a shared variable"));
        }
        Ok(v)
    }

    /// A frozen graph: its outputs may read only its own placeholders (by position, with the
    /// declared types) and constants.
    pub fn frozen(&self, value: &Value, at: &str) -> Result<FrozenGraph, SerialError> {
        let o = obj(value, at)?;
        let types_at = o.path("inputs");
        let types = o
            .array("inputs")?
            .iter()
            .enumerate()
            .map(|(i, t)| decode_type(t, &format!("{types_at}[{i}]")))
            .collect::<Result<Vec<_>, _>>()?;
        let outs_at = o.path("outputs");
        let outputs = o
            .array("outputs")?
            .iter()
            .enumerate()
            .map(|(i, r)| self.var(r, &format!("{outs_at}[{i}]")))
            .collect::<Result<Vec<_>, _>>()?;
        let check = |v: &Var| match v.node().kind() {
            NodeKind::Placeholder(i) if types.get(*i) != Some(v.ty()) => Err(SerialError::invalid(
                at,
                format!(
                    "the inner graph reads placeholder {i} of type {}, which is not its input {i}",
                    v.ty()
                ),
            )),
            NodeKind::Input | NodeKind::Shared(_) => Err(SerialError::invalid(
                at,
                "an inner graph may read only its placeholders and constants",
            )),
            _ => Ok(()),
        };
        for v in &outputs {
            check(v)?;
        }
        for node in toposort(&outputs) {
            for v in node.inputs() {
                check(v)?;
            }
        }
        let placeholders: Vec<Var> = types
            .iter()
            .enumerate()
            .map(|(i, t)| Var::placeholder(i, t.clone()))
            .collect();
        FrozenGraph::freeze(&placeholders, &outputs).map_err(|source| SerialError::Graph {
            at: at.to_string(),
            source,
        })
    }

    /// A frozen graph that must be a scalar program (the body of a `Composite`,
    /// `FusedReduce` or `FusedMatMul`): 0-d inputs and outputs, elementwise ops only.
    pub fn scalar_program(&self, value: &Value, at: &str) -> Result<FrozenGraph, SerialError> {
        let g = self.frozen(value, at)?;
        let scalar = g.input_types().iter().all(|t| t.ndim() == 0)
            && g.outputs().iter().all(|v| v.ndim() == 0)
            && toposort(g.outputs()).iter().all(|n| {
                matches!(n.op(), Some(Op::Elemwise(_))) && n.types().iter().all(|t| t.ndim() == 0)
            });
        if !scalar {
            return Err(SerialError::invalid(
                at,
                "a fused program must map 0-d inputs to 0-d outputs with elementwise ops only",
            ));
        }
        Ok(g)
    }

    /// Reads node `k` of the table and appends it.
    #[track_caller]
    pub fn node(&mut self, value: &Value, at: &str) -> Result<(), SerialError> {
        let o = obj(value, at)?;
        let outputs: SmallVec<[Var; 1]> = match o.str("kind")? {
            "input" => {
                let ty = decode_type(o.get("type")?, &o.path("type"))?;
                smallvec::smallvec![Var::input(o.opt_str("name")?, ty)]
            }
            "shared" => {
                let value = decode_tensor(o.get("value")?, &o.path("value"))?;
                smallvec::smallvec![Var::shared(value, o.opt_str("name")?)]
            }
            "constant" => {
                let value = decode_tensor(o.get("value")?, &o.path("value"))?;
                smallvec::smallvec![Var::constant(value)]
            }
            "placeholder" => {
                let ty = decode_type(o.get("type")?, &o.path("type"))?;
                smallvec::smallvec![Var::placeholder(o.usize("index")?, ty)]
            }
            "apply" => self.apply(&o)?,
            other => {
                return Err(SerialError::invalid(
                    &o.path("kind"),
                    format!("unknown node kind {other:?}"),
                ));
            }
        };
        self.nodes.push(outputs);
        Ok(())
    }

    #[track_caller]
    fn apply(&self, o: &Obj<'_>) -> Result<SmallVec<[Var; 1]>, SerialError> {
        let op_obj = o.obj("op")?;
        let op = decode_op(&op_obj, self)?;
        if let Op::Scan(s) = &op {
            check_scan(s, &op_obj.at)?;
        }
        let in_at = o.path("inputs");
        let inputs = o
            .array("inputs")?
            .iter()
            .enumerate()
            .map(|(i, r)| self.var(r, &format!("{in_at}[{i}]")))
            .collect::<Result<Vec<_>, _>>()?;
        let outputs = Var::apply(op, &inputs).map_err(|source| SerialError::Graph {
            at: o.at.clone(),
            source,
        })?;
        let types_at = o.path("types");
        let declared = o.array("types")?;
        if declared.len() != outputs.len() {
            return Err(SerialError::invalid(
                &types_at,
                format!(
                    "{} types declared for {} outputs",
                    declared.len(),
                    outputs.len()
                ),
            ));
        }
        for (i, (t, v)) in declared.iter().zip(&outputs).enumerate() {
            let here = format!("{types_at}[{i}]");
            let t = decode_type(t, &here)?;
            if &t != v.ty() {
                return Err(SerialError::invalid(
                    &here,
                    format!("declared {t}, but the op computes {}", v.ty()),
                ));
            }
        }
        if let Some(names) = o.opt("names") {
            let names_at = o.path("names");
            for (i, (n, v)) in array(names, &names_at)?.iter().zip(&outputs).enumerate() {
                match n {
                    Value::Null => {}
                    Value::String(s) => v.set_name(s),
                    _ => {
                        return Err(SerialError::invalid(
                            &format!("{names_at}[{i}]"),
                            "expected a name or null",
                        ));
                    }
                }
            }
        }
        Ok(outputs)
    }
}

/// The layout checks a `Scan` needs before anything counts its inputs and outputs.
fn check_scan(s: &Scan, at: &str) -> Result<(), SerialError> {
    let bad = |m: &str| Err(SerialError::invalid(at, m.to_string()));
    let sorted = |t: &Vec<i64>| !t.is_empty() && t.windows(2).all(|w| w[0] < w[1]);
    if !s.sequence_taps.iter().all(sorted) || !s.state_taps.iter().all(sorted) {
        return bad("taps must be non-empty, sorted and unique");
    }
    if s.state_taps.iter().flatten().any(|&t| t >= 0) {
        return bad("state taps must be negative");
    }
    if s.n_tap_inputs() > s.body.input_types().len() {
        return bad("the step has fewer inputs than the taps read");
    }
    if s.body.outputs().len() != s.state_taps.len() + s.n_mapped + usize::from(s.until) {
        return bad("the step's outputs do not match its states, mapped outputs and condition");
    }
    if !s.last_only.is_empty() && s.last_only.len() != s.n_outputs() {
        return bad("last_only must be empty or have one entry per output");
    }
    Ok(())
}
