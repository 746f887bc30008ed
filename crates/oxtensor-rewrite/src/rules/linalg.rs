//! Linear algebra (`linalg`, in `stabilize`): products with an inverse become solves (one
//! LU factorisation and two triangular solves instead of an inverse and a product, and more
//! accurate), and logarithms of determinants become `slogdet`, which does not overflow or
//! underflow for large matrices. `log(det(a))` is NaN where the determinant is negative, so
//! the replacement keeps that NaN with a switch on the sign.
//!
//! Structure is recognised too: `trace(a @ b)` needs only the diagonal of the product; det,
//! inv and solve of a diagonal matrix (`diag(v)`, `s·eye(n)`) are elementwise; a solve with
//! `L Lᵀ` for a known lower-triangular `L` is a `cho_solve`, and the Cholesky factor of such
//! a product is `L` itself (with its columns' signs fixed).

use crate::pattern::{
    binary, cast_to, dimshuffle, elemwise_args, is_const, reduce_of, same_shape, scalar_const,
    unary,
};
use crate::rule::{OpKind, Root, Rule, RuleCtx};
use oxtensor_graph::build::{self, linalg as la};
use oxtensor_graph::{AssumeA, LinalgOp, Op, ReduceOp, ScalarOp, Var};

/// The matrix `a` when `v` is `det(a)`.
fn det_of(v: &Var) -> Option<&Var> {
    match v.owner()? {
        (Op::Linalg(LinalgOp::Det), [a]) => Some(a),
        _ => None,
    }
}

// matmul(inv(a), b) → solve(a, b)
fn inv_matmul_to_solve(v: &Var, cx: &RuleCtx<'_>) -> Option<Var> {
    let (Op::MatMul, [x, b]) = v.owner()? else {
        return None;
    };
    let (Op::Linalg(LinalgOp::Inv), [a]) = x.owner()? else {
        return None;
    };
    if !cx.single_client(x) {
        return None;
    }
    let b_ndim = b.ndim().min(2);
    let s = la::solve(a, b, AssumeA::General, false, false, Some(b_ndim)).ok()?;
    let s = cast_to(&s, v.dtype())?;
    same_shape(&s, v).then_some(s)
}

// log(abs(det(a))) → slogdet(a)[1]
fn log_abs_det_to_slogdet(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let a = det_of(unary(unary(v, ScalarOp::Log)?, ScalarOp::Abs)?)?;
    let (_, logabs) = la::slogdet(a).ok()?;
    cast_to(&logabs, v.dtype())
}

// log(det(a)) → switch(sign < 0, nan, slogdet(a)[1])
fn log_det_to_slogdet(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let a = det_of(unary(v, ScalarOp::Log)?)?;
    let (sign, logabs) = la::slogdet(a).ok()?;
    let negative = build::with_scalar(ScalarOp::Lt, &sign, 0.0, false).ok()?;
    let nan = build::weak_constant(build::Scalar::Float(f64::NAN), logabs.dtype());
    cast_to(&build::switch(&negative, &nan, &logabs).ok()?, v.dtype())
}

/// `(p, q)` when `v` is `op(p, q)` or `op(q, p)` and `first` accepts `p`.
fn either_order(v: &Var, op: ScalarOp, first: impl Fn(&Var) -> bool) -> Option<&Var> {
    let (p, q) = binary(v, op)?;
    if first(p) {
        Some(q)
    } else if first(q) {
        Some(p)
    } else {
        None
    }
}

/// True for `arange(0, ·, 1)`.
fn is_range_from_zero(v: &Var) -> bool {
    matches!(v.owner(), Some((Op::Arange(_), [start, _, step])) if is_const(start, 0.0) && is_const(step, 1.0))
}

/// True when `idx` is the main diagonal's flat index into `x` (as `diagonal` builds it):
/// `arange(0, len, 1) · (shape(x)[-1] + 1)` (plus a zero offset, unless simplified away).
fn is_diagonal_index(idx: &Var, x: &Var) -> bool {
    let scaled = either_order(idx, ScalarOp::Add, |s| is_const(s, 0.0)).unwrap_or(idx);
    let stride = either_order(scaled, ScalarOp::Mul, is_range_from_zero);
    let stride = stride.map(|s| dimshuffle(s).map_or(s, |(_, inner)| inner));
    let cols = stride.and_then(|s| either_order(s, ScalarOp::Add, |o| is_const(o, 1.0)));
    matches!(cols.and_then(Var::owner), Some((Op::ShapeI(d), [y])) if *d == x.ndim() - 1 && y == x)
}

