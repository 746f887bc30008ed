//! Pullbacks of the factorizations in [`LinalgOp`](oxtensor_graph::LinalgOp) (`Qr`, `Lu`,
//! `LuFactor`) and of the solver built on one (`LuSolve`), following
//! PyTensor's formulas, as graph ops so they batch like the forward ops.

use crate::linalg::{column, mm, mt, or_zeros, outer_core};
use crate::rules::{Term, grads, per_input};
use oxtensor_data::DType;
use oxtensor_graph::build::linalg as la;
use oxtensor_graph::build::{self as b, Built};
use oxtensor_graph::{GraphError, QrMode, Var};

/// `tril(x) + tril(x, −1)ᵀ`: the lower triangle of `x` copied onto the upper one.
fn copy_lower_to_upper(x: &Var) -> Built {
    b::add(&la::tril(x, 0)?, &mt(&la::tril(x, -1)?)?)
}

/// Splits the last axis of `x` into its first `k` columns and the rest (`n − k` columns).
fn split_columns(x: &Var, k: &Var, n: &Var) -> Result<(Var, Var), GraphError> {
    let parts = b::split(x, &[k.clone(), b::sub(n, k)?], -1)?;
    Ok((parts[0].clone(), parts[1].clone()))
}

/// The QR pullback (PyTensor's, after Liao, Liu, Wang and Xiang 2019), in a form valid for
/// tall and wide matrices alike: with `k = min(m, n)`, `R = [U | ·]` (`U` square), `A = [X | Y]`
/// and `R̄ = [Ū | V̄]`, `D = Q̄ + Y V̄ᵀ`, `M = U Ūᵀ − Dᵀ Q`,
/// `X̄ = (D + Q copyltu(M)) U⁻ᵀ` and `Ȳ = Q V̄` (for a tall matrix `Y` and `V̄` are empty).
/// Mode `r` recomputes the reduced factors, with `Q̄ = 0`; mode `complete` is differentiable
/// when `m ≤ n` (where it equals the reduced mode), as in PyTensor.
pub(crate) fn qr(
    mode: QrMode,
    a: &Var,
    outputs: &[Var],
    cotangents: &[Option<Var>],
    wanted: &[bool],
) -> Result<Vec<Term>, GraphError> {
    let nd = a.ndim();
    if let (QrMode::Complete, Some(m), Some(n)) = (mode, a.ty().shape[nd - 2], a.ty().shape[nd - 1])
        && m > n
    {
        return per_input(wanted, |_| {
            Ok(Term::Undefined(format!(
                "the gradient of QR{{mode=complete}} needs m <= n (as in PyTensor), \
                 got a {m}x{n} matrix in {}",
                a.describe()
            )))
        });
    }
    let (q, r, gq, gr) = if mode == QrMode::R {
        let f = la::qr(a, QrMode::Reduced)?;
        let gq = b::zeros_like(&f[0], None)?;
        let gr = or_zeros(&cotangents[0], &outputs[0])?;
        (f[0].clone(), f[1].clone(), gq, gr)
    } else {
        let gq = or_zeros(&cotangents[0], &outputs[0])?;
        let gr = or_zeros(&cotangents[1], &outputs[1])?;
        (outputs[0].clone(), outputs[1].clone(), gq, gr)
    };
    grads(wanted, |_| {
        let m = b::shape_i(a, nd - 2)?;
        let n = b::shape_i(a, nd - 1)?;
        let k = b::minimum(&m, &n)?;
        let (u, _) = split_columns(&r, &k, &n)?;
        let (gu, gv) = split_columns(&gr, &k, &n)?;
        let (_, y) = split_columns(a, &k, &n)?;
        let d = b::add(&gq, &mm(&y, &mt(&gv)?)?)?;
        let mmat = b::sub(&mm(&u, &mt(&gu)?)?, &mm(&mt(&d)?, &q)?)?;
        let rhs = b::add(&d, &mm(&q, &copy_lower_to_upper(&mmat)?)?)?;
        let xbar = mt(&la::solve_triangular(
            &u,
            &mt(&rhs)?,
            false,
            false,
            false,
            Some(2),
        )?)?;
        let ybar = mm(&q, &gv)?;
        b::concatenate(&[xbar, ybar], -1)
    })
}

/// The permutation matrix `P` with `P[…, i, j] = (p[…, i] == j)`, in `dtype`.
fn one_hot(p: &Var, dtype: DType) -> Built {
    let m = b::shape_i(p, p.ndim() - 1)?;
    let cols = b::arange(&Var::int_constant(0), &m, &Var::int_constant(1), p.dtype())?;
    b::cast(&b::eq(&column(p)?, &cols)?, dtype)
}

