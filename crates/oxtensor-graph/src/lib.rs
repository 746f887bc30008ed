//! Immutable, hash-consed tensor graphs.
//!
//! A graph is made of [`Var`]s, each an output of a [`Node`]: a leaf (input, shared variable,
//! constant) or an [`Op`] applied to other variables. Nodes are interned, so building the same
//! expression twice yields the same node: `x.exp() == x.exp()` is a pointer comparison, and
//! common subexpressions are shared without a separate pass. Graphs are never mutated; rewrites
//! build new ones.
//!
//! Each concern over ops is one exhaustive `match` in its own module: [`infer_types`] (output
//! dtypes and static shapes), [`shape_of`] (symbolic shapes), and printing; the interpreter's
//! kernels live in `oxtensor-runtime`.

pub mod build;
pub mod check;
mod error;
mod extra;
mod fgraph;
mod frozen;
pub mod index;
mod infer;
mod infer_index;
mod inner;
mod linalg;
mod node;
mod op;
mod print;
pub mod random;
mod scalar_op;
pub mod scan;
mod shape;
mod site;
mod special;
mod types;
mod verify;

pub use check::Check;
pub use error::GraphError;
pub use extra::ExtraOp;
pub use fgraph::{FunctionGraph, clone_replace, toposort};
pub use frozen::FrozenGraph;
pub use infer::infer_types;
pub use inner::{IfElse, OpFromGraph, ifelse};
pub use linalg::{AssumeA, LinalgOp, QrMode};
pub use node::{Inputs, Node, NodeKind, Var, interned_count};
pub use op::{ArgReduceOp, Axes, GradMarker, IndexEntry, IndexSpec, Op, ReduceOp};
pub use print::{PrintOptions, debugprint};
pub use random::{Distribution, RandomOp};
pub use scalar_op::{Arity, ScalarKind, ScalarOp};
pub use scan::{Scan, ScanSpec, scan};
pub use shape::shape_of;
pub use site::{Site, with_site};
pub use special::SpecialFn;
pub use types::{StaticShape, TensorType};
pub use verify::verify;
