//! Small matrix helpers shared by the kernels.

use crate::{LinalgError, Real};
use faer::dyn_stack::{MemStack, StackReq};
use faer::linalg::lu::partial_pivoting::factor::{lu_in_place, lu_in_place_scratch};
use faer::linalg::lu::partial_pivoting::solve::{solve_in_place_scratch, solve_in_place_with_conj};
use faer::linalg::{temp_mat_scratch, temp_mat_zeroed};
use faer::mat::AsMatMut;
use faer::perm::PermRef;
use faer::prelude::*;
use faer::{Conj, Mat, MatRef};

/// The symmetric matrix whose entries come from one triangle of `a` (the other is ignored,
/// as LAPACK's symmetric routines do).
pub(crate) fn symmetric_from<T: Real>(a: MatRef<'_, T>, lower: bool) -> Mat<T> {
    Mat::from_fn(a.nrows(), a.ncols(), |i, j| {
        let (hi, lo) = if i >= j { (i, j) } else { (j, i) };
        if lower { a[(hi, lo)] } else { a[(lo, hi)] }
    })
}

/// An LU factorisation with partial pivoting: `a[fwd[i], :] = (L U)[i, :]`.
pub(crate) struct Lu<T> {
    /// Row permutation: row `i` of `L U` is row `fwd[i]` of `a`.
    pub fwd: Vec<usize>,
    /// Unit lower trapezoidal factor (m × k).
    pub l: Mat<T>,
    /// Upper trapezoidal factor (k × n).
    pub u: Mat<T>,
}

impl<T: Real> Lu<T> {
    /// Factors `a` (any shape).
    pub fn new(a: MatRef<'_, T>) -> Lu<T> {
        let lu = a.partial_piv_lu();
        let fwd = lu.P().arrays().0.to_vec();
        Lu {
            fwd,
            l: lu.L().to_owned(),
            u: lu.U().to_owned(),
        }
    }

    /// LAPACK-style pivots (0-based): at step `i`, row `i` was swapped with row `piv[i]`.
    pub fn lapack_pivots(&self) -> Vec<usize> {
        let k = self.l.ncols();
        let mut perm: Vec<usize> = (0..self.fwd.len()).collect();
        let mut piv = Vec::with_capacity(k);
        for i in 0..k {
            let j = (i..perm.len())
                .find(|&j| perm[j] == self.fwd[i])
                .unwrap_or(i);
            piv.push(j);
            perm.swap(i, j);
        }
        piv
    }
}

/// Solves `a x = b` for square `a` by LU, or reports `arg` singular.
pub(crate) fn lu_solve_checked<T: Real>(
    op: &'static str,
    arg: &'static str,
    a: MatRef<'_, T>,
    b: MatRef<'_, T>,
) -> Result<Mat<T>, LinalgError> {
    let lu = a.partial_piv_lu();
    let k = a.nrows();
    let u = lu.U();
    if let Some(i) = (0..k).find(|&i| u[(i, i)] == T::lit(0.0)) {
        return Err(singular(op, arg, i));
    }
    Ok(lu.solve(b))
}

/// The workspace [`lu_solve_in`] needs for an `m × m` system with `k` right-hand sides.
pub(crate) fn lu_solve_scratch<T: Real>(m: usize, k: usize) -> StackReq {
    let par = faer::get_global_parallelism();
    StackReq::all_of(&[
        temp_mat_scratch::<T>(m, m),
        StackReq::new::<usize>(m).and(StackReq::new::<usize>(m)),
        temp_mat_scratch::<T>(m, k),
        StackReq::any_of(&[
            lu_in_place_scratch::<usize, T>(m, m, par, Default::default()),
            solve_in_place_scratch::<usize, T>(m, k, par),
        ]),
    ])
}

