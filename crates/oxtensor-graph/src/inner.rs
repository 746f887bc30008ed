//! Ops whose body is an inner graph: [`OpFromGraph`] (a subroutine) and [`IfElse`] (a lazy
//! branch). Both hold [`FrozenGraph`]s, as `Composite` does, so two built separately from the
//! same expressions are the same op (equal and hash-equal in O(1)), and a backend compiles each
//! distinct body once however many call sites it has.
//!
//! An inner graph sees only its positional inputs: a builder passes every variable the body
//! reads from outside (graph inputs, shared variables) as an explicit input of the node, so the
//! outer graph keeps a complete picture of what each node depends on.

use crate::fgraph::toposort;
use crate::{FrozenGraph, GraphError, NodeKind, Op, TensorType, Var};
use rustc_hash::FxHashSet;
use std::sync::Arc;

/// PyTensor's `OpFromGraph`: a graph from `inputs` to `outputs` used as one op. Calling it on
/// variables builds one node (not a copy of the graph); its gradient is taken through the body,
/// or given by `pullback`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct OpFromGraph {
    /// The body: explicit inputs, then the shared variables it reads (implicit inputs).
    pub body: FrozenGraph,
    /// The name shown when printing (`OpFromGraph` when unset).
    pub name: Option<Arc<str>>,
    /// A user-given gradient: a graph from `(inputs…, outputs…, output gradients…)` to one
    /// gradient per input (PyTensor's `pullback`/`lop_overrides`), frozen like the body.
    pub pullback: Option<FrozenGraph>,
    /// A user-given forward-mode rule: a graph from `(inputs…, implicit inputs…, input
    /// tangents…)` to one tangent per output (PyTensor's `pushforward`/`rop_overrides`).
    pub pushforward: Option<FrozenGraph>,
    /// The shared variables the body reads, passed after the explicit inputs on every call.
    pub implicit: Vec<Var>,
    /// Set on an `einsum` built before its operands' shapes were all static (PyTensor's
    /// `Einsum` with `optimized=False`): its subscripts. The body contracts right to left;
    /// the `einsum_replan` rewrite re-plans and inlines it once the shapes are static.
    pub einsum: Option<Arc<str>>,
}

impl OpFromGraph {
    /// Freezes the graph from `inputs` to `outputs`. Shared variables the outputs read become
    /// implicit inputs; any other graph input they read must be among `inputs`.
    #[track_caller]
    pub fn new(
        inputs: &[Var],
        outputs: &[Var],
        name: Option<&str>,
    ) -> Result<OpFromGraph, GraphError> {
        let implicit = free_leaves(outputs, |k| matches!(k, NodeKind::Shared(_)))
            .into_iter()
            .filter(|v| !inputs.contains(v))
            .collect::<Vec<_>>();
        let all: Vec<Var> = inputs.iter().chain(&implicit).cloned().collect();
        Ok(OpFromGraph {
            body: FrozenGraph::freeze(&all, outputs)?,
            name: name.map(Arc::from),
            pullback: None,
            pushforward: None,
            implicit,
            einsum: None,
        })
    }

    /// This op with a user-given gradient: `grads` are built from `inputs` (the explicit
    /// inputs this op was made from), its `outputs`, and `output_grads` (one variable per
    /// output, standing for its cotangent), one gradient per explicit input.
    #[track_caller]
    pub fn with_pullback(
        mut self,
        inputs: &[Var],
        outputs: &[Var],
        output_grads: &[Var],
        grads: &[Var],
    ) -> Result<OpFromGraph, GraphError> {
        let all: Vec<Var> = inputs
            .iter()
            .chain(&self.implicit)
            .chain(outputs)
            .chain(output_grads)
            .cloned()
            .collect();
        self.pullback = Some(FrozenGraph::freeze(&all, grads)?);
        Ok(self)
    }

