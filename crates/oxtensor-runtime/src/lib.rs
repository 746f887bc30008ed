//! Running graphs: the [`Backend`]/[`Executable`] traits every backend implements, the schedule
//! shared by all of them, and the reference interpreter with its kernels.

mod backend;
mod error;
mod interp;
pub mod kernels;

pub use backend::{Backend, Executable};
pub use error::{KernelError, RuntimeError};
pub use interp::{Interpreter, Plan, eval_node};
