//! Unblocked kernels for tiny matrices (order at most [`SMALL`]), on contiguous row-major data.
//!
//! Why they exist: a batch of thousands of 8×8 matrices spends most of its time in a general
//! library call's fixed costs (dispatch on size, blocking decisions, workspace set-up,
//! strided views and layout conversions), not in the ~n³/3 flops. Below [`SMALL`] a plain
//! loop over the row-major core does the same arithmetic without any of that, writing into
//! the output buffer; faer keeps larger matrices, where its blocked and vectorised
//! algorithms win. The arithmetic is the textbook one (Cholesky–Banachiewicz, Gaussian
//! elimination with partial pivoting, substitution), so results agree with LAPACK's to
//! rounding.

use crate::Real;

/// The largest order that takes the unblocked path.
pub(crate) const SMALL: usize = 16;

/// Cholesky factor of the symmetric matrix whose `lower` (else upper) triangle `a` holds,
/// written to `out` (both row-major `n × n`): `L` in the lower triangle when `lower`, else
/// `U = Lᵀ` in the upper one; the other triangle zeroed. `false` when `a` is not positive
/// definite (a pivot that is not > 0, NaN included); `out` is then partly written.
pub(crate) fn cholesky<T: Real>(a: &[T], out: &mut [T], n: usize, lower: bool) -> bool {
    // Column by column (left-looking): each entry below the diagonal is one dot product of
    // two contiguous row prefixes of L, independent of the column's other entries, so they
    // overlap in the pipeline; only the diagonal's square root is on the critical path.
    for j in 0..n {
        let (row_j, below) = out[j * n..].split_at_mut(n);
        let (head, tail) = row_j.split_at_mut(j);
        let s = a[j * n + j] - dot(head, head);
        if s.partial_cmp(&T::lit(0.0)) != Some(std::cmp::Ordering::Greater) {
            // Also on NaN, as faer and LAPACK do.
            return false;
        }
        let d = s.sqrt();
        tail[0] = d;
        tail[1..].fill(T::lit(0.0));
        let head = &*head;
        // Scaled by the reciprocal, as LAPACK's potf2 does.
        let r = T::lit(1.0) / d;
        for (q, row_i) in below.chunks_exact_mut(n).enumerate() {
            let i = j + 1 + q;
            let aij = if lower { a[i * n + j] } else { a[j * n + i] };
            row_i[j] = (aij - dot(&row_i[..j], head)) * r;
        }
    }
    if !lower {
        for i in 0..n {
            for j in 0..i {
                out[j * n + i] = out[i * n + j];
                out[i * n + j] = T::lit(0.0);
            }
        }
    }
    true
}

/// The dot product of two equally long slices.
fn dot<T: Real>(x: &[T], y: &[T]) -> T {
    x.iter().zip(y).fold(T::lit(0.0), |s, (&p, &q)| s + p * q)
}

/// Solves `t x = x` in place for the lower-triangular `t` whose entry `(i, j)`, `j ≤ i`, is
/// `t(i, j)`; `x` is row-major `m × k`. With `unit` the diagonal is taken as ones.
///
/// Column-oriented: once row `p` of `x` is final it is subtracted from every later row, and
/// those updates are independent of each other (a row-oriented dot product would chain them).
pub(crate) fn lower_solve<T: Real>(
    t: impl Fn(usize, usize) -> T,
    unit: bool,
    x: &mut [T],
    m: usize,
    k: usize,
) {
    for p in 0..m {
        let (done, rest) = x.split_at_mut((p + 1) * k);
        let xp = &mut done[p * k..];
        if !unit {
            let d = t(p, p);
            for v in xp.iter_mut() {
                *v /= d;
            }
        }
        for (r, xi) in rest.chunks_exact_mut(k).enumerate() {
            let l = t(p + 1 + r, p);
            for (v, &w) in xi.iter_mut().zip(xp.iter()) {
                *v -= l * w;
            }
        }
    }
}

/// Solves `t x = x` in place for the upper-triangular `t` whose entry `(i, j)`, `j ≥ i`, is
/// `t(i, j)`; `x` is row-major `m × k`. With `unit` the diagonal is taken as ones.
/// Column-oriented, as [`lower_solve`].
pub(crate) fn upper_solve<T: Real>(
    t: impl Fn(usize, usize) -> T,
    unit: bool,
    x: &mut [T],
    m: usize,
    k: usize,
) {
    for p in (0..m).rev() {
        let (above, rest) = x.split_at_mut(p * k);
        let xp = &mut rest[..k];
        if !unit {
            let d = t(p, p);
            for v in xp.iter_mut() {
                *v /= d;
            }
        }
        for (i, xi) in above.chunks_exact_mut(k).enumerate() {
            let u = t(i, p);
            for (v, &w) in xi.iter_mut().zip(xp.iter()) {
                *v -= u * w;
            }
        }
    }
}

/// Gaussian elimination with partial pivoting on the row-major `m × m` working copy `a`,
/// leaving `U` in its upper triangle, with the same row operations applied to the row-major
/// `m × k` matrix `x`. Returns whether the row interchanges form an odd permutation, or the
/// first step whose pivot column is exactly zero (a singular `a`, where LAPACK's `getrf`
/// reports `info > 0`).
pub(crate) fn eliminate<T: Real>(
    a: &mut [T],
    x: &mut [T],
    m: usize,
    k: usize,
) -> Result<bool, usize> {
    let mut odd = false;
    for j in 0..m {
        let mut p = j;
        for i in j + 1..m {
            if a[i * m + j].abs() > a[p * m + j].abs() {
                p = i;
            }
        }
        if a[p * m + j] == T::lit(0.0) {
            return Err(j);
        }
        if p != j {
            odd = !odd;
            for c in 0..m {
                a.swap(j * m + c, p * m + c);
            }
            for c in 0..k {
                x.swap(j * k + c, p * k + c);
            }
        }
        let (top, rest) = a.split_at_mut((j + 1) * m);
        let pivot_row = &top[j * m..];
        let (xtop, xrest) = x.split_at_mut((j + 1) * k);
        let xj = &xtop[j * k..];
        for (q, row) in rest.chunks_exact_mut(m).enumerate() {
            let f = row[j] / pivot_row[j];
            if f == T::lit(0.0) {
                continue;
            }
            for (v, &w) in row[j + 1..].iter_mut().zip(&pivot_row[j + 1..]) {
                *v -= f * w;
            }
            for (v, &w) in xrest[q * k..(q + 1) * k].iter_mut().zip(xj) {
                *v -= f * w;
            }
        }
    }
    Ok(odd)
}

/// Solves `a x = x` in place by [`eliminate`] and back substitution: `a` is a row-major
/// `m × m` working copy (overwritten), `x` row-major `m × k`. Returns the first step whose
/// pivot column is exactly zero (a singular `a`), leaving `x` unspecified.
pub(crate) fn lu_solve<T: Real>(a: &mut [T], x: &mut [T], m: usize, k: usize) -> Option<usize> {
    if let Err(j) = eliminate(a, x, m, k) {
        return Some(j);
    }
    upper_solve(|i, j| a[i * m + j], false, x, m, k);
    None
}
