//! Gradients: the `oxtensor-grad` API ([`grad`], [`pullback`], [`pushforward`], [`jacobian`],
//! [`hessian`], [`hessian_vector_product`], the markers [`zero_grad`], [`disconnected_grad`],
//! [`grad_clip`]), and [`verify_grad`], which checks a symbolic gradient against finite
//! differences by compiling and running it.
//!
//! ```
//! use oxtensor::gradient::{VerifyGradOptions, verify_grad};
//! use oxtensor::{Tensor, ops};
//!
//! let point = Tensor::from_slice(&[0.3, 1.2, -0.7], &[3]).unwrap();
//! verify_grad(|x| Ok(ops::tanh(&x[0])?), &[point], &VerifyGradOptions::default()).unwrap();
//! ```

pub use oxtensor_grad::*;

use crate::{Error, OnUnusedInput, function};
use oxtensor_data::{DType, Tensor};
use oxtensor_graph::{GraphError, TensorType, Var, build};

/// Options of [`verify_grad`], with PyTensor's defaults.
#[derive(Clone, Debug)]
pub struct VerifyGradOptions {
    /// How many random projections of the output to check (each a new random cost).
    pub n_tests: usize,
    /// Finite-difference step; `None`: 1e-7 for `float64` points, 3e-4 if any is `float32`.
    pub eps: Option<f64>,
    /// Absolute tolerance; `None`: 1e-4 for `float64`, 1e-2 if any point is `float32`.
    pub abs_tol: Option<f64>,
    /// Relative tolerance; `None`: as `abs_tol`.
    pub rel_tol: Option<f64>,
    /// Seed of the random projections (the check is deterministic for a given seed).
    pub rng_seed: u64,
}

impl Default for VerifyGradOptions {
    fn default() -> VerifyGradOptions {
        VerifyGradOptions {
            n_tests: 2,
            eps: None,
            abs_tol: None,
            rel_tol: None,
            rng_seed: 0x5eed_f00d,
        }
    }
}

/// Why [`verify_grad`] failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum VerifyGradError {
    /// Building, compiling or running the function or its gradient failed.
    #[error(transparent)]
    Function(#[from] Error),
    /// The gradient could not be built.
    #[error(transparent)]
    Grad(#[from] GradError),
    /// The arguments cannot be checked (no points, integer points, an integer output).
    #[error("verify_grad: {0}")]
    Invalid(String),
    /// The symbolic gradient and the finite differences disagree beyond both tolerances.
    #[error("verify_grad: {0}")]
    Mismatch(Box<GradMismatch>),
}

/// Where and by how much a symbolic gradient disagrees with finite differences.
#[derive(Debug, Clone)]
pub struct GradMismatch {
    /// Which point (input) of the function.
    pub input: usize,
    /// The input's description (name, type, creation site).
    pub name: String,
    /// Its shape.
    pub shape: Vec<usize>,
    /// The element with the largest scaled error.
    pub position: Vec<usize>,
    /// Which random projection (0-based).
    pub test: usize,
    /// The symbolic gradient there.
    pub symbolic: f64,
    /// The central finite difference there.
    pub numeric: f64,
    /// `|symbolic − numeric|`.
    pub abs_err: f64,
    /// `abs_err / (|symbolic| + |numeric|)`.
    pub rel_err: f64,
    /// The absolute tolerance used.
    pub abs_tol: f64,
    /// The relative tolerance used.
    pub rel_tol: f64,
}

impl std::fmt::Display for GradMismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the gradient with respect to input {} ({}, shape {:?}) is wrong at position {:?} (test {}): symbolic {:e}, numeric {:e}; absolute error {:e} > {:e} and relative error {:e} > {:e}",
            self.input,
            self.name,
            self.shape,
            self.position,
            self.test,
            self.symbolic,
            self.numeric,
            self.abs_err,
            self.abs_tol,
            self.rel_err,
            self.rel_tol
        )
    }
}

impl From<GraphError> for VerifyGradError {
    fn from(e: GraphError) -> VerifyGradError {
        VerifyGradError::Function(Error::Graph(e))
    }
}

/// SplitMix64: a tiny, good-enough deterministic generator for random projections.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`.
    fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// `(abs_err, rel_err)` as PyTensor's `numeric_grad.abs_rel_err`, with NaN/∞ made explicit:
