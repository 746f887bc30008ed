//! Jacobians and second derivatives, built from the reverse mode.
//!
//! A Jacobian is built row by row: one backward pass per element of the (flattened)
//! expression, each pulling back a one-hot cotangent (a basis vector). When the expression's
//! number of elements is known when the graph is built, the rows are unrolled and stacked: for
//! `n` elements over a graph of size `G` the Jacobian graph has O(n·G) nodes (rows share every
//! subexpression that does not depend on the cotangent, thanks to hash-consing). Otherwise the
//! rows are the steps of a `Scan` over the element index, as PyTensor builds them. Either way
//! it costs `n` backward passes to run. For a directional derivative prefer
//! [`crate::pushforward`], for a Hessian applied to a vector [`hessian_vector_product`] (two
//! backward passes, whatever the size).

use crate::driver::{Cot, SeedMode, backprop};
use crate::error::GradError;
use crate::grad::{
    DisconnectedInputs, GradOptions, Gradient, check_seed, grad, handle_disconnected,
};
use crate::util::{dims, grad_dtype, sum_terms, zeros_like};
use oxtensor_data::{DType, Tensor};
use oxtensor_graph::Var;
use oxtensor_graph::build::{self as b, Built};

fn no_known_grads(function: &str, options: &GradOptions) -> Result<(), GradError> {
    if options.known_grads.is_empty() {
        Ok(())
    } else {
        Err(GradError::Invalid(format!(
            "{function} does not take known_grads; use grad or pullback"
        )))
    }
}

/// The static shape of `v`, if every extent is known.
fn static_shape(v: &Var) -> Option<Vec<usize>> {
    v.ty().shape.iter().copied().collect()
}

/// The Jacobian of an expression whose number of elements is only known at run time: a `Scan`
/// over the element index `i` whose step is the gradient of element `i` (PyTensor's way). The
/// step reads the flattened expression and the `wrt` variables as they are, so it
/// differentiates through them.
fn jacobian_by_scan(
    expression: &Var,
    wrt: &[Var],
    options: &GradOptions,
) -> Result<Vec<Var>, GradError> {
    let flat = b::flatten(expression, 1)?;
    let n = b::shape_i(&flat, 0)?;
    let i = Var::input(Some("i"), oxtensor_graph::TensorType::scalar(DType::I64));
    let element = b::subtensor(&flat, &[b::Idx::At(i.clone())])?;
    let rows: Vec<Var> = grad(&element, wrt, options)?
        .into_iter()
        .zip(wrt)
        .map(|(g, w)| match g {
            Gradient::Var(v) => Ok(v),
            Gradient::None | Gradient::Disconnected => Ok(zeros_like(w, grad_dtype(w.dtype()))?),
            Gradient::Undefined(reason) => Err(GradError::Undefined {
                wrt: w.describe(),
                reason,
            }),
        })
        .collect::<Result<_, _>>()?;
    let read: Vec<Var> = std::iter::once(flat.clone())
        .chain(wrt.iter().cloned())
        .collect();
    let index = b::arange(&Var::int_constant(0), &n, &Var::int_constant(1), DType::I64)?;
    let stacked = oxtensor_graph::scan(oxtensor_graph::ScanSpec {
        tap_inputs: std::slice::from_ref(&i),
        sequence_taps: vec![vec![0]],
        state_taps: Vec::new(),
        other_inputs: &read,
        outputs: &rows,
        n_mapped: rows.len(),
        until: false,
        n_steps: Var::int_constant(-1),
        sequences: &[index],
        initial: &[],
        others: &read,
        go_backwards: false,
        truncate_gradient: None,
        name: Some("jacobian"),
    })?;
    stacked
        .iter()
        .zip(wrt)
        .map(|(j, w)| {
            let mut target = dims(expression)?;
            target.extend(dims(w)?);
            Ok(b::reshape_sym(j, &target)?)
        })
        .collect()
}

