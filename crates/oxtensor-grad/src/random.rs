//! Random variables ([`oxtensor_graph::Op::Random`]) are not differentiable: as in PyTensor,
//! the gradient of a draw with respect to its parameters is undefined (reparametrised draws
//! are built from differentiable ops on a standard draw instead), and the generator and `size`
//! inputs are disconnected.

use crate::rules::Term;
use oxtensor_graph::Var;

/// The terms of a random node: disconnected for `rng` and `size`, undefined for each
/// parameter, naming it.
pub(crate) fn pullback(inputs: &[Var], wanted: &[bool]) -> Vec<Term> {
    inputs
        .iter()
        .zip(wanted)
        .enumerate()
        .map(|(k, (v, &w))| {
            if !w || k < 2 {
                Term::Disconnected
            } else {
                Term::Undefined(format!(
                    "No gradient defined for random variables: the draw is not differentiable with respect to its parameter {}",
                    v.describe()
                ))
            }
        })
        .collect()
}
