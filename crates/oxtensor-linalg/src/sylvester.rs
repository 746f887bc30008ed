//! Sylvester and Lyapunov equations, solved as one linear system in the Kronecker form.
//!
//! `A X + X B = Q` is `(A ⊗ I + I ⊗ Bᵀ) vec(X) = vec(Q)` (row-major `vec`), an `mn × mn`
//! system solved by LU. That costs O((mn)³) rather than the O(m³ + n³) of Bartels–Stewart,
//! which needs a real Schur form: faer 0.24 computes one internally (for `eigen`) but keeps
//! the routine crate-private. So the number of unknowns `mn` is limited to
//! [`KRON_MAX_UNKNOWNS`]; larger problems are an [`LinalgError::Unsupported`] error.

use crate::batch::{ArgSpec, Batched, OutSpec, check_arity, float_dtype, rows};
use crate::util::lu_solve_checked;
use crate::{LinalgError, Real};
use faer::{Mat, MatRef};
use oxtensor_data::Tensor;

/// The largest number of unknowns (`m·n`) the Kronecker-form solver accepts (40×40).
pub const KRON_MAX_UNKNOWNS: usize = 1600;

fn check_size(op: &'static str, m: usize, n: usize) -> Result<(), LinalgError> {
    if m * n > KRON_MAX_UNKNOWNS {
        return Err(LinalgError::Unsupported {
            op,
            message: format!(
                "the solution has {m}×{n} = {} unknowns; the Kronecker-form solver is limited to {KRON_MAX_UNKNOWNS}",
                m * n
            ),
        });
    }
    Ok(())
}

/// Solves the `mn × mn` system `k vec(X) = vec(Q)` and reshapes back to `m × n`.
fn kron_solve<T: Real>(
    op: &'static str,
    arg: &'static str,
    k: Mat<T>,
    q: MatRef<'_, T>,
) -> Result<Vec<T>, LinalgError> {
    let (m, n) = (q.nrows(), q.ncols());
    let rhs = Mat::from_fn(m * n, 1, |r, _| q[(r / n, r % n)]);
    let x = lu_solve_checked(op, arg, k.as_ref(), rhs.as_ref())?;
    Ok(rows(x.as_ref()))
}

/// `X` with `A X + X B = Q`, inputs `[a, b, q]` with core signature
/// `(m,m),(n,n),(m,n)->(m,n)`, like `scipy.linalg.solve_sylvester`. A singular system
/// (`A` and `−B` sharing an eigenvalue) is an error.
pub fn solve_sylvester(inputs: &[&Tensor]) -> Result<Vec<Tensor>, LinalgError> {
    check_arity("solve_sylvester", inputs, 3)?;
    let args = [
        ArgSpec::matrix("a"),
        ArgSpec::matrix("b"),
        ArgSpec::matrix("q"),
    ];
    by_dtype!(float_dtype(inputs, &args), sylvester_imp(inputs, &args))
}

fn sylvester_imp<T: Real>(
    inputs: &[&Tensor],
    args: &[ArgSpec],
) -> Result<Vec<Tensor>, LinalgError> {
    const OP: &str = "solve_sylvester";
    let bt = Batched::<T>::new(OP, inputs, args)?;
    let m = bt.square(0, "a")?;
    let n = bt.square(1, "b")?;
    if bt.cores[2] != [m, n] {
        return Err(bt.shape_error(2, "q", &format!("{m}, {n}")));
    }
    check_size(OP, m, n)?;
    bt.run(&[OutSpec::float(&[m, n])], |c| {
        let (a, b) = (c[0].mat(), c[1].mat());
        let k = Mat::from_fn(m * n, m * n, |r, s| {
            let (i, j, k, l) = (r / n, r % n, s / n, s % n);
            let mut v = T::lit(0.0);
            if j == l {
                v += a[(i, k)];
            }
            if i == k {
                v += b[(l, j)];
            }
            v
        });
        Ok(vec![kron_solve(OP, "a, b", k, c[2].mat())?])
    })
}

/// `X` with `A X + X Aᵀ = Q`, inputs `[a, q]`, `(m,m),(m,m)->(m,m)`, like
/// `scipy.linalg.solve_continuous_lyapunov`.
pub fn solve_continuous_lyapunov(inputs: &[&Tensor]) -> Result<Vec<Tensor>, LinalgError> {
    check_arity("solve_continuous_lyapunov", inputs, 2)?;
    let args = [ArgSpec::matrix("a"), ArgSpec::matrix("q")];
    by_dtype!(
        float_dtype(inputs, &args),
        lyapunov_imp(inputs, &args, false)
    )
}

/// `X` with `A X Aᵀ − X + Q = 0`, inputs `[a, q]`, `(m,m),(m,m)->(m,m)`, like
/// `scipy.linalg.solve_discrete_lyapunov` (its direct method).
pub fn solve_discrete_lyapunov(inputs: &[&Tensor]) -> Result<Vec<Tensor>, LinalgError> {
    check_arity("solve_discrete_lyapunov", inputs, 2)?;
    let args = [ArgSpec::matrix("a"), ArgSpec::matrix("q")];
    by_dtype!(
        float_dtype(inputs, &args),
        lyapunov_imp(inputs, &args, true)
    )
}

fn lyapunov_imp<T: Real>(
    inputs: &[&Tensor],
    args: &[ArgSpec],
    discrete: bool,
) -> Result<Vec<Tensor>, LinalgError> {
    let op = if discrete {
        "solve_discrete_lyapunov"
    } else {
        "solve_continuous_lyapunov"
    };
    let bt = Batched::<T>::new(op, inputs, args)?;
    let n = bt.square(0, "a")?;
    if bt.cores[1] != [n, n] {
        return Err(bt.shape_error(1, "q", &format!("{n}, {n}")));
    }
    check_size(op, n, n)?;
    bt.run(&[OutSpec::float(&[n, n])], |c| {
        let a = c[0].mat();
        let k = Mat::from_fn(n * n, n * n, |r, s| {
            let (i, j, k, l) = (r / n, r % n, s / n, s % n);
            if discrete {
                let d = if r == s { T::lit(1.0) } else { T::lit(0.0) };
                d - a[(i, k)] * a[(j, l)]
            } else {
                let mut v = T::lit(0.0);
                if j == l {
                    v += a[(i, k)];
                }
                if i == k {
                    v += a[(j, l)];
                }
                v
            }
        });
        Ok(vec![kron_solve(op, "a", k, c[1].mat())?])
    })
}
