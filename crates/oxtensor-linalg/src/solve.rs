//! Linear solves and inverses: solve, solve_triangular, cho_solve, lu_solve, inv, pinv, lstsq.

use crate::batch::{ArgSpec, Batched, Core, OutSpec, check_arity, float_dtype, rows};
use crate::decomp::matrix_dims;
use crate::util::{
    b_ndim, identity, lu_solve_in, lu_solve_scratch, singular, symmetric_from, write_rows,
};
use crate::{LinalgError, Real};
use crate::{banded, small};
use faer::dyn_stack::{MemStack, StackReq};
use faer::prelude::*;
use faer::{Mat, MatMut, MatRef, Side};
use oxtensor_data::Tensor;

/// What [`solve`] may assume about `a` (SciPy's `assume_a`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AssumeA {
    /// General square matrix: LU with partial pivoting.
    #[default]
    General,
    /// Symmetric: only the `lower` (or upper) triangle is read.
    Symmetric,
    /// Symmetric positive definite: Cholesky; only one triangle is read.
    PositiveDefinite,
    /// Tridiagonal: only the three central diagonals are read, and the solve takes O(m)
    /// time (LU with partial pivoting as LAPACK's `gtsv`).
    Tridiagonal,
    /// Banded: the bandwidths are found from the values (the furthest non-zero entries
    /// below and above the diagonal, as SciPy does), and a narrow band is solved in
    /// O(m·kl·(kl+ku)) time by banded LU with partial pivoting (as LAPACK's `gbsv`); a wide
    /// one takes the general solve.
    Banded,
}

/// Parameters of [`solve`].
#[derive(Clone, Copy, Debug, Default)]
pub struct SolveParams {
    /// The structure of `a`.
    pub assume_a: AssumeA,
    /// For symmetric `a`, read the lower triangle (else the upper).
    pub lower: bool,
    /// Solve `aᵀ x = b` instead.
    pub transposed: bool,
    /// Core dimensions of `b`: 1 for a vector `(m)`, 2 for a matrix `(m,n)`; `None` takes 1
    /// when `b` is 1-D and 2 otherwise (PyTensor's `b_ndim`).
    pub b_ndim: Option<usize>,
}

/// `x` with `a x = b`, `(m,m),(m,n)->(m,n)` or `(m,m),(m)->(m)`, like `scipy.linalg.solve`.
/// An exactly singular `a` is an error.
pub fn solve(inputs: &[&Tensor], p: &SolveParams) -> Result<Vec<Tensor>, LinalgError> {
    check_arity("solve", inputs, 2)?;
    let args = ab_args("solve", inputs, p.b_ndim)?;
    by_dtype!(float_dtype(inputs, &args), solve_imp(inputs, &args, p))
}

fn ab_args(
    op: &'static str,
    inputs: &[&Tensor],
    nd: Option<usize>,
) -> Result<[ArgSpec; 2], LinalgError> {
    Ok([
        ArgSpec::matrix("a"),
        ArgSpec::with_ndim("b", b_ndim(op, inputs[1], nd)?),
    ])
}

/// Checks that `b` (input `i`) has `m` rows and returns its core shape as the output's.
fn rhs_shape<T: Real>(b: &Batched<'_, T>, i: usize, m: usize) -> Result<Vec<usize>, LinalgError> {
    let core = &b.cores[i];
    if core.first() != Some(&m) {
        let expected = if core.len() == 1 {
            format!("{m}")
        } else {
            format!("{m}, n")
        };
        return Err(b.shape_error(i, "b", &expected));
    }
    Ok(core.clone())
}

fn solve_imp<T: Real>(
    inputs: &[&Tensor],
    args: &[ArgSpec],
    p: &SolveParams,
) -> Result<Vec<Tensor>, LinalgError> {
    let b = Batched::<T>::new("solve", inputs, args)?;
    let m = b.square(0, "a")?;
    let out = rhs_shape(&b, 1, m)?;
    let k = out.get(1).copied().unwrap_or(1);
    let scratch = solve_scratch::<T>(m, k, p);
    let x = b.run_into(&out, scratch, |c, x, stack| {
        solve_one(c[0].data, c[1].data, x, (m, k), p, stack)
    })?;
    Ok(vec![x])
}

