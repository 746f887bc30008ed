//! Arithmetic normal forms (`canonicalize`): one spelling for each sum, product, difference and
//! negation, so the later passes match one pattern instead of every equivalent form.
//!
//! The forms: n-ary `add`/`mul` are flat, with their constants last and folded into one;
//! a constant is subtracted as the addition of its negation (`x - c` is `x + (-c)`), while
//! `c - x` stays a subtraction; an addition of one negated term is a subtraction; negations are
//! pulled out of products and quotients and absorbed into a constant factor when there is one.
//! These rules apply to floats and signed integers only (unsigned negation wraps, and bool has
//! no subtraction). No rule reorders non-constant operands.

use crate::pattern::{
    binary, cast_to, elemwise_args, is_constant, nary, neg_const, negatable, reduce_of,
    reduce_over, scalar_const, scalar_like, unary,
};
use crate::rule::{OpKind, Root, Rule, RuleCtx};
use crate::rules::fold::folded;
use oxtensor_data::result_type;
use oxtensor_graph::build;
use oxtensor_graph::{ReduceOp, ScalarOp, Var};

/// Flattens nested `op`s that have no other user and have `v`'s dtype, moves constants last and
/// folds them into one.
fn flatten(v: &Var, cx: &RuleCtx<'_>, op: ScalarOp) -> Option<Var> {
    let args = elemwise_args(v, op)?;
    let mut flat = Vec::with_capacity(args.len());
    let mut changed = false;
    for a in args {
        match elemwise_args(a, op) {
            Some(inner) if a.dtype() == v.dtype() && cx.single_client(a) => {
                flat.extend(inner.iter().cloned());
                changed = true;
            }
            _ => flat.push(a.clone()),
        }
    }
    let first_const = flat.iter().position(is_constant);
    let (mut consts, mut rest): (Vec<Var>, Vec<Var>) = flat.into_iter().partition(is_constant);
    if let Some(at) = first_const {
        changed |= at < rest.len();
    }
    if consts.len() >= 2 {
        let combined = folded(nary(op, &consts)?, cx.fold_limit());
        if combined.constant_value().is_some() {
            consts = vec![combined];
            changed = true;
        }
    }
    if !changed {
        return None;
    }
    rest.extend(consts);
    cast_to(&nary(op, &rest)?, v.dtype())
}

// add(a, add(b, c), d) → add(a, b, c, d)   (constants last, folded into one)
fn flatten_add(v: &Var, cx: &RuleCtx<'_>) -> Option<Var> {
    flatten(v, cx, ScalarOp::Add)
}

// mul(a, mul(b, c), d) → mul(a, b, c, d)   (constants last, folded into one)
fn flatten_mul(v: &Var, cx: &RuleCtx<'_>) -> Option<Var> {
    flatten(v, cx, ScalarOp::Mul)
}

// x - c → x + (-c)
fn sub_const(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let (x, c) = binary(v, ScalarOp::Sub)?;
    if !negatable(v.dtype()) || x.constant_value().is_some() {
        return None;
    }
    build::add(x, &neg_const(c)?).ok()
}

// x - (-y) → x + y
fn sub_neg(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let (x, n) = binary(v, ScalarOp::Sub)?;
    build::add(x, unary(n, ScalarOp::Neg)?).ok()
}

// x + (-y) → x - y,  (-x) + y → y - x
fn add_neg(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let (a, b) = binary(v, ScalarOp::Add)?;
    if let Some(y) = unary(b, ScalarOp::Neg) {
        return build::sub(a, y).ok();
    }
    build::sub(b, unary(a, ScalarOp::Neg)?).ok()
}

// -(a - b) → b - a
fn neg_sub(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let (a, b) = binary(unary(v, ScalarOp::Neg)?, ScalarOp::Sub)?;
    build::sub(b, a).ok()
}

/// Operands with their negations stripped.
struct Stripped {
    inputs: Vec<Var>,
    /// An odd number of negations was stripped.
    odd: bool,
    /// How many were stripped.
    count: usize,
    /// One of the stripped negations has other users (so it stays in the graph, and wrapping
    /// the result in a new negation would add a node).
    shared: bool,
}

fn strip_negs(inputs: &[Var], cx: &RuleCtx<'_>) -> Stripped {
    let mut s = Stripped {
        inputs: Vec::with_capacity(inputs.len()),
        odd: false,
        count: 0,
        shared: false,
    };
    for x in inputs {
        match unary(x, ScalarOp::Neg) {
            Some(inner) => {
                s.odd = !s.odd;
                s.count += 1;
                s.shared |= !cx.single_client(x);
                s.inputs.push(inner.clone());
            }
            None => s.inputs.push(x.clone()),
        }
    }
    s
}

// (-x) * y → -(x * y),  (-x) * c → x * (-c)
fn mul_neg(v: &Var, cx: &RuleCtx<'_>) -> Option<Var> {
    let args = elemwise_args(v, ScalarOp::Mul)?;
    if !negatable(v.dtype()) {
        return None;
    }
    let mut s = strip_negs(args, cx);
    if s.count == 0 {
        return None;
    }
    if s.odd {
        if let Some(c) = s.inputs.iter_mut().find(|x| x.constant_value().is_some()) {
            *c = neg_const(c)?;
        } else if s.shared {
            return None;
        } else {
            return build::neg(&nary(ScalarOp::Mul, &s.inputs)?).ok();
        }
    }
    nary(ScalarOp::Mul, &s.inputs)
}

