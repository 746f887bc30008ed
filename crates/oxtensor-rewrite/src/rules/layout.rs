//! Layout and reduction normal forms (`canonicalize`), and elementwise work at the lowest rank
//! (`specialize`).
//!
//! Dimshuffles are *lifted* in `canonicalize`: `dimshuffle(f(x, y))` becomes
//! `f(dimshuffle(x), dimshuffle(y))`, moving them toward the graph's inputs (PyTensor's
//! direction). There they compose with each other and with the rank padding of the builders,
//! cancel (a double transpose), or land on constants and fold; elementwise ops end up adjacent,
//! and the other passes match their patterns across what used to be a dimshuffle.
//!
//! In `specialize`, once no pattern needs them there any more, dimshuffles that only insert
//! broadcast axes are moved back out of elementwise ops, `f(dimshuffle(x), dimshuffle(y)) →
//! dimshuffle(f(x, y))` (set `lower_rank`): the op then runs at the rank of its data, and an
//! elementwise chain whose parts were padded separately (the gradient of a matrix-vector
//! product pads the vector to a column) becomes one chain at one rank, which fusion turns into
//! one Composite. A padded matrix product whose padding is dropped again is a matrix-vector
//! product. The two directions run in different passes, so no pass can cycle.
//!
//! Nested reductions of one kind become one reduction, and casts through a dtype that holds
//! every value exactly become one cast.

use crate::pattern::{apply, dimshuffle, reduce, reduce_over, unary};
use crate::rule::{OpKind, Root, Rule, RuleCtx};
use oxtensor_data::DType;
use oxtensor_graph::build;
use oxtensor_graph::{Axes, Op, ScalarOp, Var};

// dimshuffle(f(x, y, …)) → f(dimshuffle(x), dimshuffle(y), …)   (f elementwise, used once)
fn dimshuffle_lift(v: &Var, cx: &RuleCtx<'_>) -> Option<Var> {
    let (order, e) = dimshuffle(v)?;
    let (Op::Elemwise(s), inputs) = e.owner()? else {
        return None;
    };
    if !cx.single_client(e) {
        return None;
    }
    let lifted = inputs
        .iter()
        .map(|x| build::dimshuffle(x, order).ok())
        .collect::<Option<Vec<_>>>()?;
    apply(*s, &lifted)
}

// reduce(reduce(x, a), b) → reduce(x, a ∪ b)   (the same combining op; the inner one used once)
fn reduce_reduce(v: &Var, cx: &RuleCtx<'_>) -> Option<Var> {
    let (op, outer, inner) = reduce(v)?;
    let (op_in, axes_in, x) = reduce(inner)?;
    if op != op_in || !cx.single_client(inner) {
        return None;
    }
    let kept: Vec<usize> = (0..x.ndim()).filter(|d| !axes_in.contains(d)).collect();
    let mut merged: Axes = axes_in.clone();
    for &b in outer {
        merged.push(*kept.get(b)?);
    }
    merged.sort_unstable();
    reduce_over(op, &merged, x)
}

/// True when every value of `from` converts to `to` exactly, so that a cast through `to` is
/// invisible to any later cast.
pub(crate) fn lossless(from: DType, to: DType) -> bool {
    use DType::*;
    from == to
        || match from {
            Bool => true,
            U8 => matches!(
                to,
                U16 | U32 | U64 | I16 | I32 | I64 | F32 | F64 | C64 | C128
            ),
            U16 => matches!(to, U32 | U64 | I32 | I64 | F32 | F64 | C64 | C128),
            U32 => matches!(to, U64 | I64 | F64 | C128),
            I8 => matches!(to, I16 | I32 | I64 | F32 | F64 | C64 | C128),
            I16 => matches!(to, I32 | I64 | F32 | F64 | C64 | C128),
            I32 => matches!(to, I64 | F64 | C128),
            F32 => matches!(to, F64 | C64 | C128),
            F64 | C64 => to == C128,
            U64 | I64 | C128 => false,
        }
}

