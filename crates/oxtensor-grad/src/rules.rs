//! The pullback (vector-Jacobian product) rule of every [`Op`]: one exhaustive `match`, so a new
//! op does not compile until its rule is written here or it is declared non-differentiable.
//!
//! A rule receives the node (op, inputs, outputs), the cotangent of each output (`None` for an
//! output that received none, which only multi-output ops see) and which inputs need a term. It
//! returns one [`Term`] per input. Rules work on the *broadcast* shapes: an elementwise rule
//! returns the gradient for the output's shape, and the driver sums it back to the input's
//! shape and dtype (see [`crate::grad`]'s docs on broadcasting). Rules are linear in the
//! cotangent and only build nodes that themselves have rules, so gradients of gradients work.

use crate::error::GradError;
use crate::{complex, elemwise, index, inner, layout, linalg, marker, matmul, reduce};
use oxtensor_graph::build::Built;
use oxtensor_graph::{Axes, FrozenGraph, GraphError, Op, ReduceOp, Var, infer_types, toposort};
use rustc_hash::FxHashMap;

/// The gradient contribution of a node to one of its inputs.
#[derive(Clone, Debug)]
pub enum Term {
    /// This contribution to the input's gradient.
    Grad(Var),
    /// The output depends on the input, but its gradient is zero everywhere (comparisons,
    /// rounding, integer-valued outputs, `zero_grad`). Unlike [`Term::Disconnected`], the input
    /// counts as connected to the cost.
    Zero,
    /// The output does not depend on the input's values (a shape, an index, `disconnected_grad`).
    Disconnected,
    /// The gradient is mathematically undefined (PyTensor's `NullType`); the string says which
    /// op and input.
    Undefined(String),
}

/// One [`Term`] per input: `f(k)` for the inputs that are wanted, [`Term::Disconnected`] (and no
/// nodes built) for the others.
pub(crate) fn per_input(
    wanted: &[bool],
    mut f: impl FnMut(usize) -> Result<Term, GraphError>,
) -> Result<Vec<Term>, GraphError> {
    wanted
        .iter()
        .enumerate()
        .map(|(k, &w)| if w { f(k) } else { Ok(Term::Disconnected) })
        .collect()
}

/// [`per_input`] where every wanted input gets a gradient built by `f`.
pub(crate) fn grads(
    wanted: &[bool],
    mut f: impl FnMut(usize) -> Built,
) -> Result<Vec<Term>, GraphError> {
    per_input(wanted, |k| f(k).map(Term::Grad))
}

/// The same term for every wanted input.
pub(crate) fn uniform(wanted: &[bool], term: Term) -> Vec<Term> {
    wanted
        .iter()
        .map(|&w| if w { term.clone() } else { Term::Disconnected })
        .collect()
}

/// `g` for input 0, disconnected for the others (ops whose other inputs are shapes or indices).
fn first_only(g: &Var, wanted: &[bool]) -> Result<Vec<Term>, GraphError> {
    per_input(wanted, |k| {
        Ok(if k == 0 {
            Term::Grad(g.clone())
        } else {
            Term::Disconnected
        })
    })
}

