//! Useless operations (set `useless`): nodes that compute their input, or a constant, and can
//! be dropped. Every rule here removes work and none changes a finite result. Gradient markers
//! (`zero_grad`, `disconnected_grad`, `grad_clip`) are identities once gradients are built,
//! which happens before a function is compiled, so they are dropped here too.
//!
//! Two rules change what NaN and infinity do, and carry the tag `nan_unsafe`: `x * 0 → 0`
//! (`inf * 0` and `NaN * 0` are NaN) and `x - x → 0` (`inf - inf` is NaN). PyTensor applies both
//! in its default mode, and so do we: `FAST_RUN` includes `nan_unsafe` rules, `FAST_COMPILE`
//! excludes them, and `Mode::excluding(&["nan_unsafe"])` keeps IEEE semantics exactly.

use crate::pattern::{
    binary, cast_to, dimshuffle, elemwise_args, is_const, nary, same_shape, scalar_const, unary,
};
use crate::rule::{OpKind, Root, Rule, RuleCtx};
use crate::rules::shape::filled_like;
use oxtensor_graph::build;
use oxtensor_graph::{Op, ScalarOp, Var};

/// `inputs` without the scalar-like constants equal to `identity`, as `op` of the rest cast to
/// `v`'s dtype; `None` when there is none to drop or nothing else is left. Dropping a constant
/// whose extents are all 1 leaves the broadcast shape unchanged.
fn drop_identity(v: &Var, op: ScalarOp, identity: f64) -> Option<Var> {
    let args = elemwise_args(v, op)?;
    let rest: Vec<Var> = args
        .iter()
        .filter(|a| !is_const(a, identity))
        .cloned()
        .collect();
    if rest.len() == args.len() || rest.is_empty() {
        return None;
    }
    cast_to(&nary(op, &rest)?, v.dtype())
}

// x + 0 → x
fn add_zero(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    drop_identity(v, ScalarOp::Add, 0.0)
}

// x * 1 → x
fn mul_one(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    drop_identity(v, ScalarOp::Mul, 1.0)
}

// add(x) → x,  mul(x) → x   (an n-ary op of one input)
fn nary_single(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    match v.owner()? {
        (Op::Elemwise(ScalarOp::Add | ScalarOp::Mul), [x]) => cast_to(x, v.dtype()),
        _ => None,
    }
}

// x - 0 → x
fn sub_zero(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let (x, c) = binary(v, ScalarOp::Sub)?;
    is_const(c, 0.0).then(|| cast_to(x, v.dtype()))?
}

// 0 - x → -x
fn zero_sub(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let (c, x) = binary(v, ScalarOp::Sub)?;
    if !is_const(c, 0.0) {
        return None;
    }
    build::neg(&cast_to(x, v.dtype())?).ok()
}

// x / 1 → x
fn div_one(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let (x, c) = binary(v, ScalarOp::TrueDiv)?;
    is_const(c, 1.0).then(|| cast_to(x, v.dtype()))?
}

// x ** 1 → x
fn pow_one(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let (x, c) = binary(v, ScalarOp::Pow)?;
    is_const(c, 1.0).then(|| cast_to(x, v.dtype()))?
}

// -(-x) → x
fn neg_neg(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    unary(unary(v, ScalarOp::Neg)?, ScalarOp::Neg).cloned()
}

// dimshuffle(dimshuffle(x, a), b) → dimshuffle(x, a∘b)   (x itself when the composition is the identity)
fn dimshuffle_compose(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let (outer, inner) = dimshuffle(v)?;
    let (first, x) = dimshuffle(inner)?;
    let order: Option<Vec<Option<usize>>> = outer
        .iter()
        .map(|o| match o {
            None => Some(None),
            Some(j) => first.get(*j).copied(),
        })
        .collect();
    build::dimshuffle(x, &order?).ok()
}

// dimshuffle(x, identity) → x
fn dimshuffle_identity(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let (order, x) = dimshuffle(v)?;
    let identity = order.len() == x.ndim() && order.iter().enumerate().all(|(i, o)| *o == Some(i));
    identity.then(|| x.clone())
}

/// True when extent `d` of a reshape's target, `entry`, is known to equal `x`'s extent `d`.
fn same_extent(entry: &Var, x: &Var, d: usize) -> bool {
    match (entry.const_int(), x.ty().shape[d]) {
        (Some(c), Some(n)) => i64::try_from(n) == Ok(c),
        (Some(_), None) => false,
        (None, _) => matches!(entry.owner(), Some((Op::ShapeI(i), [y])) if *i == d && y == x),
    }
}

// reshape(x, shape(x)) → x   (target extents equal to x's, one of them possibly −1)
fn reshape_own_shape(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let (Op::Reshape { ndim }, [x, s]) = v.owner()? else {
        return None;
    };
    if *ndim != x.ndim() {
        return None;
    }
    if let Some((Op::Shape, [y])) = s.owner() {
        return (y == x).then(|| x.clone());
    }
    let entries: Vec<Var> = match (s.constant_value(), s.owner()) {
        (Some(t), _) => t
            .to_vec_as::<i64>()
            .into_iter()
            .map(Var::int_constant)
            .collect(),
        (None, Some((Op::MakeVector(_), items))) => items.to_vec(),
        _ => return None,
    };
    let mut unknown = 0;
    for (d, e) in entries.iter().enumerate() {
        if e.const_int() == Some(-1) {
            unknown += 1;
        } else if !same_extent(e, x, d) {
            return None;
        }
    }
    (unknown <= 1).then(|| x.clone())
}

