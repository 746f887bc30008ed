//! Run-time checks, [`Op::CheckAndRaise`]: PyTensor's `pytensor.raise_op` (`CheckAndRaise`,
//! `Assert`). The op returns its first input unchanged (a view) and fails the call with an
//! exception of a named kind when one of its conditions is false. PyMC builds every
//! distribution's parameter check (`check_parameters`) on it.
//!
//! Inputs: the value `x`, then any number of 0-d conditions of any dtype (nonzero is true, as
//! NumPy's `bool(c)`; NaN is true). PyTensor converts each condition with `as_scalar`, which
//! refuses arrays, so an array condition is a rank error here too: reduce it with `all()`.
//!
//! The exception is data of the op ([`Check`]): a kind (`"AssertionError"`, `"ValueError"`, or
//! a key the Python front end registered for a user's exception class) and a message. The
//! runtime reports a failure as `KernelError::Raised` carrying both, and the Python layer raises
//! the class the kind names, so PyMC's `ParameterValueError` (a `ValueError` subclass) comes
//! through as itself.

use crate::{GraphError, Op, TensorType, Var};
use smallvec::{SmallVec, smallvec};
use std::fmt;

/// The kind of [`Check::assertion`]: Python's `AssertionError`.
pub const ASSERTION_ERROR: &str = "AssertionError";

/// What a failed [`Op::CheckAndRaise`] raises: the exception's kind and message. Two checks with
/// equal kind and message are the same op, so identical checks on the same inputs are one
/// node (hash-consing merges them, as PyTensor's merge pass would).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Check {
    /// The exception's kind: a builtin exception's name (`"AssertionError"`, `"ValueError"`)
    /// or the key under which the front end registered a user's exception class
    /// (`"module.QualName"`, with a `#n` suffix when two classes share that name).
    pub exc: String,
    /// The exception's message.
    pub msg: String,
}

impl Check {
    /// A check raising `exc` with `msg` (PyTensor's `CheckAndRaise(exc_type, msg)`).
    pub fn new(exc: impl Into<String>, msg: impl Into<String>) -> Check {
        Check {
            exc: exc.into(),
            msg: msg.into(),
        }
    }

    /// A check raising `AssertionError` with `msg` (PyTensor's `Assert(msg)`).
    pub fn assertion(msg: impl Into<String>) -> Check {
        Check::new(ASSERTION_ERROR, msg)
    }

    /// True when the check raises `AssertionError` (printed as PyTensor prints `Assert`).
    pub fn is_assertion(&self) -> bool {
        self.exc == ASSERTION_ERROR
    }

    /// The exception's class name, without the module and the disambiguating suffix of a
    /// registered user class (`"pkg.mod.ParameterValueError#2"` → `"ParameterValueError"`).
    pub fn class_name(&self) -> &str {
        let base = self.exc.split('#').next().unwrap_or(&self.exc);
        base.rsplit('.').next().unwrap_or(base)
    }
}

/// The message as PyTensor prints it: at most 30 characters, longer ones cut to 27 and `...`.
fn short(msg: &str) -> String {
    if msg.chars().count() > 30 {
        let head: String = msg.chars().take(27).collect();
        format!("{head}...")
    } else {
        msg.to_string()
    }
}

impl fmt::Display for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let msg = short(&self.msg);
        if self.is_assertion() {
            write!(f, "Assert{{msg='{msg}'}}")
        } else {
            write!(
                f,
                "CheckAndRaise{{raises={}, msg='{msg}'}}",
                self.class_name()
            )
        }
    }
}

/// Output type: `x`'s. Errors: no value input, or a condition that is not 0-d.
pub(crate) fn infer(op: &Op, inputs: &[Var]) -> Result<SmallVec<[TensorType; 1]>, GraphError> {
    let Some((x, conds)) = inputs.split_first() else {
        return Err(GraphError::Arity {
            op: op.to_string(),
            expected: "at least 1 (the value, then the conditions)".to_string(),
            got: 0,
        });
    };
    for c in conds {
        if c.ndim() != 0 {
            return Err(GraphError::rank(
                op,
                c,
                "0 (a scalar condition, as PyTensor requires; reduce an array condition with \
                 all())",
            ));
        }
    }
    Ok(smallvec![x.ty().clone()])
}

/// Output extents: `x`'s (as PyTensor's `infer_shape`: a shape query does not run the check).
pub(crate) fn shape(ins: &[&Vec<Var>]) -> Vec<Vec<Var>> {
    vec![ins[0].clone()]
}