/// equal non-finite values agree, a non-finite value against a different one is an infinite
/// error.
fn abs_rel_err(a: f64, b: f64) -> (f64, f64) {
    if a == b || (a.is_nan() && b.is_nan()) {
        return (0.0, 0.0);
    }
    let abs = (a - b).abs();
    if !abs.is_finite() {
        return (f64::INFINITY, f64::INFINITY);
    }
    (abs, abs / (a.abs() + b.abs()).max(1e-8))
}

/// The multi-index of flat position `flat` in a C-ordered array of `shape`.
fn unravel(mut flat: usize, shape: &[usize]) -> Vec<usize> {
    let mut index = vec![0; shape.len()];
    for (d, &n) in shape.iter().enumerate().rev() {
        if n > 0 {
            index[d] = flat % n;
            flat /= n;
        }
    }
    index
}

/// `p` with flat element `j` moved by `delta` (in `p`'s dtype), and the element's new value.
fn perturb(p: &Tensor, j: usize, delta: f64) -> Result<(Tensor, f64), VerifyGradError> {
    let mut values = p.to_vec_as::<f64>();
    let moved = Tensor::scalar(values[j] + delta).cast(p.dtype());
    let actual = moved.item::<f64>().unwrap_or(values[j] + delta);
    values[j] = actual;
    let t = Tensor::from_slice(&values, p.shape())
        .map_err(|e| VerifyGradError::Invalid(e.to_string()))?
        .cast(p.dtype());
    Ok((t, actual))
}

/// One element's comparison.
struct Worst {
    flat: usize,
    symbolic: f64,
    numeric: f64,
    abs_err: f64,
    rel_err: f64,
    scaled: f64,
}

/// The worst element of one gradient, ranked by `min(abs_err / abs_tol, rel_err / rel_tol)`
/// as PyTensor does.
fn worst(symbolic: &[f64], numeric: &[f64], abs_tol: f64, rel_tol: f64) -> Option<Worst> {
    let mut best: Option<Worst> = None;
    for (flat, (&s, &n)) in symbolic.iter().zip(numeric).enumerate() {
        let (abs_err, rel_err) = abs_rel_err(s, n);
        let scaled = (abs_err / abs_tol).min(rel_err / rel_tol);
        if best.as_ref().is_none_or(|b| scaled > b.scaled) {
            best = Some(Worst {
                flat,
                symbolic: s,
                numeric: n,
                abs_err,
                rel_err,
                scaled,
            });
        }
    }
    best
}

