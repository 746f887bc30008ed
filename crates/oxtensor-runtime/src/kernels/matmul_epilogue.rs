//! `Op::FusedMatMul`: a float matrix product whose elementwise epilogue (`relu(x@w + b)`'s
//! bias and activation) runs on panels of output rows, each sized for the L2 cache and read and
//! written in place, instead of as a separate node with its own pass and output.
//!
//! [`matmul_panels`] is the product half, shared by both backends: one `gemm` call computes
//! the whole product (split across threads by `gemm` itself when it is large), then the
//! caller's epilogue runs on panels of rows, in parallel. The interpreter's epilogue
//! ([`fused_matmul`]) runs the program on a panel with the `Composite` kernel, writing it in
//! place; the native backend's runs its generated C loop over the panel's elements. Products
//! the panel path does not take (other dtypes, operands that do not broadcast to the product)
//! are computed unfused, with the same values and errors.
//!
//! Why not one `gemm` call per panel, the epilogue following while the panel is still in
//! cache: each call packs the whole right operand again. On W4's 512×1024·1024×1024 `float64`
//! product (`examples/gemm_vs_faer.rs`) four panels of 128 rows took 20% longer than one call,
//! while the separate epilogue pass they would save costs under 2% of it.

use super::KernelCtx;
use super::composite::{composite, composite_in_place};
use super::matmul::{GEMM_PARALLEL_WORK, GemmElement, Problem, gemm_into, matmul};
use super::reduce::storage_slice;
use crate::KernelError;
use oxtensor_data::{DType, Tensor};
use oxtensor_graph::{FrozenGraph, TensorType};
use rayon::prelude::*;
use std::ops::Range;
use std::sync::Arc;

/// Elements of an epilogue's panel: 512 KiB of `float64`, which stays in a core's L2 cache
/// between the epilogue's reading and writing it, and is enough work to be worth a task.
const PANEL_ELEMENTS: usize = 1 << 16;

/// The epilogue of a panel: called with the whole output and the panel's rows once those rows
/// hold the product, possibly on several threads at once for different panels. It may read
/// and write those rows only.
pub type Epilogue<'a> = dyn Fn(&Tensor, Range<usize>) -> Result<(), KernelError> + Sync + 'a;

/// `out := a·b` for `float32`/`float64` matrices `a` (m×k) and `b` (k×n) of `out`'s dtype
/// (any strides and offsets), computed panel by panel of rows; `epilogue` runs on each panel
/// right after it is written (see the module documentation).
///
/// The product is one `gemm` call (with `gemm`'s own threads when it is large); the epilogue
/// then runs on panels of about `PANEL_ELEMENTS` elements, in parallel.
///
/// # Safety
/// `out` must be a C-contiguous m×n tensor from the start of its owned storage (its elements
/// may be uninitialised: all are written before the epilogue reads them), and nothing but
/// this call and its epilogue may read or write its elements until it returns.
pub unsafe fn matmul_panels(
    a: &Tensor,
    b: &Tensor,
    out: &Tensor,
    epilogue: &Epilogue<'_>,
) -> Result<(), KernelError> {
    let (sa, sb, dtype) = (a.shape(), b.shape(), out.dtype());
    let fits = sa.len() == 2
        && sb.len() == 2
        && sa[1] == sb[0]
        && out.shape() == [sa[0], sb[1]].as_slice()
        && out.is_contiguous()
        && out.offset() == 0
        && out.storage().is_owned();
    if !fits {
        return Err(KernelError::Shape(format!(
            "matmul: the panel product takes two matrices with matching inner extents and an \
             output of their product's shape, got shapes {sa:?}, {sb:?} and {:?}",
            out.shape()
        )));
    }
    match dtype {
        // SAFETY: our caller's guarantee on `out`, whose dtype is `T`'s.
        DType::F32 if a.dtype() == dtype && b.dtype() == dtype => unsafe {
            panels::<f32>(a, b, out, epilogue)
        },
        // SAFETY: as above.
        DType::F64 if a.dtype() == dtype && b.dtype() == dtype => unsafe {
            panels::<f64>(a, b, out, epilogue)
        },
        _ => Err(KernelError::Value(format!(
            "matmul: the panel product takes float32 or float64 operands of its output's \
             dtype, got {} and {} for {dtype}",
            a.dtype(),
            b.dtype()
        ))),
    }
}

