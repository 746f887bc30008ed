//! C code generation: one translation unit per compiled function, made of a fixed prelude
//! and one function per kernel.

mod kernel;
mod prelude;
mod program;
mod scalar;

pub(crate) use program::Program;

use oxtensor_data::DType;
use oxtensor_graph::ReduceOp;

/// What one kernel of a translation unit computes.
pub(crate) enum KernelSource<'a> {
    /// An elementwise loop over a program (`ox_kN`).
    Elemwise(&'a Program),
    /// A reduction (`ox_rN`) of an input of dtype `input`, or of a fused program's output.
    Reduce {
        /// The combining function.
        op: ReduceOp,
        /// The reduced value's dtype when not fused.
        input: DType,
        /// The elementwise producer computed inside the reduction.
        fused: Option<&'a Program>,
    },
}

/// The symbol of kernel `id`.
pub(crate) fn symbol(id: usize, kernel: &KernelSource<'_>) -> String {
    match kernel {
        KernelSource::Elemwise(_) => format!("ox_k{id}"),
        KernelSource::Reduce { .. } => format!("ox_r{id}"),
    }
}

/// The translation unit holding `kernels`, kernel `i` under [`symbol`]`(i, …)`.
pub(crate) fn translation_unit(kernels: &[KernelSource<'_>]) -> String {
    let mut s = String::from(prelude::PRELUDE);
    for (id, k) in kernels.iter().enumerate() {
        s.push('\n');
        s.push_str(&match k {
            KernelSource::Elemwise(p) => kernel::elemwise(id, p),
            KernelSource::Reduce { op, input, fused } => kernel::reduce(id, *op, *input, *fused),
        });
    }
    s
}
