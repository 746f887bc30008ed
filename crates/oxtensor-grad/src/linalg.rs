//! Pullbacks of [`Op::Linalg`](oxtensor_graph::Op::Linalg), built from graph ops (matrix
//! products, transposes, masks and the linear-algebra ops themselves), so they batch like the
//! forward ops and can be differentiated again.
//!
//! Conventions follow PyTensor. An op that reads only one triangle of a matrix (cholesky,
//! eigh, symmetric solves, triangular solves, cho_solve) gets a gradient confined to that
//! triangle: it is the exact derivative of what the op computes, and on a graph that builds
//! a symmetric input (`x + x.mT`, `x @ x.mT`) it sums to PyTensor's result.
//! Batch dimensions that were broadcast are summed back by the driver.

use crate::rules::{Term, grads, per_input, uniform};
use oxtensor_graph::build::linalg as la;
use oxtensor_graph::build::{self as b, Built, Scalar};
use oxtensor_graph::{AssumeA, GraphError, LinalgOp, ScalarOp, Var};

pub(crate) fn mt(x: &Var) -> Built {
    la::matrix_transpose(x)
}

pub(crate) fn mm(x: &Var, y: &Var) -> Built {
    b::matmul(x, y)
}

fn neg(x: &Var) -> Built {
    b::neg(x)
}

fn add(x: &Var, y: &Var) -> Built {
    b::add(x, y)
}

fn mul(x: &Var, y: &Var) -> Built {
    b::mul(x, y)
}

/// `x` with two trailing dimensions of extent 1 (a batch of scalars against matrices).
fn as_matrix_scalars(x: &Var) -> Built {
    let n = x.ndim();
    let mut order: Vec<Option<usize>> = (0..n).map(Some).collect();
    order.extend([None, None]);
    b::dimshuffle(x, &order)
}

/// `u vᵀ` over the core dimensions: for right-hand sides of core rank 1 the outer product of
/// the vectors, else `u @ v.mT`.
pub(crate) fn outer_core(u: &Var, v: &Var, b_ndim: usize) -> Built {
    if b_ndim == 2 {
        return mm(u, &mt(v)?);
    }
    mul(&column(u)?, &row(v)?)
}

/// A batch of vectors `(…, m)` as columns `(…, m, 1)`.
pub(crate) fn column(u: &Var) -> Built {
    let n = u.ndim();
    let mut order: Vec<Option<usize>> = (0..n).map(Some).collect();
    order.push(None);
    b::dimshuffle(u, &order)
}

/// A batch of vectors `(…, m)` as rows `(…, 1, m)`.
fn row(v: &Var) -> Built {
    let n = v.ndim();
    let mut order: Vec<Option<usize>> = (0..n - 1).map(Some).collect();
    order.extend([None, Some(n - 1)]);
    b::dimshuffle(v, &order)
}

/// The part of a full-matrix gradient `g` that reaches an op reading only the lower (or
/// upper) triangle of a symmetric matrix: `g + gᵀ` on the strict triangle, `g` on the
/// diagonal.
fn fold_to_triangle(g: &Var, lower: bool) -> Built {
    if lower {
        add(&la::tril(g, 0)?, &mt(&la::triu(g, 1)?)?)
    } else {
        add(&la::triu(g, 0)?, &mt(&la::tril(g, -1)?)?)
    }
}

/// A cotangent, or zeros shaped like the output it belongs to.
pub(crate) fn or_zeros(g: &Option<Var>, out: &Var) -> Built {
    match g {
        Some(g) => Ok(g.clone()),
        None => b::zeros_like(out, None),
    }
}