/// [`matmul_panels`] for one element type.
///
/// # Safety
/// [`matmul_panels`]'s guarantee on `out`, which the caller has checked has the product's
/// shape and `T`'s dtype.
unsafe fn panels<T: GemmElement>(
    a: &Tensor,
    b: &Tensor,
    out: &Tensor,
    epilogue: &Epilogue<'_>,
) -> Result<(), KernelError> {
    let p = Problem::matrices(a, b);
    let (m, n, k) = (p.m, p.n, p.k);
    let dst = out.data_ptr().cast_mut().cast::<T>();
    if m * n == 0 {
        return Ok(());
    }
    if k == 0 {
        // A sum over nothing: zeros, then the epilogue.
        // SAFETY: `out` holds m·n elements of `T` from its first, which nothing else uses;
        // all-zero bytes are `T`'s zero (`T` is a float).
        unsafe { std::ptr::write_bytes(dst, 0, m * n) };
    } else {
        let (lhs, rhs) = (storage_slice::<T>(a)?, storage_slice::<T>(b)?);
        let parallelism = if m * n * k >= GEMM_PARALLEL_WORK {
            gemm::Parallelism::Rayon(0)
        } else {
            gemm::Parallelism::None
        };
        let (ao, bo) = p.offsets[0];
        // SAFETY: `dst` points to the m·n elements of the C-contiguous output, which our
        // caller lends us; the operand offsets are `a`'s and `b`'s own views, inside their
        // storages, which `lhs`/`rhs` cover; m, n, k ≥ 1.
        unsafe { gemm_into(&p, (m, n, k), dst, lhs, ao, rhs, bo, parallelism) };
    }
    let rows = (PANEL_ELEMENTS / n).clamp(1, m);
    let starts: Vec<usize> = (0..m).step_by(rows).collect();
    let panel = |r0: usize| epilogue(out, r0..(r0 + rows).min(m));
    if starts.len() > 1 && rayon::current_num_threads() > 1 {
        starts.into_par_iter().try_for_each(panel)
    } else {
        starts.into_iter().try_for_each(panel)
    }
}

/// Whether `e`, a rank-2 input of the epilogue with static type `ty`, broadcasts to an output
/// of shape `shape` (each extent equal, or 1 where the static type says so).
fn broadcasts(e: &Tensor, ty: Option<&TensorType>, shape: &[usize]) -> bool {
    e.ndim() == 2
        && (0..2).all(|d| {
            e.shape()[d] == shape[d]
                || (e.shape()[d] == 1
                    && ty.and_then(|t| t.shape.get(d).copied().flatten()) == Some(1))
        })
}

