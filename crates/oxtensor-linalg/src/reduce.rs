//! Reductions of a matrix to scalars: det, slogdet, norm.

use crate::batch::{ArgSpec, Batched, OutSpec, check_arity, float_dtype};
use crate::decomp::matrix_dims;
use crate::util::norm1;
use crate::{LinalgError, Real, small};
use faer::dyn_stack::{MemStack, StackReq};
use faer::linalg::lu::partial_pivoting::factor::{lu_in_place, lu_in_place_scratch};
use faer::{MatMut, Par};
use oxtensor_data::Tensor;

const A: [ArgSpec; 1] = [ArgSpec::matrix("a")];

/// Determinant, `(m,m)->()`, like `numpy.linalg.det` (via LU; 1 for a 0×0 matrix).
pub fn det(inputs: &[&Tensor]) -> Result<Vec<Tensor>, LinalgError> {
    check_arity("det", inputs, 1)?;
    by_dtype!(float_dtype(inputs, &A), det_imp(inputs, false))
}

/// Sign and log-absolute-determinant, `(m,m)->(),()`, like `numpy.linalg.slogdet`: outputs
/// `[sign, logabsdet]`; a singular matrix gives sign 0 and logabsdet −∞.
pub fn slogdet(inputs: &[&Tensor]) -> Result<Vec<Tensor>, LinalgError> {
    check_arity("slogdet", inputs, 1)?;
    by_dtype!(float_dtype(inputs, &A), det_imp(inputs, true))
}

fn det_imp<T: Real>(inputs: &[&Tensor], log: bool) -> Result<Vec<Tensor>, LinalgError> {
    let op = if log { "slogdet" } else { "det" };
    let b = Batched::<T>::new(op, inputs, &A)?;
    let n = b.square(0, "a")?;
    let shapes: &[&[usize]] = if log { &[&[], &[]] } else { &[&[]] };
    b.run_into_many(shapes, det_scratch::<T>(n, log), |c, o, stack| {
        let (first, second) = det_one(c[0].data, n, log, stack);
        o[0][0] = first;
        if let Some(o) = o.get_mut(1) {
            o[0] = second;
        }
        Ok(())
    })
}

/// The workspace [`det_one`] needs for order `n`.
pub(crate) fn det_scratch<T: Real>(n: usize, log: bool) -> StackReq {
    if !log && n <= small::SMALL {
        return StackReq::new::<T>(n * n);
    }
    StackReq::all_of(&[
        StackReq::new::<T>(n * n),
        StackReq::new::<usize>(n),
        StackReq::new::<usize>(n),
        lu_in_place_scratch::<usize, T>(n, n, Par::Seq, Default::default()),
    ])
}

/// The determinant of one row-major `n × n` `a` (`log`: its sign and the logarithm of its
/// absolute value, sign 0 and −∞ for a singular matrix; else the determinant and an unused
/// 0), as [`det`] and [`slogdet`] compute each batch element: the kernel the batched ops and
/// [`crate::Workspace::det`] share, its working copies in `stack`.
pub(crate) fn det_one<T: Real>(a: &[T], n: usize, log: bool, stack: &mut MemStack) -> (T, T) {
    let zero = T::lit(0.0);
    if !log && n <= small::SMALL {
        // No per-matrix allocation (see `small`).
        let (mut w, _) = stack.make_with(n * n, |i| a[i]);
        let det = match small::eliminate(&mut w, &mut [], n, 0) {
            Ok(odd) => (0..n).fold(T::lit(if odd { -1.0 } else { 1.0 }), |acc, i| {
                acc * w[i * n + i]
            }),
            Err(_) => zero,
        };
        return (det, zero);
    }
    let (mut work, stack) = stack.make_with(n * n, |i| a[i]);
    let odd = lu_odd(&mut work, n, stack);
    let sign = T::lit(if odd { -1.0 } else { 1.0 });
    let diag = (0..n).map(|i| work[i * n + i]);
    if !log {
        return (diag.fold(sign, |acc, x| acc * x), zero);
    }
    if diag.clone().any(|x| x == zero) {
        return (zero, T::lit(f64::NEG_INFINITY));
    }
    let mut sign = sign;
    let mut logabs = zero;
    for x in diag {
        if x < zero {
            sign = -sign;
        }
        logabs += x.abs().ln();
    }
    (sign, logabs)
}

/// Factors `work` (a row-major `n × n` core, read as column-major: `aᵀ` in faer's preferred
/// layout, so it needs no further copy) in place by LU with partial pivoting, leaving `U`'s
/// diagonal on `work`'s diagonal (`det(a) = det(aᵀ) = ±Π diag`); returns whether the row
/// interchanges are odd.
fn lu_odd<T: Real>(work: &mut [T], n: usize, stack: &mut MemStack) -> bool {
    if n == 0 {
        return false;
    }
    let (mut perm, stack) = stack.make_with(n, |_| 0usize);
    let (mut perm_inv, stack) = stack.make_with(n, |_| 0usize);
    let (info, _) = lu_in_place(
        MatMut::from_column_major_slice_mut(work, n, n),
        &mut perm,
        &mut perm_inv,
        Par::Seq,
        stack,
        Default::default(),
    );
    info.transposition_count % 2 == 1
}

