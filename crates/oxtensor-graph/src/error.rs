use crate::{Op, Var};

/// Errors raised while building a graph: the op, the offending input (by name, type and the
/// place it was created) and what was expected.
#[derive(Debug, Clone, thiserror::Error)]
pub enum GraphError {
    /// An input has a dtype the op does not accept.
    #[error("{op}: input {input} has dtype {got}, expected {expected}")]
    DType {
        /// The op being built.
        op: String,
        /// Description of the input (`'x' (Vector(float64, shape=(?,))), created at f.py:3`).
        input: String,
        /// What the op accepts.
        expected: String,
        /// The input's dtype.
        got: String,
    },
    /// An input has the wrong rank.
    #[error("{op}: input {input} has {got} dimensions, expected {expected}")]
    Rank {
        /// The op being built.
        op: String,
        /// Description of the input.
        input: String,
        /// What the op accepts.
        expected: String,
        /// The input's rank.
        got: usize,
    },
    /// Static shapes that cannot work together (broadcasting, joins, products).
    #[error("{op}: {message}")]
    Shape {
        /// The op being built.
        op: String,
        /// What does not fit, naming the inputs.
        message: String,
    },
    /// The wrong number of inputs.
    #[error("{op}: expected {expected} inputs, got {got}")]
    Arity {
        /// The op being built.
        op: String,
        /// What the op takes.
        expected: String,
        /// How many it was given.
        got: usize,
    },
    /// Anything else about the op's parameters (an axis out of range, a bad permutation…).
    #[error("{op}: {message}")]
    Invalid {
        /// The op being built.
        op: String,
        /// What is wrong.
        message: String,
    },
}

impl GraphError {
    /// A dtype error for `input` of `op`.
    pub fn dtype(op: &Op, input: &Var, expected: impl Into<String>) -> GraphError {
        GraphError::DType {
            op: op.to_string(),
            input: input.describe(),
            expected: expected.into(),
            got: input.dtype().to_string(),
        }
    }

    /// A rank error for `input` of `op`.
    pub fn rank(op: &Op, input: &Var, expected: impl Into<String>) -> GraphError {
        GraphError::Rank {
            op: op.to_string(),
            input: input.describe(),
            expected: expected.into(),
            got: input.ndim(),
        }
    }

    /// A shape error for `op`.
    pub fn shape(op: &Op, message: impl Into<String>) -> GraphError {
        GraphError::Shape {
            op: op.to_string(),
            message: message.into(),
        }
    }

    /// A parameter error for `op`.
    pub fn invalid(op: &Op, message: impl Into<String>) -> GraphError {
        GraphError::Invalid {
            op: op.to_string(),
            message: message.into(),
        }
    }
}