/// Computes the pullback of one node: given the cotangent of each output, the term each wanted
/// input receives. Entries for inputs not wanted are [`Term::Disconnected`].
///
/// `cotangents` has one entry per output (`None`: zero); `wanted` one per input; the inputs
/// must fit the op (checked). Terms may have a broadcast shape or another float dtype than
/// their input; [`crate::grad`] fits them.
pub fn op_pullback(
    op: &Op,
    inputs: &[Var],
    outputs: &[Var],
    cotangents: &[Option<Var>],
    wanted: &[bool],
) -> Result<Vec<Term>, GradError> {
    // Checks the inputs fit the op (arity, types), so the rules may index them.
    let types = infer_types(op, inputs)?;
    if types.len() != outputs.len()
        || cotangents.len() != outputs.len()
        || wanted.len() != inputs.len()
    {
        return Err(GradError::Invalid(format!(
            "pullback of {op}: {} cotangents for {} outputs, {} wanted flags for {} inputs",
            cotangents.len(),
            outputs.len(),
            wanted.len(),
            inputs.len()
        )));
    }
    let g = || {
        cotangents[0].clone().ok_or_else(|| {
            GradError::Invalid(format!(
                "pullback of {op}: the cotangent of {} is missing",
                outputs[0].describe()
            ))
        })
    };
    let z = &outputs[0];
    let terms = match op {
        Op::Elemwise(s) => elemwise::pullback(*s, inputs, z, &g()?, wanted)?,
        Op::Reduce { op: r, axes } => reduce::pullback(*r, axes, &inputs[0], z, &g()?, wanted)?,
        // Indices are integers: locally constant in the input.
        Op::ArgReduce { .. } => uniform(wanted, Term::Zero),
        Op::DimShuffle { order } => layout::dimshuffle(order, &inputs[0], &g()?, wanted)?,
        Op::Reshape { .. } => layout::reshape(&inputs[0], &g()?, wanted)?,
        // A shape does not change when the values do.
        Op::Shape | Op::ShapeI(_) => uniform(wanted, Term::Disconnected),
        Op::SpecifyShape(_) => first_only(&g()?, wanted)?,
        // Broadcasting the value: the driver sums the gradient back to the value's shape; the
        // extents only decide the shape.
        Op::Alloc { .. } => first_only(&g()?, wanted)?,
        Op::Arange(dtype) => layout::arange(*dtype, z, &g()?, wanted)?,
        Op::Eye(_) => per_input(wanted, |k| {
            Ok(Term::Undefined(format!(
                "{op} has no gradient with respect to its integer input {k} ({})",
                inputs[k].describe()
            )))
        })?,
        Op::MakeVector(_) => layout::make_vector(&g()?, wanted)?,
        Op::Join { axis } => layout::join(*axis, inputs, &g()?, wanted)?,
        Op::Split { axis, .. } => layout::split(*axis, outputs, cotangents, wanted)?,
        Op::Subtensor(spec) => index::subtensor(spec, inputs, &g()?, wanted)?,
        Op::IncSubtensor { index, set } => {
            index::inc_subtensor(index, *set, inputs, &g()?, wanted)?
        }
        Op::Take { axis } => index::take(*axis, inputs, &g()?, wanted)?,
        Op::IncTake { axis, set } => index::inc_take(*axis, *set, inputs, &g()?, wanted)?,
        Op::GradMarker(m) => marker::pullback(*m, inputs, &g()?, wanted)?,
        Op::Composite(inner) => composite_pullback(inner, inputs, cotangents, wanted)?,
        Op::FusedReduce { op: r, axes, body } => {
            fused_reduce_pullback(*r, axes, body, inputs, &g()?, wanted)?
        }
        Op::MatMul if complex::involved(inputs, &[z]) => complex::conjugated(&g()?, |cg| {
            matmul::pullback(&inputs[0], &inputs[1], cg, wanted)
        })?,
        Op::MatMul => matmul::pullback(&inputs[0], &inputs[1], &g()?, wanted)?,
        Op::FusedMatMul { body } => fused_matmul_pullback(body, inputs, &g()?, wanted)?,
        Op::OpFromGraph(o) => inner::op_from_graph(o, inputs, outputs, cotangents, wanted)?,
        Op::IfElse(b) => inner::ifelse(b, inputs, outputs, cotangents, wanted)?,
        Op::Scan(s) => crate::scan::pullback(s, inputs, outputs, cotangents, wanted)?,
        Op::Linalg(l) => linalg::pullback(l, inputs, outputs, cotangents, wanted)?,
        Op::Random(_) => crate::random::pullback(inputs, wanted),
        Op::Extra(e) => crate::extra::pullback(e, inputs, outputs, cotangents, wanted)?,
        Op::CheckAndRaise(_) => crate::check::pullback(&g()?, wanted)?,
    };
    Ok(terms)
}

