use super::KernelCtx;
use crate::KernelError;
use oxtensor_data::Tensor;
use oxtensor_graph::ScalarOp;

/// Applies `op` elementwise with broadcasting; the output dtype is `ctx.output_types[0].dtype`.
pub fn elemwise(
    op: ScalarOp,
    inputs: &[&Tensor],
    ctx: &KernelCtx<'_>,
) -> Result<Tensor, KernelError> {
    let _ = (op, inputs, ctx);
    Err(KernelError::Value("elemwise: not yet implemented".into()))
}
