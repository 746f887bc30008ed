//! Running a `FusedMatMul`: the interpreter's panel product
//! ([`oxtensor_runtime::kernels::matmul_panels`]) computes the product, and the node's
//! generated elementwise loop runs the epilogue program on each panel of its rows (in
//! parallel), writing it in place.
//!
//! The loop's operands are the output (as the program's product input, and as its output:
//! the same layout, which the elementwise kernels allow) and the node's other inputs; its walk
//! runs over the output in C order, so a panel of rows is one range of positions. Any case it
//! does not take (other dtypes or ranks, shapes that do not broadcast, an error element) goes
//! to the interpreter, which computes the node or reports the error.

use crate::exec::{ElemFn, ElemLayout, LastLayout};
use crate::walk::{Space, in_bounds};
use oxtensor_data::{DType, Tensor};
use oxtensor_graph::{Node, TensorType};
use oxtensor_runtime::kernels::matmul_panels;
use oxtensor_runtime::{KernelError, RuntimeError, eval_node};
use smallvec::SmallVec;
use std::ffi::c_void;

/// Element pointers of the epilogue's operands, shared by the panels (which run in parallel).
struct Operands {
    inputs: SmallVec<[*const c_void; 8]>,
    output: [*mut c_void; 1],
}

// SAFETY: the pointers are only read by the panels; what they point to is read-only operand
// data, or the output, whose panels each write only their own rows.
unsafe impl Sync for Operands {}

impl Operands {
    /// The input and output pointers (a method, so closures capture the whole wrapper).
    fn get(&self) -> (&[*const c_void], &[*mut c_void; 1]) {
        (&self.inputs, &self.output)
    }
}

/// Runs `FusedMatMul` node `node` on `args` (`a`, `b`, then the epilogue's other inputs) with
/// its epilogue kernel `f`; `last` keeps the epilogue's layout between calls.
pub(crate) fn fused_matmul(
    f: ElemFn,
    last: &LastLayout<ElemLayout>,
    node: &Node,
    args: &[&Tensor],
) -> Result<Vec<Tensor>, RuntimeError> {
    let fallback = || eval_node(node, args);
    let (Some(ty), [a, b, others @ ..]) = (node.types().first(), args) else {
        return fallback();
    };
    let dtype = ty.dtype;
    let fits = matches!(dtype, DType::F32 | DType::F64)
        && a.ndim() == 2
        && b.ndim() == 2
        && a.dtype() == dtype
        && b.dtype() == dtype
        && a.shape()[1] == b.shape()[0]
        && args.iter().all(|t| in_bounds(t));
    if !fits {
        return fallback();
    }
    let shape = [a.shape()[0], b.shape()[1]];
    if shape[0] * shape[1] == 0 {
        return fallback();
    }
    // SAFETY: `matmul_panels` writes every element before the epilogue reads it; on any
    // failure the tensor is dropped unread.
    let Ok(out) = (unsafe { Tensor::uninit(dtype, &shape) }) else {
        return fallback();
    };
    let mut operands: SmallVec<[&Tensor; 8]> = SmallVec::new();
    operands.push(&out);
    operands.extend(others.iter().copied());
    let kept = last.get(&operands, || {
        let inputs = node.inputs();
        let mut types = vec![TensorType::new(
            dtype,
            &[inputs[0].ty().shape[0], inputs[1].ty().shape[1]],
        )];
        types.extend(inputs[2..].iter().map(|v| v.ty().clone()));
        let space = Space::elemwise(&operands, &types)?;
        if space.shape.as_slice() != &shape[..] {
            return None;
        }
        ElemLayout::of(space)
    });
    let Some(kept) = kept else {
        return fallback();
    };
    let walk = &kept.layout.walk;
    let n = shape[1];
    let ptrs = Operands {
        inputs: operands.iter().map(|t| t.data_ptr().cast()).collect(),
        output: [out.data_ptr().cast_mut().cast()],
    };
    drop(operands);
    let epilogue = |_: &Tensor, rows: std::ops::Range<usize>| -> Result<(), KernelError> {
        let (inputs, output) = ptrs.get();
        // SAFETY: `walk` has `dims.len()` (1..=MAX_DIM) extents whose product is the output's
        // m·n elements, with one stride per operand and extent, in C order over the output,
        // so rows `rows` are positions `[rows.start·n, rows.end·n)`, within it. Every operand
        // pointer is its tensor's first element, and every position the walk reaches is inside
        // its storage (shapes checked against the output's, `in_bounds` held). The output is
        // operand 0 with exactly its own layout, and this panel's rows are written by no one
        // else while the call runs (see `Epilogue`); the kernels compute a block before
        // storing it when an output aliases an input.
        let status = unsafe {
            f(
                (rows.start * n) as i64,
                (rows.end * n) as i64,
                walk.dims.len() as i32,
                walk.dims.as_ptr(),
                inputs.as_ptr(),
                walk.strides.as_ptr(),
                output.as_ptr(),
            )
        };
        if status == 0 {
            Ok(())
        } else {
            Err(KernelError::Value(
                "an element of the epilogue is an error".into(),
            ))
        }
    };
    // SAFETY: `out` is fresh, C-contiguous from the start of its owned storage; only the
    // product and the epilogue touch it until the call returns.
    match unsafe { matmul_panels(a, b, &out, &epilogue) } {
        Ok(()) => Ok(vec![out]),
        Err(_) => fallback(),
    }
}
