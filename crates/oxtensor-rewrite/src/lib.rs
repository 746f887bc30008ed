//! Graph rewriting: rules as data, a driver that applies them to a fixpoint, and the pipeline of
//! named passes a mode selects from by tags.
//!
//! # Rules
//!
//! A [`Rule`] is a name, the op it matches at its root (the driver's index key), tags, and a
//! pure action from the matched variable to its replacement:
//!
//! ```
//! use oxtensor_graph::{ScalarOp, Var};
//! use oxtensor_rewrite::pattern::unary;
//! use oxtensor_rewrite::{Root, Rule, RuleCtx};
//!
//! // exp(log(x)) → x   (a toy: the real rule keeps the NaN of negative x)
//! fn exp_log(v: &Var, _: &RuleCtx<'_>) -> Option<Var> {
//!     unary(unary(v, ScalarOp::Exp)?, ScalarOp::Log).cloned()
//! }
//! const EXP_LOG: Rule = Rule::new("exp_log", Root::Elemwise(ScalarOp::Exp), exp_log);
//! ```
//!
//! Rules live in rule sets, one module per topic ([`rules`]), each rule under a one-line comment
//! stating its identity. Rules go one way, never make the graph worse, and avoid general
//! commutativity and associativity; `docs/adding-a-rule.md` is the how-to and the policy.
//!
//! # The driver
//!
//! Graphs are immutable and interned, so applying a rewrite means rebuilding the users of the
//! replaced variable. [`apply_rules`] does it bottom-up in one depth-first sweep (a node sees its
//! inputs already rewritten; a replacement is itself rewritten before its users), repeats sweeps
//! until one finds nothing, and stops earlier at the [`Limits`] (sweeps, rewrites, nodes, wall
//! time) with a [`StopReason`]. It counts hits per rule, refuses replacements of another type,
//! and costs time linear in the graph per sweep.
//!
//! # The pipeline
//!
//! [`PIPELINE`] lists the passes in order (`useless`, `canonicalize`, `stabilize`,
//! `specialize`, then the whole-graph `fusion` pass, [`rules::fuse`]), each with tags. An [`Optimizer`] selects rules by tag (PyTensor's
//! `including`/`excluding`/`requiring`); [`rewrite`] runs the selected passes on a
//! [`FunctionGraph`](oxtensor_graph::FunctionGraph), verifies the graph after each pass in debug
//! builds, and returns a [`RewriteReport`]. `OXTENSOR_DUMP_PASS=<pass|all>` prints the graph
//! before and after passes to stderr; [`Optimizer::dumping`] keeps the same text in the report.

#![warn(missing_docs)]

mod bodies;
mod driver;
mod error;
pub mod pattern;
mod pipeline;
mod rule;
pub mod rules;

pub use driver::{Limits, PassStats, StopReason, apply_rules, type_fits};
pub use error::RewriteError;
pub use pipeline::{
    GraphPass, Optimizer, PIPELINE, Pass, PassDump, PassReport, RewriteReport, Tags, rewrite,
    rewrite_outputs,
};
pub use rule::{OpKind, REAL_ONLY, Root, Rule, RuleCtx, RuleSet};