/// The workspace [`solve_one`] needs for order `m` and `k` right-hand sides.
pub(crate) fn solve_scratch<T: Real>(m: usize, k: usize, p: &SolveParams) -> StackReq {
    match p.assume_a {
        AssumeA::Tridiagonal => StackReq::new::<T>(4 * m),
        _ if m <= small::SMALL => StackReq::new::<T>(m * m),
        AssumeA::PositiveDefinite => StackReq::EMPTY,
        _ => lu_solve_scratch::<T>(m, k),
    }
}

/// `x` with `a x = b` for one row-major `m × m` `a` and one row-major `m × k` `b`, into `x`
/// (same extents), as [`solve`] computes each batch element: the kernel the batched op and
/// [`crate::Workspace::solve`] share.
pub(crate) fn solve_one<T: Real>(
    a: &[T],
    b: &[T],
    x: &mut [T],
    (m, k): (usize, usize),
    p: &SolveParams,
    stack: &mut MemStack,
) -> Result<(), LinalgError> {
    x.copy_from_slice(b);
    let singular_at = |i| Err(singular("solve", "a", i));
    match p.assume_a {
        AssumeA::Tridiagonal => {
            let (mut w, _) = stack.make_with(4 * m, |_| T::lit(0.0));
            return match banded::tridiagonal_solve(a, p.transposed, x, m, k, &mut w) {
                Some(i) => singular_at(i),
                None => Ok(()),
            };
        }
        AssumeA::Banded => {
            let (kl, ku) = banded::bandwidths(a, m);
            if banded::band_pays(m, kl, ku) {
                return match banded::banded_solve(a, p.transposed, (kl, ku), x, m, k) {
                    Some(i) => singular_at(i),
                    None => Ok(()),
                };
            }
        }
        _ => {}
    }
    if m <= small::SMALL {
        let (mut w, _) = stack.make_with(m * m, |_| T::lit(0.0));
        return solve_small(p, a, &mut w, x, m, k);
    }
    let rhs = |i: usize, j: usize| b[i * k + j];
    let dims = (m, k);
    match p.assume_a {
        AssumeA::General | AssumeA::Tridiagonal | AssumeA::Banded if p.transposed => {
            lu_solve_in(("solve", "a"), |i, j| a[j * m + i], rhs, dims, x, stack)
        }
        AssumeA::General | AssumeA::Tridiagonal | AssumeA::Banded => {
            lu_solve_in(("solve", "a"), |i, j| a[i * m + j], rhs, dims, x, stack)
        }
        AssumeA::Symmetric => {
            // The entry of the triangle `p.lower` names, as `symmetric_from` reads it.
            let sym = |i: usize, j: usize| {
                let (hi, lo) = if i >= j { (i, j) } else { (j, i) };
                if p.lower {
                    a[hi * m + lo]
                } else {
                    a[lo * m + hi]
                }
            };
            lu_solve_in(("solve", "a"), sym, rhs, dims, x, stack)
        }
        AssumeA::PositiveDefinite => {
            let a = MatRef::from_row_major_slice(a, m, m);
            let sol = symmetric_from(a, p.lower)
                .llt(Side::Lower)
                .map_err(|_| not_pd())?
                .solve(MatRef::from_row_major_slice(b, m, k));
            write_rows(sol.as_ref(), x);
            Ok(())
        }
    }
}

fn not_pd() -> LinalgError {
    LinalgError::NotPositiveDefinite {
        op: "solve",
        arg: "a",
    }
}