/// The interpreter's kernel of `Op::FusedMatMul`: `Composite(body)(a·b, e…)` for inputs
/// `(a, b, e…)`, the program run on each panel of the product in place (see the module
/// documentation); any other case runs the product and the program one after the other.
pub fn fused_matmul(
    body: &FrozenGraph,
    inputs: &[&Tensor],
    ctx: &KernelCtx<'_>,
) -> Result<Tensor, KernelError> {
    let [a, b, others @ ..] = inputs else {
        return Err(KernelError::Value(format!(
            "FusedMatMul takes at least 2 inputs, got {}",
            inputs.len()
        )));
    };
    let dtype = ctx
        .output_types
        .first()
        .map(|t| t.dtype)
        .ok_or_else(|| KernelError::Value("FusedMatMul has one output".into()))?;
    let types = |i: usize| ctx.input_types.get(i);
    // The product's static type: a row (column) extent of 1 where `a` (`b`) declares it.
    let static_dim = |i: usize, d: usize| types(i).and_then(|t| t.shape.get(d).copied().flatten());
    let product_type = TensorType::new(dtype, &[static_dim(0, 0), static_dim(1, 1)]);
    let mut program_types = vec![product_type];
    program_types.extend((2..inputs.len()).map(|i| {
        types(i)
            .cloned()
            .unwrap_or_else(|| TensorType::new(inputs[i].dtype(), &vec![None; inputs[i].ndim()]))
    }));
    let program_ctx = KernelCtx {
        input_types: &program_types,
        output_types: ctx.output_types,
    };
    let fits = a.ndim() == 2
        && b.ndim() == 2
        && a.dtype() == dtype
        && b.dtype() == dtype
        && matches!(dtype, DType::F32 | DType::F64)
        && a.shape()[1] == b.shape()[0]
        && others
            .iter()
            .enumerate()
            .all(|(i, e)| broadcasts(e, program_types.get(i + 1), &[a.shape()[0], b.shape()[1]]));
    if !fits {
        let product = matmul(a, b, dtype)?;
        let mut program_inputs = vec![&product];
        program_inputs.extend_from_slice(others);
        return composite(body, &program_inputs, &program_ctx)?
            .into_iter()
            .next()
            .ok_or_else(|| KernelError::Value("FusedMatMul: the epilogue has one output".into()));
    }
    let epilogue = |out: &Tensor, rows: Range<usize>| -> Result<(), KernelError> {
        let n = out.shape()[1];
        let panel = out.view(&[rows.len(), n], out.strides(), rows.start * n)?;
        let views = others
            .iter()
            .map(|e| {
                if e.shape()[0] == 1 {
                    Ok((*e).clone())
                } else {
                    let offset = e.offset() as isize + rows.start as isize * e.strides()[0];
                    let offset = usize::try_from(offset).map_err(|_| {
                        KernelError::Index("FusedMatMul: negative panel offset".into())
                    })?;
                    Ok(e.view(&[rows.len(), e.shape()[1]], e.strides(), offset)?)
                }
            })
            .collect::<Result<Vec<Tensor>, KernelError>>()?;
        let mut program_inputs = vec![&panel];
        program_inputs.extend(views.iter());
        // SAFETY: the panel's rows are this call's alone (see `Epilogue`): no other slice or
        // pointer into them is in use while the program runs.
        let result = unsafe { composite_in_place(body, &program_inputs, &program_ctx, 0)? };
        match result.first() {
            Some(r) if Arc::ptr_eq(r.storage(), panel.storage()) => Ok(()),
            Some(r) => {
                // The program's value did not go in place (it always should): copy it there.
                let bytes = r.to_contiguous().to_bytes();
                let size = out.dtype().size();
                if bytes.len() != rows.len() * n * size {
                    return Err(KernelError::Value(
                        "FusedMatMul: the epilogue's panel has the wrong size".into(),
                    ));
                }
                // SAFETY: the panel's rows, `rows.len()·n` elements of `size` bytes from the
                // panel's first element, are this call's alone, and `bytes` is a separate
                // buffer of exactly that many bytes.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        bytes.as_ptr(),
                        panel.data_ptr().cast_mut(),
                        bytes.len(),
                    )
                };
                Ok(())
            }
            None => Err(KernelError::Value(
                "FusedMatMul: the epilogue has one output".into(),
            )),
        }
    };
    let [m, n] = [a.shape()[0], b.shape()[1]];
    // SAFETY: `matmul_panels` writes every element before its epilogue or anyone reads it,
    // and on an error the tensor is dropped unread.
    let out = unsafe { Tensor::uninit(dtype, &[m, n]) }?;
    // SAFETY: `out` is fresh, C-contiguous from the start of its owned storage, and only the
    // product and the epilogue touch it until the call returns.
    unsafe { matmul_panels(a, b, &out, &epilogue) }?;
    Ok(out)
}