/// The band mask `op(j − i, k)` over `arange` rows `i` and columns `j` (as `tril`, `triu` and
/// `diag` build it): `Some(k)`.
fn band_offset(mask: &Var, op: ScalarOp) -> Option<f64> {
    let (diff, k) = binary(mask, op)?;
    let (j, i) = binary(diff, ScalarOp::Sub)?;
    let (jo, jr) = dimshuffle(j)?;
    let (io, ir) = dimshuffle(i)?;
    let ok = jo == [None, Some(0)]
        && io == [Some(0), None]
        && is_range_from_zero(jr)
        && is_range_from_zero(ir);
    if ok { scalar_const(k) } else { None }
}

/// `x` when `v` is `switch(op(j − i, 0), x, 0)`: `tril(x)` for `Le`, `diag`'s shape for `Eq`.
fn band_masked(v: &Var, op: ScalarOp) -> Option<&Var> {
    let [mask, x, zero] = elemwise_args(v, ScalarOp::Switch)? else {
        return None;
    };
    (is_const(zero, 0.0) && band_offset(mask, op)? == 0.0).then_some(x)
}

// sum(diagonal(a @ b)) → sum(a * b.mT): tr(AB) = Σᵢⱼ aᵢⱼ bⱼᵢ
fn trace_of_matmul(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let (_, taken) = reduce_of(v, ReduceOp::Sum)?;
    let (Op::Take { .. }, [flat, idx]) = taken.owner()? else {
        return None;
    };
    let (Op::Reshape { .. }, [x, ..]) = flat.owner()? else {
        return None;
    };
    let (Op::MatMul, [a, b]) = x.owner()? else {
        return None;
    };
    if a.ndim() < 2 || b.ndim() < 2 || !is_diagonal_index(idx, x) {
        return None;
    }
    let prod = build::mul(a, &la::matrix_transpose(b).ok()?).ok()?;
    let s = cast_to(&build::sum(&prod, Some(&[-2, -1]), false).ok()?, v.dtype())?;
    same_shape(&s, v).then_some(s)
}

/// A diagonal matrix: `diag(v)` (the vector `v`) or `s · eye(n)` (the scalar `s` and `n`).
enum Diagonal {
    Vector(Var),
    Scaled { s: Var, n: Var },
}

/// `s` as a rank-0 variable, looking through the dimshuffle that broadcasting adds.
fn as_scalar(s: &Var) -> Option<Var> {
    if s.ndim() == 0 {
        return Some(s.clone());
    }
    let (_, inner) = dimshuffle(s)?;
    (inner.ndim() == 0).then(|| inner.clone())
}

/// How `x` is a diagonal matrix, when it is one by construction.
fn diagonal_of(x: &Var) -> Option<Diagonal> {
    if let Some(col) = band_masked(x, ScalarOp::Eq) {
        let (order, v) = dimshuffle(col)?;
        let n = v.ndim();
        let column = order.len() == n + 1
            && order[n].is_none()
            && order[..n].iter().enumerate().all(|(k, o)| *o == Some(k));
        return column.then(|| Diagonal::Vector(v.clone()));
    }
    let (p, q) = binary(x, ScalarOp::Mul)?;
    for (e, s) in [(p, q), (q, p)] {
        if let Some((Op::Eye(_), [n, m, k])) = e.owner()
            && n == m
            && is_const(k, 0.0)
            && e.ndim() == 2
        {
            return Some(Diagonal::Scaled {
                s: as_scalar(s)?,
                n: n.clone(),
            });
        }
    }
    None
}

// det(diag(v)) → prod(v); det(s·I) → s**n: the determinant of a diagonal matrix is its product
fn det_of_diagonal(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let (Op::Linalg(LinalgOp::Det), [x]) = v.owner()? else {
        return None;
    };
    let d = match diagonal_of(x)? {
        Diagonal::Vector(d) => build::prod(&d, Some(&[-1]), false).ok()?,
        Diagonal::Scaled { s, n } => build::pow(&s, &build::cast(&n, s.dtype()).ok()?).ok()?,
    };
    let d = cast_to(&d, v.dtype())?;
    same_shape(&d, v).then_some(d)
}

// inv(diag(v)) → diag(1/v); inv(s·I) → (1/s)·I: a diagonal inverse is elementwise
fn inv_of_diagonal(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let (Op::Linalg(LinalgOp::Inv), [x]) = v.owner()? else {
        return None;
    };
    let r = match diagonal_of(x)? {
        Diagonal::Vector(d) => la::diag_embed(&build::reciprocal(&d).ok()?).ok()?,
        Diagonal::Scaled { s, n } => {
            let eye = build::eye(&n, &n, &Var::int_constant(0), s.dtype()).ok()?;
            build::mul(&eye, &build::reciprocal(&s).ok()?).ok()?
        }
    };
    let r = cast_to(&r, v.dtype())?;
    same_shape(&r, v).then_some(r)
}