    /// This op with a user-given forward-mode rule: `output_tangents` (one per output) are
    /// built from `inputs` (the explicit inputs this op was made from) and `tangents` (one
    /// variable per explicit input, standing for its tangent).
    #[track_caller]
    pub fn with_pushforward(
        mut self,
        inputs: &[Var],
        tangents: &[Var],
        output_tangents: &[Var],
    ) -> Result<OpFromGraph, GraphError> {
        if output_tangents.len() != self.body.outputs().len() {
            return Err(GraphError::Invalid {
                op: "OpFromGraph".into(),
                message: format!(
                    "the pushforward gives {} tangents for {} outputs",
                    output_tangents.len(),
                    self.body.outputs().len()
                ),
            });
        }
        let all: Vec<Var> = inputs
            .iter()
            .chain(&self.implicit)
            .chain(tangents)
            .cloned()
            .collect();
        self.pushforward = Some(FrozenGraph::freeze(&all, output_tangents)?);
        Ok(self)
    }

    /// The number of explicit inputs a call takes.
    pub fn n_explicit(&self) -> usize {
        self.body.input_types().len() - self.implicit.len()
    }

    /// Applies the op to `args` (one per explicit input): one node, whose outputs are returned.
    #[track_caller]
    pub fn call(self: &Arc<Self>, args: &[Var]) -> Result<Vec<Var>, GraphError> {
        let op = Op::OpFromGraph(self.clone());
        if args.len() != self.n_explicit() {
            return Err(GraphError::Arity {
                op: op.to_string(),
                expected: self.n_explicit().to_string(),
                got: args.len(),
            });
        }
        let all: Vec<Var> = args.iter().chain(&self.implicit).cloned().collect();
        Ok(Var::apply(op, &all)?.into_vec())
    }

    /// The body expanded over `args` (explicit inputs): what `inline=True` builds.
    #[track_caller]
    pub fn inline(&self, args: &[Var]) -> Result<Vec<Var>, GraphError> {
        let all: Vec<Var> = args.iter().chain(&self.implicit).cloned().collect();
        self.body.instantiate(&all)
    }
}

/// PyTensor's `IfElse`: outputs `then_branch` when the 0-d condition is true, else
/// `else_branch`. The branches are inner graphs over the same inputs, so a backend computes only
/// the branch taken.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct IfElse {
    /// The outputs when the condition holds.
    pub then_branch: FrozenGraph,
    /// The outputs otherwise (one per `then` output, of the same dtype and rank).
    pub else_branch: FrozenGraph,
}

/// `ifelse(cond, then, else)`: builds one [`IfElse`] node whose branches hold everything
/// `then` and `else` compute, so neither is computed unless taken. The node's inputs are the
/// condition and the leaves (graph inputs, shared variables) the branches read.
#[track_caller]
pub fn ifelse(cond: &Var, then: &[Var], otherwise: &[Var]) -> Result<Vec<Var>, GraphError> {
    if then.len() != otherwise.len() {
        return Err(GraphError::Invalid {
            op: "IfElse".into(),
            message: format!(
                "the branches have {} and {} outputs; they must have as many",
                then.len(),
                otherwise.len()
            ),
        });
    }
    let both: Vec<Var> = then.iter().chain(otherwise).cloned().collect();
    let captured = free_leaves(&both, |k| {
        matches!(
            k,
            NodeKind::Input | NodeKind::Shared(_) | NodeKind::Placeholder(_)
        )
    });
    let op = IfElse {
        then_branch: FrozenGraph::freeze(&captured, then)?,
        else_branch: FrozenGraph::freeze(&captured, otherwise)?,
    };
    let inputs: Vec<Var> = std::iter::once(cond.clone()).chain(captured).collect();
    Ok(Var::apply(Op::IfElse(Arc::new(op)), &inputs)?.into_vec())
}

/// The leaves of kinds `keep` that `outputs` read, in a deterministic order (first use).
fn free_leaves(outputs: &[Var], keep: impl Fn(&NodeKind) -> bool) -> Vec<Var> {
    let mut seen = FxHashSet::default();
    let mut leaves = Vec::new();
    let mut visit = |v: &Var| {
        if v.owner().is_none() && keep(v.node().kind()) && seen.insert(v.clone()) {
            leaves.push(v.clone());
        }
    };
    for node in toposort(outputs) {
        node.inputs().iter().for_each(&mut visit);
    }
    outputs.iter().for_each(visit);
    leaves
}

