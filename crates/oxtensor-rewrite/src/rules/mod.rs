//! The rule sets, one module per topic. Each rule is a function under a one-line comment
//! stating its identity (`// log(1 + x) → log1p(x)`), listed in its module's `RULES` table; the
//! pipeline ([`crate::PIPELINE`]) decides which sets run in which pass. A set's name is a tag
//! of its rules.

mod algebra;
mod fold;
mod fusion;
mod layout;
mod shape;
mod specialize;
mod stabilize;
mod useless;

use crate::RuleSet;

pub use fusion::fuse;

/// Constant folding: nodes whose inputs are all constants become constants.
pub const FOLD: RuleSet = RuleSet {
    name: "constant_folding",
    rules: fold::RULES,
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

/// Specialization: small powers, inverse pairs, dot products.
pub const SPECIALIZE: RuleSet = RuleSet {
    name: "specialize",
    rules: specialize::RULES,
};
