//! The interpreter's reference kernels: one exhaustive `match` over [`Op`] dispatching to a
//! module per family. Kernels take input tensors (any strides) and return fresh outputs (or
//! views, for view ops); they never trust shapes they have not checked.

mod check;
pub mod complex;
mod composite;
mod composite_reduce;
mod elemwise;
mod extra;
mod in_place_extra;
mod index;
mod layout;
mod linalg;
mod matmul;
mod matmul_epilogue;
pub mod random;
mod reduce;
pub mod scalar;

pub use composite_reduce::reduce_of_elemwise;
pub use in_place_extra::InPlaceExtra;
pub use linalg::InPlaceLinalg;
pub use matmul_epilogue::{Epilogue, matmul_panels};
/// The element types [`InPlaceLinalg::run`] computes in (`f64`, `f32`).
pub use oxtensor_linalg::Real;

use crate::KernelError;
use oxtensor_data::Tensor;
use oxtensor_graph::{Op, TensorType};
use std::sync::Arc;

/// What a kernel knows about its node besides the values: the static types of inputs and
/// outputs (for the static-1 broadcasting rule and output dtypes).
pub struct KernelCtx<'a> {
    /// Static types of the inputs.
    pub input_types: &'a [TensorType],
    /// Static types of the outputs.
    pub output_types: &'a [TensorType],
}

/// Elements above which a kernel splits its work across threads.
pub const PARALLEL_THRESHOLD: usize = 1 << 16;

/// Computes `op` on `inputs`, returning one tensor per output.
pub fn eval(op: &Op, inputs: &[&Tensor], ctx: &KernelCtx<'_>) -> Result<Vec<Tensor>, KernelError> {
    let one = |t: Tensor| Ok(vec![t]);
    match op {
        Op::Elemwise(s) => one(elemwise::elemwise(*s, inputs, ctx)?),
        Op::Reduce { op, axes } => one(reduce::reduce(*op, axes, inputs[0])?),
        Op::ArgReduce { op, axis } => one(reduce::arg_reduce(*op, *axis, inputs[0])?),
        Op::DimShuffle { order } => one(layout::dimshuffle(inputs[0], order)?),
        Op::Reshape { .. } => one(layout::reshape(inputs[0], inputs[1])?),
        Op::Shape => one(layout::shape(inputs[0])),
        Op::ShapeI(i) => one(layout::shape_i(inputs[0], *i)?),
        Op::SpecifyShape(spec) => one(layout::specify_shape(inputs[0], spec)?),
        Op::Alloc { .. } => one(layout::alloc(inputs[0], &inputs[1..])?),
        Op::Arange(dt) => one(layout::arange(*dt, inputs[0], inputs[1], inputs[2])?),
        Op::Eye(dt) => one(layout::eye(*dt, inputs[0], inputs[1], inputs[2])?),
        Op::MakeVector(dt) => one(layout::make_vector(*dt, inputs)?),
        Op::Join { axis } => one(layout::join(*axis, inputs, ctx.output_types[0].dtype)?),
        Op::Split { axis, n } => layout::split(*axis, *n, inputs[0], inputs[1]),
        Op::Subtensor(spec) => one(index::subtensor(inputs[0], spec, &inputs[1..])?),
        Op::IncSubtensor { index, set } => one(index::inc_subtensor(
            inputs[0],
            inputs[1],
            index,
            &inputs[2..],
            *set,
        )?),
        Op::Take { axis } => one(index::take(inputs[0], inputs[1], *axis)?),
        Op::IncTake { axis, set } => one(index::inc_take(
            inputs[0], inputs[1], inputs[2], *axis, *set,
        )?),
        Op::GradMarker(_) => one(inputs[0].clone()),
        Op::Composite(g) => composite::composite(g, inputs, ctx),
        Op::FusedReduce { op, axes, body } => one(composite_reduce::fused_reduce(
            *op, axes, body, inputs, ctx,
        )?),
        Op::MatMul => one(matmul::matmul(
            inputs[0],
            inputs[1],
            ctx.output_types[0].dtype,
        )?),
        Op::FusedMatMul { body } => one(matmul_epilogue::fused_matmul(body, inputs, ctx)?),
        // Compiled functions run these through their `InnerBodies`; alone, they run here.
        Op::OpFromGraph(_) | Op::IfElse(_) | Op::Scan(_) => crate::inner::eval_alone(op, inputs),
        Op::Linalg(l) => linalg::linalg(l, inputs),
        Op::Random(r) => random::random(r, inputs),
        Op::Extra(e) => extra::extra(e, inputs),
        Op::CheckAndRaise(c) => check::check(c, inputs),
    }
}

/// Whether an output of shape `shape` can be written into `inputs[k]`'s buffer: its storage is
/// owned (not a caller's NumPy buffer), it is C-contiguous with exactly the output's shape (so
/// its element at each flat output position is the output's), and every input sharing its
/// storage is the same view (a repeated argument). That nothing outside the call reads the
/// storage is the in-place kernels' callers' guarantee.
pub(in crate::kernels) fn donor_fits(inputs: &[&Tensor], shape: &[usize], k: usize) -> bool {
    let Some(d) = inputs.get(k) else {
        return false;
    };
    d.storage().is_owned()
        && d.is_contiguous()
        && d.shape() == shape
        && inputs.iter().all(|t| {
            !Arc::ptr_eq(t.storage(), d.storage())
                || (t.dtype() == d.dtype()
                    && t.shape() == d.shape()
                    && t.strides() == d.strides()
                    && t.offset() == d.offset())
        })
}

/// Like [`eval`], but output 0 may be written into the buffer of `inputs[donor]` (the memory
/// plan's [`crate::Call::donor`]), which is then returned as output 0, saving an allocation
/// and its page faults.
///
/// `Elemwise` and `Composite` nodes write in place whenever the donor can hold the result (its
/// owned storage, C-contiguous, of output 0's shape and dtype); every other op, and every case
/// that does not fit, returns a fresh output exactly as [`eval`] does. The values are
/// the same either way.
///
/// # Safety
/// For the duration of the call, nothing else may read or write the elements of
/// `inputs[donor]`: no slice or pointer into them may be in use, on this thread or another.
/// The plan guarantees this for [`crate::Call::donor`]: nothing outside the call uses the
/// donor's storage (its only other handle, if any, is a consumed shared variable's, which the
/// caller holds locked), and its slot lends it to this call alone.
pub unsafe fn eval_in_place(
    op: &Op,
    inputs: &[&Tensor],
    ctx: &KernelCtx<'_>,
    donor: usize,
) -> Result<Vec<Tensor>, KernelError> {
    match op {
        // SAFETY: our caller's guarantee is the one `elemwise_in_place` asks for.
        Op::Elemwise(s) => Ok(vec![unsafe {
            elemwise::elemwise_in_place(*s, inputs, ctx, donor)?
        }]),
        // SAFETY: our caller's guarantee is the one `composite_in_place` asks for.
        Op::Composite(g) => unsafe { composite::composite_in_place(g, inputs, ctx, donor) },
        // Every other op allocates, which is always correct.
        _ => eval(op, inputs, ctx),
    }
}
