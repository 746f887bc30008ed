//! Pullbacks of the inner-graph ops. The gradient of an [`OpFromGraph`] is another
//! `OpFromGraph` (its body the pullback of the body), and that of an [`IfElse`] another `IfElse`
//! (each branch's pullback), so gradients stay subroutines and stay lazy; being ops of the same
//! kinds, they can be differentiated again.

use crate::error::GradError;
use crate::rules::Term;
use crate::util::{grad_dtype, zeros_like};
use oxtensor_graph::{
    FrozenGraph, IfElse, Op, OpFromGraph, TensorType, Var, clone_replace, toposort,
};
use rustc_hash::FxHashMap;
use std::sync::Arc;

/// The pullback of `body` as a frozen graph: from (the body's inputs…, one cotangent per output
/// of type `cotangent_types`…) to one gradient per input.
fn gradient_body(
    body: &FrozenGraph,
    cotangent_types: &[TensorType],
) -> Result<FrozenGraph, GradError> {
    let inputs = body.placeholders();
    let cotangents: Vec<Var> = cotangent_types
        .iter()
        .map(|t| Var::input(Some("cotangent"), t.clone()))
        .collect();
    let grads = crate::pullback(body.outputs(), &inputs, &cotangents)?;
    let all: Vec<Var> = inputs.into_iter().chain(cotangents).collect();
    Ok(FrozenGraph::freeze(&all, &grads)?)
}

/// The cotangent types of `outputs`: each output's shape, in its gradient dtype.
fn cotangent_types(outputs: &[Var]) -> Vec<TensorType> {
    outputs
        .iter()
        .map(|o| o.ty().with_dtype(grad_dtype(o.dtype())))
        .collect()
}

/// The given cotangents, with zeros for the outputs that received none.
fn filled(outputs: &[Var], cotangents: &[Option<Var>]) -> Result<Vec<Var>, GradError> {
    outputs
        .iter()
        .zip(cotangents)
        .map(|(o, c)| match c {
            Some(c) => Ok(c.clone()),
            None => Ok(zeros_like(o, grad_dtype(o.dtype()))?),
        })
        .collect()
}

/// One term per input from gradients `grads` of the differentiable inputs (integer inputs get
/// [`Term::Zero`]: they are locally constant).
fn terms(inputs: &[Var], grads: Vec<Var>, wanted: &[bool]) -> Vec<Term> {
    inputs
        .iter()
        .zip(grads)
        .zip(wanted)
        .map(|((x, g), &w)| match (w, x.dtype().is_inexact()) {
            (false, _) => Term::Disconnected,
            (true, false) => Term::Zero,
            (true, true) => Term::Grad(g),
        })
        .collect()
}

/// The pullback of an [`OpFromGraph`] node: its override when it has one, else an
/// `OpFromGraph` computing the body's pullback.
pub(crate) fn op_from_graph(
    op: &OpFromGraph,
    inputs: &[Var],
    outputs: &[Var],
    cotangents: &[Option<Var>],
    wanted: &[bool],
) -> Result<Vec<Term>, GradError> {
    let cots = filled(outputs, cotangents)?;
    let grads = match &op.pullback {
        Some(custom) => {
            let args: Vec<Var> = inputs.iter().chain(outputs).chain(&cots).cloned().collect();
            let mut grads = custom.instantiate(&args)?;
            // The override covers the explicit inputs; shared variables read inside get none.
            for x in &inputs[grads.len().min(inputs.len())..] {
                grads.push(zeros_like(x, grad_dtype(x.dtype()))?);
            }
            grads
        }
        None => {
            let body = gradient_body(&op.body, &cotangent_types(outputs))?;
            let name = format!("{}_grad", op.name.as_deref().unwrap_or("OpFromGraph"));
            let grad_op = Arc::new(OpFromGraph {
                body,
                name: Some(Arc::from(name.as_str())),
                pullback: None,
                pushforward: None,
                implicit: Vec::new(),
                einsum: None,
            });
            let args: Vec<Var> = inputs.iter().chain(&cots).cloned().collect();
            grad_op.call(&args)?
        }
    };
    if grads.len() != inputs.len() {
        return Err(GradError::Invalid(format!(
            "the gradient override of {} returned {} gradients for {} inputs",
            Op::OpFromGraph(Arc::new(op.clone())),
            grads.len(),
            inputs.len()
        )));
    }
    Ok(terms(inputs, grads, wanted))
}