// solve(diag(v), b) → b / v; solve(s·I, b) → b / s: a diagonal system is elementwise
fn solve_with_diagonal(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let (Op::Linalg(LinalgOp::Solve { b_ndim, .. }), [x, b]) = v.owner()? else {
        return None;
    };
    let divisor = match diagonal_of(x)? {
        Diagonal::Vector(d) if *b_ndim == 2 => {
            let mut order: Vec<Option<usize>> = (0..d.ndim()).map(Some).collect();
            order.push(None);
            build::dimshuffle(&d, &order).ok()?
        }
        Diagonal::Vector(d) => d,
        Diagonal::Scaled { s, .. } => s,
    };
    let r = cast_to(&build::true_div(b, &divisor).ok()?, v.dtype())?;
    same_shape(&r, v).then_some(r)
}

/// How `l` is known to be lower triangular: `Some(true)` for a Cholesky factor (positive
/// diagonal), `Some(false)` for `tril(x)` (a diagonal of any sign).
fn known_lower(l: &Var) -> Option<bool> {
    if let Some((Op::Linalg(LinalgOp::Cholesky { lower: true, .. }), _)) = l.owner() {
        return Some(true);
    }
    band_masked(l, ScalarOp::Le).map(|_| false)
}

/// The lower factor `L` when `a` is `L @ L.mT` with `L` known lower triangular, or
/// `U.mT @ U` with `U` an upper Cholesky factor; with whether its diagonal is positive.
fn gram_factor(a: &Var) -> Option<(Var, bool)> {
    let (Op::MatMul, [p, q]) = a.owner()? else {
        return None;
    };
    if la::matrix_transpose(p).ok()? == *q
        && let Some(positive) = known_lower(p)
    {
        return Some((p.clone(), positive));
    }
    if la::matrix_transpose(q).ok()? == *p
        && let Some((Op::Linalg(LinalgOp::Cholesky { lower: false, .. }), _)) = q.owner()
    {
        return Some((p.clone(), true));
    }
    None
}

// solve(L @ L.mT, b) → cho_solve(L, b): L Lᵀ is the Cholesky form of a symmetric matrix
fn solve_with_cholesky_product(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let (Op::Linalg(LinalgOp::Solve { b_ndim, .. }), [a, b]) = v.owner()? else {
        return None;
    };
    let (l, _) = gram_factor(a)?;
    let r = cast_to(&la::cho_solve(&l, b, true, Some(*b_ndim)).ok()?, v.dtype())?;
    same_shape(&r, v).then_some(r)
}

// cholesky(L @ L.mT) → L · sign(diag(L)): the factor with a positive diagonal is unique
fn cholesky_of_cholesky_product(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let (Op::Linalg(LinalgOp::Cholesky { lower, .. }), [a]) = v.owner()? else {
        return None;
    };
    let (l, positive) = gram_factor(a)?;
    let l = if positive {
        l
    } else {
        let signs = build::sign(&la::diagonal(&l).ok()?).ok()?;
        let mut order: Vec<Option<usize>> = (0..signs.ndim() - 1).map(Some).collect();
        order.extend([None, Some(signs.ndim() - 1)]);
        build::mul(&l, &build::dimshuffle(&signs, &order).ok()?).ok()?
    };
    let r = if *lower {
        l
    } else {
        la::matrix_transpose(&l).ok()?
    };
    let r = cast_to(&r, v.dtype())?;
    same_shape(&r, v).then_some(r)
}

/// The rules, in priority order.
pub(crate) const RULES: &[Rule] = &[
    Rule::new(
        "inv_matmul_to_solve",
        Root::Op(OpKind::MatMul),
        inv_matmul_to_solve,
    ),
    Rule::new(
        "log_abs_det_to_slogdet",
        Root::Elemwise(ScalarOp::Log),
        log_abs_det_to_slogdet,
    ),
    Rule::new(
        "log_det_to_slogdet",
        Root::Elemwise(ScalarOp::Log),
        log_det_to_slogdet,
    ),
    Rule::new("trace_of_matmul", Root::Op(OpKind::Reduce), trace_of_matmul),
    Rule::new("det_of_diagonal", Root::Op(OpKind::Linalg), det_of_diagonal),
    Rule::new("inv_of_diagonal", Root::Op(OpKind::Linalg), inv_of_diagonal),
    Rule::new(
        "solve_with_diagonal",
        Root::Op(OpKind::Linalg),
        solve_with_diagonal,
    ),
    Rule::new(
        "solve_with_cholesky_product",
        Root::Op(OpKind::Linalg),
        solve_with_cholesky_product,
    ),
    Rule::new(
        "cholesky_of_cholesky_product",
        Root::Op(OpKind::Linalg),
        cholesky_of_cholesky_product,
    ),
];
