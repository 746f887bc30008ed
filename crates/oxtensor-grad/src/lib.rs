//! Automatic differentiation of oxtensor graphs: symbolic gradients, Jacobians, Hessians and
//! Jacobian-vector products, with PyTensor's semantics.
//!
//! # How it works
//!
//! Differentiation is symbolic: [`grad`] takes graph variables and returns graph variables that
//! compute the derivatives, to be compiled with the rest (`oxtensor::function`). Nothing is
//! evaluated here.
//!
//! Each op has a *pullback* rule ([`op_pullback`], one exhaustive `match` over the closed `Op`
//! enum, and one over `ScalarOp` for elementwise functions): given the gradient of the cost with
//! respect to the op's output (the *cotangent*), it builds the gradient with respect to each
//! input — the vector-Jacobian product `Jᵀg`. [`grad`] seeds the cost with one and walks the
//! graph once in reverse topological order, summing the contributions each variable receives
//! from its consumers in a single n-ary `Add` once all are in. The gradient graph is therefore
//! linear in the size of the graph (a chain of 100 ops gives O(100) gradient nodes), and a
//! shared subexpression is differentiated once. Rules only build ops that have rules
//! themselves, so gradients can be differentiated again: [`hessian`],
//! [`hessian_vector_product`], and [`pushforward`] (forward mode, obtained by pulling back the
//! pullback, see its module).
//!
//! # Connected, zero, disconnected, undefined
//!
//! A rule says, per input, one of four things ([`Term`]): a gradient; *zero* (the output depends
//! on the input but is locally constant: comparisons, `floor`, `int_div`, `argmax`, integer
//! outputs, [`zero_grad`]); *disconnected* (the output does not depend on the input's values:
//! `shape`, index inputs, [`disconnected_grad`]); or *undefined* (the gradient does not exist:
//! the sizes of `eye`). A `wrt` variable that only receives disconnected terms is reported by
//! [`DisconnectedInputs`]; zeros are not an error; undefined gradients follow
//! [`NullGradients`].
//!
//! # Shapes and dtypes
//!
//! A gradient has the shape of its variable. Elementwise ops broadcast only dimensions of static
//! extent 1 (after padding the rank on the left), so the gradient of a broadcast input is summed
//! over the padded leading dimensions and, keeping them, over the dimensions where the input has
//! static extent 1 and the output does not; `MatMul` batch dimensions, `Alloc` values and
//! `inc_subtensor` values are summed back the same way. A gradient has its variable's dtype if
//! that is a float, and `float64` otherwise.
//!
//! Gradients through integer (or bool) values are zero: an integer output is locally constant
//! in its inputs. An integer *input* of a float-valued function (`cast(i, float64)`,
//! `log(i)`) is differentiated as if it were real, as PyTensor does; so the gradient with
//! respect to an integer variable is zero when the cost reaches it only through integer
//! arithmetic, comparisons or indices, and the real-extension derivative otherwise.
//!
//! # Conventions at kinks and ties (PyTensor's)
//!
//! | function | convention |
//! |---|---|
//! | `abs` at 0 | gradient 0 (`g · sign(x)`) |
//! | `maximum(x, y)`, `minimum` at ties | all to the first argument `x` (`eq(out, x) · g`), none to `y` |
//! | `clip(x, lo, hi)` | `x` gets `g` where `lo ≤ x ≤ hi` (bounds included), `lo` where `x < lo`, `hi` where `x > hi` |
//! | `max`/`min` reductions with ties | every element equal to the extreme gets `g` |
//! | `prod` with zeros | exact: the product of the other elements (PyTensor's zero-aware rule) |
//! | `switch(c, a, b)` | `c` gets zero; `a` gets `g` where `c`, `b` elsewhere |
//! | `sqrt` at 0 | infinite |
//! | `pow(x, y)`, `∂/∂y` at `x = 0` | 0 (instead of `log 0 · 0`) |
//! | `sign`, `floor`, `ceil`, `round`, `trunc`, `int_div`, comparisons, bitwise, `isnan` | zero |
//! | `x[idx]` with repeated `idx` | contributions accumulate (`inc_subtensor` / `np.add.at`) |
//! | `set_subtensor` with repeated indices | each duplicate value gets the region's gradient |
//! | `gammaln` | the digamma function (`SpecialFn::Psi`, computed by oxtensor-special) |
//!
//! # Markers
//!
//! [`zero_grad`], [`disconnected_grad`] and [`grad_clip`] return a value equal to their input
//! that changes how the gradient flows through it; each is an `Op::GradMarker` node (see the
//! [`marker`] module).

mod check;
mod complex;
mod driver;
mod elemwise;
mod error;
mod extra;
mod forward;
mod grad;
mod higher;
mod index;
mod inner;
mod layout;
mod linalg;
mod linalg_factor;
pub mod marker;
mod matmul;
mod random;
mod reduce;
mod rules;
mod scan;
mod special_fns;
mod util;

pub use error::GradError;
pub use forward::pushforward;
pub use grad::{
    DisconnectedInputs, GradOptions, Gradient, NullGradients, ReturnDisconnected, grad, grad_vars,
    pullback,
};
pub use higher::{hessian, hessian_vector_product, jacobian};
pub use marker::{disconnected_grad, grad_clip, undefined_grad, zero_grad};
pub use rules::{Term, op_pullback};
pub use util::grad_dtype;
