//! `multivariate_normal`'s draws for each of PyTensor's methods (`cholesky`, `svd`, `eigh`):
//! the factor of the covariance, computed as PyTensor 3's `MvNormalRV.rng_fn` computes it (also
//! for a covariance that is not positive semi-definite), applied to NumPy's standard normals.

use super::Column;
use crate::KernelError;
use oxtensor_data::Tensor;
use oxtensor_graph::random::Distribution;
use oxtensor_random::Generator;

/// The lower Cholesky factor of the `n`x`n` row-major `a` (its lower triangle) into `l` (its
/// upper triangle zeroed), or `false` when a pivot is `<= 0`: the check of the LAPACK `potrf`
/// NumPy ships (OpenBLAS), which a NaN pivot passes, giving NaN rows as NumPy does.
fn cholesky(a: &[f64], n: usize, l: &mut [f64]) -> bool {
    l.fill(0.0);
    for i in 0..n {
        for j in 0..=i {
            let dot: f64 = (0..j).map(|k| l[i * n + k] * l[j * n + k]).sum();
            let v = a[i * n + j] - dot;
            if i == j {
                if v <= 0.0 {
                    return false;
                }
                l[i * n + i] = v.sqrt();
            } else {
                l[i * n + j] = v / l[j * n + j];
            }
        }
    }
    true
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
/// The last two use the same `oxtensor-linalg` decompositions as `pt.linalg`. The factor is
/// written to `a`; returns whether it warned.
fn mv_factor(
    dist: Distribution,
    cov: &[f64],
    n: usize,
    a: &mut [f64],
) -> Result<bool, KernelError> {
    let mut decomposed = |outs: Vec<Tensor>, u: usize, s: usize| -> bool {
        let (u, s) = (outs[u].to_vec_as::<f64>(), outs[s].to_vec_as::<f64>());
        let warned = s.iter().any(|&v| v < 0.0);
        if warned {
            crate::warnings::warn(SQRT_WARNING);
        }
        for (k, o) in a.iter_mut().enumerate() {
            *o = u[k] * s[k % n].sqrt();
        }
        warned
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
                a.fill(f64::NAN);
                return Ok(false);
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
                a.fill(f64::NAN);
                return Ok(false);
            }
            let c = Tensor::from_slice(cov, &[n, n])?;
            Ok(decomposed(
                oxtensor_linalg::eigh(&[&c], true).map_err(linalg)?,
                1,
                0,
            ))
        }
        _ if cholesky(cov, n, a) => Ok(false),
        _ => Err(KernelError::Value(format!(
            "{}: invalid `cov`: Matrix is not positive definite (NumPy's LinAlgError; \
             expected a symmetric positive definite covariance)",
            dist.name()
        ))),
    }
}

/// The factor of the covariance last factored, kept with that covariance: a batch whose
/// elements share a covariance, or a loop whose steps draw with the same one, factors it once
/// (the factor depends on the values alone, so the draws are those of factoring each time).
#[derive(Default)]
struct MvFactor {
    cov: Vec<f64>,
    a: Vec<f64>,
    /// The factoring warned (a negative eigenvalue): the warning is raised again where the
    /// kernel factors again (a new call, or a batch element with its own covariance).
    warned: bool,
    valid: bool,
}

impl MvFactor {
    /// The factor (row-major `n`x`n`) of `cov` for the method `dist` stands for, as
    /// [`mv_factor`] computes it; after the first call of a given `n` it allocates only when
    /// the method is `svd` or `eigh` and `cov` changed. `fresh`: the kernel factors here (a
    /// first batch element, or one with its own covariance), so a reused factor's warning is
    /// raised again, as many times as factoring would.
    fn of(
        &mut self,
        dist: Distribution,
        cov: &[f64],
        n: usize,
        fresh: bool,
    ) -> Result<&[f64], KernelError> {
        let same = self.valid
            && self.cov.len() == cov.len()
            && self
                .cov
                .iter()
                .zip(cov)
                .all(|(x, y)| x.to_bits() == y.to_bits());
        if same {
            if fresh && self.warned {
                crate::warnings::warn(SQRT_WARNING);
            }
            return Ok(&self.a);
        }
        self.valid = false;
        self.cov.clear();
        self.cov.extend_from_slice(cov);
        self.a.resize(n * n, 0.0);
        self.warned = mv_factor(dist, cov, n, &mut self.a)?;
        self.valid = true;
        Ok(&self.a)
    }
}

/// What [`mv_normal`] keeps between calls: the factor of the last covariance and room for
/// the standard normals, so drawing again with the same extents allocates nothing (with the
/// same covariance, or any under the `cholesky` method).
#[derive(Default)]
pub(super) struct MvScratch {
    factor: MvFactor,
    z: Vec<f64>,
}

/// NumPy's warning for the square root of a negative eigenvalue.
const SQRT_WARNING: &str = "invalid value encountered in sqrt";

/// PyTensor's `multivariate_normal` into `out` (`count` vectors of `n`, C order): every
/// standard normal first (`rng.normal(size=(*batch, n))`, into `scratch`), then `A @ z + mean`
/// per batch element with the factor [`mv_factor`] computes for the method `dist` stands for
/// (kept in `scratch` while the covariance repeats). `params`: the mean and the covariance.
pub(super) fn mv_normal(
    g: &mut Generator,
    dist: Distribution,
    [mean, cov]: [&Column<f64>; 2],
    count: usize,
    n: usize,
    scratch: &mut MvScratch,
    out: &mut [f64],
) -> Result<(), KernelError> {
    let MvScratch { factor, z } = scratch;
    z.clear();
    z.extend((0..count * n).map(|_| g.standard_normal()));
    // A Cholesky factor is lower triangular: row i reads only its first i + 1 entries.
    let lower = dist == Distribution::MvNormal;
    for b in 0..count {
        let a = factor.of(dist, cov.at(b), n, b == 0 || !cov.repeated)?;
        let (zb, mb) = (&z[b * n..(b + 1) * n], mean.at(b));
        for i in 0..n {
            let width = if lower { i + 1 } else { n };
            let acc: f64 = (0..width).map(|j| a[i * n + j] * zb[j]).sum();
            out[b * n + i] = acc + mb[i];
        }
    }
    Ok(())
}
