//! Sylvester and Lyapunov equations.
//!
//! `A X + X B = Q` is solved by Bartels–Stewart on complex Schur forms (see the `schur`
//! module), in `f64` whatever the input dtype, O(m³ + n³). The continuous Lyapunov equation
//! is the Sylvester equation with `B = Aᵀ`. The discrete Lyapunov equation follows SciPy's
//! choice of method: for `n ≤ 10` the direct Kronecker form `(I − A ⊗ A) vec(X) = vec(Q)`,
//! solved by LU; above that the bilinear (Cayley) transform to a continuous equation.

use crate::batch::{ArgSpec, Batched, OutSpec, check_arity, float_dtype, rows};
use crate::schur::{SchurError, sylvester};
use crate::util::{identity, lu_solve_checked};
use crate::{LinalgError, Real};
use faer::Mat;
use oxtensor_data::Tensor;

/// The largest order for which `solve_discrete_lyapunov` uses the direct Kronecker form.
const DIRECT_MAX: usize = 10;

fn to_f64<T: Real>(d: &[T]) -> Vec<f64> {
    d.iter().map(|x| x.as_f64()).collect()
}

fn from_f64<T: Real>(d: Vec<f64>) -> Vec<T> {
    d.into_iter().map(T::lit).collect()
}

fn schur_error(op: &'static str, arg: &'static str) -> impl Fn(SchurError) -> LinalgError {
    move |e| match e {
        SchurError::NoConvergence => LinalgError::NoConvergence { op },
        SchurError::Singular => LinalgError::Singular {
            op,
            arg,
            detail: ": the equation has no unique solution (eigenvalues λ(A) = −λ(B))".into(),
        },
    }
}

/// `X` with `A X + X B = Q`, inputs `[a, b, q]` with core signature
/// `(m,m),(n,n),(m,n)->(m,n)`, like `scipy.linalg.solve_sylvester`. An equation without a
/// unique solution (`A` and `−B` sharing an eigenvalue exactly) is an error.
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
    bt.run(&[OutSpec::float(&[m, n])], |c| {
        let (a, b, q) = (to_f64(c[0].data), to_f64(c[1].data), to_f64(c[2].data));
        let x = sylvester(&a, &b, &q, m, n).map_err(schur_error(OP, "a, b"))?;
        Ok(vec![from_f64(x)])
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
/// `scipy.linalg.solve_discrete_lyapunov` with its default method choice.
pub fn solve_discrete_lyapunov(inputs: &[&Tensor]) -> Result<Vec<Tensor>, LinalgError> {
    check_arity("solve_discrete_lyapunov", inputs, 2)?;
    let args = [ArgSpec::matrix("a"), ArgSpec::matrix("q")];
    by_dtype!(
        float_dtype(inputs, &args),
        lyapunov_imp(inputs, &args, true)
    )
}

fn transpose(a: &[f64], n: usize) -> Vec<f64> {
    (0..n * n).map(|x| a[(x % n) * n + x / n]).collect()
}

/// The direct method: `(I − A ⊗ A) vec(X) = vec(Q)` with row-major `vec`.
fn discrete_direct(
    op: &'static str,
    a: &[f64],
    q: &[f64],
    n: usize,
) -> Result<Vec<f64>, LinalgError> {
    let k = Mat::from_fn(n * n, n * n, |r, s| {
        let (i, j, k, l) = (r / n, r % n, s / n, s % n);
        let d = if r == s { 1.0 } else { 0.0 };
        d - a[i * n + k] * a[j * n + l]
    });
    let rhs = Mat::from_fn(n * n, 1, |r, _| q[r]);
    let x = lu_solve_checked(op, "a", k.as_ref(), rhs.as_ref())?;
    Ok(rows(x.as_ref()))
}

/// The bilinear method: with `M = (Aᵀ + I)⁻¹`, `B = (Aᵀ − I) M` and
/// `C = 2 (A + I)⁻¹ Q M`, `X` solves the continuous equation `Bᵀ X + X B = −C`.
fn discrete_bilinear(
    op: &'static str,
    a: &[f64],
    q: &[f64],
    n: usize,
) -> Result<Vec<f64>, LinalgError> {
    let am = Mat::from_fn(n, n, |i, j| a[i * n + j]);
    let qm = Mat::from_fn(n, n, |i, j| q[i * n + j]);
    let eye = identity::<f64>(n);
    let at_plus = Mat::from_fn(n, n, |i, j| am[(j, i)] + eye[(i, j)]);
    let a_plus = Mat::from_fn(n, n, |i, j| am[(i, j)] + eye[(i, j)]);
    let minv = lu_solve_checked(op, "a", at_plus.as_ref(), eye.as_ref())?;
    let at_minus = Mat::from_fn(n, n, |i, j| am[(j, i)] - eye[(i, j)]);
    let b = &at_minus * &minv;
    let aq = lu_solve_checked(op, "a", a_plus.as_ref(), qm.as_ref())?;
    let c = &aq * &minv;
    let neg_c: Vec<f64> = rows(c.as_ref()).iter().map(|x| -2.0 * x).collect();
    let bv = rows(b.as_ref());
    sylvester(&transpose(&bv, n), &bv, &neg_c, n, n).map_err(schur_error(op, "a"))
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
    bt.run(&[OutSpec::float(&[n, n])], |c| {
        let (a, q) = (to_f64(c[0].data), to_f64(c[1].data));
        let x = if !discrete {
            sylvester(&a, &transpose(&a, n), &q, n, n).map_err(schur_error(op, "a"))?
        } else if n <= DIRECT_MAX {
            discrete_direct(op, &a, &q, n)?
        } else {
            discrete_bilinear(op, &a, &q, n)?
        };
        Ok(vec![from_f64(x)])
    })
}