/// The pullback of an [`IfElse`] node: an `IfElse` on the same condition whose branches are
/// the branches' pullbacks, so only the taken branch is differentiated at run time. The
/// condition gets no gradient.
pub(crate) fn ifelse(
    op: &IfElse,
    inputs: &[Var],
    outputs: &[Var],
    cotangents: &[Option<Var>],
    wanted: &[bool],
) -> Result<Vec<Term>, GradError> {
    let (cond, args) = inputs
        .split_first()
        .ok_or_else(|| GradError::Invalid("IfElse without a condition".into()))?;
    let types = cotangent_types(outputs);
    let grad_op = IfElse {
        then_branch: gradient_body(&op.then_branch, &types)?,
        else_branch: gradient_body(&op.else_branch, &types)?,
    };
    let cots = filled(outputs, cotangents)?;
    let node_inputs: Vec<Var> = std::iter::once(cond.clone())
        .chain(args.iter().cloned())
        .chain(cots)
        .collect();
    let grads = Var::apply(Op::IfElse(Arc::new(grad_op)), &node_inputs)?.into_vec();
    let mut all = terms(args, grads, &wanted[1..]);
    all.insert(0, Term::Disconnected);
    Ok(all)
}

/// Forward mode through the first `OpFromGraph` node of the graph of `outputs` that has a
/// user-given pushforward, or `None` when there is none. The node's output tangents come
/// from its override (applied to the tangents of its explicit inputs, themselves pushed
/// forward); its outputs are then cut from the graph (fresh variables standing for them, with
/// those tangents), the rest is pushed forward as usual, and the cut is undone. The rest may
/// hold more such nodes: they are handled by the same recursion.
pub(crate) fn pushforward_overrides(
    outputs: &[Var],
    wrt: &[Var],
    tangents: &[Var],
) -> Result<Option<Vec<Var>>, GradError> {
    let found = toposort(outputs).into_iter().find_map(|n| match n.op() {
        Some(Op::OpFromGraph(o)) if o.pushforward.is_some() => Some((n.clone(), o.clone())),
        _ => None,
    });
    let Some((node, op)) = found else {
        return Ok(None);
    };
    let Some(rule) = &op.pushforward else {
        return Ok(None);
    };
    let inputs = node.inputs();
    let explicit = &inputs[..op.n_explicit()];
    let input_tangents = crate::pushforward(explicit, wrt, tangents)?;
    let args: Vec<Var> = inputs.iter().chain(&input_tangents).cloned().collect();
    let output_tangents = rule.instantiate(&args)?;
    let node_outputs: Vec<Var> = (0..node.types().len())
        .map(|i| Var::output_of(&node, i))
        .collect();
    let cut: Vec<Var> = node_outputs
        .iter()
        .map(|o| Var::input(Some("pushforward_cut"), o.ty().clone()))
        .collect();
    let to_cut: FxHashMap<Var, Var> = node_outputs.iter().cloned().zip(cut.clone()).collect();
    let rest = clone_replace(outputs, &to_cut)?;
    let all_wrt: Vec<Var> = wrt.iter().chain(&cut).cloned().collect();
    let all_tangents: Vec<Var> = tangents.iter().chain(&output_tangents).cloned().collect();
    let jvps = crate::pushforward(&rest, &all_wrt, &all_tangents)?;
    let back: FxHashMap<Var, Var> = cut.into_iter().zip(node_outputs).collect();
    Ok(Some(clone_replace(&jvps, &back)?))
}