/// [`solve`] of one tiny system (order ≤ [`small::SMALL`]) by the unblocked kernels, with
/// `w` (`m × m`) as the working matrix and `x` holding `b` on entry.
fn solve_small<T: Real>(
    p: &SolveParams,
    a: &[T],
    w: &mut [T],
    x: &mut [T],
    m: usize,
    k: usize,
) -> Result<(), LinalgError> {
    if p.assume_a == AssumeA::PositiveDefinite {
        if !small::cholesky(a, w, m, p.lower) {
            return Err(not_pd());
        }
        // Entry (i, j), j ≤ i, of the lower factor L: where the upper factor U = Lᵀ keeps it.
        let l = |i: usize, j: usize| if p.lower { w[i * m + j] } else { w[j * m + i] };
        small::lower_solve(l, false, x, m, k);
        small::upper_solve(|i, j| l(j, i), false, x, m, k);
        return Ok(());
    }
    for i in 0..m {
        for j in 0..m {
            w[i * m + j] = match p.assume_a {
                AssumeA::Symmetric if (i >= j) == p.lower => a[i * m + j],
                AssumeA::Symmetric => a[j * m + i],
                _ if p.transposed => a[j * m + i],
                _ => a[i * m + j],
            };
        }
    }
    match small::lu_solve(w, x, m, k) {
        Some(i) => Err(singular("solve", "a", i)),
        None => Ok(()),
    }
}

/// Which system [`solve_triangular`] solves (SciPy's `trans`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Trans {
    /// `a x = b` (`trans=0`, `'N'`).
    #[default]
    N,
    /// `aᵀ x = b` (`trans=1`, `'T'`).
    T,
    /// `aᴴ x = b` (`trans=2`, `'C'`; the same as `T` for real matrices).
    C,
}

/// Parameters of [`solve_triangular`].
#[derive(Clone, Copy, Debug, Default)]
pub struct SolveTriangularParams {
    /// Use the lower triangle of `a` (else the upper); the other is never read.
    pub lower: bool,
    /// Which system to solve.
    pub trans: Trans,
    /// Take `a`'s diagonal as all ones (it is not read).
    pub unit_diagonal: bool,
    /// Core dimensions of `b`, as in [`SolveParams::b_ndim`].
    pub b_ndim: Option<usize>,
}

/// Triangular solve, `(m,m),(m,n)->(m,n)` or `(m,m),(m)->(m)`, like
/// `scipy.linalg.solve_triangular`. A zero on the diagonal is a singularity error.
pub fn solve_triangular(
    inputs: &[&Tensor],
    p: &SolveTriangularParams,
) -> Result<Vec<Tensor>, LinalgError> {
    check_arity("solve_triangular", inputs, 2)?;
    let args = ab_args("solve_triangular", inputs, p.b_ndim)?;
    by_dtype!(
        float_dtype(inputs, &args),
        solve_triangular_imp(inputs, &args, p)
    )
}

/// `x` with `t x = b` for the `lower` (or upper) triangle of `t`, read in place (faer reads
/// one triangle only, so `t` needs no copy with the other zeroed); with `unit`, its diagonal
/// is taken to be ones and not read.
fn tri_solve<T: Real>(
    op: &'static str,
    arg: &'static str,
    t: MatRef<'_, T>,
    lower: bool,
    unit: bool,
    b: MatRef<'_, T>,
) -> Result<Mat<T>, LinalgError> {
    if !unit && let Some(i) = (0..t.nrows()).find(|&i| t[(i, i)] == T::lit(0.0)) {
        return Err(singular(op, arg, i));
    }
    let mut x = b.to_owned();
    match (lower, unit) {
        (true, false) => t.solve_lower_triangular_in_place(x.as_mut()),
        (false, false) => t.solve_upper_triangular_in_place(x.as_mut()),
        (true, true) => t.solve_unit_lower_triangular_in_place(x.as_mut()),
        (false, true) => t.solve_unit_upper_triangular_in_place(x.as_mut()),
    }
    Ok(x)
}

fn solve_triangular_imp<T: Real>(
    inputs: &[&Tensor],
    args: &[ArgSpec],
    p: &SolveTriangularParams,
) -> Result<Vec<Tensor>, LinalgError> {
    const OP: &str = "solve_triangular";
    let b = Batched::<T>::new(OP, inputs, args)?;
    let m = b.square(0, "a")?;
    let out = rhs_shape(&b, 1, m)?;
    let k = out.get(1).copied().unwrap_or(1);
    let x = b.run_into(&out, StackReq::EMPTY, |c, x, _| {
        solve_triangular_one(c[0].data, c[1].data, x, m, k, p)
    })?;
    Ok(vec![x])
}