/// The one-hot tensor of `shape` with a 1 at flat position `i`, as a constant of `v`'s
/// gradient dtype.
fn basis(v: &Var, shape: &[usize], i: usize) -> Result<Var, GradError> {
    let t = Tensor::build::<f64>(shape, |d| d[i] = 1.0)
        .map_err(|e| GradError::Invalid(format!("jacobian: {e}")))?;
    Ok(Var::constant(t.cast(grad_dtype(v.dtype()))))
}

/// Zeros of shape `lead + shape(w)`.
fn zeros_outer(lead: &[usize], w: &Var) -> Built {
    let mut d: Vec<Var> = lead.iter().map(|&n| Var::int_constant(n as i64)).collect();
    d.extend(dims(w)?);
    b::alloc(&Var::scalar_constant(0.0, grad_dtype(w.dtype())), &d)
}

/// The Jacobian of `expression` with respect to each of `wrt`: for each `w`, a tensor of shape
/// `shape(expression) + shape(w)` holding `∂expression[i…] / ∂w[j…]` (PyTensor's `jacobian`).
///
/// Built row by row: one backward pass per element of the expression, each pulling back a
/// one-hot cotangent (a basis vector), the rows stacked and reshaped; when the expression's
/// size is only known at run time, the rows are the steps of a `Scan`. For `n` elements over a graph of size `G` the
/// Jacobian graph has O(n·G) nodes (rows share, by hash-consing, every subexpression that
/// does not depend on the cotangent) and runs `n` backward passes; for a directional
/// derivative use [`crate::pushforward`], for a Hessian applied to a vector
/// [`hessian_vector_product`].
///
/// Of `options`,
/// `consider_constant` and `disconnected_inputs` apply: a `w` on which no element depends goes
/// through the disconnected policy and gets zeros; rows of elements that do not depend on `w`
/// are zeros (an expression with no elements has an empty Jacobian, without the policy).
/// Undefined gradients are an error; `known_grads` is not accepted.
pub fn jacobian(
    expression: &Var,
    wrt: &[Var],
    options: &GradOptions,
) -> Result<Vec<Var>, GradError> {
    no_known_grads("jacobian", options)?;
    let Some(shape) = static_shape(expression) else {
        return jacobian_by_scan(expression, wrt, options);
    };
    let n: usize = shape.iter().product();
    let mut rows: Vec<Vec<Var>> = vec![Vec::with_capacity(n); wrt.len()];
    let mut connected = vec![false; wrt.len()];
    for i in 0..n {
        let seed = (expression.clone(), basis(expression, &shape, i)?);
        let cots = backprop(&[seed], SeedMode::Add, wrt, &options.consider_constant)?;
        for (k, (w, c)) in wrt.iter().zip(cots).enumerate() {
            let row = match c {
                Cot::Grad(g) => {
                    connected[k] = true;
                    g
                }
                Cot::Zero => {
                    connected[k] = true;
                    zeros_like(w, grad_dtype(w.dtype()))?
                }
                Cot::Disconnected => zeros_like(w, grad_dtype(w.dtype()))?,
                Cot::Undefined(reason) => {
                    return Err(GradError::Undefined {
                        wrt: w.describe(),
                        reason,
                    });
                }
            };
            rows[k].push(row);
        }
    }
    wrt.iter()
        .zip(rows)
        .zip(connected)
        .map(|((w, rows), connected)| {
            if !connected {
                // An empty expression has an empty Jacobian, whatever it depends on.
                if n > 0 {
                    handle_disconnected(options.disconnected_inputs, w)?;
                }
                return Ok(zeros_outer(&shape, w)?);
            }
            if shape.is_empty() {
                return Ok(rows[0].clone());
            }
            let stacked = b::stack(&rows, 0)?;
            if shape.len() == 1 {
                return Ok(stacked);
            }
            let mut target: Vec<Var> = shape.iter().map(|&d| Var::int_constant(d as i64)).collect();
            target.extend(dims(w)?);
            Ok(b::reshape_sym(&stacked, &target)?)
        })
        .collect()
}

