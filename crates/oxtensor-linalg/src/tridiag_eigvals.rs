//! Eigenvalues of a symmetric matrix without eigenvectors: a blocked Householder
//! tridiagonalisation (the `tridiag` module), then the root-free QL/QR iteration of Pal, Walker and Kahan on the
//! tridiagonal matrix (the method of LAPACK's `sterf`, which `syev`/`syevd` use for values).
//!
//! The root-free iteration works on the squares of the off-diagonal elements, so one
//! implicitly shifted QL (or QR) sweep needs no square roots, about half the work of the
//! rotation-based sweep faer runs for eigenvalues only. Each unreduced block is scaled into a
//! safe range first and iterated from whichever end holds the smaller diagonal element.

use crate::Real;
use crate::tridiag;
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::qr::no_pivoting::factor::recommended_block_size;
use faer::linalg::{evd, householder};
use faer::{Col, ColRef, Conj, Mat, MatMut, MatRef, Par, Side};

/// The iteration did not converge (after 30 sweeps per eigenvalue on average).
#[derive(Debug)]
pub(crate) struct NoConvergence;

/// The eigenvalues of the symmetric matrix whose `lower` (else upper) triangle `a` holds,
/// ascending, computed in `T` up to the tridiagonal form and in `f64` from there.
pub(crate) fn symmetric_eigenvalues<T: Real>(
    a: MatRef<'_, T>,
    lower: bool,
) -> Result<Vec<T>, NoConvergence> {
    let n = a.nrows();
    if n == 0 {
        return Ok(Vec::new());
    }
    // The reduction reads the lower triangle of a column-major matrix; the upper triangle of
    // `a` is the lower one of its transpose.
    let src = if lower { a } else { a.transpose() };
    let mut buf = vec![T::lit(0.0); n * n];
    MatMut::from_column_major_slice_mut(&mut buf, n, n).copy_from_triangular_lower(src);
    let t = tridiag::tridiagonalize(&mut buf, n);
    let mut d: Vec<f64> = t.d.iter().map(|x| x.as_f64()).collect();
    let mut e: Vec<f64> = t.e.iter().map(|x| x.as_f64()).collect();
    tridiagonal_eigenvalues(&mut d, &mut e)?;
    Ok(d.into_iter().map(T::lit).collect())
}

/// The eigenvalues (ascending) and eigenvectors (the columns of the matrix) of the symmetric
/// matrix whose `lower` (else upper) triangle `a` holds: the blocked reduction, faer's
/// tridiagonal eigensolver (divide and conquer), then the reflectors applied to its
/// eigenvectors by faer's blocked Householder products, the steps of faer's
/// `self_adjoint_evd` with the reduction swapped.
pub(crate) fn symmetric_eigen<T: Real>(
    a: MatRef<'_, T>,
    lower: bool,
) -> Result<(Col<T>, Mat<T>), NoConvergence> {
    let n = a.nrows();
    if !tridiag::is_blocked(n) {
        // The reduction would be faer's own: so is the whole decomposition, with its buffers.
        let side = if lower { Side::Lower } else { Side::Upper };
        let f = a.self_adjoint_eigen(side).map_err(|_| NoConvergence)?;
        return Ok((f.S().column_vector().to_owned(), f.U().to_owned()));
    }
    let mut w = Col::<T>::zeros(n);
    let mut u = Mat::<T>::zeros(n, n);
    let src = if lower { a } else { a.transpose() };
    let mut buf = vec![T::lit(0.0); n * n];
    MatMut::from_column_major_slice_mut(&mut buf, n, n).copy_from_triangular_lower(src);
    let t = tridiag::tridiagonalize(&mut buf, n);
    let m = n - 1;
    // The reflectors: column j of `basis` (rows 1.. of the reduced matrix) is reflector j
    // with its unit on the diagonal; faer's blocked products want each block's triangular
    // factor, built from the `τ`s as faer's own reduction builds it.
    let basis = MatRef::from_column_major_slice(&buf, n, n).submatrix(1, 0, m, m);
    let bs = recommended_block_size::<T>(n, n);
    let mut factor = Mat::<T>::zeros(bs, m);
    let mut j = 0;
    while j < m {
        let b = bs.min(m - j);
        let mut block = factor.as_mut().submatrix_mut(0, j, b, b);
        for k in 0..b {
            block[(k, k)] = t.tau[j + k];
        }
        householder::upgrade_householder_factor(
            block,
            basis.submatrix(j, j, m - j, b),
            b,
            1,
            Par::Seq,
        );
        j += b;
    }
    let scratch = evd::self_adjoint_evd_scratch::<T>(
        n,
        evd::ComputeEigenvectors::Yes,
        Par::Seq,
        Default::default(),
    );
    let mut mem = MemBuffer::new(scratch);
    let stack = MemStack::new(&mut mem);
    evd::tridiagonal_self_adjoint_evd(
        ColRef::from_slice(&t.d).as_diagonal(),
        ColRef::from_slice(&t.e).as_diagonal(),
        w.as_mut().as_diagonal_mut(),
        Some(u.as_mut()),
        Par::Seq,
        stack,
        Default::default(),
    )
    .map_err(|_| NoConvergence)?;
    householder::apply_block_householder_sequence_on_the_left_in_place_with_conj(
        basis,
        factor.as_ref(),
        Conj::No,
        u.as_mut().subrows_mut(1, m),
        Par::Seq,
        stack,
    );
    Ok((w, u))
}