/// The output type of both branches' output `i` (`then` and `otherwise`, inner variables):
/// dtype and rank must agree; a static extent survives where both have it (PyTensor's rule
/// for branches of different static shapes).
pub(crate) fn join_branch_types(
    op: &Op,
    i: usize,
    then: &Var,
    otherwise: &Var,
) -> Result<TensorType, GraphError> {
    let expected = || {
        format!(
            "{} of rank {}, as the then branch's output {i} (both branches must have the same dtype and rank; cast one)",
            then.dtype(),
            then.ndim()
        )
    };
    if then.dtype() != otherwise.dtype() {
        return Err(GraphError::dtype(op, otherwise, expected()));
    }
    if then.ndim() != otherwise.ndim() {
        return Err(GraphError::rank(op, otherwise, expected()));
    }
    let shape: Vec<Option<usize>> = then
        .ty()
        .shape
        .iter()
        .zip(&otherwise.ty().shape)
        .map(|(a, b)| if a == b { *a } else { None })
        .collect();
    Ok(TensorType::new(then.dtype(), &shape))
}

/// Checks that `args` fit the `expected` input types of an inner graph: same dtype and rank,
/// and no contradicting static extent.
pub(crate) fn check_args(op: &Op, args: &[Var], expected: &[TensorType]) -> Result<(), GraphError> {
    if args.len() != expected.len() {
        return Err(GraphError::Arity {
            op: op.to_string(),
            expected: expected.len().to_string(),
            got: args.len(),
        });
    }
    for (v, t) in args.iter().zip(expected) {
        if v.dtype() != t.dtype {
            return Err(GraphError::dtype(op, v, t.dtype.to_string()));
        }
        if v.ndim() != t.ndim() {
            return Err(GraphError::rank(op, v, t.ndim().to_string()));
        }
        let clash = v
            .ty()
            .shape
            .iter()
            .zip(&t.shape)
            .any(|(a, b)| matches!((a, b), (Some(a), Some(b)) if a != b));
        if clash {
            return Err(GraphError::shape(
                op,
                format!("{} does not fit the inner graph's input {t}", v.describe()),
            ));
        }
    }
    Ok(())
}

impl Op {
    /// The graphs of tensors this op runs: a loop's step, both branches of an `IfElse`, an
    /// `OpFromGraph`'s body (none for other ops; the scalar programs of `Composite`,
    /// `FusedReduce` and `FusedMatMul` are not graphs of tensors). Every pass and backend that
    /// looks inside inner graphs reads them here.
    pub fn tensor_bodies(&self) -> Vec<&FrozenGraph> {
        match self {
            Op::OpFromGraph(o) => vec![&o.body],
            Op::IfElse(b) => vec![&b.then_branch, &b.else_branch],
            Op::Scan(s) => vec![&s.body],
            _ => Vec::new(),
        }
    }

    /// This op over new tensor bodies: `f` maps each of [`Op::tensor_bodies`] to its
    /// replacement, or `None` to keep it; `None` when `f` kept them all (or the op has none).
    pub fn with_tensor_bodies<E>(
        &self,
        mut f: impl FnMut(&FrozenGraph) -> Result<Option<FrozenGraph>, E>,
    ) -> Result<Option<Op>, E> {
        Ok(match self {
            Op::OpFromGraph(o) => f(&o.body)?.map(|body| {
                Op::OpFromGraph(Arc::new(OpFromGraph {
                    body,
                    ..OpFromGraph::clone(o)
                }))
            }),
            Op::Scan(s) => f(&s.body)?.map(|body| {
                Op::Scan(Arc::new(crate::Scan {
                    body,
                    ..crate::Scan::clone(s)
                }))
            }),
            Op::IfElse(b) => {
                let then = f(&b.then_branch)?;
                let otherwise = f(&b.else_branch)?;
                (then.is_some() || otherwise.is_some()).then(|| {
                    Op::IfElse(Arc::new(IfElse {
                        then_branch: then.unwrap_or_else(|| b.then_branch.clone()),
                        else_branch: otherwise.unwrap_or_else(|| b.else_branch.clone()),
                    }))
                })
            }
            _ => None,
        })
    }
}
