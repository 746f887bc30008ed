/// A failure inside one kernel: a runtime shape, index or value problem. The interpreter wraps
/// it with the node it happened in.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum KernelError {
    /// Runtime extents that do not fit together (broadcasting, joins, reshape, matmul).
    #[error("{0}")]
    Shape(String),
    /// An index out of range.
    #[error("{0}")]
    Index(String),
    /// Any other invalid runtime value (a zero slice step, a negative extent…).
    #[error("{0}")]
    Value(String),
    /// A check of the graph failed (`Op::CheckAndRaise`): the front end raises the exception
    /// `exc` names (see `oxtensor_graph::Check`) with the message `msg`.
    #[error("{exc}: {msg}")]
    Raised {
        /// The exception's kind (`oxtensor_graph::Check::exc`).
        exc: String,
        /// The exception's message.
        msg: String,
    },
}

impl From<oxtensor_data::DataError> for KernelError {
    fn from(e: oxtensor_data::DataError) -> KernelError {
        match e {
            oxtensor_data::DataError::OutOfBounds(m) => KernelError::Index(m),
            other => KernelError::Shape(other.to_string()),
        }
    }
}

/// An error while running a compiled function, naming the node and where it was created.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RuntimeError {
    /// A kernel failed.
    #[error("{op} (the node computing {var}) failed: {source}")]
    Kernel {
        /// The op.
        op: String,
        /// Description of the node's first output (name, type, creation site).
        var: String,
        /// What went wrong.
        source: KernelError,
    },
    /// The executable was given the wrong number of values.
    #[error("expected {expected} input values, got {got}")]
    Arity {
        /// Values expected.
        expected: usize,
        /// Values given.
        got: usize,
    },
    /// A value does not fit its input's type (dtype, rank or a static extent). Checked on
    /// every run, also when the caller trusts its inputs: kernels are compiled for the input
    /// types, and a value of another dtype or shape would make them read out of bounds.
    #[error("bad input value for {input}: got {got} (checked on every call, trust_input or not)")]
    InputType {
        /// The input (name, type, creation site).
        input: String,
        /// The value's dtype and shape.
        got: String,
    },
    /// The backend cannot compile this graph.
    #[error("{0}")]
    Unsupported(String),
    /// One step of a loop failed (inside its step graph, or a step's result did not fit).
    #[error("step {step} of {op} failed: {source}")]
    InLoop {
        /// The loop.
        op: String,
        /// The step (from 0).
        step: usize,
        /// What went wrong.
        source: Box<RuntimeError>,
    },
}

impl RuntimeError {
    /// The error a loop's step failure wraps, however deeply (the error itself otherwise): what
    /// decides the kind of the failure.
    pub fn root(&self) -> &RuntimeError {
        match self {
            RuntimeError::InLoop { source, .. } => source.root(),
            other => other,
        }
    }
}