/// The pullback of a square LU factorization `A = P L U` (PyTensor's, after de Hoog,
/// Anderssen and Lukas): `W = L⁻ᵀ (tril(Lᵀ L̄, −1) + triu(Ū Uᵀ))`, `B̄ = W U⁻ᵀ` is the
/// gradient w.r.t. `B = Pᵀ A = L U`, and `Ā = P B̄`. `p` is the permutation matrix, or with
/// `p_indices` the row indices (`A = L[p] U`).
pub(crate) fn lu(p: &Var, p_indices: bool, l: &Var, u: &Var, gl: &Var, gu: &Var) -> Built {
    let x1 = la::tril(&mm(&mt(l)?, gl)?, -1)?;
    let x2 = la::triu(&mm(gu, &mt(u)?)?, 0)?;
    let w = la::solve_triangular(l, &b::add(&x1, &x2)?, true, true, true, Some(2))?;
    let bbar = mt(&la::solve_triangular(
        u,
        &mt(&w)?,
        false,
        false,
        false,
        Some(2),
    )?)?;
    let pmat = if p_indices {
        one_hot(p, bbar.dtype())?
    } else {
        p.clone()
    };
    mm(&pmat, &bbar)
}

/// The pullback of `lu_factor`: the packed cotangent is split into `L̄` (strict lower part)
/// and `Ū` (upper part), and the permutation is taken from a fresh `lu(a)` (the same
/// partial-pivoting factorization), as PyTensor converts the pivots.
pub(crate) fn lu_factor(a: &Var, packed: &Var, g: &Var) -> Built {
    let n = b::shape_i(packed, packed.ndim() - 1)?;
    let eye = b::eye(&n, &n, &Var::int_constant(0), packed.dtype())?;
    let l = b::add(&la::tril(packed, -1)?, &eye)?;
    let u = la::triu(packed, 0)?;
    let p = la::lu(a, true)?.remove(0);
    lu(&p, true, &l, &u, &la::tril(g, -1)?, &la::triu(g, 0)?)
}

/// `(L U)⁻ᵀ v` from the packed factors: `Uᵀ t = v`, then `Lᵀ s = t` (unit diagonal).
fn packed_solve_transposed(packed: &Var, v: &Var, b_ndim: usize) -> Built {
    let t = la::solve_triangular(packed, v, true, false, false, Some(b_ndim))?;
    la::solve_triangular(packed, &t, true, true, true, Some(b_ndim))
}

/// The pullback of `lu_solve((lu, piv), b)`, solving `A x = b` (or `Aᵀ x = b`) with
/// `A = P L U`. `b̄` is the solve with the other transposition. For the packed factors,
/// with `B = L U = Pᵀ A`: `B̄ = −(L U)⁻ᵀ ḡ xᵀ` (or `−(L U)⁻ᵀ b b̄ᵀ` when transposed), so no
/// permutation is needed, and `lu̅ = tril(B̄ Uᵀ, −1) + triu(Lᵀ B̄)`. Pivots are integers:
/// their gradient is zero.
pub(crate) fn lu_solve(
    trans: bool,
    b_ndim: usize,
    inputs: &[Var],
    x: &Var,
    g: &Var,
    wanted: &[bool],
) -> Result<Vec<Term>, GraphError> {
    let (packed, piv, rhs) = (&inputs[0], &inputs[1], &inputs[2]);
    let bbar = la::lu_solve(packed, piv, g, !trans, Some(b_ndim))?;
    per_input(wanted, |k| match k {
        0 => {
            let barb = if trans {
                let y = packed_solve_transposed(packed, rhs, b_ndim)?;
                b::neg(&outer_core(&y, &bbar, b_ndim)?)?
            } else {
                let c = packed_solve_transposed(packed, g, b_ndim)?;
                b::neg(&outer_core(&c, x, b_ndim)?)?
            };
            let lower = la::tril(&mm(&barb, &mt(&la::triu(packed, 0)?)?)?, -1)?;
            let lt_barb = b::add(&mm(&mt(&la::tril(packed, -1)?)?, &barb)?, &barb)?;
            Ok(Term::Grad(b::add(&lower, &la::triu(&lt_barb, 0)?)?))
        }
        1 => Ok(Term::Zero),
        _ => Ok(Term::Grad(bbar.clone())),
    })
}
