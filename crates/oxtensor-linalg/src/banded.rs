//! Structured solves in time linear in the order: tridiagonal (as LAPACK's `gtsv`) and
//! general banded (as `gbsv`) systems, both by Gaussian elimination with partial pivoting.
//!
//! faer has no banded solver, and a dense LU of a tridiagonal matrix costs O(n³) for O(n)
//! work. These read the band of the dense row-major core the op receives, so the callers
//! need no band storage; every right-hand side is eliminated alongside the matrix, so no
//! pivots or multipliers are kept.

use crate::Real;

/// Solves `a x = x` in place (`aᵀ x = x` when `transposed`) for the tridiagonal part of the
/// row-major `m × m` matrix `a`: only its three central diagonals are read. `x` is row-major
/// `m × k`; `w` a workspace of at least `4 m` elements.
///
/// At each step the row whose entry in the current column is larger in magnitude becomes
/// the pivot row (LAPACK's `gttrf`); an interchange fills one extra superdiagonal of `U`.
/// Returns the first step whose pivot column is exactly zero (a singular system), leaving `x`
/// unspecified.
pub(crate) fn tridiagonal_solve<T: Real>(
    a: &[T],
    transposed: bool,
    x: &mut [T],
    m: usize,
    k: usize,
    w: &mut [T],
) -> Option<usize> {
    let (d, rest) = w.split_at_mut(m);
    let (dl, rest) = rest.split_at_mut(m);
    let (du, rest) = rest.split_at_mut(m);
    let du2 = &mut rest[..m];
    // d: the diagonal; dl[i] = a[i+1, i]; du[i] = a[i, i+1] (swapped for aᵀ); du2: the fill.
    for i in 0..m {
        d[i] = a[i * m + i];
        du2[i] = T::lit(0.0);
        if i + 1 < m {
            let (below, above) = (a[(i + 1) * m + i], a[i * m + i + 1]);
            (dl[i], du[i]) = if transposed {
                (above, below)
            } else {
                (below, above)
            };
        }
    }
    for i in 0..m.saturating_sub(1) {
        if d[i].abs() >= dl[i].abs() {
            if d[i] == T::lit(0.0) {
                return Some(i);
            }
            let f = dl[i] / d[i];
            d[i + 1] -= f * du[i];
            for c in 0..k {
                let v = x[i * k + c];
                x[(i + 1) * k + c] -= f * v;
            }
        } else {
            // Rows i and i+1 trade places: the old row i+1 (dl[i], d[i+1], du[i+1]) becomes
            // U's row i, and the old row i (d[i], du[i], 0) minus f times it the next row.
            let f = d[i] / dl[i];
            let next = d[i + 1];
            d[i] = dl[i];
            d[i + 1] = du[i] - f * next;
            du[i] = next;
            if i + 2 < m {
                du2[i] = du[i + 1];
                du[i + 1] = -f * du[i + 1];
            }
            for c in 0..k {
                x.swap(i * k + c, (i + 1) * k + c);
                let v = x[i * k + c];
                x[(i + 1) * k + c] -= f * v;
            }
        }
    }
    if m > 0 && d[m - 1] == T::lit(0.0) {
        return Some(m - 1);
    }
    for i in (0..m).rev() {
        for c in 0..k {
            let mut v = x[i * k + c];
            if i + 1 < m {
                v -= du[i] * x[(i + 1) * k + c];
            }
            if i + 2 < m {
                v -= du2[i] * x[(i + 2) * k + c];
            }
            x[i * k + c] = v / d[i];
        }
    }
    None
}

/// The lower and upper bandwidths `(kl, ku)` of the row-major `m × m` matrix `a`: the
/// largest `i − j` and `j − i` over its non-zero entries (SciPy's `bandwidth`).
pub(crate) fn bandwidths<T: Real>(a: &[T], m: usize) -> (usize, usize) {
    let (mut kl, mut ku) = (0, 0);
    for i in 0..m {
        let row = &a[i * m..(i + 1) * m];
        // Only entries further out than the widths found so far can widen them.
        if let Some(j) = row[..i.saturating_sub(kl)]
            .iter()
            .position(|&v| v != T::lit(0.0))
        {
            kl = i - j;
        }
        let from = (i + ku + 1).min(m);
        if let Some(j) = row[from..].iter().rposition(|&v| v != T::lit(0.0)) {
            ku = from + j - i;
        }
    }
    (kl, ku)
}

/// True when a band solve of an `m × m` matrix with bandwidths `(kl, ku)` beats a dense LU:
/// its `~2 m kl (kl + ku)` unblocked flops against the dense `~2 m³ / 3` blocked ones, which
/// run several times faster per flop.
pub(crate) fn band_pays(m: usize, kl: usize, ku: usize) -> bool {
    32 * kl * (kl + ku + 1) <= m * m
}

/// Solves `a x = x` in place (`aᵀ x = x` when `transposed`) for the row-major `m × m` matrix
/// `a` whose entries outside the band `kl` below and `ku` above the diagonal (of `a` itself)
/// are zero; they are not read. `x` is row-major `m × k`.
///
/// LU with partial pivoting in LAPACK's band layout (`gbtrf`): each column of the band is
/// stored with room for `kl` extra superdiagonals, the fill that row interchanges can bring,
/// so time is O(m·kl·(kl+ku)) and memory O(m·(2kl+ku+1)). Returns the first step whose pivot
/// column is exactly zero (a singular system), leaving `x` unspecified.
pub(crate) fn banded_solve<T: Real>(
    a: &[T],
    transposed: bool,
    (kl, ku): (usize, usize),
    x: &mut [T],
    m: usize,
    k: usize,
) -> Option<usize> {
    let (kl, ku) = if transposed { (ku, kl) } else { (kl, ku) };
    let ld = 2 * kl + ku + 1;
    // Entry (i, j) of the system's matrix, for j − kl − ku ≤ i ≤ j + kl, in column j's slot.
    let at = |i: usize, j: usize| j * ld + kl + ku + i - j;
    let mut ab = vec![T::lit(0.0); ld * m];
    for j in 0..m {
        for i in j.saturating_sub(ku)..(j + kl + 1).min(m) {
            ab[at(i, j)] = if transposed {
                a[j * m + i]
            } else {
                a[i * m + j]
            };
        }
    }
    for j in 0..m {
        let last = (j + kl).min(m - 1);
        let mut p = j;
        for i in j + 1..=last {
            if ab[at(i, j)].abs() > ab[at(p, j)].abs() {
                p = i;
            }
        }
        let pivot = ab[at(p, j)];
        if pivot == T::lit(0.0) {
            return Some(j);
        }
        let right = (j + kl + ku).min(m - 1);
        if p != j {
            for c in j..=right {
                ab.swap(at(j, c), at(p, c));
            }
            for c in 0..k {
                x.swap(j * k + c, p * k + c);
            }
        }
        for i in j + 1..=last {
            let f = ab[at(i, j)] / pivot;
            if f == T::lit(0.0) {
                continue;
            }
            for c in j + 1..=right {
                let v = ab[at(j, c)];
                ab[at(i, c)] -= f * v;
            }
            for c in 0..k {
                let v = x[j * k + c];
                x[i * k + c] -= f * v;
            }
        }
    }
    for i in (0..m).rev() {
        let right = (i + kl + ku).min(m - 1);
        for c in 0..k {
            let mut v = x[i * k + c];
            for q in i + 1..=right {
                v -= ab[at(i, q)] * x[q * k + c];
            }
            x[i * k + c] = v / ab[at(i, i)];
        }
    }
    None
}
