use oxtensor_data::DType;
use thiserror::Error;

/// Why a linear-algebra kernel refused its inputs or could not produce a result.
///
/// Every variant names the operation and, where it applies, the argument at fault, so a
/// message reaching a Python user says what to change.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum LinalgError {
    /// The operation was given the wrong number of input tensors.
    #[error("{op}: expected {expected} input tensor(s), got {got}")]
    Arity {
        /// The operation.
        op: &'static str,
        /// How many it takes (a description such as "2" or "at least 1").
        expected: String,
        /// How many it got.
        got: usize,
    },
    /// An argument has a dtype the kernel does not accept.
    #[error("{op}: argument `{arg}` has dtype {got}; expected {expected}")]
    DType {
        /// The operation.
        op: &'static str,
        /// The argument's name.
        arg: &'static str,
        /// What was expected.
        expected: &'static str,
        /// The dtype it had.
        got: DType,
    },
    /// An argument's shape does not fit the operation's core signature.
    #[error("{op}: argument `{arg}` has shape {got:?}; expected {expected}")]
    Shape {
        /// The operation.
        op: &'static str,
        /// The argument's name.
        arg: &'static str,
        /// The expected shape, described in words and symbols.
        expected: String,
        /// The shape it had.
        got: Vec<usize>,
    },
    /// The leading (batch) dimensions of the arguments do not broadcast together.
    #[error("{op}: batch dimensions {shapes:?} of the arguments do not broadcast together")]
    Broadcast {
        /// The operation.
        op: &'static str,
        /// Each argument's batch shape.
        shapes: Vec<Vec<usize>>,
    },
    /// A parameter has a value the operation does not accept.
    #[error("{op}: parameter `{param}` {message}")]
    Param {
        /// The operation.
        op: &'static str,
        /// The parameter's name.
        param: &'static str,
        /// What is wrong with it.
        message: String,
    },
    /// An argument's values are out of range (pivot indices).
    #[error("{op}: argument `{arg}` {message}")]
    Value {
        /// The operation.
        op: &'static str,
        /// The argument's name.
        arg: &'static str,
        /// What is wrong with its values.
        message: String,
    },
    /// A matrix that must be invertible is (numerically) singular.
    #[error("{op}: argument `{arg}` is singular{detail}")]
    Singular {
        /// The operation.
        op: &'static str,
        /// The argument's name.
        arg: &'static str,
        /// Where the factorisation broke down, if known (starts with ": ").
        detail: String,
    },
    /// A matrix that must be symmetric positive definite is not.
    #[error("{op}: argument `{arg}` is not positive definite")]
    NotPositiveDefinite {
        /// The operation.
        op: &'static str,
        /// The argument's name.
        arg: &'static str,
    },
    /// An iterative algorithm (eigenvalues, SVD) did not converge.
    #[error("{op}: the algorithm did not converge")]
    NoConvergence {
        /// The operation.
        op: &'static str,
    },
    /// The result would need a dtype oxtensor does not have (complex eigenvalues).
    #[error("{op}: {message}")]
    Unsupported {
        /// The operation.
        op: &'static str,
        /// What is unsupported and why.
        message: String,
    },
    /// The result would not fit in memory.
    #[error("{op}: result of shape {shape:?} is too large")]
    TooLarge {
        /// The operation.
        op: &'static str,
        /// The shape that did not fit.
        shape: Vec<usize>,
    },
}
