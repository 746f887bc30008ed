//! oxtensor: a symbolic tensor compiler.
//!
//! Build a graph of tensor operations symbolically, compile it with [`function`], and call the
//! result on arrays:
//!
//! ```
//! use oxtensor::{function, vector, DType, Tensor};
//!
//! let x = vector("x", DType::F64);
//! let y = (&x * &x).sum(None);
//! let f = function(&[x], &[y]).build().unwrap();
//! let out = f.call(&[Tensor::from_slice(&[1.0, 2.0, 3.0], &[3]).unwrap()]).unwrap();
//! assert_eq!(out[0].item::<f64>(), Some(14.0));
//! ```
//!
//! The layers below are re-exported: [`oxtensor_data`] (dtypes, tensors), [`oxtensor_graph`]
//! (graphs, ops, builders), [`oxtensor_runtime`] (backends).

mod constructors;
mod error;
mod function;
pub mod gradient;
mod mode;
mod profile;
pub mod random;
mod shared;

pub use constructors::*;
pub use error::Error;
pub use function::{Function, FunctionBuilder, OnUnusedInput, function};
pub use gradient::{grad, grad_vars};
pub use mode::Mode;
pub use oxtensor_rewrite::{Optimizer, RewriteReport};
pub use profile::{NodeTime, Profile};
pub use shared::{get_value, set_value, shared};

pub use oxtensor_data::{DType, Tensor};
pub use oxtensor_graph::build::{self as ops, Idx, Scalar, linalg};
pub use oxtensor_graph::{
    AssumeA, GraphError, IfElse, LinalgOp, OpFromGraph, PrintOptions, QrMode, Scan, ScanSpec,
    TensorType, Var, debugprint, ifelse, scan,
};
pub use oxtensor_runtime::RuntimeError;
pub use {oxtensor_data, oxtensor_graph, oxtensor_rewrite, oxtensor_runtime};
