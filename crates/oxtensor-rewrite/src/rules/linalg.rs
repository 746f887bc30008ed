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
    shaped_like(s, v)
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

/// `r` standing for `v`: itself when the static shapes agree, or with `v`'s static shape
/// asserted when `v` knows more extents (a solve with a constant `3×3` matrix knows its
/// output has 3 rows, `b / s` does not); `None` when they disagree.
fn shaped_like(r: Var, v: &Var) -> Option<Var> {
    if same_shape(&r, v) {
        return Some(r);
    }
    let (have, want) = (&r.ty().shape, &v.ty().shape);
    let compatible = have.len() == want.len()
        && have
            .iter()
            .zip(want.iter())
            .all(|(h, w)| h.is_none() || h == w);
    let shape: Vec<Option<usize>> = want.iter().copied().collect();
    compatible
        .then(|| build::specify_shape(&r, &shape).ok())
        .flatten()
}

/// The matrix `x` when `d` is its main diagonal as `diagonal` builds it (a `take` at the
/// diagonal's flat indices from `x` flattened over its last two dimensions).
fn diagonal_source(d: &Var) -> Option<&Var> {
    let (Op::Take { .. }, [flat, idx]) = d.owner()? else {
        return None;
    };
    let (Op::Reshape { .. }, [x, ..]) = flat.owner()? else {
        return None;
    };
    (x.ndim() >= 2 && is_diagonal_index(idx, x)).then_some(x)
}

// sum(diagonal(a @ b)) → sum(a * b.mT): tr(AB) = Σᵢⱼ aᵢⱼ bⱼᵢ
fn trace_of_matmul(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let (_, taken) = reduce_of(v, ReduceOp::Sum)?;
    let (Op::MatMul, [a, b]) = diagonal_source(taken)?.owner()? else {
        return None;
    };
    if a.ndim() < 2 || b.ndim() < 2 {
        return None;
    }
    let prod = build::mul(a, &la::matrix_transpose(b).ok()?).ok()?;
    let s = cast_to(&build::sum(&prod, Some(&[-2, -1]), false).ok()?, v.dtype())?;
    shaped_like(s, v)
}

/// A diagonal matrix: `diag(v)` or `eye(n) * x` for a non-scalar `x` (the diagonal vector),
/// or `s · eye(n)` and a bare `eye(n)` (the scalar `s`, one for the bare identity, and `n`).
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

/// `n` when `e` is the square identity: `eye(n, n, 0)`, or a constant identity matrix (as
/// constant folding leaves an `eye` of constant extent).
fn identity_extent(e: &Var) -> Option<Var> {
    if let Some((Op::Eye(_), [n, m, k])) = e.owner() {
        let square = n == m && is_const(k, 0.0) && e.ndim() == 2;
        return square.then(|| n.clone());
    }
    let t = e.constant_value()?;
    let &[r, c] = t.shape() else {
        return None;
    };
    if r != c || r > 1 << 10 {
        return None;
    }
    let values = t.to_vec_as::<f64>();
    let identity = values
        .iter()
        .enumerate()
        .all(|(i, &x)| x == if i / c == i % c { 1.0 } else { 0.0 });
    identity.then(|| Var::int_constant(r as i64))
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
    if let Some(n) = identity_extent(x) {
        let one = build::weak_constant(build::Scalar::Int(1), x.dtype());
        return Some(Diagonal::Scaled { s: one, n });
    }
    let (p, q) = binary(x, ScalarOp::Mul)?;
    let (n, s) = [(p, q), (q, p)]
        .into_iter()
        .find_map(|(e, s)| Some((identity_extent(e)?, s)))?;
    match as_scalar(s) {
        Some(s) => Some(Diagonal::Scaled { s, n }),
        None => Some(Diagonal::Vector(la::diagonal(x).ok()?)),
    }
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
    shaped_like(d, v)
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
    shaped_like(r, v)
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
    shaped_like(r, v)
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
    let (
        Op::Linalg(LinalgOp::Solve {
            b_ndim, assume_a, ..
        }),
        [a, b],
    ) = v.owner()?
    else {
        return None;
    };
    // A tridiagonal solve reads only the band of L Lᵀ, which is not the whole product.
    if *assume_a == AssumeA::Tridiagonal {
        return None;
    }
    let (l, _) = gram_factor(a)?;
    let r = cast_to(&la::cho_solve(&l, b, true, Some(*b_ndim)).ok()?, v.dtype())?;
    shaped_like(r, v)
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
    shaped_like(r, v)
}

