//! The reverse-mode driver: one walk over the graph in reverse topological order, accumulating
//! the cotangent contributions of each variable and summing them once, as a single n-ary `Add`,
//! when every consumer of the variable has contributed. Every node's rule adds O(1) nodes, so a
//! gradient graph is linear in the size of the graph it differentiates, and a subexpression
//! shared by several consumers is differentiated once.

use crate::error::GradError;
use crate::rules::{Term, op_pullback};
use crate::util::{fit, grad_dtype, refine, sum_terms, zeros_like};
use oxtensor_graph::{Op, Var, toposort};
use rustc_hash::{FxHashMap, FxHashSet};

/// The total gradient of one variable, after the walk.
#[derive(Clone, Debug)]
pub(crate) enum Cot {
    /// The gradient (the variable's shape, its gradient dtype).
    Grad(Var),
    /// Connected, but zero.
    Zero,
    /// Not connected to any seed.
    Disconnected,
    /// Undefined, for the reason given.
    Undefined(String),
}

/// How a seed's gradient combines with the contributions flowing back into its variable.
#[derive(Copy, Clone, PartialEq, Eq)]
pub(crate) enum SeedMode {
    /// The seed is the variable's whole gradient (PyTensor's `known_grads`, and the cost).
    Replace,
    /// The seed adds to what flows back from other seeds (a pullback of several outputs, one of
    /// which may feed another).
    Add,
}

/// Contributions received so far by one variable.
#[derive(Default)]
struct Acc {
    terms: Vec<Var>,
    zero: bool,
    undefined: Option<String>,
    fixed: Option<Var>,
}

/// State of the walk.
struct Walk {
    acc: FxHashMap<Var, Acc>,
    done: FxHashMap<Var, Cot>,
}

impl Walk {
    fn add(&mut self, var: &Var, term: Term) -> Result<(), GradError> {
        let acc = self.acc.entry(var.clone()).or_default();
        match term {
            Term::Grad(g) => acc.terms.push(fit(&g, var)?),
            Term::Zero => acc.zero = true,
            Term::Disconnected => {}
            Term::Undefined(reason) => {
                acc.undefined.get_or_insert(reason);
            }
        }
        Ok(())
    }

    /// The total gradient of `var`; call only once all its consumers have contributed.
    fn finish(&mut self, var: &Var) -> Result<Cot, GradError> {
        if let Some(c) = self.done.get(var) {
            return Ok(c.clone());
        }
        let acc = self.acc.remove(var).unwrap_or_default();
        let cot = match acc {
            Acc { fixed: Some(g), .. } => Cot::Grad(g),
            Acc {
                undefined: Some(r), ..
            } => Cot::Undefined(r),
            Acc { terms, zero, .. } if terms.is_empty() => {
                if zero {
                    Cot::Zero
                } else {
                    Cot::Disconnected
                }
            }
            Acc { terms, .. } => Cot::Grad(refine(&sum_terms(&terms)?, &var.ty().shape)?),
        };
        self.done.insert(var.clone(), cot.clone());
        Ok(cot)
    }
}

