//! The kernel of [`Op::CheckAndRaise`](oxtensor_graph::Op::CheckAndRaise): tests the
//! conditions and returns the value itself (a view sharing its storage, as `SpecifyShape`
//! does; the plan copies where an output would alias an input the caller sees).

use crate::KernelError;
use oxtensor_data::Tensor;
use oxtensor_graph::Check;

/// `inputs = [x, conds...]`: `x` when every condition is true (nonzero; NaN is true), else
/// [`KernelError::Raised`] with `check`'s exception kind and message.
pub(super) fn check(check: &Check, inputs: &[&Tensor]) -> Result<Vec<Tensor>, KernelError> {
    let Some((x, conds)) = inputs.split_first() else {
        return Err(KernelError::Value(format!(
            "{check}: expected the value to check, got no inputs"
        )));
    };
    for (k, cond) in conds.iter().enumerate() {
        let Some(holds) = cond.item::<bool>() else {
            return Err(KernelError::Shape(format!(
                "{check}: condition {k} must be a scalar, got shape {:?}",
                cond.shape()
            )));
        };
        if !holds {
            return Err(KernelError::Raised {
                exc: check.exc.clone(),
                msg: check.msg.clone(),
            });
        }
    }
    Ok(vec![(*x).clone()])
}
