//! Layout and reduction normal forms (`canonicalize`).
//!
//! Dimshuffles are *lifted*: `dimshuffle(f(x, y))` becomes `f(dimshuffle(x), dimshuffle(y))`,
//! moving them toward the graph's inputs (PyTensor's direction). There they compose with each
//! other and with the rank padding of the builders, cancel (a double transpose), or land on
//! constants and fold; elementwise ops end up adjacent, which is what fusion wants. Nothing
//! sinks a dimshuffle, so the rule cannot cycle.
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
            U8 => matches!(to, U16 | U32 | U64 | I16 | I32 | I64 | F32 | F64),
            U16 => matches!(to, U32 | U64 | I32 | I64 | F32 | F64),
            U32 => matches!(to, U64 | I64 | F64),
            I8 => matches!(to, I16 | I32 | I64 | F32 | F64),
            I16 => matches!(to, I32 | I64 | F32 | F64),
            I32 => matches!(to, I64 | F64),
            F32 => to == F64,
            U64 | I64 | F64 => false,
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