/// The eigenvalues of the symmetric tridiagonal matrix with diagonal `d` and off-diagonal
/// `e` (`e.len() + 1 == d.len()`), left ascending in `d`; `e` is overwritten.
pub(crate) fn tridiagonal_eigenvalues(d: &mut [f64], e: &mut [f64]) -> Result<(), NoConvergence> {
    let n = d.len();
    debug_assert_eq!(e.len() + 1, n.max(1));
    let eps = f64::EPSILON / 2.0;
    let eps2 = eps * eps;
    let safmin = f64::MIN_POSITIVE;
    // The range a block is scaled into, so squaring its elements neither overflows nor
    // loses the small ones to underflow.
    let ssfmax = (1.0 / safmin).sqrt() / 3.0;
    let ssfmin = safmin.sqrt() / eps2;
    let max_sweeps = 30 * n;
    let mut sweeps = 0;
    if !d.iter().chain(e.iter()).all(|x| x.is_finite()) {
        d.fill(f64::NAN);
        return Ok(());
    }
    let mut start = 0;
    while start < n {
        if start > 0 {
            e[start - 1] = 0.0;
        }
        // The unreduced block start..=end: split where an off-diagonal element is negligible
        // relative to its two diagonal neighbours.
        let mut end = start;
        while end + 1 < n {
            if e[end].abs() <= d[end].abs().sqrt() * d[end + 1].abs().sqrt() * eps {
                e[end] = 0.0;
                break;
            }
            end += 1;
        }
        let (lo, hi) = (start, end);
        start = end + 1;
        if lo == hi {
            continue;
        }
        let norm = d[lo..=hi]
            .iter()
            .chain(&e[lo..hi])
            .fold(0.0f64, |m, x| m.max(x.abs()));
        if norm == 0.0 {
            continue;
        }
        let scale = if norm > ssfmax {
            ssfmax / norm
        } else if norm < ssfmin {
            ssfmin / norm
        } else {
            1.0
        };
        if scale != 1.0 {
            d[lo..=hi].iter_mut().for_each(|x| *x *= scale);
            e[lo..hi].iter_mut().for_each(|x| *x *= scale);
        }
        e[lo..hi].iter_mut().for_each(|x| *x *= *x);
        // Chase from the end with the smaller diagonal element: QL when that is the top.
        let budget = max_sweeps - sweeps;
        let used = if d[hi].abs() < d[lo].abs() {
            reverse_block(&mut d[lo..=hi], &mut e[lo..hi]);
            let used = ql_block(&mut d[lo..=hi], &mut e[lo..hi], eps2, budget);
            reverse_block(&mut d[lo..=hi], &mut e[lo..hi]);
            used
        } else {
            ql_block(&mut d[lo..=hi], &mut e[lo..hi], eps2, budget)
        };
        if scale != 1.0 {
            d[lo..=hi].iter_mut().for_each(|x| *x /= scale);
        }
        match used {
            Some(k) => sweeps += k,
            None => return Err(NoConvergence),
        }
    }
    d.sort_unstable_by(f64::total_cmp);
    Ok(())
}

/// Reverses the order of a tridiagonal block (`P T P` with the reversal permutation), so
/// the QR direction of the iteration is the QL one on the reversed block.
fn reverse_block(d: &mut [f64], e: &mut [f64]) {
    d.reverse();
    e.reverse();
}

