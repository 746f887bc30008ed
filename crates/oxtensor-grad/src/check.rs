//! Pullback of [`Op::CheckAndRaise`](oxtensor_graph::Op::CheckAndRaise): the value's
//! gradient passes through unchanged; the conditions receive none (PyTensor gives them
//! `DisconnectedType`: a condition only decides whether the call fails).

use crate::rules::{Term, per_input};
use oxtensor_graph::{GraphError, Var};

/// `g` for the value (input 0), [`Term::Disconnected`] for every condition.
pub(crate) fn pullback(g: &Var, wanted: &[bool]) -> Result<Vec<Term>, GraphError> {
    per_input(wanted, |k| {
        Ok(if k == 0 {
            Term::Grad(g.clone())
        } else {
            Term::Disconnected
        })
    })
}