/// How `x` is triangular by construction: the matrix to hand a triangular solver (which reads
/// one triangle only, so `tril(y)` gives `y` and the mask drops out) and whether `x` is lower
/// triangular. Recognised: `tril(y)`, `triu(y)`, a Cholesky factor, the inverse of a
/// triangular matrix as `solve_triangular(t, eye)`, and the transpose of any of these.
fn triangular_of(x: &Var) -> Option<(Var, bool)> {
    if let Some(y) = band_masked(x, ScalarOp::Le) {
        return Some((y.clone(), true));
    }
    if let Some(y) = band_masked(x, ScalarOp::Ge) {
        return Some((y.clone(), false));
    }
    match x.owner()? {
        (Op::Linalg(LinalgOp::Cholesky { lower, .. }), _) => Some((x.clone(), *lower)),
        (Op::Linalg(LinalgOp::SolveTriangular { lower, trans, .. }), [_, b])
            if identity_extent(b).is_some() =>
        {
            Some((x.clone(), lower != trans))
        }
        (Op::DimShuffle { .. }, [y]) if x.ndim() >= 2 && la::matrix_transpose(y).ok()? == *x => {
            let (t, lower) = triangular_of(y)?;
            Some((la::matrix_transpose(&t).ok()?, !lower))
        }
        _ => None,
    }
}

// det(T) → prod(diagonal(T)) for a triangular T: tril/triu, Cholesky factors, their inverses
fn det_of_triangular(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let (Op::Linalg(LinalgOp::Det), [x]) = v.owner()? else {
        return None;
    };
    let (t, _) = triangular_of(x)?;
    let d = build::prod(&la::diagonal(&t).ok()?, Some(&[-1]), false).ok()?;
    let d = cast_to(&d, v.dtype())?;
    shaped_like(d, v)
}

// inv(T) → solve_triangular(T, eye(n)): two triangular sweeps instead of an LU factorisation
fn inv_of_triangular(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let (Op::Linalg(LinalgOp::Inv), [x]) = v.owner()? else {
        return None;
    };
    let (t, lower) = triangular_of(x)?;
    let n = build::shape_i(x, x.ndim() - 1).ok()?;
    let eye = build::eye(&n, &n, &Var::int_constant(0), v.dtype()).ok()?;
    let r = la::solve_triangular(&t, &eye, false, lower, false, Some(2)).ok()?;
    let r = cast_to(&r, v.dtype())?;
    shaped_like(r, v)
}

// solve(T, b) → solve_triangular(T, b) for a general solve with a triangular T
fn solve_with_triangular(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let (
        Op::Linalg(LinalgOp::Solve {
            assume_a: AssumeA::General,
            transposed,
            b_ndim,
            ..
        }),
        [x, b],
    ) = v.owner()?
    else {
        return None;
    };
    let (t, lower) = triangular_of(x)?;
    let r = la::solve_triangular(&t, b, *transposed, lower, false, Some(*b_ndim)).ok()?;
    let r = cast_to(&r, v.dtype())?;
    shaped_like(r, v)
}

