//! Shape rules (`canonicalize`): the extents of an op's output computed from the extents of
//! its inputs, so that a graph asking only for `shape(f(x, y))` no longer needs `f(x, y)`
//! itself; and allocations that an elementwise op would broadcast anyway.
//!
//! Most are `shape_unsafe` as in PyTensor: once `shape(x + y)` reads `shape(x)`, the run-time
//! check that `x` and `y` broadcast together is gone if nothing else computes `x + y`. A mode
//! that must keep such errors excludes the tag. `alloc_elemwise` is not: it only drops an
//! allocation whose extents are known to be those of another input of the same elementwise op
//! (the gradient of `mean(y·…)` allocates `1/n` to `shape(y)` and multiplies it by `y`), so the
//! op's own check still compares them; `alloc_elemwise_assumed` drops it whatever its extents.

use crate::rule::{OpKind, Root, Rule, RuleCtx};
use oxtensor_data::{DType, Tensor};
use oxtensor_graph::build;
use oxtensor_graph::{IndexEntry, Op, Var, clone_replace, shape_of};
use rustc_hash::FxHashMap;

/// Placeholder positions used as stand-ins for a node's inputs; far above any frozen graph's.
const STAND_IN_BASE: usize = 1 << 48;

/// The extents of `v` (an output of an apply node) as `int64` scalars written in terms of its
/// node's inputs, one level deep: static extents are constants, the others come from the op's
/// shape rule ([`shape_of`]) applied to the node alone.
///
/// To keep it local, the node is rebuilt over stand-ins (placeholders) for its non-leaf inputs,
/// so `shape_of` does not walk the whole graph; the stand-ins are then replaced back.
pub(crate) fn local_dims(v: &Var) -> Option<Vec<Var>> {
    let (op, inputs) = v.owner()?;
    let mut back: FxHashMap<Var, Var> = FxHashMap::default();
    let stand_in = |x: &Var, back: &mut FxHashMap<Var, Var>| -> Var {
        if x.owner().is_none() {
            return x.clone();
        }
        let p = Var::placeholder(STAND_IN_BASE + back.len(), x.ty().clone());
        back.insert(p.clone(), x.clone());
        p
    };
    let mut local = Vec::with_capacity(inputs.len());
    for x in inputs {
        let s = match x.owner() {
            // Keep a shape vector's items visible: reshape's shape rule reads them.
            Some((Op::MakeVector(dt), items)) => {
                let items: Vec<Var> = items.iter().map(|i| stand_in(i, &mut back)).collect();
                Var::apply1(Op::MakeVector(*dt), &items).ok()?
            }
            _ => stand_in(x, &mut back),
        };
        local.push(s);
    }
    let outs = Var::apply(op.clone(), &local).ok()?;
    let dims = shape_of(outs.get(v.index())?).ok()?;
    if back.is_empty() {
        return Some(dims);
    }
    clone_replace(&dims, &back).ok()
}

/// The fallback extent the shape rules cannot improve on: `Shape_i{d}(v)` itself.
fn is_own_extent(dim: &Var, v: &Var, d: usize) -> bool {
    matches!(dim.owner(), Some((Op::ShapeI(i), [x])) if *i == d && x == v)
}

/// A tensor of `v`'s type filled with `value`: `Alloc(value, extents of v)` (constant folding
/// turns it into a constant when it is small).
pub(crate) fn filled_like(v: &Var, value: f64) -> Option<Var> {
    let c = Var::scalar_constant(value, v.dtype());
    if v.ndim() == 0 {
        return Some(c);
    }
    build::alloc(&c, &local_dims(v)?).ok()
}

// shape_i{d}(x) → n   when x's extent d is statically n
fn shape_i_static(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let (Op::ShapeI(d), [x]) = v.owner()? else {
        return None;
    };
    let n = (*x.ty().shape.get(*d)?)?;
    Some(Var::int_constant(i64::try_from(n).ok()?))
}

// shape_i{d}(f(a, b, …)) → extent d from the shapes of a, b, …
fn shape_i_lift(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let (Op::ShapeI(d), [x]) = v.owner()? else {
        return None;
    };
    let dim = local_dims(x)?.into_iter().nth(*d)?;
    (!is_own_extent(&dim, x, *d)).then_some(dim)
}

// shape(x) → [n0, n1, …]   when every extent of x is static
fn shape_static(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let (Op::Shape, [x]) = v.owner()? else {
        return None;
    };
    let dims: Option<Vec<i64>> = x
        .ty()
        .shape
        .iter()
        .map(|d| d.and_then(|n| i64::try_from(n).ok()))
        .collect();
    let dims = dims?;
    Some(Var::constant(
        Tensor::from_slice(&dims, &[dims.len()]).ok()?,
    ))
}

// shape(f(a, b, …)) → make_vector(extents from the shapes of a, b, …)
fn shape_lift(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let (Op::Shape, [x]) = v.owner()? else {
        return None;
    };
    let dims = local_dims(x)?;
    if dims.iter().enumerate().all(|(d, e)| is_own_extent(e, x, d)) {
        return None;
    }
    build::make_vector(&dims, DType::I64).ok()
}

