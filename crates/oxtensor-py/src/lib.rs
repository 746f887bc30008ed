//! Python bindings of oxtensor: the `oxtensor._core` extension module.
//!
//! This crate only converts types and forwards calls; graphs are built by
//! [`oxtensor_graph::build`] and compiled and run by the [`oxtensor`] facade. The pure-Python
//! package in `python/oxtensor` wraps these primitives in PyTensor's public API.
//!
//! * [`var`]: the `TensorVariable` class (with `TensorConstant` and `TensorSharedVariable`),
//!   its operators, methods and indexing.
//! * [`builders`]: module-level graph-building functions (`elemwise`, reductions, layout…).
//! * [`function`]: the compiled `Function` and its hot call path.
//! * [`convert`]: NumPy arrays in (zero-copy when the layout allows) and out (owning the Rust
//!   buffer without a copy).
//! * [`recycle`]: small output arrays reused once the caller has let go of them.
//! * [`replace`]: `clone_replace`, substituting variables in a graph.
//! * [`gradient`]: `grad`, `jacobian` and `hessian`.
//! * [`site`]: the user's `file:line` recorded on every variable built from Python.
//! * [`linalg`]: linear algebra (`pt.linalg`) and the matrix helpers (`tril`, `trace`…).
//! * [`special`]: the special functions' table, `logsumexp`, `softmax` and friends.
//! * [`extra`]: extra ops (`cumsum`, `sort`, `unique`…) and the gradient markers.
//! * [`check`]: run-time checks (`oxtensor.raise_op`) and the exceptions they raise.
//! * [`errors`]: Rust errors mapped to `TypeError`/`ValueError`/`IndexError`.

use pyo3::prelude::*;

pub mod builders;
pub mod call_state;
pub mod check;
pub mod convert;
pub mod errors;
pub mod extra;
pub mod function;
pub mod gradient;
pub mod inner;
pub mod linalg;
pub mod operand;
pub mod profile;
pub mod random;
pub mod recycle;
pub mod replace;
pub mod scan;
pub mod serial;
pub mod site;
pub mod special;
pub mod var;
pub mod var_kinds;

/// The extension module `oxtensor._core`.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<var::PyVar>()?;
    m.add_class::<var::PyConstant>()?;
    m.add_class::<var::PyShared>()?;
    m.add_class::<function::PyFunction>()?;
    m.add_class::<profile::PyProfile>()?;
    site::register(m)?;
    convert::register(m)?;
    builders::register(m)?;
    function::register(m)?;
    gradient::register(m)?;
    inner::register(m)?;
    scan::register(m)?;
    linalg::register(m)?;
    random::register(m)?;
    serial::register(m)?;
    replace::register(m)?;
    special::register(m)?;
    extra::register(m)?;
    check::register(m)?;
    Ok(())
}