/// [`lu_solve_checked`] of the `m × m` matrix whose entry `(i, j)` is `a(i, j)` and the `m × k`
/// right-hand side `b(i, j)`, written row-major into `x`, with the factors, the permutation
/// and the right-hand side in `stack` ([`lu_solve_scratch`]) instead of fresh matrices: the
/// same faer kernels (`lu_in_place`, then the permuted unit-lower and upper triangular
/// solves, which read the packed factors' own triangles) on matrices laid out as faer lays
/// out its own, with the same parallelism, so the same bits.
pub(crate) fn lu_solve_in<T: Real>(
    (op, arg): (&'static str, &'static str),
    a: impl Fn(usize, usize) -> T,
    b: impl Fn(usize, usize) -> T,
    (m, k): (usize, usize),
    x: &mut [T],
    stack: &mut MemStack,
) -> Result<(), LinalgError> {
    let par = faer::get_global_parallelism();
    let (mut lu, stack) = temp_mat_zeroed::<T, _, _>(m, m, stack);
    let mut lu = lu.as_mat_mut();
    for j in 0..m {
        for i in 0..m {
            lu[(i, j)] = a(i, j);
        }
    }
    let (mut fwd, stack) = stack.make_with(m, |_| 0usize);
    let (mut bwd, stack) = stack.make_with(m, |_| 0usize);
    let (mut rhs, stack) = temp_mat_zeroed::<T, _, _>(m, k, stack);
    let mut rhs = rhs.as_mat_mut();
    for j in 0..k {
        for i in 0..m {
            rhs[(i, j)] = b(i, j);
        }
    }
    lu_in_place(
        lu.rb_mut(),
        &mut fwd,
        &mut bwd,
        par,
        stack,
        Default::default(),
    );
    if let Some(i) = (0..m).find(|&i| lu[(i, i)] == T::lit(0.0)) {
        return Err(singular(op, arg, i));
    }
    let perm = PermRef::new_checked(&fwd, &bwd, m);
    let lu = lu.rb();
    solve_in_place_with_conj(lu, lu, perm, Conj::No, rhs.rb_mut(), par, stack);
    write_rows(rhs.rb(), x);
    Ok(())
}

/// The error for an exactly singular matrix, broken down at diagonal `i`.
pub(crate) fn singular(op: &'static str, arg: &'static str, i: usize) -> LinalgError {
    LinalgError::Singular {
        op,
        arg,
        detail: format!(": zero pivot at diagonal position {i}"),
    }
}

/// Writes matrix `m` into `out` in row-major order, in square tiles so that a column-major
/// `m` (faer's layout) is read and written a cache line at a time rather than one element
/// per line.
pub(crate) fn write_rows<T: Real>(m: MatRef<'_, T>, out: &mut [T]) {
    const TILE: usize = 32;
    let (r, c) = (m.nrows(), m.ncols());
    for i0 in (0..r).step_by(TILE) {
        for j0 in (0..c).step_by(TILE) {
            for j in j0..(j0 + TILE).min(c) {
                for i in i0..(i0 + TILE).min(r) {
                    out[i * c + j] = m[(i, j)];
                }
            }
        }
    }
}

/// The `n × n` identity.
pub(crate) fn identity<T: Real>(n: usize) -> Mat<T> {
    Mat::from_fn(n, n, |i, j| T::lit(if i == j { 1.0 } else { 0.0 }))
}

/// The matrix 1-norm (largest absolute column sum).
pub(crate) fn norm1<T: Real>(a: MatRef<'_, T>) -> f64 {
    (0..a.ncols())
        .map(|j| {
            (0..a.nrows())
                .map(|i| a[(i, j)].as_f64().abs())
                .sum::<f64>()
        })
        .fold(0.0, f64::max)
}

/// A vector core (`(m)`) or matrix core (`(m, n)`) as the b-argument of a solve: the number
/// of core dimensions PyTensor calls `b_ndim`, defaulting to 1 for a 1-D `b` and 2 otherwise.
pub(crate) fn b_ndim(
    op: &'static str,
    b: &oxtensor_data::Tensor,
    b_ndim: Option<usize>,
) -> Result<usize, LinalgError> {
    match b_ndim {
        None => Ok(if b.ndim() == 1 { 1 } else { 2 }),
        Some(n @ (1 | 2)) => Ok(n),
        Some(n) => Err(LinalgError::Param {
            op,
            param: "b_ndim",
            message: format!("is {n}; expected 1 or 2"),
        }),
    }
}