// shape(x)[i] → shape_i{i}(x)   for a constant index i
fn shape_index(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let (Op::Subtensor(spec), [s, i]) = v.owner()? else {
        return None;
    };
    if spec.as_slice() != [IndexEntry::Index] {
        return None;
    }
    let (Op::Shape, [x]) = s.owner()? else {
        return None;
    };
    let i = i.const_int()?;
    let d = if i < 0 { i + x.ndim() as i64 } else { i };
    let d = usize::try_from(d).ok().filter(|&d| d < x.ndim())?;
    build::shape_i(x, d).ok()
}

// alloc(c, dims…) → c   when c already has the allocated type (nothing to broadcast)
fn alloc_useless(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let (Op::Alloc { .. }, inputs) = v.owner()? else {
        return None;
    };
    let value = inputs.first()?;
    (value.ty() == v.ty()).then(|| value.clone())
}

// sum(alloc(c, dims…), axes) → alloc(c · ∏ dims[axes], other dims)   (c 0-d; floats)
//
// A sum of copies of one value is that value times their count (the gradient of a
// broadcast reads as such a sum). Floats only: an integer sum widens its dtype. The product
// rounds once where the sum rounded at every step, so it is as accurate or more.
fn sum_alloc(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let (axes, a) = crate::pattern::reduce_of(v, oxtensor_graph::ReduceOp::Sum)?;
    let Some((Op::Alloc { .. }, [value, dims @ ..])) = a.owner() else {
        return None;
    };
    if value.ndim() != 0 || !v.dtype().is_float() || value.dtype() != v.dtype() {
        return None;
    }
    let mut scaled = value.clone();
    for &d in axes.iter() {
        scaled = build::mul(&scaled, &build::cast(dims.get(d)?, v.dtype()).ok()?).ok()?;
    }
    let kept: Vec<Var> = (0..dims.len())
        .filter(|d| !axes.contains(d))
        .map(|d| dims[d].clone())
        .collect();
    let r = if kept.is_empty() {
        scaled
    } else {
        build::alloc(&scaled, &kept).ok()?
    };
    crate::type_fits(v, &r).then_some(r)
}

/// True when `x`'s extent `d` is known to equal `dim` at run time: `dim` is `shape_i{d}(x)`,
/// or the extent computed from `x`'s node's inputs, or the constant of `x`'s static extent.
fn has_extent(x: &Var, d: usize, dim: &Var) -> bool {
    if is_own_extent(dim, x, d) {
        return true;
    }
    if let (Some(n), Some(c)) = (x.ty().shape[d], dim.const_int()) {
        return i64::try_from(n) == Ok(c);
    }
    x.owner().is_some() && local_dims(x).is_some_and(|dims| dims.get(d) == Some(dim))
}

/// `f(…, alloc(c, dims…), …)` with the alloc replaced by `c` (rank-padded), when every extent
/// the alloc gives that is not a static 1 is also an extent of another input, which then gives
/// the output its shape: known equal to the alloc's (or assumed equal, when `assume`).
fn alloc_into_elemwise(v: &Var, assume: bool) -> Option<Var> {
    let (Op::Elemwise(s), inputs) = v.owner()? else {
        return None;
    };
    for (at, a) in inputs.iter().enumerate() {
        let Some((Op::Alloc { .. }, [value, dims @ ..])) = a.owner() else {
            continue;
        };
        let given = dims.iter().enumerate().all(|(d, dim)| {
            a.ty().shape[d] == Some(1)
                || inputs.iter().enumerate().any(|(k, x)| {
                    k != at && x.ty().shape[d] != Some(1) && (assume || has_extent(x, d, dim))
                })
        });
        if !given {
            continue;
        }
        let mut new_inputs = inputs.to_vec();
        new_inputs[at] = build::pad_rank(value, v.ndim()).ok()?;
        let r = Var::apply1(Op::Elemwise(*s), &new_inputs).ok()?;
        if crate::type_fits(v, &r) {
            return Some(r);
        }
    }
    None
}

// f(alloc(c, shape(y)), y) → f(c, y)   (f elementwise; y's extents are the allocated ones, so c broadcasts)
fn alloc_elemwise(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    alloc_into_elemwise(v, false)
}

// f(alloc(c, dims), y) → f(c, y)   (shape_unsafe: assumes y's extents are dims, as PyTensor's local_elemwise_alloc)
fn alloc_elemwise_assumed(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    alloc_into_elemwise(v, true)
}

/// The shape rules.
pub const RULES: &[Rule] = &[
    Rule::new("shape_i_static", Root::Op(OpKind::ShapeI), shape_i_static),
    Rule::new("shape_i_lift", Root::Op(OpKind::ShapeI), shape_i_lift).tagged(&["shape_unsafe"]),
    Rule::new("shape_static", Root::Op(OpKind::Shape), shape_static),
    Rule::new("shape_lift", Root::Op(OpKind::Shape), shape_lift).tagged(&["shape_unsafe"]),
    Rule::new("shape_index", Root::Op(OpKind::Subtensor), shape_index),
    Rule::new("alloc_useless", Root::Op(OpKind::Alloc), alloc_useless),
    Rule::new("sum_alloc", Root::Op(OpKind::Reduce), sum_alloc),
    Rule::new("alloc_elemwise", Root::Op(OpKind::Elemwise), alloc_elemwise),
    Rule::new(
        "alloc_elemwise_assumed",
        Root::Op(OpKind::Elemwise),
        alloc_elemwise_assumed,
    )
    .tagged(&["shape_unsafe"]),
];