/// `x` with `t x = b` for the triangle of one row-major `m × m` `a` that `p` names and one
/// row-major `m × k` `b`, into `x` (same extents), as [`solve_triangular`] computes each batch
/// element: the kernel the batched op and [`crate::Workspace::solve_triangular`] share.
pub(crate) fn solve_triangular_one<T: Real>(
    a: &[T],
    b: &[T],
    x: &mut [T],
    m: usize,
    k: usize,
    p: &SolveTriangularParams,
) -> Result<(), LinalgError> {
    const OP: &str = "solve_triangular";
    // The system's matrix is lower triangular when `a`'s lower triangle is used untransposed
    // or its upper one transposed.
    let lower = p.lower == (p.trans == Trans::N);
    if !p.unit_diagonal
        && let Some(i) = (0..m).find(|&i| a[i * m + i] == T::lit(0.0))
    {
        return Err(singular(OP, "a", i));
    }
    x.copy_from_slice(b);
    if m <= small::SMALL {
        let t = |i: usize, j: usize| {
            if p.trans == Trans::N {
                a[i * m + j]
            } else {
                a[j * m + i]
            }
        };
        if lower {
            small::lower_solve(t, p.unit_diagonal, x, m, k);
        } else {
            small::upper_solve(t, p.unit_diagonal, x, m, k);
        }
        return Ok(());
    }
    let full = MatRef::from_row_major_slice(a, m, m);
    let t = if p.trans == Trans::N {
        full
    } else {
        full.transpose()
    };
    let view = MatMut::from_row_major_slice_mut(x, m, k);
    match (lower, p.unit_diagonal) {
        (true, false) => t.solve_lower_triangular_in_place(view),
        (false, false) => t.solve_upper_triangular_in_place(view),
        (true, true) => t.solve_unit_lower_triangular_in_place(view),
        (false, true) => t.solve_unit_upper_triangular_in_place(view),
    }
    Ok(())
}

/// Parameters of [`cho_solve`].
#[derive(Clone, Copy, Debug, Default)]
pub struct ChoSolveParams {
    /// `c` is the lower factor `L` (`a = L Lᵀ`); else the upper factor `U` (`a = Uᵀ U`).
    pub lower: bool,
    /// Core dimensions of `b`, as in [`SolveParams::b_ndim`].
    pub b_ndim: Option<usize>,
}

/// `x` with `a x = b` given `a`'s Cholesky factor `c`, inputs `[c, b]`,
/// `(m,m),(m,n)->(m,n)` or `(m,m),(m)->(m)`, like `scipy.linalg.cho_solve((c, lower), b)`.
pub fn cho_solve(inputs: &[&Tensor], p: &ChoSolveParams) -> Result<Vec<Tensor>, LinalgError> {
    check_arity("cho_solve", inputs, 2)?;
    let [_, bspec] = ab_args("cho_solve", inputs, p.b_ndim)?;
    let args = [ArgSpec::matrix("c"), bspec];
    by_dtype!(float_dtype(inputs, &args), cho_solve_imp(inputs, &args, p))
}

fn cho_solve_imp<T: Real>(
    inputs: &[&Tensor],
    args: &[ArgSpec],
    p: &ChoSolveParams,
) -> Result<Vec<Tensor>, LinalgError> {
    const OP: &str = "cho_solve";
    let b = Batched::<T>::new(OP, inputs, args)?;
    let m = b.square(0, "c")?;
    let out = rhs_shape(&b, 1, m)?;
    let cols = out.get(1).copied().unwrap_or(1);
    let x = b.run_into(&out, StackReq::EMPTY, |c, x, _| {
        cho_solve_one(c[0].data, c[1].data, x, m, cols, p.lower)
    })?;
    Ok(vec![x])
}

