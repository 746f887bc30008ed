//! `einsum` planned late (`einsum`, in `canonicalize` and `specialize`): an einsum built
//! while some operand's shape was unknown is an `OpFromGraph` holding its subscripts, whose
//! body contracts right to left. Once every input's shape is static (the graph was rebuilt on
//! static-shaped variables, or a rewrite made the shapes known), it is built again: NumPy's
//! optimal order (greedy beyond 8 operands), lowered into the graph, where the other rules see
//! its products. PyTensor does the same with `optimize_einsum_inner_graph` followed by
//! `inline_optimized_einsum`.

use crate::rule::{OpKind, Root, Rule, RuleCtx};
use oxtensor_graph::build::einsum::einsum;
use oxtensor_graph::{Op, Var};

// einsum{s}(x…) with every shape static → einsum(s, x…), ordered and inlined
fn einsum_replan(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
    let (Op::OpFromGraph(o), xs) = v.owner()? else {
        return None;
    };
    let subscripts = o.einsum.as_deref()?;
    if !xs.iter().all(|x| x.ty().shape.iter().all(Option::is_some)) {
        return None;
    }
    einsum(subscripts, xs).ok()
}

/// The rules.
pub(crate) const RULES: &[Rule] = &[Rule::new(
    "einsum_replan",
    Root::Op(OpKind::OpFromGraph),
    einsum_replan,
)];
