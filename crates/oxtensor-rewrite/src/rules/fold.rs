//! Constant folding (set `constant_folding`): a node whose inputs are all constants is replaced
//! by its value, computed with the interpreter's reference kernels (the specification of every
//! op, so folding can never disagree with running).
//!
//! Two neighbours of constant folding need no rule here. Dead code does not exist: a graph is
//! what its outputs reach, so a node nothing uses is simply not part of it. Equal constants are
//! merged when they are built, because constants are interned by value and type (so are equal
//! apply nodes: common subexpressions are merged for free).

use crate::pattern::dimshuffle;
use crate::rule::{OpKind, Root, Rule, RuleCtx};
use oxtensor_data::Tensor;
use oxtensor_graph::build;
use oxtensor_graph::{Op, Var};
use oxtensor_runtime::eval_node;

/// True for ops whose value depends on nothing but their inputs, so a node of constants can be
/// evaluated once at compile time. Every op today; a random or stateful op would say `false`
/// here (the match is exhaustive so that adding an op forces the decision).
fn foldable(op: &Op) -> bool {
    match op {
        Op::Elemwise(_)
        | Op::Reduce { .. }
        | Op::ArgReduce { .. }
        | Op::DimShuffle { .. }
        | Op::Reshape { .. }
        | Op::Shape
        | Op::ShapeI(_)
        | Op::SpecifyShape(_)
        | Op::Alloc { .. }
        | Op::Arange(_)
        | Op::Eye(_)
        | Op::MakeVector(_)
        | Op::Join { .. }
        | Op::Split { .. }
        | Op::Subtensor(_)
        | Op::IncSubtensor { .. }
        | Op::Take { .. }
        | Op::IncTake { .. }
        | Op::Composite(_)
        | Op::FusedReduce { .. }
        | Op::GradMarker(_)
        | Op::MatMul
        | Op::FusedMatMul { .. }
        | Op::OpFromGraph(_)
        | Op::IfElse(_)
        | Op::Scan(_) => true,
        Op::Linalg(_) => true,
        // Never evaluated at compile time: a draw is computed when the function runs, from the
        // generator value it is given (PyTensor does not fold random variables either).
        Op::Random(_) => false,
        Op::Extra(_) => true,
        // A check of constants folds to its value when it holds; when it fails, the kernel's
        // error leaves the node for run time, where the call raises (PyTensor folds only
        // checks that hold, too).
        Op::CheckAndRaise(_) => true,
    }
}

/// The value of `v` when every input of its node is a constant, its static shape is fully known
/// and it has at most `limit` elements; `None` otherwise, or when the kernel fails (the error
/// is then left for run time, where it names the user's code).
pub(crate) fn fold_value(v: &Var, limit: usize) -> Option<Var> {
    let (op, inputs) = v.owner()?;
    if !foldable(op) {
        return None;
    }
    let size = v
        .ty()
        .shape
        .iter()
        .try_fold(1usize, |acc, d| acc.checked_mul((*d)?))?;
    if size > limit {
        return None;
    }
    let args: Vec<&Tensor> = inputs
        .iter()
        .map(Var::constant_value)
        .collect::<Option<_>>()?;
    let mut outs = eval_node(v.node(), &args).ok()?;
    if v.index() >= outs.len() {
        return None;
    }
    let value = outs.swap_remove(v.index());
    v.ty()
        .accepts(value.dtype(), value.shape())
        .then(|| Var::constant(value))
}

/// `v` folded to a constant when possible, else `v` itself: lets a rule emit `neg(c)` or
/// `mul(c1, c2)` and get a constant when the kernels allow.
pub(crate) fn folded(v: Var, limit: usize) -> Var {
    fold_value(&v, limit).unwrap_or(v)
}

// op(c1, …, cn) → c   (every input constant; c has at most `fold_elements` elements)
fn fold_constants(v: &Var, cx: &RuleCtx<'_>) -> Option<Var> {
    fold_value(v, cx.fold_limit())
}

/// The one-element constant behind `v` (looking through rank-padding dimshuffles), as a 0-d
/// constant of its dtype.
fn scalar_value(v: &Var) -> Option<Var> {
    if let Some((_, inner)) = dimshuffle(v) {
        return scalar_value(inner);
    }
    let t = v.constant_value()?;
    (t.numel() == 1).then(|| t.reshape(&[]).ok().map(Var::constant))?
}

// f(alloc(c, dims…), k) → alloc(f(c, k), dims…)   (f elementwise; c, k one-element constants)
fn fold_through_alloc(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let (Op::Elemwise(s), inputs) = v.owner()? else {
        return None;
    };
    let mut dims: Option<&[Var]> = None;
    let mut values = Vec::with_capacity(inputs.len());
    for x in inputs {
        let value = match x.owner() {
            Some((Op::Alloc { .. }, [c, d @ ..])) => {
                if dims.is_some_and(|e| e != d) {
                    return None;
                }
                dims = Some(d);
                c
            }
            _ => x,
        };
        values.push(scalar_value(value)?);
    }
    let c = fold_value(&Var::apply1(Op::Elemwise(*s), &values).ok()?, 1)?;
    build::alloc(&c, dims?).ok()
}

/// The constant-folding rules.
pub const RULES: &[Rule] = &[
    Rule::new("constant_folding", Root::Any, fold_constants),
    Rule::new(
        "fold_through_alloc",
        Root::Op(OpKind::Elemwise),
        fold_through_alloc,
    ),
];
