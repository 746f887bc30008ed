use oxtensor_graph::GraphError;
use oxtensor_runtime::RuntimeError;

/// Everything that can go wrong building, compiling or calling a function.
///
/// The variants split as Python's exceptions do: [`Error::is_type_error`] (dtype, rank, arity,
/// keywords) maps to `TypeError`, shape problems to `ValueError`.
#[derive(Debug, Clone, thiserror::Error)]
pub enum Error {
    /// The graph could not be built.
    #[error(transparent)]
    Graph(#[from] GraphError),
    /// A kernel failed while running.
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    /// An argument has a dtype the input does not accept.
    #[error("bad input argument {input}: expected dtype {expected}, got {got}{hint}")]
    InputDType {
        /// The input (name, type, creation site).
        input: String,
        /// The input's dtype.
        expected: String,
        /// The argument's dtype.
        got: String,
        /// How to fix it.
        hint: &'static str,
    },
    /// An argument has the wrong number of dimensions.
    #[error("bad input argument {input}: expected {expected} dimensions, got {got}")]
    InputRank {
        /// The input.
        input: String,
        /// The input's rank.
        expected: usize,
        /// The argument's rank.
        got: usize,
    },
    /// An argument's extents contradict the input's static shape.
    #[error("bad input argument {input}: expected shape {expected}, got {got:?}")]
    InputShape {
        /// The input.
        input: String,
        /// The static shape (`?` unknown).
        expected: String,
        /// The argument's shape.
        got: Vec<usize>,
    },
    /// Wrong number of arguments.
    #[error("function{name} takes {expected} arguments, got {got}")]
    Arity {
        /// `" 'name'"` or empty.
        name: String,
        /// Inputs.
        expected: usize,
        /// Arguments given.
        got: usize,
    },
    /// A keyword argument names no input, or an input is given twice.
    #[error("{0}")]
    Keyword(String),
    /// An input the outputs do not depend on (`on_unused_input="raise"`).
    #[error("{0}")]
    UnusedInput(String),
    /// An update or a `set_value` whose value does not fit the shared variable.
    #[error("{0}")]
    Update(String),
    /// A bad option value.
    #[error("{0}")]
    Option(String),
}

impl Error {
    /// True for the errors Python reports as `TypeError` (dtype, rank, arity, keywords).
    pub fn is_type_error(&self) -> bool {
        match self {
            Error::InputDType { .. }
            | Error::InputRank { .. }
            | Error::Arity { .. }
            | Error::Keyword(_)
            | Error::Update(_) => true,
            Error::Graph(g) => matches!(
                g,
                GraphError::DType { .. } | GraphError::Rank { .. } | GraphError::Arity { .. }
            ),
            Error::Runtime(r) => matches!(
                r.root(),
                RuntimeError::InputType { .. } | RuntimeError::Arity { .. }
            ),
            Error::InputShape { .. } | Error::UnusedInput(_) | Error::Option(_) => false,
        }
    }
}
