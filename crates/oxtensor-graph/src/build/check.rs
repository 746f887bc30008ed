//! Builders of PyTensor's `pytensor.raise_op`: [`check_and_raise`] (`CheckAndRaise(exc, msg)`)
//! and [`assert_that`] (`Assert(msg)`), each returning `x` guarded by 0-d conditions.

use super::Built;
use crate::{Check, Op, Var};

/// `x`, checked at run time: the call fails with `check`'s exception when any of `conds`
/// (0-d, any dtype, nonzero is true) is false. With no conditions the check always passes.
#[track_caller]
pub fn check_and_raise(x: &Var, conds: &[Var], check: Check) -> Built {
    let mut inputs = Vec::with_capacity(conds.len() + 1);
    inputs.push(x.clone());
    inputs.extend_from_slice(conds);
    Var::apply1(Op::CheckAndRaise(check), &inputs)
}

/// `x`, asserted at run time: the call fails with an `AssertionError` carrying `msg` when any
/// of `conds` is false (PyTensor's `Assert(msg)(x, *conds)`).
#[track_caller]
pub fn assert_that(x: &Var, conds: &[Var], msg: &str) -> Built {
    check_and_raise(x, conds, Check::assertion(msg))
}
