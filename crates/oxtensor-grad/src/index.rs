//! Pullbacks of indexing: reading a region (`Subtensor`, `Take`) scatters the cotangent back into
//! zeros of the indexed tensor's shape; writing one (`IncSubtensor`, `IncTake`) gathers the
//! region's cotangent for the written value. Index inputs are integers that select positions,
//! so they are disconnected.
//!
//! With repeated indices, `Take`'s gradient accumulates (`np.add.at`): `x[[0, 0]]` sends twice
//! the cotangent to `x[0]`. For `set` writes with repeated indices every duplicate of the
//! written value receives the region's cotangent, as in PyTensor (strictly, only the last
//! write is visible).

use crate::rules::{Term, per_input};
use crate::util::{fconst, grad_dtype, zeros_like};
use oxtensor_graph::{GraphError, IndexSpec, Op, Var};

/// `op` applied to `(first, second, rest…)`.
fn apply(op: Op, first: Var, second: Var, rest: &[Var]) -> Result<Var, GraphError> {
    let mut args = vec![first, second];
    args.extend(rest.iter().cloned());
    Var::apply1(op, &args)
}

/// `Subtensor(spec)` of `x` (inputs `x, scalars…`): the cotangent added into zeros at the
/// indexed region.
pub(crate) fn subtensor(
    spec: &IndexSpec,
    inputs: &[Var],
    g: &Var,
    wanted: &[bool],
) -> Result<Vec<Term>, GraphError> {
    let x = &inputs[0];
    per_input(wanted, |k| {
        if k != 0 {
            return Ok(Term::Disconnected);
        }
        let op = Op::IncSubtensor {
            index: spec.clone(),
            set: false,
        };
        let zeros = zeros_like(x, grad_dtype(x.dtype()))?;
        Ok(Term::Grad(apply(op, zeros, g.clone(), &inputs[1..])?))
    })
}

/// `IncSubtensor` (inputs `x, y, scalars…`): `x` receives the cotangent (with the region zeroed
/// when it was overwritten), `y` the region of the cotangent (summed over the dimensions `y`
/// was broadcast along, by the driver).
pub(crate) fn inc_subtensor(
    index: &IndexSpec,
    set: bool,
    inputs: &[Var],
    g: &Var,
    wanted: &[bool],
) -> Result<Vec<Term>, GraphError> {
    let scalars = &inputs[2..];
    per_input(wanted, |k| {
        Ok(match k {
            0 if set => {
                let op = Op::IncSubtensor {
                    index: index.clone(),
                    set: true,
                };
                Term::Grad(apply(op, g.clone(), fconst(0.0, g), scalars)?)
            }
            0 => Term::Grad(g.clone()),
            1 => {
                let mut args = vec![g.clone()];
                args.extend(scalars.iter().cloned());
                Term::Grad(Var::apply1(Op::Subtensor(index.clone()), &args)?)
            }
            _ => Term::Disconnected,
        })
    })
}

/// `Take{axis}` (inputs `x, indices`): the cotangent accumulated into zeros at the indices
/// (repeated indices add up).
pub(crate) fn take(
    axis: usize,
    inputs: &[Var],
    g: &Var,
    wanted: &[bool],
) -> Result<Vec<Term>, GraphError> {
    let (x, i) = (&inputs[0], &inputs[1]);
    per_input(wanted, |k| {
        if k != 0 {
            return Ok(Term::Disconnected);
        }
        let op = Op::IncTake { axis, set: false };
        let zeros = zeros_like(x, grad_dtype(x.dtype()))?;
        Ok(Term::Grad(apply(
            op,
            zeros,
            g.clone(),
            std::slice::from_ref(i),
        )?))
    })
}

/// `IncTake{axis, set}` (inputs `x, y, indices`): `x` receives the cotangent (zeroed at the
/// indices when they were overwritten), `y` the cotangent taken at the indices.
pub(crate) fn inc_take(
    axis: usize,
    set: bool,
    inputs: &[Var],
    g: &Var,
    wanted: &[bool],
) -> Result<Vec<Term>, GraphError> {
    let i = &inputs[2];
    per_input(wanted, |k| {
        Ok(match k {
            0 if set => Term::Grad(apply(
                Op::IncTake { axis, set: true },
                g.clone(),
                fconst(0.0, g),
                std::slice::from_ref(i),
            )?),
            0 => Term::Grad(g.clone()),
            1 => Term::Grad(Var::apply1(Op::Take { axis }, &[g.clone(), i.clone()])?),
            _ => Term::Disconnected,
        })
    })
}
