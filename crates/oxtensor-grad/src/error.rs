//! The errors of differentiation, each naming the variable (with [`Var::describe`]: name, type
//! and creation site) and, where one is involved, the op.
//!
//! [`Var::describe`]: oxtensor_graph::Var::describe

use oxtensor_graph::GraphError;

/// Why a gradient, Jacobian or Hessian could not be built.
#[derive(Debug, Clone, thiserror::Error)]
pub enum GradError {
    /// `grad` differentiates a scalar: the cost must be 0-d (PyTensor's `TypeError: Cost must be
    /// a scalar.`). Sum or index a tensor first, or use [`crate::pullback`] with a cotangent.
    #[error(
        "grad: the cost must be a scalar (0-d), got {cost}; reduce it first (e.g. sum) or use pullback with a cotangent"
    )]
    NonScalarCost {
        /// The cost.
        cost: String,
    },
    /// A `wrt` variable that the cost does not depend on (or depends on only through
    /// `disconnected_grad` or ops without a gradient path such as `shape`), under
    /// [`crate::DisconnectedInputs::Raise`].
    #[error(
        "grad: asked for the gradient with respect to {wrt}, which is not part of the computational graph of the cost, or is used only through a non-differentiable operator (shape, disconnected_grad, an index); pass disconnected_inputs=Ignore or Warn to get zeros"
    )]
    Disconnected {
        /// The disconnected variable.
        wrt: String,
    },
    /// The gradient with respect to `wrt` is mathematically undefined (PyTensor's `NullType`),
    /// under [`crate::NullGradients::Raise`]. `reason` names the op and input that made it so.
    #[error("grad: the gradient with respect to {wrt} is undefined: {reason}")]
    Undefined {
        /// The variable whose gradient is undefined.
        wrt: String,
        /// Which op and input make it undefined.
        reason: String,
    },
    /// A gradient supplied by the caller (a `known_grads` entry, a cotangent or a tangent) does
    /// not fit the variable it is for.
    #[error("{context}: the gradient {given} given for {var} {problem}")]
    BadSeed {
        /// Which function and argument.
        context: &'static str,
        /// The variable.
        var: String,
        /// The gradient given.
        given: String,
        /// What is wrong with it.
        problem: String,
    },
    /// Arguments that do not go together (lists of different lengths, options that the
    /// function does not support).
    #[error("{0}")]
    Invalid(String),
    /// Building a node of the gradient graph failed. This means a pullback rule built an
    /// ill-typed node, a bug to report.
    #[error("while building the gradient graph: {0}")]
    Graph(#[from] GraphError),
}

impl GradError {
    /// True for the errors PyTensor reports as a `TypeError` (a non-scalar cost, a gradient of
    /// the wrong type given by the caller, an undefined gradient — PyTensor's
    /// `NullTypeGradError`); the others are `ValueError`s (PyTensor's `DisconnectedInputError`
    /// is one).
    pub fn is_type_error(&self) -> bool {
        match self {
            GradError::NonScalarCost { .. }
            | GradError::Undefined { .. }
            | GradError::BadSeed { .. } => true,
            GradError::Graph(g) => matches!(
                g,
                GraphError::DType { .. } | GraphError::Rank { .. } | GraphError::Arity { .. }
            ),
            GradError::Disconnected { .. } | GradError::Invalid(_) => false,
        }
    }
}
