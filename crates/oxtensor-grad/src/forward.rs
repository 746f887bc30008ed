//! Forward mode: Jacobian-vector products, by the double-pullback (transposition) trick rather
//! than a second table of rules.
//!
//! For outputs `f` with Jacobian `J` at the current point, the pullback `u ↦ Jᵀu` is linear in
//! the cotangent `u`. Pulling it back once more, with respect to `u` and with cotangent `v`,
//! gives `(Jᵀ)ᵀv = Jv`. So [`pushforward`] builds `Jᵀu` for a placeholder `u`, pulls that back
//! with the tangents, and replaces `u` by zeros in what is left (the result does not depend on
//! `u`'s value; `u` may survive only inside masks such as `grad_clip`'s). Every rule is
//! therefore covered by the exhaustive pullback table. The cost is building the first pullback
//! graph, most of which is then dropped: the result stays linear in the size of the graph (for
//! a chain of 100 elementwise ops, 300 nodes with the forward pass, as for the pullback).

use crate::driver::{Cot, SeedMode, backprop};
use crate::error::GradError;
use crate::grad::{check_seed, finish_linear};
use crate::util::{grad_dtype, zeros_like};
use oxtensor_graph::build;
use oxtensor_graph::{TensorType, Var, clone_replace, toposort};
use rustc_hash::FxHashMap;

/// The Jacobian-vector product: for outputs `f₁…fₘ` and tangents `v₁…vₙ` (each of its `wrt`
/// variable's shape), the directional derivative `Σᵢ ∂fⱼ/∂wrtᵢ · vᵢ` of each output, with the
/// output's shape. PyTensor's `Rop` (JAX's `jvp`).
///
/// Outputs not depending on any `wrt` get zeros. Each result has the output's gradient dtype.
///
/// Built by transposing the reverse mode: the pullback `u ↦ Jᵀu` is linear in `u`, so pulling
/// it back again with respect to `u`, with cotangent `v`, gives `Jv`. Every op is covered by
/// the pullback rules, and the graph is linear in the size of the function's graph. Through
/// [`crate::grad_clip`] tangents pass unchanged when its bounds contain 0 (they are zeroed
/// otherwise: the clipped pullback is differentiated at a zero cotangent);
/// [`crate::zero_grad`] and [`crate::disconnected_grad`] stop them. An `OpFromGraph` with a
/// user-given pushforward uses it (its implicit inputs, shared variables, get no tangent).
pub fn pushforward(outputs: &[Var], wrt: &[Var], tangents: &[Var]) -> Result<Vec<Var>, GradError> {
    if wrt.len() != tangents.len() {
        return Err(GradError::Invalid(format!(
            "pushforward: {} wrt variables but {} tangents",
            wrt.len(),
            tangents.len()
        )));
    }
    let tangents: Vec<Var> = wrt
        .iter()
        .zip(tangents)
        .map(|(w, v)| check_seed("pushforward (tangents)", w, v))
        .collect::<Result<_, _>>()?;
    if let Some(jvps) = crate::inner::pushforward_overrides(outputs, wrt, &tangents)? {
        return Ok(jvps);
    }
    let placeholders: Vec<Var> = outputs
        .iter()
        .map(|o| {
            let ty = TensorType {
                dtype: grad_dtype(o.dtype()),
                shape: o.ty().shape.clone(),
            };
            Var::input(Some("pushforward_cotangent"), ty)
        })
        .collect();
    // Jᵀu for each wrt.
    let seeds: Vec<(Var, Var)> = outputs.iter().cloned().zip(placeholders.clone()).collect();
    let transposed = backprop(&seeds, SeedMode::Add, wrt, &[])?;
    // Pull Jᵀu back with the tangents, with respect to u.
    let mut seeds = Vec::new();
    for ((w, c), v) in wrt.iter().zip(transposed).zip(&tangents) {
        match c {
            Cot::Grad(g) => {
                let v = build::cast(v, g.dtype())?;
                seeds.push((g, v));
            }
            Cot::Zero | Cot::Disconnected => {}
            Cot::Undefined(reason) => {
                return Err(GradError::Undefined {
                    wrt: w.describe(),
                    reason,
                });
            }
        }
    }
    if seeds.is_empty() {
        return outputs
            .iter()
            .map(|o| Ok(zeros_like(o, grad_dtype(o.dtype()))?))
            .collect();
    }
    let jvps = finish_linear(&seeds, &placeholders)?;
    let survives = toposort(&jvps)
        .iter()
        .any(|n| n.inputs().iter().any(|i| placeholders.contains(i)));
    if !survives {
        return Ok(jvps);
    }
    let mut zeros = FxHashMap::default();
    for (o, u) in outputs.iter().zip(&placeholders) {
        zeros.insert(u.clone(), zeros_like(o, u.dtype())?);
    }
    Ok(clone_replace(&jvps, &zeros)?)
}