/// `x` with `a x = b` for one row-major `m × m` Cholesky factor `c` of `a` (`lower`: `L`, else
/// `U`) and one row-major `m × cols` `b`, into `x` (same extents), as [`cho_solve`] computes
/// each batch element: the kernel the batched op and [`crate::Workspace::cho_solve`] share.
pub(crate) fn cho_solve_one<T: Real>(
    c: &[T],
    b: &[T],
    x: &mut [T],
    m: usize,
    cols: usize,
    lower: bool,
) -> Result<(), LinalgError> {
    const OP: &str = "cho_solve";
    // Entry (i, j), j ≤ i, of L: where the upper factor U = Lᵀ keeps it.
    let l = |i: usize, j: usize| if lower { c[i * m + j] } else { c[j * m + i] };
    if let Some(i) = (0..m).find(|&i| l(i, i) == T::lit(0.0)) {
        return Err(singular(OP, "c", i));
    }
    // Both triangular solves run in place in the output.
    x.copy_from_slice(b);
    if m <= small::SMALL {
        small::lower_solve(l, false, x, m, cols);
        small::upper_solve(|i, j| l(j, i), false, x, m, cols);
        return Ok(());
    }
    let t = MatRef::from_row_major_slice(c, m, m);
    let t = if lower { t } else { t.transpose() };
    let mut view = MatMut::from_row_major_slice_mut(x, m, cols);
    t.solve_lower_triangular_in_place(view.rb_mut());
    t.transpose().solve_upper_triangular_in_place(view);
    Ok(())
}

/// Parameters of [`lu_solve`].
#[derive(Clone, Copy, Debug, Default)]
pub struct LuSolveParams {
    /// Which system to solve.
    pub trans: Trans,
    /// Core dimensions of `b`, as in [`SolveParams::b_ndim`].
    pub b_ndim: Option<usize>,
}

/// `x` with `a x = b` from [`crate::lu_factor`]'s output, inputs `[lu, piv, b]`,
/// `(m,m),(m),(m,n)->(m,n)` (or vector `b`), like `scipy.linalg.lu_solve((lu, piv), b)`.
/// `piv` must be an integer tensor of 0-based pivots in `[0, m)`.
pub fn lu_solve(inputs: &[&Tensor], p: &LuSolveParams) -> Result<Vec<Tensor>, LinalgError> {
    check_arity("lu_solve", inputs, 3)?;
    let nd = b_ndim("lu_solve", inputs[2], p.b_ndim)?;
    let args = [
        ArgSpec::matrix("lu"),
        ArgSpec {
            name: "piv",
            core_ndim: 1,
            index: true,
        },
        ArgSpec::with_ndim("b", nd),
    ];
    by_dtype!(float_dtype(inputs, &args), lu_solve_imp(inputs, &args, p))
}

fn lu_solve_imp<T: Real>(
    inputs: &[&Tensor],
    args: &[ArgSpec],
    p: &LuSolveParams,
) -> Result<Vec<Tensor>, LinalgError> {
    const OP: &str = "lu_solve";
    let b = Batched::<T>::new(OP, inputs, args)?;
    let m = b.square(0, "lu")?;
    if b.cores[1] != [m] {
        return Err(b.shape_error(1, "piv", &format!("{m}")));
    }
    let out = rhs_shape(&b, 2, m)?;
    b.run(&[OutSpec::float(&out)], |c| {
        let piv = pivots(OP, &c[1], m)?;
        // The packed factors: unit-lower L below the diagonal, U on and above it.
        let lu = c[0].mat();
        let mut x = c[2].mat().to_owned();
        let swap = |x: &mut Mat<T>, i: usize, j: usize| {
            for col in 0..x.ncols() {
                let t = x[(i, col)];
                x[(i, col)] = x[(j, col)];
                x[(j, col)] = t;
            }
        };
        if p.trans == Trans::N {
            for (i, &j) in piv.iter().enumerate() {
                swap(&mut x, i, j);
            }
            let y = tri_solve(OP, "lu", lu, true, true, x.as_ref())?;
            x = tri_solve(OP, "lu", lu, false, false, y.as_ref())?;
        } else {
            let y = tri_solve(OP, "lu", lu.transpose(), true, false, x.as_ref())?;
            x = tri_solve(OP, "lu", lu.transpose(), false, true, y.as_ref())?;
            for (i, &j) in piv.iter().enumerate().rev() {
                swap(&mut x, i, j);
            }
        }
        Ok(vec![rows(x.as_ref())])
    })
}

