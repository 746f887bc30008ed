//! The reverse-mode entry points: [`grad`] (PyTensor's `pytensor.grad`, with all its options)
//! and [`pullback`] (vector-Jacobian products of several outputs).

use crate::driver::{Cot, SeedMode, backprop};
use crate::error::GradError;
use crate::util::{grad_dtype, zeros_like};
use oxtensor_graph::Var;
use oxtensor_graph::build;

/// What [`grad`] does when a `wrt` variable is disconnected from the cost.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum DisconnectedInputs {
    /// Return an error naming the variable (PyTensor's default, `'raise'`).
    #[default]
    Raise,
    /// Print a warning to stderr and go on (`'warn'`).
    Warn,
    /// Go on silently (`'ignore'`).
    Ignore,
}

/// What [`grad`] returns for a disconnected `wrt` variable (once [`DisconnectedInputs`] let it
/// through).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum ReturnDisconnected {
    /// Zeros of the variable's shape, in its gradient dtype (PyTensor's default, `'zero'`).
    #[default]
    Zero,
    /// [`Gradient::None`] (`'none'`).
    None,
    /// [`Gradient::Disconnected`] (`'disconnected'`).
    Disconnected,
}

/// What [`grad`] does when a gradient is undefined (PyTensor's `NullType` gradients, e.g. with
/// respect to the size of an `eye`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum NullGradients {
    /// Return [`GradError::Undefined`] naming the variable and the op (`'raise'`, default).
    #[default]
    Raise,
    /// Return [`Gradient::Undefined`] with the reason (`'return'`).
    Return,
}

/// Options of [`grad`], with PyTensor's defaults. Build with struct-update syntax:
/// `GradOptions { disconnected_inputs: DisconnectedInputs::Ignore, ..Default::default() }`.
#[derive(Clone, Debug, Default)]
pub struct GradOptions {
    /// Variables treated as constants: the gradient reaches them but does not flow through
    /// them to the variables they are computed from (a listed variable that is itself in
    /// `wrt` still gets its gradient).
    pub consider_constant: Vec<Var>,
    /// Policy for `wrt` variables the cost does not depend on.
    pub disconnected_inputs: DisconnectedInputs,
    /// Gradients already known for some variables, `(variable, gradient)`: backpropagation
    /// starts from them (in addition to the cost, which may then be `None`), and a listed
    /// variable's gradient is the one given, not the one flowing back from the cost.
    pub known_grads: Vec<(Var, Var)>,
    /// What to return for disconnected `wrt` variables.
    pub return_disconnected: ReturnDisconnected,
    /// Policy for undefined gradients.
    pub null_gradients: NullGradients,
}

/// The gradient with respect to one `wrt` variable, as [`grad`] returns it.
#[derive(Clone, Debug)]
pub enum Gradient {
    /// The gradient: the variable's shape, its dtype if a float, `float64` otherwise.
    Var(Var),
    /// Disconnected, with [`ReturnDisconnected::None`].
    None,
    /// Disconnected, with [`ReturnDisconnected::Disconnected`].
    Disconnected,
    /// Undefined (with [`NullGradients::Return`]); the string names the op and input.
    Undefined(String),
}

impl Gradient {
    /// The gradient variable, if there is one.
    pub fn var(&self) -> Option<&Var> {
        match self {
            Gradient::Var(v) => Some(v),
            Gradient::None | Gradient::Disconnected | Gradient::Undefined(_) => None,
        }
    }

    /// The gradient variable, if there is one.
    pub fn into_var(self) -> Option<Var> {
        match self {
            Gradient::Var(v) => Some(v),
            Gradient::None | Gradient::Disconnected | Gradient::Undefined(_) => None,
        }
    }
}