/// Checks the symbolic gradient of a function against central finite differences at `points`,
/// PyTensor's `verify_grad`.
///
/// `f` builds the function's output from one symbolic input per point (of the point's dtype
/// and rank, with static extent 1 wherever the point has extent 1, so broadcasting is
/// exercised as it would be with such a value). For each of `n_tests` random projections `t`
/// (uniform in `[0.5, 1.5)`, of the output's shape), the cost `sum(t · f(x))` is differentiated
/// symbolically and compared with `(cost(x + ε eⱼ) − cost(x − ε eⱼ)) / 2ε` for every element
/// `j` of every point. The check fails when some element exceeds both the absolute and the
/// relative tolerance, reporting the input, the element, both values and both errors.
///
/// Points must be floats. Choose them away from kinks (`abs` at 0, ties of `maximum`).
pub fn verify_grad<F>(
    f: F,
    points: &[Tensor],
    options: &VerifyGradOptions,
) -> Result<(), VerifyGradError>
where
    F: FnOnce(&[Var]) -> Result<Var, VerifyGradError>,
{
    if points.is_empty() {
        return Err(VerifyGradError::Invalid("needs at least one point".into()));
    }
    if let Some(p) = points.iter().find(|p| !p.dtype().is_float()) {
        return Err(VerifyGradError::Invalid(format!(
            "can only check gradients at floating-point points, got one of dtype {}",
            p.dtype()
        )));
    }
    let single = points.iter().all(|p| p.dtype() == DType::F64);
    let eps = options.eps.unwrap_or(if single { 1e-7 } else { 3e-4 });
    let abs_tol = options.abs_tol.unwrap_or(if single { 1e-4 } else { 1e-2 });
    let rel_tol = options.rel_tol.unwrap_or(abs_tol);

    let inputs: Vec<Var> = points
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let shape: Vec<Option<usize>> =
                p.shape().iter().map(|&n| (n == 1).then_some(1)).collect();
            Var::input(
                Some(&format!("input {i}")),
                TensorType::new(p.dtype(), &shape),
            )
        })
        .collect();
    let out = f(&inputs)?;
    if !out.dtype().is_float() {
        return Err(VerifyGradError::Invalid(format!(
            "the function's output must be a float, got {}",
            out.describe()
        )));
    }
    let value = function(&inputs, std::slice::from_ref(&out))
        .on_unused_input(OnUnusedInput::Ignore)
        .build()?
        .call(points)?;
    let out_shape = value[0].shape().to_vec();
    let projection = Var::input(
        Some("random projection"),
        TensorType {
            dtype: DType::F64,
            shape: out.ty().shape.clone(),
        },
    );
    let cost = build::sum(&build::mul(&projection, &out)?, None, false)?;
    let options_grad = GradOptions {
        disconnected_inputs: DisconnectedInputs::Ignore,
        ..GradOptions::default()
    };
    let grads: Vec<Var> = grad(&cost, &inputs, &options_grad)?
        .into_iter()
        .map(|g| {
            g.into_var().ok_or_else(|| {
                VerifyGradError::Invalid("a gradient is missing or undefined".into())
            })
        })
        .collect::<Result<_, _>>()?;
    let mut all_inputs = inputs.clone();
    all_inputs.push(projection);
    let grad_fn = function(&all_inputs, &grads)
        .on_unused_input(OnUnusedInput::Ignore)
        .build()?;
    let cost_fn = function(&all_inputs, &[cost])
        .on_unused_input(OnUnusedInput::Ignore)
        .build()?;
    let eval_cost = |args: &[Tensor]| -> Result<f64, VerifyGradError> {
        let c = cost_fn.call(args)?;
        c[0].item::<f64>()
            .ok_or_else(|| VerifyGradError::Invalid("the cost is not a scalar".into()))
    };

    let mut rng = SplitMix64(options.rng_seed);
    for test in 0..options.n_tests {
        let numel: usize = out_shape.iter().product();
        let t: Vec<f64> = (0..numel).map(|_| rng.uniform() + 0.5).collect();
        let t = Tensor::from_slice(&t, &out_shape)
            .map_err(|e| VerifyGradError::Invalid(e.to_string()))?;
        let mut args: Vec<Tensor> = points.to_vec();
        args.push(t);
        let symbolic = grad_fn.call(&args)?;
        for (i, p) in points.iter().enumerate() {
            let mut numeric = Vec::with_capacity(p.numel());
            for j in 0..p.numel() {
                let (plus, x_plus) = perturb(p, j, eps)?;
                let (minus, x_minus) = perturb(p, j, -eps)?;
                args[i] = plus;
                let c_plus = eval_cost(&args)?;
                args[i] = minus;
                let c_minus = eval_cost(&args)?;
                numeric.push((c_plus - c_minus) / (x_plus - x_minus));
            }
            args[i] = p.clone();
            let sym = symbolic[i].to_vec_as::<f64>();
            if let Some(w) = worst(&sym, &numeric, abs_tol, rel_tol)
                && w.abs_err > abs_tol
                && w.rel_err > rel_tol
            {
                return Err(VerifyGradError::Mismatch(Box::new(GradMismatch {
                    input: i,
                    name: inputs[i].describe(),
                    shape: p.shape().to_vec(),
                    position: unravel(w.flat, p.shape()),
                    test,
                    symbolic: w.symbolic,
                    numeric: w.numeric,
                    abs_err: w.abs_err,
                    rel_err: w.rel_err,
                    abs_tol,
                    rel_tol,
                })));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix_is_deterministic_and_uniform() {
        let mut a = SplitMix64(7);
        let mut b = SplitMix64(7);
        let xs: Vec<f64> = (0..1000).map(|_| a.uniform()).collect();
        assert!(xs.iter().all(|&x| (0.0..1.0).contains(&x)));
        assert_eq!(xs[17], {
            (0..17).for_each(|_| {
                b.uniform();
            });
            b.uniform()
        });
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        assert!((mean - 0.5).abs() < 0.05);
    }

    #[test]
    fn errors_follow_pytensor() {
        assert_eq!(abs_rel_err(1.0, 1.0), (0.0, 0.0));
        let (a, r) = abs_rel_err(1.0, 1.1);
        assert!((a - 0.1).abs() < 1e-12 && (r - 0.1 / 2.1).abs() < 1e-12);
        assert_eq!(abs_rel_err(f64::NAN, f64::NAN), (0.0, 0.0));
        assert_eq!(abs_rel_err(f64::NAN, 1.0).0, f64::INFINITY);
        assert_eq!(unravel(5, &[2, 3]), vec![1, 2]);
        assert_eq!(unravel(0, &[]), Vec::<usize>::new());
    }
}