/// Reads a pivot vector, checking every entry is an index in `[0, m)`.
fn pivots<T: Real>(op: &'static str, c: &Core<'_, T>, m: usize) -> Result<Vec<usize>, LinalgError> {
    c.data
        .iter()
        .map(|&v| {
            let f = v.as_f64();
            if f >= 0.0 && f < m as f64 {
                Ok(f as usize)
            } else {
                Err(LinalgError::Value {
                    op,
                    arg: "piv",
                    message: format!("holds {f}; expected 0-based row indices in [0, {m})"),
                })
            }
        })
        .collect()
}

/// Matrix inverse, `(m,m)->(m,m)`, like `numpy.linalg.inv`; an exactly singular `a` is an
/// error.
pub fn inv(inputs: &[&Tensor]) -> Result<Vec<Tensor>, LinalgError> {
    check_arity("inv", inputs, 1)?;
    let args = [ArgSpec::matrix("a")];
    by_dtype!(float_dtype(inputs, &args), inv_imp(inputs, &args))
}

fn inv_imp<T: Real>(inputs: &[&Tensor], args: &[ArgSpec]) -> Result<Vec<Tensor>, LinalgError> {
    let b = Batched::<T>::new("inv", inputs, args)?;
    let m = b.square(0, "a")?;
    let x = b.run_into(&[m, m], inv_scratch::<T>(m), |c, x, stack| {
        inv_one(c[0].data, x, m, stack)
    })?;
    Ok(vec![x])
}

/// The workspace [`inv_one`] needs for order `m`.
pub(crate) fn inv_scratch<T: Real>(m: usize) -> StackReq {
    if m <= small::SMALL {
        StackReq::new::<T>(m * m)
    } else {
        lu_solve_scratch::<T>(m, m)
    }
}

/// The inverse of one row-major `m × m` `a` into `x` (row-major `m × m`), as [`inv`] computes
/// each batch element: the kernel the batched op and [`crate::Workspace::inv`] share.
pub(crate) fn inv_one<T: Real>(
    a: &[T],
    x: &mut [T],
    m: usize,
    stack: &mut MemStack,
) -> Result<(), LinalgError> {
    if m <= small::SMALL {
        let (mut w, _) = stack.make_with(m * m, |i| a[i]);
        x.fill(T::lit(0.0));
        for i in 0..m {
            x[i * m + i] = T::lit(1.0);
        }
        return match small::lu_solve(&mut w, x, m, m) {
            Some(i) => Err(singular("inv", "a", i)),
            None => Ok(()),
        };
    }
    let eye = |i: usize, j: usize| T::lit(if i == j { 1.0 } else { 0.0 });
    lu_solve_in(("inv", "a"), |i, j| a[i * m + j], eye, (m, m), x, stack)
}

/// Moore–Penrose pseudo-inverse, `(m,n)->(n,m)`, like `numpy.linalg.pinv`: singular values
/// at or below `rtol · max(s)` are treated as zero; `rtol` defaults to `max(m, n) · eps`.
pub fn pinv(inputs: &[&Tensor], rtol: Option<f64>) -> Result<Vec<Tensor>, LinalgError> {
    check_arity("pinv", inputs, 1)?;
    let args = [ArgSpec::matrix("a")];
    by_dtype!(float_dtype(inputs, &args), pinv_imp(inputs, &args, rtol))
}

/// Thin SVD pieces `(U, s, V)` with singular values below the cutoff zeroed in `s_inv`.
struct Pseudo<T> {
    u: Mat<T>,
    v: Mat<T>,
    s: Vec<T>,
    s_inv: Vec<T>,
    rank: usize,
}

fn pseudo<T: Real>(
    op: &'static str,
    a: MatRef<'_, T>,
    rtol: Option<f64>,
) -> Result<Pseudo<T>, LinalgError> {
    let (m, n) = (a.nrows(), a.ncols());
    let f = a
        .thin_svd()
        .map_err(|_| LinalgError::NoConvergence { op })?;
    let sd = f.S().column_vector();
    let s: Vec<T> = (0..m.min(n)).map(|i| sd[i]).collect();
    let rtol = rtol.unwrap_or(m.max(n) as f64 * T::eps().as_f64());
    let smax = s.first().map_or(0.0, |x| x.as_f64());
    let cutoff = rtol * smax;
    let s_inv: Vec<T> = s
        .iter()
        .map(|&x| {
            if x.as_f64() > cutoff {
                T::lit(1.0) / x
            } else {
                T::lit(0.0)
            }
        })
        .collect();
    let rank = s.iter().filter(|x| x.as_f64() > cutoff).count();
    Ok(Pseudo {
        u: f.U().to_owned(),
        v: f.V().to_owned(),
        s,
        s_inv,
        rank,
    })
}