/// Checks a gradient given by the caller for `var` and casts it to `var`'s gradient dtype.
pub(crate) fn check_seed(context: &'static str, var: &Var, g: &Var) -> Result<Var, GradError> {
    let bad = |problem: String| GradError::BadSeed {
        context,
        var: var.describe(),
        given: g.describe(),
        problem,
    };
    if !g.dtype().is_inexact() {
        return Err(bad(format!(
            "has dtype {}; gradients must be floats or complex",
            g.dtype()
        )));
    }
    if g.ndim() != var.ndim() {
        return Err(bad(format!(
            "has {} dimensions, the variable {}",
            g.ndim(),
            var.ndim()
        )));
    }
    for (d, (a, b)) in g.ty().shape.iter().zip(&var.ty().shape).enumerate() {
        if let (Some(a), Some(b)) = (a, b)
            && a != b
        {
            return Err(bad(format!(
                "has extent {a} in dimension {d}, the variable {b}"
            )));
        }
    }
    Ok(build::cast(g, grad_dtype(var.dtype()))?)
}

/// Applies the disconnected-input policy to `wrt`.
pub(crate) fn handle_disconnected(policy: DisconnectedInputs, wrt: &Var) -> Result<(), GradError> {
    match policy {
        DisconnectedInputs::Raise => Err(GradError::Disconnected {
            wrt: wrt.describe(),
        }),
        DisconnectedInputs::Warn => {
            eprintln!(
                "oxtensor warning: grad was asked for the gradient with respect to {}, which is not part of the computational graph of the cost, or is used only by a non-differentiable operator; its gradient is zero",
                wrt.describe()
            );
            Ok(())
        }
        DisconnectedInputs::Ignore => Ok(()),
    }
}

/// The symbolic gradient of a scalar `cost` with respect to each of `wrt`: PyTensor's
/// `pytensor.grad(cost, wrt, consider_constant, disconnected_inputs, known_grads,
/// return_disconnected, null_gradients)`.
///
/// The cost must be 0-d ([`GradError::NonScalarCost`] otherwise). It may be `None` when
/// `options.known_grads` gives the gradients to start from. Its own gradient is one (in its
/// dtype if a float, `float64` otherwise).
///
/// Each result has its variable's shape, and its dtype for floats. For an integer (or bool)
/// `wrt` the gradient is `float64`: zero when the cost depends on it only through integer
/// values (integer arithmetic, comparisons, indices) or not at all; through a float-valued
/// function (a cast to float, `log`) it is the derivative of that function extended to the
/// reals, as in PyTensor.
///
/// Disconnected `wrt` variables (unused, or reached only through `shape`, indices,
/// [`crate::disconnected_grad`] or `consider_constant`) go through
/// `options.disconnected_inputs`, then `options.return_disconnected`. Undefined gradients go
/// through `options.null_gradients`.
///
/// ```
/// use oxtensor_graph::{TensorType, Var};
/// use oxtensor_data::DType;
/// use oxtensor_grad::{grad, GradOptions};
///
/// let x = Var::input(Some("x"), TensorType::of_rank(DType::F64, 1));
/// let cost = (&x * &x).sum(None);
/// let g = grad(&cost, &[x.clone()], &GradOptions::default()).unwrap();
/// let dx = g[0].var().unwrap(); // 2·x (as a graph)
/// assert_eq!(dx.ty(), x.ty());
/// ```
pub fn grad<'a>(
    cost: impl Into<Option<&'a Var>>,
    wrt: &[Var],
    options: &GradOptions,
) -> Result<Vec<Gradient>, GradError> {
    let cost = cost.into();
    if cost.is_none() && options.known_grads.is_empty() {
        return Err(GradError::Invalid(
            "grad: cost and known_grads can't both be empty".into(),
        ));
    }
    let mut seeds = Vec::new();
    for (v, g) in &options.known_grads {
        if seeds.iter().any(|(s, _): &(Var, Var)| s == v) {
            return Err(GradError::Invalid(format!(
                "grad: known_grads lists {} twice",
                v.describe()
            )));
        }
        seeds.push((v.clone(), check_seed("grad (known_grads)", v, g)?));
    }
    if let Some(c) = cost {
        if c.ndim() != 0 {
            return Err(GradError::NonScalarCost { cost: c.describe() });
        }
        if !seeds.iter().any(|(s, _)| s == c) {
            seeds.push((c.clone(), Var::scalar_constant(1.0, grad_dtype(c.dtype()))));
        }
    }
    let cots = backprop(&seeds, SeedMode::Replace, wrt, &options.consider_constant)?;
    wrt.iter()
        .zip(cots)
        .map(|(w, c)| match c {
            Cot::Grad(g) => Ok(Gradient::Var(g)),
            Cot::Zero => Ok(Gradient::Var(zeros_like(w, grad_dtype(w.dtype()))?)),
            Cot::Undefined(reason) => match options.null_gradients {
                NullGradients::Raise => Err(GradError::Undefined {
                    wrt: w.describe(),
                    reason,
                }),
                NullGradients::Return => Ok(Gradient::Undefined(reason)),
            },
            Cot::Disconnected => {
                handle_disconnected(options.disconnected_inputs, w)?;
                Ok(match options.return_disconnected {
                    ReturnDisconnected::Zero => {
                        Gradient::Var(zeros_like(w, grad_dtype(w.dtype()))?)
                    }
                    ReturnDisconnected::None => Gradient::None,
                    ReturnDisconnected::Disconnected => Gradient::Disconnected,
                })
            }
        })
        .collect()
}

