//! The rule sets, one module per topic. Each rule is a function under a one-line comment
//! stating its identity (`// log(1 + x) → log1p(x)`), listed in its module's `RULES` table; the
//! pipeline ([`crate::PIPELINE`]) decides which sets run in which pass. A set's name is a tag
//! of its rules.

mod algebra;
mod branches;
mod check;
mod einsum;
mod fold;
mod fused_matmul;
mod fused_reduce;
mod fusion;
mod last_only;
mod layout;
mod linalg;
mod loops;
mod merge_branches;
mod merge_scans;
mod products;
mod shape;
mod sigmoid;
mod specialize;
mod stabilize;
mod useless;

use crate::RuleSet;

pub use fusion::fuse;
pub use last_only::scan_last_only;
pub use merge_branches::merge_branches;
pub use merge_scans::merge_scans;

/// Constant folding: nodes whose inputs are all constants become constants.
pub const FOLD: RuleSet = RuleSet {
    name: "constant_folding",
    rules: fold::RULES,
};

/// Lazy branches: outputs both branches compute alike leave the `IfElse`, computations both
/// branches share move before it, and an `IfElse` reading another on the same condition reads
/// its branches directly.
pub const BRANCHES: RuleSet = RuleSet {
    name: "branches",
    rules: branches::RULES,
};

/// Loops: work that is the same at every step of a `Scan` moves before it.
pub const LOOPS: RuleSet = RuleSet {
    name: "loops",
    rules: loops::RULES,
};

/// Useless operations: `x + 0`, `x * 1`, double negation and transposition, no-op casts,
/// reshapes and shape assertions, constant switches; and the `nan_unsafe` `x * 0`, `x - x`.
pub const USELESS: RuleSet = RuleSet {
    name: "useless",
    rules: useless::RULES,
};

/// Arithmetic normal forms: flat n-ary sums and products with folded constants, subtraction
/// and negation forms, powers of powers, constants out of sums.
pub const ALGEBRA: RuleSet = RuleSet {
    name: "algebra",
    rules: algebra::RULES,
};

/// Layout and reduction normal forms: dimshuffles lifted through elementwise ops, nested
/// reductions, casts and reshapes merged.
pub const LAYOUT: RuleSet = RuleSet {
    name: "layout",
    rules: layout::RULES,
};

/// Products and quotients: common factors of numerators and denominators cancelled, and
/// factors distributed over a sum when that cancels divisions (`((a/x + b/y)·x·y) → a·y + b·x`).
pub const PRODUCTS: RuleSet = RuleSet {
    name: "products",
    rules: products::RULES,
};

/// Elementwise work at the lowest rank: broadcast-only dimshuffles moved out of elementwise
/// ops, padded matrix products made matrix-vector products.
pub const LOWER_RANK: RuleSet = RuleSet {
    name: "lower_rank",
    rules: layout::LOWER_RANK_RULES,
};

/// Shapes from input shapes: `shape(f(x))` and `shape_i(f(x))` without computing `f(x)`.
pub const SHAPE: RuleSet = RuleSet {
    name: "shape",
    rules: shape::RULES,
};

/// Numerical stabilization: `log1p`, `expm1`, `softplus`, log-sigmoid, logsumexp, softmax.
pub const STABILIZE: RuleSet = RuleSet {
    name: "stabilize",
    rules: stabilize::RULES,
};

/// The logistic function written with `exp`: `1/(1 + exp(-x))`, `exp(x)/(1 + exp(x))` and
/// the forms their gradients take become `sigmoid`.
pub const SIGMOID: RuleSet = RuleSet {
    name: "sigmoid",
    rules: sigmoid::RULES,
};

/// An einsum built before its shapes were static, planned and inlined once they are.
pub const EINSUM: RuleSet = RuleSet {
    name: "einsum",
    rules: einsum::RULES,
};

/// Linear algebra: `inv(a) @ b` as `solve(a, b)`, `log(det(a))` through `slogdet`.
pub const LINALG: RuleSet = RuleSet {
    name: "linalg",
    rules: linalg::RULES,
};

/// Specialization: small powers, inverse pairs, dot products.
pub const SPECIALIZE: RuleSet = RuleSet {
    name: "specialize",
    rules: specialize::RULES,
};