/// The pullback of a linear-algebra node.
pub(crate) fn pullback(
    op: &LinalgOp,
    inputs: &[Var],
    outputs: &[Var],
    cotangents: &[Option<Var>],
    wanted: &[bool],
) -> Result<Vec<Term>, GraphError> {
    let g0 = || or_zeros(&cotangents[0], &outputs[0]);
    match op {
        LinalgOp::Cholesky { lower, .. } => {
            let g = g0()?;
            grads(wanted, |_| cholesky(*lower, &outputs[0], &g))
        }
        LinalgOp::Solve {
            assume_a,
            lower,
            transposed,
            b_ndim,
        } => {
            let (a, x, g) = (&inputs[0], &outputs[0], g0()?);
            // x = M⁻¹ b with M = a or aᵀ: b̄ = M⁻ᵀ ḡ, M̄ = −b̄ xᵀ.
            let bbar = la::solve(a, &g, *assume_a, *lower, !transposed, Some(*b_ndim))?;
            grads(wanted, |k| {
                if k == 1 {
                    return Ok(bbar.clone());
                }
                let mbar = neg(&outer_core(&bbar, x, *b_ndim)?)?;
                let abar = if *transposed { mt(&mbar)? } else { mbar };
                match assume_a {
                    AssumeA::General | AssumeA::Banded => Ok(abar),
                    AssumeA::Symmetric | AssumeA::PositiveDefinite => {
                        fold_to_triangle(&abar, *lower)
                    }
                    // Only the three central diagonals are read.
                    AssumeA::Tridiagonal => la::triu(&la::tril(&abar, 1)?, -1),
                }
            })
        }
        LinalgOp::SolveTriangular {
            lower,
            trans,
            unit_diagonal,
            b_ndim,
        } => {
            let (a, x, g) = (&inputs[0], &outputs[0], g0()?);
            let bbar = la::solve_triangular(a, &g, !trans, *lower, *unit_diagonal, Some(*b_ndim))?;
            grads(wanted, |k| {
                if k == 1 {
                    return Ok(bbar.clone());
                }
                let mbar = neg(&outer_core(&bbar, x, *b_ndim)?)?;
                let abar = if *trans { mt(&mbar)? } else { mbar };
                // Only the triangle is read; with a unit diagonal, not even the diagonal.
                let k = i64::from(*unit_diagonal);
                if *lower {
                    la::tril(&abar, -k)
                } else {
                    la::triu(&abar, k)
                }
            })
        }
        LinalgOp::ChoSolve { lower, b_ndim } => {
            let (c, x, g) = (&inputs[0], &outputs[0], g0()?);
            // x = A⁻¹ b with A = c cᵀ (or cᵀ c): b̄ = A⁻¹ ḡ, Ā = −b̄ xᵀ, c̄ from A(c).
            let bbar = la::cho_solve(c, &g, *lower, Some(*b_ndim))?;
            grads(wanted, |k| {
                if k == 1 {
                    return Ok(bbar.clone());
                }
                let abar = neg(&outer_core(&bbar, x, *b_ndim)?)?;
                let sym = add(&abar, &mt(&abar)?)?;
                if *lower {
                    la::tril(&mm(&sym, c)?, 0)
                } else {
                    la::triu(&mm(c, &sym)?, 0)
                }
            })
        }
        LinalgOp::Inv => {
            // d(x⁻¹) = −x⁻¹ dx x⁻¹, so x̄ = −x⁻ᵀ ḡ x⁻ᵀ.
            let (zt, g) = (mt(&outputs[0])?, g0()?);
            grads(wanted, |_| neg(&mm(&mm(&zt, &g)?, &zt)?))
        }
        LinalgOp::Pinv => {
            let (x, z, g) = (&inputs[0], &outputs[0], g0()?);
            grads(wanted, |_| pinv(x, z, &g))
        }
        LinalgOp::Det => {
            // d det(x) = det(x) tr(x⁻¹ dx): x̄ = ḡ det(x) x⁻ᵀ.
            let (x, d, g) = (&inputs[0], &outputs[0], g0()?);
            grads(wanted, |_| {
                let s = as_matrix_scalars(&mul(&g, d)?)?;
                mul(&s, &mt(&la::inv(x)?)?)
            })
        }
        LinalgOp::SLogDet => match &cotangents[1] {
            // The sign is locally constant; log|det x| has gradient x⁻ᵀ.
            None => Ok(uniform(wanted, Term::Zero)),
            Some(g) => {
                let x = &inputs[0];
                grads(wanted, |_| mul(&as_matrix_scalars(g)?, &mt(&la::inv(x)?)?))
            }
        },
        LinalgOp::Eigh { lower } => {
            let (w, v) = (&outputs[0], &outputs[1]);
            let gw = or_zeros(&cotangents[0], w)?;
            grads(wanted, |_| eigh(*lower, w, v, &gw, cotangents[1].as_ref()))
        }
        LinalgOp::Eigvalsh { lower } => {
            // Not differentiable by itself without the eigenvectors: rebuild them.
            let (_, v) = la::eigh(&inputs[0], *lower)?;
            let gw = g0()?;
            grads(wanted, |_| eigh(*lower, &outputs[0], &v, &gw, None))
        }
        LinalgOp::Expm => {
            let g = g0()?;
            grads(wanted, |_| expm(&inputs[0], &g))
        }
        LinalgOp::SolveSylvester => {
            // a x + x b = q: with s solving aᵀ s + s bᵀ = ḡ, q̄ = s, ā = −s xᵀ, b̄ = −xᵀ s.
            let (a, bm, x, g) = (&inputs[0], &inputs[1], &outputs[0], g0()?);
            let s = la::solve_sylvester(&mt(a)?, &mt(bm)?, &g)?;
            grads(wanted, |k| match k {
                0 => neg(&mm(&s, &mt(x)?)?),
                1 => neg(&mm(&mt(x)?, &s)?),
                _ => Ok(s.clone()),
            })
        }
        LinalgOp::SolveContinuousLyapunov => {
            // a x + x aᵀ = q: with s solving aᵀ s + s a = ḡ, q̄ = s, ā = −(s xᵀ + sᵀ x).
            let (a, x, g) = (&inputs[0], &outputs[0], g0()?);
            let s = la::solve_continuous_lyapunov(&mt(a)?, &g)?;
            grads(wanted, |k| match k {
                0 => neg(&add(&mm(&s, &mt(x)?)?, &mm(&mt(&s)?, x)?)?),
                _ => Ok(s.clone()),
            })
        }
        LinalgOp::SolveDiscreteLyapunov => {
            // x = a x aᵀ + q: with s solving aᵀ s a − s + ḡ = 0, q̄ = s, ā = s a xᵀ + sᵀ a x.
            let (a, x, g) = (&inputs[0], &outputs[0], g0()?);
            let s = la::solve_discrete_lyapunov(&mt(a)?, &g)?;
            grads(wanted, |k| match k {
                0 => add(&mm(&mm(&s, a)?, &mt(x)?)?, &mm(&mm(&mt(&s)?, a)?, x)?),
                _ => Ok(s.clone()),
            })
        }
        LinalgOp::Svd {
            full_matrices,
            compute_uv,
        } => {
            let a = &inputs[0];
            let uv_used = *compute_uv && (cotangents[0].is_some() || cotangents[2].is_some());
            if !uv_used {
                // Only the singular values reach the cost: ā = u diag(s̄) vh, thin factors.
                let gs = if *compute_uv {
                    &cotangents[1]
                } else {
                    &cotangents[0]
                };
                let gs = or_zeros(gs, &outputs[usize::from(*compute_uv)])?;
                let thin = la::svd(a, false, true)?;
                return grads(wanted, |_| mm(&mul(&thin[0], &row(&gs)?)?, &thin[2]));
            }
            if *full_matrices {
                return per_input(wanted, |_| {
                    Ok(Term::Undefined(format!(
                        "{op}: the gradient through u or vh needs full_matrices=False (as in PyTensor)"
                    )))
                });
            }
            let gu = or_zeros(&cotangents[0], &outputs[0])?;
            let gs = or_zeros(&cotangents[1], &outputs[1])?;
            let gvh = or_zeros(&cotangents[2], &outputs[2])?;
            grads(wanted, |_| {
                svd(&outputs[0], &outputs[1], &outputs[2], &gu, &gs, &gvh)
            })
        }
        LinalgOp::Kron => {
            let g = g0()?;
            grads(wanted, |k| kron(&inputs[0], &inputs[1], &g, k))
        }
        LinalgOp::Qr { mode } => {
            crate::linalg_factor::qr(*mode, &inputs[0], outputs, cotangents, wanted)
        }
        LinalgOp::Lu { p_indices } => {
            let (l, u) = (&outputs[1], &outputs[2]);
            let gl = or_zeros(&cotangents[1], l)?;
            let gu = or_zeros(&cotangents[2], u)?;
            grads(wanted, |_| {
                crate::linalg_factor::lu(&outputs[0], *p_indices, l, u, &gl, &gu)
            })
        }
        LinalgOp::LuFactor => {
            let g = g0()?;
            grads(wanted, |_| {
                crate::linalg_factor::lu_factor(&inputs[0], &outputs[0], &g)
            })
        }
        LinalgOp::LuSolve { trans, b_ndim } => {
            let g = g0()?;
            crate::linalg_factor::lu_solve(*trans, *b_ndim, inputs, &outputs[0], &g, wanted)
        }
        LinalgOp::Eig => per_input(wanted, |k| {
            Ok(Term::Undefined(format!(
                "{op} has no gradient implemented yet (input {k}, {})",
                inputs[k].describe()
            )))
        }),
    }
}

