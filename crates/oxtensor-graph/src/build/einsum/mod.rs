//! `np.einsum` as a graph: NumPy's subscripts ([`parse()`], `parse.rs`: explicit or implicit
//! output, ellipses, the interleaved sublist form), a contraction order chosen when the graph
//! is built ([`contraction_path`], `path.rs`: NumPy's greedy or optimal search, or right to
//! left as PyTensor does for unknown shapes), and each pairwise contraction lowered to
//! transposes, reshapes and one (batched) `matmul` (`lower.rs`), so gradients and both
//! backends come for free. An einsum of more than two operands whose shapes are not all
//! static stays one `OpFromGraph` (right to left inside) until the `einsum_replan` rewrite
//! plans it, once the shapes are static.
//!
//! This is the one implementation: the Python `pt.einsum` only turns its arguments into a call
//! of [`einsum_with`].

mod lower;
mod parse;
mod path;

pub use parse::{Parsed, Sub, describe, parse, sublist_subscripts};
pub use path::{OPTIMAL_MAX_OPERANDS, Optimize, UNKNOWN_EXTENT, contraction_path};

use super::Built;
use crate::{GraphError, OpFromGraph, Var};
use std::sync::Arc;

/// `np.einsum(subscripts, *operands)` with PyTensor's contraction order
/// ([`Optimize::Auto`]): e.g. `einsum("ij,jk->ik", &[a, b])` is `a @ b`.
///
/// Errors (a [`GraphError::Invalid`](crate::GraphError::Invalid), NumPy's `ValueError`) name
/// the operand and what was expected: malformed subscripts, a rank that does not match them,
/// or static extents that differ for one index. Extents unknown when the graph is built must
/// agree at run time, which the graph checks (a `ValueError` naming the index and operands).
#[track_caller]
pub fn einsum(subscripts: &str, operands: &[Var]) -> Built {
    einsum_with(subscripts, operands, Optimize::Auto)
}

/// [`einsum`] with the contraction order chosen by `optimize`.
///
/// With [`Optimize::Auto`], more than two operands and a shape not all static, the order
/// cannot be planned yet: the result is one `OpFromGraph` node holding the subscripts (its
/// [`einsum`](crate::OpFromGraph::einsum) field) whose body contracts right to left, as
/// PyTensor's `Einsum` op with `optimized=False`. The `einsum_replan` rewrite re-plans and
/// inlines it once its inputs' shapes are static (after a `clone_replace` with static-shaped
/// variables, for instance); until then it computes, differentiates and prints as any
/// `OpFromGraph`.
#[track_caller]
pub fn einsum_with(subscripts: &str, operands: &[Var], optimize: Optimize) -> Built {
    let all_static = operands
        .iter()
        .all(|o| o.ty().shape.iter().all(Option::is_some));
    if optimize == Optimize::Auto && operands.len() > 2 && !all_static {
        return unplanned(subscripts, operands);
    }
    lower::lower(subscripts, operands, optimize)
}

/// The `OpFromGraph` of an einsum whose order waits for static shapes: the body is the
/// right-to-left lowering over inputs of the operands' types.
#[track_caller]
fn unplanned(subscripts: &str, operands: &[Var]) -> Built {
    let params: Vec<Var> = operands
        .iter()
        .map(|o| Var::input(None, o.ty().clone()))
        .collect();
    let body = lower::lower(subscripts, &params, Optimize::RightToLeft)?;
    let mut op = OpFromGraph::new(&params, &[body], Some(&format!("Einsum{{{subscripts}}}")))?;
    op.einsum = Some(Arc::from(subscripts));
    let mut outs = Arc::new(op).call(operands)?;
    outs.pop().ok_or_else(|| GraphError::Invalid {
        op: "einsum".into(),
        message: "the einsum node has no output".into(),
    })
}