/// Propagates `seeds` (variable, gradient) back to `wrt`, not through `consider_constant`.
/// Seed gradients must already have their variable's rank and a float dtype.
pub(crate) fn backprop(
    seeds: &[(Var, Var)],
    mode: SeedMode,
    wrt: &[Var],
    consider_constant: &[Var],
) -> Result<Vec<Cot>, GradError> {
    let constant: FxHashSet<&Var> = consider_constant.iter().collect();
    let roots: Vec<Var> = seeds.iter().map(|(v, _)| v.clone()).collect();
    let order = toposort(&roots);

    // Variables whose gradient is needed: those depending on some `wrt` through a path that
    // does not cross a constant.
    let mut depends: FxHashSet<Var> = wrt.iter().cloned().collect();
    for node in &order {
        if node.inputs().iter().any(|v| depends.contains(v)) {
            for i in 0..node.types().len() {
                let o = Var::output_of(node, i);
                if !constant.contains(&o) {
                    depends.insert(o);
                }
            }
        }
    }

    let mut walk = Walk {
        acc: FxHashMap::default(),
        done: FxHashMap::default(),
    };
    for (v, g) in seeds {
        let g = refine(g, &v.ty().shape)?;
        let acc = walk.acc.entry(v.clone()).or_default();
        match mode {
            SeedMode::Replace => acc.fixed = Some(g),
            SeedMode::Add => acc.terms.push(g),
        }
    }

    for node in order.iter().rev() {
        let Some(op) = node.op() else { continue };
        let inputs = node.inputs();
        let wanted: Vec<bool> = inputs.iter().map(|v| depends.contains(v)).collect();
        let outputs: Vec<Var> = (0..node.types().len())
            .map(|i| Var::output_of(node, i))
            .collect();
        if !wanted.contains(&true) || outputs.iter().any(|o| constant.contains(o)) {
            continue;
        }
        let cots: Vec<Cot> = outputs
            .iter()
            .map(|o| walk.finish(o))
            .collect::<Result<_, _>>()?;
        if cots.iter().all(|c| matches!(c, Cot::Disconnected)) {
            continue;
        }
        if let Some(reason) = cots.iter().find_map(|c| match c {
            Cot::Undefined(r) => Some(r.clone()),
            _ => None,
        }) {
            // An undefined gradient reaches the inputs the outputs depend on, not those only
            // their shapes depend on (`eye(x.shape[0])` leaves `x`'s gradient defined): the
            // op's pullback of zeros tells which those are.
            let connected = connected_inputs(op, inputs, &outputs, &wanted);
            for (v, _) in inputs
                .iter()
                .zip(&connected)
                .filter(|(_, connected)| **connected)
            {
                walk.add(v, Term::Undefined(reason.clone()))?;
            }
            continue;
        }
        let mut given: Vec<Option<Var>> = cots
            .iter()
            .map(|c| match c {
                Cot::Grad(g) => Some(g.clone()),
                _ => None,
            })
            .collect();
        // Gradients through integer or bool values, or of zero cotangents, are zero; the rule
        // still runs (on zeros if need be) to tell connected inputs from disconnected ones.
        let silent = outputs
            .iter()
            .zip(&given)
            .all(|(o, g)| g.is_none() || !o.dtype().is_inexact());
        if given.iter().all(Option::is_none) {
            given = outputs
                .iter()
                .map(|o| zeros_like(o, grad_dtype(o.dtype())).map(Some))
                .collect::<Result<_, _>>()?;
        }
        let terms = op_pullback(op, inputs, &outputs, &given, &wanted)?;
        for ((v, term), w) in inputs.iter().zip(terms).zip(&wanted) {
            if !w {
                continue;
            }
            let term = match term {
                Term::Grad(_) | Term::Zero if silent => Term::Zero,
                t => t,
            };
            walk.add(v, term)?;
        }
    }
    wrt.iter().map(|w| walk.finish(w)).collect()
}

/// Per input of a node, whether it is wanted and its gradient is connected to the outputs',
/// by the op's rule on zero cotangents (every wanted input when the rule fails).
fn connected_inputs(op: &Op, inputs: &[Var], outputs: &[Var], wanted: &[bool]) -> Vec<bool> {
    let terms = outputs
        .iter()
        .map(|o| zeros_like(o, grad_dtype(o.dtype())).map(Some))
        .collect::<Result<Vec<_>, _>>()
        .ok()
        .and_then(|zeros| op_pullback(op, inputs, outputs, &zeros, wanted).ok());
    match terms {
        Some(terms) => terms
            .iter()
            .zip(wanted)
            .map(|(t, w)| *w && !matches!(t, Term::Disconnected))
            .collect(),
        None => wanted.to_vec(),
    }
}