/// The Cholesky pullback (Murray 2016, as PyTensor): with `L` lower and `P = Φ(Lᵀ L̄)` (lower
/// triangle, diagonal halved), `S = L⁻ᵀ P L⁻¹` and `Ā = Φ'(S + Sᵀ)`: lower triangle of
/// `S + Sᵀ` with diagonal `S`'s. An upper factor is handled through its transpose.
fn cholesky(lower: bool, out: &Var, g: &Var) -> Built {
    let (l, lbar) = if lower {
        (out.clone(), g.clone())
    } else {
        (mt(out)?, mt(g)?)
    };
    let m = mm(&mt(&l)?, &lbar)?;
    let half_diag = b::with_scalar(
        ScalarOp::Mul,
        &la::diag_embed(&la::diagonal(&m)?)?,
        Scalar::Float(0.5),
        false,
    )?;
    let p = b::sub(&la::tril(&m, 0)?, &half_diag)?;
    // L⁻ᵀ (P L⁻¹) = L⁻ᵀ (L⁻ᵀ Pᵀ)ᵀ, two triangular solves with the transposed factor.
    let inner = la::solve_triangular(&l, &mt(&p)?, true, true, false, Some(2))?;
    let s = la::solve_triangular(&l, &mt(&inner)?, true, true, false, Some(2))?;
    let sym = add(&s, &mt(&s)?)?;
    let diag = la::diag_embed(&la::diagonal(&s)?)?;
    if lower {
        b::sub(&la::tril(&sym, 0)?, &diag)
    } else {
        b::sub(&la::triu(&sym, 0)?, &diag)
    }
}