/// Root-free implicit QL iteration on one block, `e` holding the squared off-diagonal
/// elements: deflates eigenvalues from the top (index 0) into `d`. Returns the number of
/// sweeps made, or `None` when `budget` sweeps did not finish the block.
fn ql_block(d: &mut [f64], e2: &mut [f64], eps2: f64, budget: usize) -> Option<usize> {
    let last = d.len() - 1;
    let mut sweeps = 0;
    let mut l = 0;
    while l <= last {
        // The first negligible squared off-diagonal element at or below l.
        let mut m = l;
        while m < last && e2[m].abs() > eps2 * (d[m] * d[m + 1]).abs() {
            m += 1;
        }
        if m < last {
            e2[m] = 0.0;
        }
        if m == l {
            l += 1;
            continue;
        }
        if m == l + 1 {
            let (r1, r2) = eig2(d[l], e2[l].sqrt(), d[l + 1]);
            d[l] = r1;
            d[l + 1] = r2;
            e2[l] = 0.0;
            l += 2;
            continue;
        }
        if sweeps == budget {
            return None;
        }
        sweeps += 1;
        // Wilkinson-like shift from the top 2×2 block.
        let p = d[l];
        let rte = e2[l].sqrt();
        let mut sigma = (d[l + 1] - p) / (2.0 * rte);
        let r = sigma.hypot(1.0);
        sigma = p - rte / (sigma + r.copysign(sigma));
        let (mut c, mut s) = (1.0f64, 0.0f64);
        let mut gamma = d[m] - sigma;
        let mut p = gamma * gamma;
        for i in (l..m).rev() {
            let bb = e2[i];
            let r = p + bb;
            if i + 1 != m {
                e2[i + 1] = s * r;
            }
            let old_c = c;
            c = p / r;
            s = bb / r;
            let old_gamma = gamma;
            let alpha = d[i];
            gamma = c * (alpha - sigma) - s * old_gamma;
            d[i + 1] = old_gamma + (alpha - gamma);
            p = if c != 0.0 {
                gamma * gamma / c
            } else {
                old_c * bb
            };
        }
        e2[l] = s * p;
        d[l] = sigma + gamma;
    }
    Some(sweeps)
}

/// The eigenvalues of the symmetric 2×2 matrix `[[a, b], [b, c]]`, the larger in magnitude
/// first, computed without avoidable cancellation (LAPACK's `lae2`).
fn eig2(a: f64, b: f64, c: f64) -> (f64, f64) {
    let sum = a + c;
    let diff = (a - c).abs();
    let twob = (b + b).abs();
    let (big, small) = if a.abs() > c.abs() { (a, c) } else { (c, a) };
    let rt = diff.hypot(twob);
    if sum == 0.0 {
        return (0.5 * rt, -0.5 * rt);
    }
    let r1 = if sum < 0.0 {
        0.5 * (sum - rt)
    } else {
        0.5 * (sum + rt)
    };
    // The smaller root from the determinant, which the sum would lose to cancellation.
    (r1, (big / r1) * small - (b / r1) * b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_two_by_two_block_and_a_known_spectrum() {
        // [[2, 1], [1, 2]] has eigenvalues 1 and 3.
        let (r1, r2) = eig2(2.0, 1.0, 2.0);
        assert!((r1 - 3.0).abs() < 1e-15 && (r2 - 1.0).abs() < 1e-15);
        // The second-difference matrix tridiag(-1, 2, -1) of order n has eigenvalues
        // 2 - 2 cos(k π / (n + 1)).
        let n = 50;
        let mut d = vec![2.0; n];
        let mut e = vec![-1.0; n - 1];
        tridiagonal_eigenvalues(&mut d, &mut e).expect("converges");
        for (k, w) in d.iter().enumerate() {
            let exact = 2.0 - 2.0 * ((k + 1) as f64 * std::f64::consts::PI / (n + 1) as f64).cos();
            assert!((w - exact).abs() < 1e-14, "{k}: {w} vs {exact}");
        }
    }

    #[test]
    fn a_non_finite_element_gives_nans() {
        let mut d = vec![1.0, f64::NAN, 2.0];
        let mut e = vec![1.0, 1.0];
        tridiagonal_eigenvalues(&mut d, &mut e).expect("no iteration");
        assert!(d.iter().all(|x| x.is_nan()));
    }
}