/// The gradient of `cost` with respect to each `w`, one at a time, as variables (zeros where
/// disconnected, after the policy).
fn first_derivatives(
    cost: &Var,
    wrt: &[Var],
    options: &GradOptions,
) -> Result<Vec<Var>, GradError> {
    let first = GradOptions {
        consider_constant: options.consider_constant.clone(),
        disconnected_inputs: options.disconnected_inputs,
        ..GradOptions::default()
    };
    grad(cost, wrt, &first)?
        .into_iter()
        .zip(wrt)
        .map(|(g, w)| match g {
            Gradient::Var(v) => Ok(v),
            Gradient::None | Gradient::Disconnected | Gradient::Undefined(_) => {
                Err(GradError::Disconnected { wrt: w.describe() })
            }
        })
        .collect()
}

/// The Hessian of a scalar `cost` with respect to each `w` of `wrt` (not the cross terms): a
/// tensor of shape `shape(w) + shape(w)`, PyTensor's `hessian`. It is the [`jacobian`] of the
/// gradient, so it costs one backward pass per element of `w`.
///
/// `disconnected_inputs` applies to the cost's dependence on `w`; a gradient that does not
/// depend on `w` (a cost linear in `w`) gives a zero Hessian without error.
pub fn hessian(cost: &Var, wrt: &[Var], options: &GradOptions) -> Result<Vec<Var>, GradError> {
    no_known_grads("hessian", options)?;
    if cost.ndim() != 0 {
        return Err(GradError::NonScalarCost {
            cost: cost.describe(),
        });
    }
    let grads = first_derivatives(cost, wrt, options)?;
    let second = GradOptions {
        consider_constant: options.consider_constant.clone(),
        disconnected_inputs: DisconnectedInputs::Ignore,
        ..GradOptions::default()
    };
    grads
        .iter()
        .zip(wrt)
        .map(|(g, w)| Ok(jacobian(g, std::slice::from_ref(w), &second)?.remove(0)))
        .collect()
}

/// The Hessian of a scalar `cost` applied to vectors: `Σⱼ ∂²cost/∂wrtᵢ∂wrtⱼ · vⱼ` for each
/// `wrtᵢ` (`vⱼ` of `wrtⱼ`'s shape), without building the Hessian: the gradient of
/// `Σⱼ ⟨∇ⱼ cost, vⱼ⟩` (reverse over reverse), two backward passes whatever the sizes. The
/// vectors are treated as constants. Of `options`, `consider_constant` and
/// `disconnected_inputs` apply (to the first derivative).
pub fn hessian_vector_product(
    cost: &Var,
    wrt: &[Var],
    vectors: &[Var],
    options: &GradOptions,
) -> Result<Vec<Var>, GradError> {
    no_known_grads("hessian_vector_product", options)?;
    if wrt.len() != vectors.len() {
        return Err(GradError::Invalid(format!(
            "hessian_vector_product: {} wrt variables but {} vectors",
            wrt.len(),
            vectors.len()
        )));
    }
    let vectors: Vec<Var> = wrt
        .iter()
        .zip(vectors)
        .map(|(w, v)| check_seed("hessian_vector_product (vectors)", w, v))
        .collect::<Result<_, _>>()?;
    let grads = first_derivatives(cost, wrt, options)?;
    let dots: Vec<Var> = grads
        .iter()
        .zip(&vectors)
        .map(|(g, v)| b::sum(&b::mul(g, v)?, None, false))
        .collect::<Result<_, _>>()?;
    if dots.is_empty() {
        return Ok(Vec::new());
    }
    let total = sum_terms(&dots)?;
    let mut constant = options.consider_constant.clone();
    constant.extend(vectors.iter().cloned());
    let second = GradOptions {
        consider_constant: constant,
        disconnected_inputs: DisconnectedInputs::Ignore,
        ..GradOptions::default()
    };
    grad(&total, wrt, &second)?
        .into_iter()
        .zip(wrt)
        .map(|(g, w)| match g {
            Gradient::Var(v) => Ok(v),
            Gradient::None | Gradient::Disconnected | Gradient::Undefined(_) => {
                Err(GradError::Disconnected { wrt: w.describe() })
            }
        })
        .collect()
}
