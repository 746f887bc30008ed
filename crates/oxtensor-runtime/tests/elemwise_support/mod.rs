//! Calling the interpreter's elementwise kernel as the interpreter does, shared by the
//! property tests (`elemwise.rs`) and the fixture and special-value tests
//! (`elemwise_cases.rs`).

use oxtensor_data::{DType, Tensor};
use oxtensor_graph::{Op, ScalarOp, TensorType, Var, infer_types};
use oxtensor_runtime::KernelError;
use oxtensor_runtime::kernels::{KernelCtx, eval};

/// The node's types as the graph infers them, for inputs of these dtypes and static shapes.
pub fn node_types(
    op: ScalarOp,
    inputs: &[(DType, Vec<Option<usize>>)],
) -> Option<(Vec<TensorType>, TensorType)> {
    let vars: Vec<Var> = inputs
        .iter()
        .enumerate()
        .map(|(i, (d, s))| Var::input(Some(&format!("x{i}")), TensorType::new(*d, s)))
        .collect();
    let out = infer_types(&Op::Elemwise(op), &vars).ok()?;
    Some((
        vars.iter().map(|v| v.ty().clone()).collect(),
        out[0].clone(),
    ))
}

/// Runs the kernel through `kernels::eval`, as the interpreter does.
pub fn run_typed(
    op: ScalarOp,
    inputs: &[&Tensor],
    input_types: &[TensorType],
    output_type: &TensorType,
) -> Result<Tensor, KernelError> {
    let ctx = KernelCtx {
        input_types,
        output_types: std::slice::from_ref(output_type),
    };
    let mut outs = eval(&Op::Elemwise(op), inputs, &ctx)?;
    assert_eq!(outs.len(), 1);
    Ok(outs.remove(0))
}

/// Runs `op` with no static extents (nothing broadcasts); the graph must accept the dtypes.
pub fn run(op: ScalarOp, inputs: &[&Tensor]) -> Result<Tensor, KernelError> {
    let spec: Vec<_> = inputs
        .iter()
        .map(|t| (t.dtype(), vec![None; t.ndim()]))
        .collect();
    let (types, out) = node_types(op, &spec).expect("the graph accepts these inputs");
    run_typed(op, inputs, &types, &out)
}