/// The order of a [`norm`], as NumPy's `ord`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum NormOrd {
    /// `ord=None`: the 2-norm of a vector, the Frobenius norm of a matrix.
    #[default]
    Default,
    /// `'fro'` (matrices only).
    Fro,
    /// `'nuc'`, the sum of singular values (matrices only).
    Nuc,
    /// `inf`: max |x| for vectors, max absolute row sum for matrices.
    Inf,
    /// `-inf`: min |x| for vectors, min absolute row sum for matrices.
    NegInf,
    /// A number: any `p` for vectors (`sum(|x|^p)^(1/p)`, 0 counts non-zeros); for matrices
    /// 1 / −1 (max / min absolute column sum) and 2 / −2 (largest / smallest singular value).
    P(f64),
}

/// Vector or matrix norm over the trailing core dimensions, like `numpy.linalg.norm`:
/// `(n)->()` when `matrix` is false, `(m,n)->()` when true.
pub fn norm(inputs: &[&Tensor], ord: NormOrd, matrix: bool) -> Result<Vec<Tensor>, LinalgError> {
    check_arity("norm", inputs, 1)?;
    let args = [ArgSpec::with_ndim("x", if matrix { 2 } else { 1 })];
    by_dtype!(
        float_dtype(inputs, &args),
        norm_imp(inputs, &args, ord, matrix)
    )
}

fn bad_ord(ord: NormOrd, what: &str) -> LinalgError {
    LinalgError::Param {
        op: "norm",
        param: "ord",
        message: format!("{ord:?} is not a valid order for {what}"),
    }
}

fn norm_imp<T: Real>(
    inputs: &[&Tensor],
    args: &[ArgSpec],
    ord: NormOrd,
    matrix: bool,
) -> Result<Vec<Tensor>, LinalgError> {
    let b = Batched::<T>::new("norm", inputs, args)?;
    if matrix {
        matrix_dims(&b, 0, "x")?;
        match ord {
            NormOrd::P(p) if ![1.0, -1.0, 2.0, -2.0].contains(&p) => {
                return Err(bad_ord(ord, "matrices"));
            }
            _ => {}
        }
    } else if matches!(ord, NormOrd::Fro | NormOrd::Nuc) {
        return Err(bad_ord(ord, "vectors"));
    }
    b.run(&[OutSpec::float(&[])], |c| {
        let v = if matrix {
            matrix_norm(c[0].mat(), ord)?
        } else {
            vector_norm(c[0].data.iter().map(|x| x.as_f64().abs()), ord)
        };
        Ok(vec![vec![T::lit(v)]])
    })
}

fn vector_norm(abs: impl Iterator<Item = f64> + Clone, ord: NormOrd) -> f64 {
    match ord {
        NormOrd::Inf => abs.fold(0.0, f64::max),
        NormOrd::NegInf => abs.fold(f64::INFINITY, f64::min),
        NormOrd::P(0.0) => abs.filter(|&x| x != 0.0).count() as f64,
        NormOrd::P(1.0) => abs.sum(),
        NormOrd::P(p) if p != 2.0 => abs.map(|x| x.powf(p)).sum::<f64>().powf(1.0 / p),
        _ => {
            let scale = abs.clone().fold(0.0, f64::max);
            if scale == 0.0 || !scale.is_finite() {
                return scale;
            }
            scale * abs.map(|x| (x / scale).powi(2)).sum::<f64>().sqrt()
        }
    }
}

fn matrix_norm<T: Real>(a: faer::MatRef<'_, T>, ord: NormOrd) -> Result<f64, LinalgError> {
    let (m, n) = (a.nrows(), a.ncols());
    let row_sums = || (0..m).map(|i| (0..n).map(|j| a[(i, j)].as_f64().abs()).sum::<f64>());
    let col_sums = || (0..n).map(|j| (0..m).map(|i| a[(i, j)].as_f64().abs()).sum::<f64>());
    let singular = || {
        a.singular_values()
            .map(|s| s.iter().map(|x| x.as_f64()).collect::<Vec<f64>>())
            .map_err(|_| LinalgError::NoConvergence { op: "norm" })
    };
    Ok(match ord {
        NormOrd::Default | NormOrd::Fro => {
            let abs = (0..m).flat_map(|i| (0..n).map(move |j| a[(i, j)].as_f64().abs()));
            vector_norm(abs, NormOrd::Default)
        }
        NormOrd::Nuc => singular()?.iter().sum(),
        NormOrd::Inf => row_sums().fold(0.0, f64::max),
        NormOrd::NegInf => row_sums().fold(f64::INFINITY, f64::min),
        NormOrd::P(1.0) => norm1(a),
        NormOrd::P(-1.0) => col_sums().fold(f64::INFINITY, f64::min),
        NormOrd::P(2.0) => singular()?.first().copied().unwrap_or(0.0),
        NormOrd::P(_) => singular()?.last().copied().unwrap_or(0.0),
    })
}