// -(x * c) → x * (-c)
fn neg_mul_const(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let args = elemwise_args(unary(v, ScalarOp::Neg)?, ScalarOp::Mul)?;
    let mut inputs = args.to_vec();
    let c = inputs.iter_mut().find(|x| x.constant_value().is_some())?;
    *c = neg_const(c)?;
    nary(ScalarOp::Mul, &inputs)
}

// (-x) / y → -(x / y),  x / (-y) → -(x / y),  (-x) / (-y) → x / y,  (-x) / c → x / (-c)
fn div_neg(v: &Var, cx: &RuleCtx<'_>) -> Option<Var> {
    let (a, b) = binary(v, ScalarOp::TrueDiv)?;
    if !negatable(v.dtype()) {
        return None;
    }
    let s = strip_negs(&[a.clone(), b.clone()], cx);
    let [mut x, mut y] = <[Var; 2]>::try_from(s.inputs).ok()?;
    if s.count == 0 {
        return None;
    }
    if s.odd {
        if y.constant_value().is_some() {
            y = neg_const(&y)?;
        } else if x.constant_value().is_some() {
            x = neg_const(&x)?;
        } else if s.shared {
            return None;
        } else {
            return build::neg(&build::true_div(&x, &y).ok()?).ok();
        }
    }
    build::true_div(&x, &y).ok()
}

// -(x / c) → x / (-c)
fn neg_div_const(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let (x, c) = binary(unary(v, ScalarOp::Neg)?, ScalarOp::TrueDiv)?;
    build::true_div(x, &neg_const(c)?).ok()
}

// (x ** a) ** b → x ** (a·b)   for constants a, b with b an integer, and a an integer or a·b not one
fn pow_pow(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let (inner, b_var) = binary(v, ScalarOp::Pow)?;
    let (x, a_var) = binary(inner, ScalarOp::Pow)?;
    let (a, b) = (scalar_const(a_var)?, scalar_const(b_var)?);
    let int = |f: f64| f.is_finite() && f.fract() == 0.0;
    // (x²)^½ is |x|, not x; (x^½)² is NaN for x < 0, not x.
    if !v.dtype().is_float() || !int(b) || (!int(a) && int(a * b)) {
        return None;
    }
    let e = scalar_like(a * b, result_type(a_var.dtype(), b_var.dtype()), v.ndim())?;
    build::pow(x, &e).ok()
}

// sum(c * x) → c * sum(x)   (c a scalar-like constant; floats; c * x used once)
fn sum_scale(v: &Var, cx: &RuleCtx<'_>) -> Option<Var> {
    let (axes, m) = reduce_of(v, ReduceOp::Sum)?;
    let args = elemwise_args(m, ScalarOp::Mul)?;
    if !v.dtype().is_float() || m.dtype() != v.dtype() || !cx.single_client(m) {
        return None;
    }
    let at = args.iter().position(|a| scalar_const(a).is_some())?;
    let c = scalar_const(&args[at])?;
    let mut rest = args.to_vec();
    let c_var = rest.remove(at);
    let body = cast_to(&nary(ScalarOp::Mul, &rest)?, v.dtype())?;
    let s = reduce_over(ReduceOp::Sum, axes, &body)?;
    build::mul(&s, &scalar_like(c, c_var.dtype(), v.ndim())?).ok()
}

// sum(-x) → -sum(x)   (floats; -x used once)
fn sum_neg(v: &Var, cx: &RuleCtx<'_>) -> Option<Var> {
    let (axes, n) = reduce_of(v, ReduceOp::Sum)?;
    let x = unary(n, ScalarOp::Neg)?;
    if !v.dtype().is_float() || !cx.single_client(n) {
        return None;
    }
    build::neg(&reduce_over(ReduceOp::Sum, axes, x)?).ok()
}

/// The arithmetic normal-form rules.
pub const RULES: &[Rule] = &[
    Rule::new("flatten_add", Root::Elemwise(ScalarOp::Add), flatten_add),
    Rule::new("flatten_mul", Root::Elemwise(ScalarOp::Mul), flatten_mul),
    Rule::new("sub_const", Root::Elemwise(ScalarOp::Sub), sub_const),
    Rule::new("sub_neg", Root::Elemwise(ScalarOp::Sub), sub_neg),
    Rule::new("add_neg", Root::Elemwise(ScalarOp::Add), add_neg),
    Rule::new("neg_sub", Root::Elemwise(ScalarOp::Neg), neg_sub),
    Rule::new("mul_neg", Root::Elemwise(ScalarOp::Mul), mul_neg),
    Rule::new(
        "neg_mul_const",
        Root::Elemwise(ScalarOp::Neg),
        neg_mul_const,
    ),
    Rule::new("div_neg", Root::Elemwise(ScalarOp::TrueDiv), div_neg),
    Rule::new(
        "neg_div_const",
        Root::Elemwise(ScalarOp::Neg),
        neg_div_const,
    ),
    Rule::new("pow_pow", Root::Elemwise(ScalarOp::Pow), pow_pow),
    Rule::new("sum_scale", Root::Op(OpKind::Reduce), sum_scale),
    Rule::new("sum_neg", Root::Op(OpKind::Reduce), sum_neg),
];
