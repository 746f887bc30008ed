//! `np.einsum` as a graph: NumPy's subscripts ([`parse()`], `parse.rs`: explicit or implicit
//! output, ellipses, the interleaved sublist form), a contraction order chosen when the graph
//! is built ([`contraction_path`], `path.rs`: NumPy's greedy or optimal search, or right to
//! left as PyTensor does for unknown shapes), and each pairwise contraction lowered to
//! transposes, reshapes and one (batched) `matmul` (`lower.rs`), so gradients and both
//! backends come for free.
//!
//! This is the one implementation: the Python `pt.einsum` only turns its arguments into a call
//! of [`einsum_with`].

mod lower;
mod parse;
mod path;

pub use parse::{Parsed, Sub, describe, parse, sublist_subscripts};
pub use path::{OPTIMAL_MAX_OPERANDS, Optimize, UNKNOWN_EXTENT, contraction_path};

use super::Built;
use crate::Var;

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
#[track_caller]
pub fn einsum_with(subscripts: &str, operands: &[Var], optimize: Optimize) -> Built {
    lower::lower(subscripts, operands, optimize)
}
