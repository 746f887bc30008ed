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
    // Row-major position of entry (i, j), i ≥ j, of the lower factor: itself when `lower`,
    // else its mirror, where the upper factor keeps it.
    let at = |i: usize, j: usize| if lower { i * n + j } else { j * n + i };
    for i in 0..n {
        for j in 0..=i {
            let mut s = a[at(i, j)];
            for k in 0..j {
                s -= out[at(i, k)] * out[at(j, k)];
            }
            if i == j {
                // Also fails on NaN, as faer and LAPACK do.
                if s.partial_cmp(&T::lit(0.0)) != Some(std::cmp::Ordering::Greater) {
                    return false;
                }
                out[at(i, i)] = s.sqrt();
            } else {
                out[at(i, j)] = s / out[at(j, j)];
            }
        }
        for j in i + 1..n {
            out[at(i, j)] = T::lit(0.0);
        }
    }
    true
}

/// Solves `t x = x` in place for the lower-triangular `t` whose entry `(i, j)`, `j ≤ i`, is
/// `t(i, j)`; `x` is row-major `m × k`. With `unit` the diagonal is taken as ones.
pub(crate) fn lower_solve<T: Real>(
    t: impl Fn(usize, usize) -> T,
    unit: bool,
    x: &mut [T],
    m: usize,
    k: usize,
) {
    for i in 0..m {
        for p in 0..i {
            let l = t(i, p);
            for c in 0..k {
                let v = x[p * k + c];
                x[i * k + c] -= l * v;
            }
        }
        if !unit {
            let d = t(i, i);
            for v in &mut x[i * k..(i + 1) * k] {
                *v /= d;
            }
        }
    }
}

/// Solves `t x = x` in place for the upper-triangular `t` whose entry `(i, j)`, `j ≥ i`, is
/// `t(i, j)`; `x` is row-major `m × k`. With `unit` the diagonal is taken as ones.
pub(crate) fn upper_solve<T: Real>(
    t: impl Fn(usize, usize) -> T,
    unit: bool,
    x: &mut [T],
    m: usize,
    k: usize,
) {
    for i in (0..m).rev() {
        for p in i + 1..m {
            let u = t(i, p);
            for c in 0..k {
                let v = x[p * k + c];
                x[i * k + c] -= u * v;
            }
        }
        if !unit {
            let d = t(i, i);
            for v in &mut x[i * k..(i + 1) * k] {
                *v /= d;
            }
        }
    }
}

/// Solves `a x = x` in place by Gaussian elimination with partial pivoting: `a` is a row-major
/// `m × m` working copy (overwritten by `U` and the multipliers), `x` row-major `m × k`.
/// Returns the first step whose pivot column is exactly zero (a singular `a`, where LAPACK's
/// `getrf` reports `info > 0`), leaving `x` unspecified.
pub(crate) fn lu_solve<T: Real>(a: &mut [T], x: &mut [T], m: usize, k: usize) -> Option<usize> {
    for j in 0..m {
        let mut p = j;
        for i in j + 1..m {
            if a[i * m + j].abs() > a[p * m + j].abs() {
                p = i;
            }
        }
        if a[p * m + j] == T::lit(0.0) {
            return Some(j);
        }
        if p != j {
            for c in 0..m {
                a.swap(j * m + c, p * m + c);
            }
            for c in 0..k {
                x.swap(j * k + c, p * k + c);
            }
        }
        let d = a[j * m + j];
        for i in j + 1..m {
            let f = a[i * m + j] / d;
            if f == T::lit(0.0) {
                continue;
            }
            for c in j + 1..m {
                let v = a[j * m + c];
                a[i * m + c] -= f * v;
            }
            for c in 0..k {
                let v = x[j * k + c];
                x[i * k + c] -= f * v;
            }
        }
    }
    upper_solve(|i, j| a[i * m + j], false, x, m, k);
    None
}