/// [`grad`] with PyTensor's default options, returning the gradient variables.
pub fn grad_vars(cost: &Var, wrt: &[Var]) -> Result<Vec<Var>, GradError> {
    grad(cost, wrt, &GradOptions::default())?
        .into_iter()
        .zip(wrt)
        .map(|(g, w)| {
            g.into_var()
                .ok_or_else(|| GradError::Disconnected { wrt: w.describe() })
        })
        .collect()
}

/// The vector-Jacobian product: for outputs `f₁…fₘ` and cotangents `u₁…uₘ` (each of its
/// output's shape), the gradient of `Σⱼ ⟨uⱼ, fⱼ⟩` with respect to each `wrt` variable, i.e.
/// `Jᵀu`. PyTensor's `Lop`.
///
/// Outputs may be tensors of any rank and may depend on each other; a variable listed twice
/// gets the sum of its cotangents. Disconnected `wrt` variables get zeros; an undefined
/// gradient is an error.
pub fn pullback(outputs: &[Var], wrt: &[Var], cotangents: &[Var]) -> Result<Vec<Var>, GradError> {
    if outputs.len() != cotangents.len() {
        return Err(GradError::Invalid(format!(
            "pullback: {} outputs but {} cotangents",
            outputs.len(),
            cotangents.len()
        )));
    }
    let seeds: Vec<(Var, Var)> = outputs
        .iter()
        .zip(cotangents)
        .map(|(o, u)| Ok((o.clone(), check_seed("pullback (cotangents)", o, u)?)))
        .collect::<Result<_, GradError>>()?;
    finish_linear(&seeds, wrt)
}

/// Runs an additive backward pass; disconnected or zero results become zeros, undefined ones
/// an error.
pub(crate) fn finish_linear(seeds: &[(Var, Var)], wrt: &[Var]) -> Result<Vec<Var>, GradError> {
    let cots = backprop(seeds, SeedMode::Add, wrt, &[])?;
    wrt.iter()
        .zip(cots)
        .map(|(w, c)| match c {
            Cot::Grad(g) => Ok(g),
            Cot::Zero | Cot::Disconnected => Ok(zeros_like(w, grad_dtype(w.dtype()))?),
            Cot::Undefined(reason) => Err(GradError::Undefined {
                wrt: w.describe(),
                reason,
            }),
        })
        .collect()
}
