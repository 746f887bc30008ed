//! Running graphs: the [`Backend`]/[`Executable`] traits every backend implements, the schedule
//! shared by all of them, and the reference interpreter with its kernels.

mod backend;
mod error;
mod inner;
mod interp;
pub mod kernels;
mod plan;
mod scan;
mod try_lock;
pub mod warnings;

pub use backend::{Backend, Executable};
pub use error::{KernelError, RuntimeError};
pub use inner::{BodyCache, InnerBodies, interpreted_bodies, run_interpreted};
pub use interp::{Interpreter, eval_node};
pub use plan::{Call, Plan};
pub use try_lock::{Held, TryLock};