/// The inputs whose gradient is wanted.
fn wanted_inputs(inputs: &[Var], wanted: &[bool]) -> Vec<Var> {
    inputs
        .iter()
        .zip(wanted)
        .filter(|(_, w)| **w)
        .map(|(v, _)| v.clone())
        .collect()
}

/// One term per input from the gradients of the wanted ones, in order.
fn spread(wanted: &[bool], grads: Vec<Var>) -> Vec<Term> {
    let mut grads = grads.into_iter();
    wanted
        .iter()
        .map(|&w| {
            if w {
                grads.next().map_or(Term::Zero, Term::Grad)
            } else {
                Term::Disconnected
            }
        })
        .collect()
}

/// A fused reduction (built by the fusion pass, so rarely differentiated) is differentiated as
/// the `Reduce` of the `Composite` it stands for.
fn fused_reduce_pullback(
    r: ReduceOp,
    axes: &Axes,
    body: &FrozenGraph,
    inputs: &[Var],
    g: &Var,
    wanted: &[bool],
) -> Result<Vec<Term>, GradError> {
    let value = Var::apply1(Op::Composite(body.clone()), inputs)?;
    let reduced = Var::apply1(
        Op::Reduce {
            op: r,
            axes: axes.clone(),
        },
        &[value],
    )?;
    let grads = crate::pullback(
        &[reduced],
        &wanted_inputs(inputs, wanted),
        std::slice::from_ref(g),
    )?;
    Ok(spread(wanted, grads))
}

/// A matrix product with an epilogue (built by rewriting, so rarely differentiated) is
/// differentiated as the product and the `Composite` it fuses.
fn fused_matmul_pullback(
    body: &FrozenGraph,
    inputs: &[Var],
    g: &Var,
    wanted: &[bool],
) -> Result<Vec<Term>, GradError> {
    let [a, b, rest @ ..] = inputs else {
        return Err(GradError::Invalid(
            "a fused matrix product takes at least two inputs".into(),
        ));
    };
    let mut program_inputs = vec![Var::apply1(Op::MatMul, &[a.clone(), b.clone()])?];
    program_inputs.extend_from_slice(rest);
    let value = Var::apply1(Op::Composite(body.clone()), &program_inputs)?;
    let grads = crate::pullback(
        &[value],
        &wanted_inputs(inputs, wanted),
        std::slice::from_ref(g),
    )?;
    Ok(spread(wanted, grads))
}

/// A fused Composite (built by rewriting, so rarely differentiated) is differentiated by
/// inlining its scalar program over the actual inputs and pulling back through that.
fn composite_pullback(
    inner: &FrozenGraph,
    inputs: &[Var],
    cotangents: &[Option<Var>],
    wanted: &[bool],
) -> Result<Vec<Term>, GradError> {
    let mut map: FxHashMap<Var, Var> = inner
        .placeholders()
        .into_iter()
        .zip(inputs.iter().cloned())
        .collect();
    for node in toposort(inner.outputs()) {
        let Some(Op::Elemwise(s)) = node.op() else {
            return Err(GradError::Invalid(
                "Composite inner graphs hold only elementwise ops".into(),
            ));
        };
        let args: Vec<Var> = node
            .inputs()
            .iter()
            .map(|v| map.get(v).cloned().unwrap_or_else(|| v.clone()))
            .collect();
        map.insert(
            Var::output_of(&node, 0),
            oxtensor_graph::build::elemwise(*s, &args)?,
        );
    }
    let (outs, cots): (Vec<Var>, Vec<Var>) = inner
        .outputs()
        .iter()
        .zip(cotangents)
        .filter_map(|(o, c)| Some((map.get(o).cloned().unwrap_or_else(|| o.clone()), c.clone()?)))
        .unzip();
    let grads = crate::pullback(&outs, &wanted_inputs(inputs, wanted), &cots)?;
    Ok(spread(wanted, grads))
}