/// The eigh pullback (PyTensor's): `F_ij = 1/(w_j − w_i)` off the diagonal,
/// `g = v (diag(ḡw) + F ∘ vᵀ ḡv) vᵀ`, folded onto the triangle the op reads.
fn eigh(lower: bool, w: &Var, v: &Var, gw: &Var, gv: Option<&Var>) -> Built {
    let mut inner = la::diag_embed(gw)?;
    if let Some(gv) = gv {
        let diff = b::sub(&row(w)?, &column(w)?)?;
        let f = la::zero_diagonal(&b::reciprocal(&diff)?)?;
        inner = add(&inner, &mul(&f, &mm(&mt(v)?, gv)?)?)?;
    }
    let g = mm(&mm(v, &inner)?, &mt(v)?)?;
    fold_to_triangle(&g, lower)
}

/// The pseudo-inverse pullback (PyTensor's, after Golub and Pereyra):
/// `x̄ = (−z ḡᵀ z + z zᵀ ḡ (I − x z) + (I − z x) ḡ zᵀ z)ᵀ` with `z = x⁺`.
fn pinv(x: &Var, z: &Var, g: &Var) -> Built {
    let gt = mt(g)?;
    let zt = mt(z)?;
    let xz = mm(x, z)?;
    let zx = mm(z, x)?;
    let i_xz = b::sub(&eye_like(&xz)?, &xz)?;
    let i_zx = b::sub(&eye_like(&zx)?, &zx)?;
    let t1 = neg(&mm(&mm(z, &gt)?, z)?)?;
    let t2 = mm(&mm(&mm(z, &zt)?, g)?, &i_xz)?;
    let t3 = mm(&mm(&mm(&i_zx, g)?, &zt)?, z)?;
    mt(&add(&add(&t1, &t2)?, &t3)?)
}

/// `max(|t|, ε)·sign(t)` with sign 1 at 0: a difference of singular values kept away from
/// zero (Seeger et al. 2017, as PyTensor), so repeated values give large but finite terms.
fn away_from_zero(t: &Var) -> Built {
    let eps = b::weak_constant(Scalar::Float(1e-8), t.dtype());
    let one = b::weak_constant(Scalar::Float(1.0), t.dtype());
    let zero = b::weak_constant(Scalar::Float(0.0), t.dtype());
    let sign = b::switch(&b::eq(t, &zero)?, &one, &b::sign(t)?)?;
    mul(&b::maximum(&b::abs(t)?, &eps)?, &sign)
}