impl<T: Real> Pseudo<T> {
    /// `V diag(s_inv) Uᵀ b`.
    fn apply(&self, b: MatRef<'_, T>) -> Mat<T> {
        let mut ub = self.u.transpose() * b;
        for i in 0..ub.nrows() {
            for j in 0..ub.ncols() {
                ub[(i, j)] *= self.s_inv[i];
            }
        }
        &self.v * &ub
    }
}

fn pinv_imp<T: Real>(
    inputs: &[&Tensor],
    args: &[ArgSpec],
    rtol: Option<f64>,
) -> Result<Vec<Tensor>, LinalgError> {
    let b = Batched::<T>::new("pinv", inputs, args)?;
    let (m, n) = matrix_dims(&b, 0, "a")?;
    b.run(&[OutSpec::float(&[n, m])], |c| {
        let ps = pseudo("pinv", c[0].mat(), rtol)?;
        Ok(vec![rows(ps.apply(identity::<T>(m).as_ref()).as_ref())])
    })
}

/// Parameters of [`lstsq`].
#[derive(Clone, Copy, Debug, Default)]
pub struct LstsqParams {
    /// Singular values at or below `rcond · max(s)` count as zero; `None` is
    /// `max(m, n) · eps`, NumPy's default.
    pub rcond: Option<f64>,
    /// Core dimensions of `b`, as in [`SolveParams::b_ndim`].
    pub b_ndim: Option<usize>,
}

/// Least-squares solution, inputs `[a, b]` with `a` (m,n) and `b` (m,k) or (m), like
/// `numpy.linalg.lstsq`: outputs `[x, residuals, rank, s]`.
///
/// `x` is (n,k) (or (n)), `rank` int32 `()`, `s` the singular values (min(m,n)).
/// `residuals` is (k) (or (1)) holding the squared residual norms when `m > n`, and (0)
/// otherwise. Unlike NumPy, whose residual shape depends on the computed rank, the shape here
/// depends only on the input shapes (needed for batching): for a rank-deficient tall `a`
/// NumPy returns an empty array where this returns the residual norms.
pub fn lstsq(inputs: &[&Tensor], p: &LstsqParams) -> Result<Vec<Tensor>, LinalgError> {
    check_arity("lstsq", inputs, 2)?;
    let args = ab_args("lstsq", inputs, p.b_ndim)?;
    by_dtype!(float_dtype(inputs, &args), lstsq_imp(inputs, &args, p))
}

fn lstsq_imp<T: Real>(
    inputs: &[&Tensor],
    args: &[ArgSpec],
    p: &LstsqParams,
) -> Result<Vec<Tensor>, LinalgError> {
    let b = Batched::<T>::new("lstsq", inputs, args)?;
    let (m, n) = matrix_dims(&b, 0, "a")?;
    let bcore = rhs_shape(&b, 1, m)?;
    let k = bcore.get(1).copied().unwrap_or(1);
    let mut xshape = bcore.clone();
    xshape[0] = n;
    let nres = if m > n { k } else { 0 };
    let outs = [
        OutSpec::float(&xshape),
        OutSpec::float(&[nres]),
        OutSpec::int32(&[]),
        OutSpec::float(&[m.min(n)]),
    ];
    b.run(&outs, |c| {
        let a = c[0].mat();
        let rhs = c[1].mat();
        let ps = pseudo("lstsq", a, p.rcond)?;
        let x = ps.apply(rhs);
        let mut res = Vec::with_capacity(nres);
        if nres > 0 {
            let r = &(a * &x) - rhs;
            for j in 0..k {
                let ss: f64 = (0..m).map(|i| r[(i, j)].as_f64().powi(2)).sum();
                res.push(T::lit(ss));
            }
        }
        Ok(vec![
            rows(x.as_ref()),
            res,
            vec![T::lit(ps.rank as f64)],
            ps.s,
        ])
    })
}
