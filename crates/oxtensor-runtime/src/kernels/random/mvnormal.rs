//! `multivariate_normal`'s draws for each of PyTensor's methods (`cholesky`, `svd`, `eigh`):
//! the factor of the covariance, computed as PyTensor 3's `MvNormalRV.rng_fn` computes it (also
//! for a covariance that is not positive semi-definite), applied to NumPy's standard normals.

use super::Column;
use crate::KernelError;
use oxtensor_data::Tensor;
use oxtensor_graph::random::Distribution;
use oxtensor_random::Generator;

/// The lower Cholesky factor of the `n`x`n` row-major `a` (its lower triangle), or `None` when
/// a pivot is `<= 0`: the check of the LAPACK `potrf` NumPy ships (OpenBLAS), which a NaN
/// pivot passes, giving NaN rows as NumPy does.
fn cholesky(a: &[f64], n: usize) -> Option<Vec<f64>> {
    let mut l = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..=i {
            let dot: f64 = (0..j).map(|k| l[i * n + k] * l[j * n + k]).sum();
            let v = a[i * n + j] - dot;
            if i == j {
                if v <= 0.0 {
                    return None;
                }
                l[i * n + i] = v.sqrt();
            } else {
                l[i * n + j] = v / l[j * n + j];
            }
        }
    }
    Some(l)
}

/// The factor `A` (row-major `n`x`n`, `A @ A.T == cov` for a positive semi-definite `cov`)
/// `multivariate_normal` draws with, as PyTensor 3's `MvNormalRV.rng_fn` computes it for each
/// method, also for a covariance that is not positive semi-definite (PyTensor does not check):
/// - `cholesky(cov)` of the lower triangle: an error naming `cov` when a pivot is `<= 0`
///   (NumPy's `LinAlgError: Matrix is not positive definite`); a NaN gives NaN rows.
/// - `u * sqrt(s)` of `svd(cov)`: singular values are never negative, so an indefinite `cov`
///   draws finite values (with covariance `|cov|`); a NaN anywhere is NumPy's `LinAlgError:
///   SVD did not converge`, an infinity (without NaN) a NaN factor.
/// - `v * sqrt(w)` of `eigh(cov)` (lower triangle): a negative eigenvalue gives a NaN column,
///   so NaN draws, with NumPy's `RuntimeWarning: invalid value encountered in sqrt` (through
///   [`crate::warnings`]); a NaN or infinity in the lower triangle a NaN factor.
///
/// The last two use the same `oxtensor-linalg` decompositions as `pt.linalg`.
fn mv_factor(dist: Distribution, cov: &[f64], n: usize) -> Result<Vec<f64>, KernelError> {
    let decomposed = |outs: Vec<Tensor>, u: usize, s: usize| -> Vec<f64> {
        let (u, s) = (outs[u].to_vec_as::<f64>(), outs[s].to_vec_as::<f64>());
        if s.iter().any(|&v| v < 0.0) {
            crate::warnings::warn("invalid value encountered in sqrt");
        }
        (0..n * n).map(|k| u[k] * s[k % n].sqrt()).collect()
    };
    let linalg = |e: oxtensor_linalg::LinalgError| {
        KernelError::Value(format!("{}: invalid `cov`: {e}", dist.name()))
    };
    match dist {
        Distribution::MvNormalSvd => {
            if cov.iter().any(|v| v.is_nan()) {
                return Err(KernelError::Value(format!(
                    "{}: invalid `cov`: SVD did not converge (NumPy's LinAlgError; expected no NaN)",
                    dist.name()
                )));
            }
            if cov.iter().any(|v| v.is_infinite()) {
                return Ok(vec![f64::NAN; n * n]);
            }
            let c = Tensor::from_slice(cov, &[n, n])?;
            let params = oxtensor_linalg::SvdParams {
                full_matrices: false,
                compute_uv: true,
            };
            Ok(decomposed(
                oxtensor_linalg::svd(&[&c], &params).map_err(linalg)?,
                0,
                1,
            ))
        }
        Distribution::MvNormalEigh => {
            if (0..n).any(|i| (0..=i).any(|j| !cov[i * n + j].is_finite())) {
                return Ok(vec![f64::NAN; n * n]);
            }
            let c = Tensor::from_slice(cov, &[n, n])?;
            Ok(decomposed(
                oxtensor_linalg::eigh(&[&c], true).map_err(linalg)?,
                1,
                0,
            ))
        }
        _ => cholesky(cov, n).ok_or_else(|| {
            KernelError::Value(format!(
                "{}: invalid `cov`: Matrix is not positive definite (NumPy's LinAlgError; \
                 expected a symmetric positive definite covariance)",
                dist.name()
            ))
        }),
    }
}

/// PyTensor's `multivariate_normal`: every standard normal first
/// (`rng.normal(size=(*batch, n))`), then `A @ z + mean` per batch element with the factor
/// [`mv_factor`] computes for the method `dist` stands for.
pub(super) fn mv_normal(
    g: &mut Generator,
    dist: Distribution,
    mean: &Column<f64>,
    cov: &Column<f64>,
    count: usize,
    n: usize,
    shape: &[usize],
) -> Result<Tensor, KernelError> {
    let z: Vec<f64> = (0..count * n).map(|_| g.standard_normal()).collect();
    let mut out = vec![0.0; count * n];
    let mut factor: Option<(usize, Vec<f64>)> = None;
    // A Cholesky factor is lower triangular: row i reads only its first i + 1 entries.
    let lower = dist == Distribution::MvNormal;
    for b in 0..count {
        let key = if cov.repeated { 0 } else { b };
        if factor.as_ref().is_none_or(|(k, _)| *k != key) {
            factor = Some((key, mv_factor(dist, cov.at(b), n)?));
        }
        let Some((_, a)) = factor.as_ref() else {
            continue;
        };
        let (zb, mb) = (&z[b * n..(b + 1) * n], mean.at(b));
        for i in 0..n {
            let width = if lower { i + 1 } else { n };
            let acc: f64 = (0..width).map(|j| a[i * n + j] * zb[j]).sum();
            out[b * n + i] = acc + mb[i];
        }
    }
    Ok(Tensor::from_slice(&out, shape)?)
}