/// The thin-SVD pullback (PyTensor's, after autograd and Seeger et al. 2017), with
/// `E_ij = 1/((s_j − s_i)(s_j + s_i))` off the diagonal:
/// `ā = u [(E ∘ (uᵀū − ūᵀu)) diag(s) + diag(s̄) + diag(s) (E ∘ (vhv̄ − v̄ᵀvᵀ))] vh`, plus
/// the terms of the non-square part, `(u/s) v̄h (I − v vh)` and `(I − u uᵀ) ū (vh/s)ᵀ…`, each
/// of which vanishes unless the matrix is wide (respectively tall).
fn svd(u: &Var, s: &Var, vh: &Var, gu: &Var, gs: &Var, gvh: &Var) -> Built {
    let (srow, scol) = (row(s)?, column(s)?);
    let denom = mul(
        &away_from_zero(&b::sub(&srow, &scol)?)?,
        &away_from_zero(&add(&srow, &scol)?)?,
    )?;
    let e = la::zero_diagonal(&b::reciprocal(&denom)?)?;
    let utgu = mm(&mt(u)?, gu)?;
    let vtgv = mm(vh, &mt(gvh)?)?;
    let left = mul(&mul(&e, &b::sub(&utgu, &mt(&utgu)?)?)?, &srow)?;
    let right = mul(&scol, &mul(&e, &b::sub(&vtgv, &mt(&vtgv)?)?)?)?;
    let core = add(&add(&left, &la::diag_embed(gs)?)?, &right)?;
    let mut abar = mm(&mm(u, &core)?, vh)?;
    let v = mt(vh)?;
    // Wide matrices: (u / s) v̄h (I − v vh).
    let vvh = mm(&v, vh)?;
    let wide = mm(
        &mm(&b::true_div(u, &srow)?, gvh)?,
        &b::sub(&eye_like(&vvh)?, &vvh)?,
    )?;
    // Tall matrices: ((v / s) ūᵀ (I − u uᵀ))ᵀ.
    let uut = mm(u, &mt(u)?)?;
    let tall = mt(&mm(
        &mm(&b::true_div(&v, &srow)?, &mt(gu)?)?,
        &b::sub(&eye_like(&uut)?, &uut)?,
    )?)?;
    abar = add(&add(&abar, &wide)?, &tall)?;
    Ok(abar)
}

/// The kron pullback: with `ḡ` seen as `(…, m, p, n, q)`, `ā = Σ_{k,l} ḡ[…, i, k, j, l] b[…, k, l]`
/// and `b̄ = Σ_{i,j} ḡ[…, i, k, j, l] a[…, i, j]` (`k` picks the input).
fn kron(a: &Var, bm: &Var, g: &Var, k: usize) -> Built {
    let nd = g.ndim();
    let dim = |v: &Var, d: usize| b::shape_i(v, v.ndim() - 2 + d);
    let mut dims: Vec<Var> = (0..nd - 2)
        .map(|d| b::shape_i(g, d))
        .collect::<Result<_, _>>()?;
    dims.extend([dim(a, 0)?, dim(bm, 0)?, dim(a, 1)?, dim(bm, 1)?]);
    let g6 = b::reshape_sym(g, &dims)?;
    // Spread an operand's two core axes over positions (r, c) of the six-axis layout.
    let spread = |v: &Var, r: usize, c: usize| -> Built {
        let lead = nd - 2;
        let v = b::pad_rank(v, nd)?;
        let mut order: Vec<Option<usize>> = (0..lead).map(Some).collect();
        let mut core = [None; 4];
        core[r] = Some(lead);
        core[c] = Some(lead + 1);
        order.extend(core);
        b::dimshuffle(&v, &order)
    };
    if k == 0 {
        let prod = mul(&g6, &spread(bm, 1, 3)?)?;
        b::sum(&prod, Some(&[-3, -1]), false)
    } else {
        let prod = mul(&g6, &spread(a, 0, 2)?)?;
        b::sum(&prod, Some(&[-4, -2]), false)
    }
}

/// The expm pullback, exactly, by Van Loan's block formula: `ā` is the upper-right block of
/// `expm([[aᵀ, ḡ], [0, aᵀ]])`.
fn expm(a: &Var, g: &Var) -> Built {
    let at = mt(a)?;
    let zero = b::zeros_like(&at, None)?;
    let top = b::concatenate(&[at.clone(), g.clone()], -1)?;
    let bottom = b::concatenate(&[zero, at.clone()], -1)?;
    let big = la::expm(&b::concatenate(&[top, bottom], -2)?)?;
    let n = b::shape_i(a, a.ndim() - 1)?;
    let sizes = [n.clone(), n];
    let rows = b::split(&big, &sizes, -2)?;
    let block = b::split(&rows[0], &sizes, -1)?;
    Ok(block[1].clone())
}

/// The identity matrix of the last (square) dimensions of `x`.
fn eye_like(x: &Var) -> Built {
    let n = x.ndim();
    let m = b::shape_i(x, n - 1)?;
    b::eye(&m, &m, &Var::int_constant(0), x.dtype())
}