// cast<b>(cast<a>(x)) → cast<b>(x)   when x's dtype converts to a exactly
fn cast_cast(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let inner = unary(v, ScalarOp::Cast(v.dtype()))?;
    let x = unary(inner, ScalarOp::Cast(inner.dtype()))?;
    if !lossless(x.dtype(), inner.dtype()) {
        return None;
    }
    build::cast(x, v.dtype()).ok()
}

// reshape(reshape(x, s1), s2) → reshape(x, s2)
fn reshape_reshape(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let (op @ Op::Reshape { .. }, [inner, s2]) = v.owner()? else {
        return None;
    };
    let (Op::Reshape { .. }, [x, _]) = inner.owner()? else {
        return None;
    };
    Var::apply1(op.clone(), &[x.clone(), s2.clone()]).ok()
}

/// True when `order` only inserts broadcast axes into a rank-`n` input, keeping its axes in
/// their order.
fn expands(order: &[Option<usize>], n: usize) -> bool {
    order.len() > n && order.iter().flatten().copied().eq(0..n)
}

/// `x`, every extent of which is a static 1, as a tensor of rank `ndim`.
fn scalar_at_rank(x: &Var, ndim: usize) -> Option<Var> {
    if x.ty().shape.iter().any(|&d| d != Some(1)) {
        return None;
    }
    build::dimshuffle(x, &vec![None; ndim]).ok()
}

// f(dimshuffle(x, o), dimshuffle(y, o), c) → dimshuffle(f(x, y, c), o)   (o only inserts broadcast axes; c broadcasts like a scalar)
fn dimshuffle_sink(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let (Op::Elemwise(s), inputs) = v.owner()? else {
        return None;
    };
    let (order, _) = inputs
        .iter()
        .filter_map(dimshuffle)
        .filter(|(o, x)| expands(o, x.ndim()))
        .max_by_key(|(_, x)| x.ndim())?;
    let rank = order.iter().flatten().count();
    let lowered = inputs
        .iter()
        .map(|x| match dimshuffle(x) {
            Some((o, y)) if o == order => Some(y.clone()),
            _ => scalar_at_rank(x, rank),
        })
        .collect::<Option<Vec<_>>>()?;
    build::dimshuffle(&apply(*s, &lowered)?, order).ok()
}

// dimshuffle(matmul(a, dimshuffle(x, [0, x])), [0]) → matmul(a, x),  dimshuffle(matmul(dimshuffle(x, [x, 0]), b), [1]) → matmul(x, b)
fn matvec(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let (order, m) = dimshuffle(v)?;
    let (Op::MatMul, [a, b]) = m.owner()? else {
        return None;
    };
    if m.ndim() != 2 || a.ndim() != 2 || b.ndim() != 2 {
        return None;
    }
    match order {
        [Some(0)] => match dimshuffle(b)? {
            ([Some(0), None], x) => build::matmul(a, x).ok(),
            _ => None,
        },
        [Some(1)] => match dimshuffle(a)? {
            ([None, Some(0)], x) => build::matmul(x, b).ok(),
            _ => None,
        },
        _ => None,
    }
}

/// The rules that move elementwise work to the lowest rank (run in `specialize`, after
/// `canonicalize` lifted dimshuffles toward the inputs; the two directions never meet in one
/// pass).
pub const LOWER_RANK_RULES: &[Rule] = &[
    Rule::new(
        "dimshuffle_sink",
        Root::Op(OpKind::Elemwise),
        dimshuffle_sink,
    ),
    Rule::new("matvec", Root::Op(OpKind::DimShuffle), matvec),
];

/// The layout and reduction rules.
pub const RULES: &[Rule] = &[
    Rule::new(
        "dimshuffle_lift",
        Root::Op(OpKind::DimShuffle),
        dimshuffle_lift,
    ),
    Rule::new("reduce_reduce", Root::Op(OpKind::Reduce), reduce_reduce),
    Rule::new("cast_cast", Root::CAST, cast_cast),
    Rule::new(
        "reshape_reshape",
        Root::Op(OpKind::Reshape),
        reshape_reshape,
    ),
];