// cast<d>(x) → x   when x already has dtype d
fn cast_same(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let x = unary(v, ScalarOp::Cast(v.dtype()))?;
    (x.dtype() == v.dtype()).then(|| x.clone())
}

// switch(true, a, b) → a,  switch(false, a, b) → b
fn switch_const(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let [c, a, b] = elemwise_args(v, ScalarOp::Switch)? else {
        return None;
    };
    let pick = if scalar_const(c)? != 0.0 { a } else { b };
    let r = cast_to(pick, v.dtype())?;
    same_shape(&r, v).then_some(r)
}

// switch(c, a, a) → a
fn switch_same(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let [_, a, b] = elemwise_args(v, ScalarOp::Switch)? else {
        return None;
    };
    if a != b {
        return None;
    }
    let r = cast_to(a, v.dtype())?;
    same_shape(&r, v).then_some(r)
}

// specify_shape(x, s) → x   when x's static shape already says s
fn specify_shape_known(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let (Op::SpecifyShape(spec), [x]) = v.owner()? else {
        return None;
    };
    let known = spec
        .iter()
        .zip(&x.ty().shape)
        .all(|(want, have)| want.is_none() || want == have);
    known.then(|| x.clone())
}

// reduce(x, axes=()) → x   (cast to the reduction's dtype)
fn reduce_no_axes(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let (Op::Reduce { axes, .. }, [x]) = v.owner()? else {
        return None;
    };
    axes.is_empty().then(|| cast_to(x, v.dtype()))?
}

// grad_marker(x, …) → x   (markers only steer gradients, which are built before compiling)
fn grad_marker(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let (Op::GradMarker(_), [x, ..]) = v.owner()? else {
        return None;
    };
    Some(x.clone())
}

// x * 0 → 0   (nan_unsafe: inf * 0 and NaN * 0 are NaN)
fn mul_zero(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let args = elemwise_args(v, ScalarOp::Mul)?;
    if args.len() < 2 || !args.iter().any(|a| is_const(a, 0.0)) {
        return None;
    }
    filled_like(v, 0.0)
}

// x - x → 0   (nan_unsafe: inf - inf and NaN - NaN are NaN)
fn sub_self(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let (a, b) = binary(v, ScalarOp::Sub)?;
    (a == b).then(|| filled_like(v, 0.0))?
}

/// The useless-operation rules.
// ifelse(true, a, b) → a,  ifelse(false, a, b) → b   (the branch is inlined)
fn ifelse_constant_condition(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let (Op::IfElse(b), [cond, args @ ..]) = v.owner()? else {
        return None;
    };
    let truth = *cond.constant_value()?.to_vec_as::<bool>().first()?;
    let taken = if truth {
        &b.then_branch
    } else {
        &b.else_branch
    };
    taken.instantiate(args).ok()?.into_iter().nth(v.index())
}

pub const RULES: &[Rule] = &[
    Rule::new("add_zero", Root::Elemwise(ScalarOp::Add), add_zero),
    Rule::new(
        "ifelse_constant_condition",
        Root::Op(OpKind::IfElse),
        ifelse_constant_condition,
    ),
    Rule::new("mul_one", Root::Elemwise(ScalarOp::Mul), mul_one),
    Rule::new("nary_single", Root::Op(OpKind::Elemwise), nary_single),
    Rule::new("sub_zero", Root::Elemwise(ScalarOp::Sub), sub_zero),
    Rule::new("zero_sub", Root::Elemwise(ScalarOp::Sub), zero_sub),
    Rule::new("div_one", Root::Elemwise(ScalarOp::TrueDiv), div_one),
    Rule::new("pow_one", Root::Elemwise(ScalarOp::Pow), pow_one),
    Rule::new("neg_neg", Root::Elemwise(ScalarOp::Neg), neg_neg),
    Rule::new(
        "dimshuffle_compose",
        Root::Op(OpKind::DimShuffle),
        dimshuffle_compose,
    ),
    Rule::new(
        "dimshuffle_identity",
        Root::Op(OpKind::DimShuffle),
        dimshuffle_identity,
    ),
    Rule::new(
        "reshape_own_shape",
        Root::Op(OpKind::Reshape),
        reshape_own_shape,
    ),
    Rule::new("cast_same", Root::CAST, cast_same),
    Rule::new(
        "switch_const",
        Root::Elemwise(ScalarOp::Switch),
        switch_const,
    ),
    Rule::new("switch_same", Root::Elemwise(ScalarOp::Switch), switch_same),
    Rule::new(
        "specify_shape_known",
        Root::Op(OpKind::SpecifyShape),
        specify_shape_known,
    ),
    Rule::new("reduce_no_axes", Root::Op(OpKind::Reduce), reduce_no_axes),
    Rule::new("grad_marker", Root::Op(OpKind::GradMarker), grad_marker),
    Rule::new(
        "remove_useless_check",
        Root::Op(OpKind::CheckAndRaise),
        crate::rules::check::remove_useless_check,
    ),
    Rule::new("mul_zero", Root::Elemwise(ScalarOp::Mul), mul_zero).tagged(&["nan_unsafe"]),
    Rule::new("sub_self", Root::Elemwise(ScalarOp::Sub), sub_self).tagged(&["nan_unsafe"]),
];