// cholesky(eye) → eye; cholesky(diag(d)) → diag(√d), cholesky(s·I) → √s·I, NaN unless positive
fn cholesky_of_diagonal(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let (Op::Linalg(LinalgOp::Cholesky { nan_on_error, .. }), [x]) = v.owner()? else {
        return None;
    };
    let diagonal = diagonal_of(x)?;
    if let Diagonal::Scaled { s, .. } = &diagonal
        && is_const(s, 1.0)
    {
        let r = cast_to(x, v.dtype())?;
        return shaped_like(r, v);
    }
    if !nan_on_error {
        return None;
    }
    let (root, positive) = match diagonal {
        Diagonal::Vector(d) => {
            let positive = build::with_scalar(ScalarOp::Gt, &d, 0.0, false).ok()?;
            let positive = build::all(&positive, Some(&[-1]), true).ok()?;
            let root = la::diag_embed(&build::sqrt(&d).ok()?).ok()?;
            let mut order: Vec<Option<usize>> = (0..positive.ndim()).map(Some).collect();
            order.push(None);
            (root, build::dimshuffle(&positive, &order).ok()?)
        }
        Diagonal::Scaled { s, n } => {
            let eye = build::eye(&n, &n, &Var::int_constant(0), v.dtype()).ok()?;
            let root = build::mul(&eye, &build::sqrt(&s).ok()?).ok()?;
            (root, build::with_scalar(ScalarOp::Gt, &s, 0.0, false).ok()?)
        }
    };
    let nan = build::weak_constant(build::Scalar::Float(f64::NAN), root.dtype());
    let r = cast_to(&build::switch(&positive, &root, &nan).ok()?, v.dtype())?;
    shaped_like(r, v)
}

// log(det(L)) → sum(log(diagonal(L))) for a Cholesky factor L (positive diagonal); also once
// det(L) has become prod(diagonal(L))
fn log_det_of_cholesky(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let inner = unary(v, ScalarOp::Log)?;
    let l = match det_of(inner) {
        Some(l) => l,
        None => {
            let (axes, d) = reduce_of(inner, ReduceOp::Prod)?;
            let last = axes.len() == 1 && axes[0] == d.ndim() - 1;
            last.then(|| diagonal_source(d)).flatten()?
        }
    };
    let (Op::Linalg(LinalgOp::Cholesky { .. }), _) = l.owner()? else {
        return None;
    };
    let logs = build::log(&la::diagonal(l).ok()?).ok()?;
    let r = cast_to(&build::sum(&logs, Some(&[-1]), false).ok()?, v.dtype())?;
    shaped_like(r, v)
}

/// True when output `k` of `v`'s node has no user: the node was in the graph when the sweep
/// began (`v` is counted) and that output is not. (A node rebuilt in this sweep is left for
/// the next one.)
fn unused_output(v: &Var, k: usize, cx: &RuleCtx<'_>) -> bool {
    cx.clients.contains_key(v) && !cx.clients.contains_key(&Var::output_of(v.node(), k))
}

// eigh(a).w → eigvalsh(a), svd(a).s → svd(a, compute_uv=False): no vectors nobody reads
fn values_only(v: &Var, cx: &RuleCtx<'_>) -> Option<Var> {
    let r = match v.owner()? {
        (Op::Linalg(LinalgOp::Eigh { lower }), [a]) if v.index() == 0 => {
            unused_output(v, 1, cx).then(|| la::eigvalsh(a, *lower).ok())??
        }
        (
            Op::Linalg(LinalgOp::Svd {
                compute_uv: true, ..
            }),
            [a],
        ) if v.index() == 1 => {
            let unused = unused_output(v, 0, cx) && unused_output(v, 2, cx);
            let values = unused.then(|| la::svd(a, false, false).ok())??;
            values.into_iter().next()?
        }
        _ => return None,
    };
    shaped_like(r, v)
}

/// The rules, in priority order.
pub(crate) const RULES: &[Rule] = &[
    Rule::new(
        "log_det_of_cholesky",
        Root::Elemwise(ScalarOp::Log),
        log_det_of_cholesky,
    ),
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
    Rule::new(
        "det_of_triangular",
        Root::Op(OpKind::Linalg),
        det_of_triangular,
    ),
    Rule::new(
        "inv_of_triangular",
        Root::Op(OpKind::Linalg),
        inv_of_triangular,
    ),
    Rule::new(
        "solve_with_triangular",
        Root::Op(OpKind::Linalg),
        solve_with_triangular,
    ),
    Rule::new(
        "cholesky_of_diagonal",
        Root::Op(OpKind::Linalg),
        cholesky_of_diagonal,
    ),
    Rule::new("values_only", Root::Op(OpKind::Linalg), values_only),
];
