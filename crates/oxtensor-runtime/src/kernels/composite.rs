//! The interpreter's kernel for `Op::Composite`: the inner scalar program evaluated with the
//! elementwise kernel, each inner node applied to whole (broadcast) tensors.

use super::KernelCtx;
use super::elemwise::elemwise;
use crate::KernelError;
use oxtensor_data::Tensor;
use oxtensor_graph::{FrozenGraph, NodeKind, Op, StaticShape, TensorType, Var, toposort};
use rustc_hash::FxHashMap;

/// A value of the inner program: a tensor and the static type it is checked against.
struct Value {
    tensor: Tensor,
    ty: TensorType,
}

/// Evaluates the frozen scalar program `g` elementwise over `inputs` (with `Elemwise`'s
/// broadcasting), returning one tensor per inner output.
pub fn composite(
    g: &FrozenGraph,
    inputs: &[&Tensor],
    ctx: &KernelCtx<'_>,
) -> Result<Vec<Tensor>, KernelError> {
    let ndim = ctx.output_types.first().map_or(0, TensorType::ndim);
    let out_shape: Vec<usize> = (0..ndim)
        .map(|d| {
            inputs
                .iter()
                .map(|t| t.shape()[d])
                .find(|&e| e != 1)
                .unwrap_or(1)
        })
        .collect();
    let mut values: FxHashMap<Var, Value> = FxHashMap::default();
    for ((p, t), ty) in g
        .placeholders()
        .into_iter()
        .zip(inputs)
        .zip(ctx.input_types)
    {
        values.insert(
            p,
            Value {
                tensor: (*t).clone(),
                ty: ty.clone(),
            },
        );
    }
    let leaf = |v: &Var| -> Result<Value, KernelError> {
        match v.node().kind() {
            NodeKind::Constant(c) => {
                let shape = vec![1; ndim];
                Ok(Value {
                    tensor: c.reshape(&shape)?,
                    ty: TensorType::new(c.dtype(), &vec![Some(1); ndim]),
                })
            }
            _ => Err(KernelError::Value(format!(
                "Composite: inner graph reads {}, which is not an input",
                v.describe()
            ))),
        }
    };
    for node in toposort(g.outputs()) {
        let Some(Op::Elemwise(s)) = node.op() else {
            return Err(KernelError::Value(
                "Composite: inner graphs may only hold elementwise ops".into(),
            ));
        };
        let args: Vec<Value> = node
            .inputs()
            .iter()
            .map(|v| match values.get(v) {
                Some(val) => Ok(Value {
                    tensor: val.tensor.clone(),
                    ty: val.ty.clone(),
                }),
                None => leaf(v),
            })
            .collect::<Result<_, _>>()?;
        let shape = broadcast_static(&args, ndim);
        let out_ty = TensorType {
            dtype: node.types()[0].dtype,
            shape,
        };
        let types: Vec<TensorType> = args.iter().map(|a| a.ty.clone()).collect();
        let refs: Vec<&Tensor> = args.iter().map(|a| &a.tensor).collect();
        let inner_ctx = KernelCtx {
            input_types: &types,
            output_types: std::slice::from_ref(&out_ty),
        };
        let tensor = elemwise(*s, &refs, &inner_ctx)?;
        values.insert(Var::output_of(&node, 0), Value { tensor, ty: out_ty });
    }
    g.outputs()
        .iter()
        .map(|o| {
            let v = match values.get(o) {
                Some(v) => v.tensor.clone(),
                None => leaf(o)?.tensor,
            };
            // An output that is an input or constant still has the broadcast output shape.
            if v.shape() == out_shape.as_slice() {
                return Ok(v);
            }
            Ok(v.broadcast_to(&out_shape)?.to_contiguous())
        })
        .collect()
}

/// The static shape of an elementwise result of `args` (a dimension is 1 only where every
/// argument's is).
fn broadcast_static(args: &[Value], ndim: usize) -> StaticShape {
    (0..ndim)
        .map(|d| {
            let mut known = Some(1);
            for a in args {
                match a.ty.shape[d] {
                    Some(1) => {}
                    Some(n) => known = Some(n),
                    None if known == Some(1) => known = None,
                    None => {}
                }
            }
            known
        })
        .collect()
}
