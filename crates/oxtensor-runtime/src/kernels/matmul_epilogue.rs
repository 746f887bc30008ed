//! `Op::FusedMatMul`: a float matrix product whose elementwise epilogue (`relu(x@w + b)`'s
//! bias and activation) runs on each panel of output rows right after the panel is computed,
//! while it is still in cache, instead of in a second pass over the whole output.
//!
//! [`matmul_panels`] is the product half, shared by both backends: it cuts the output into
//! panels of whole rows (one per thread for a large product, so each panel's product runs
//! sequentially and the right operand is packed once per thread), computes each panel with one
//! `gemm` call and hands it to the caller's epilogue on the same thread. The interpreter's
//! epilogue ([`fused_matmul`]) runs the program on the panel with the `Composite` kernel,
//! writing it in place; the native backend's runs its generated C loop over the panel's
//! elements. Products the panel path does not take (other dtypes, operands that do not
//! broadcast to the product) are computed unfused, with the same values and errors.

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

/// Output rows of a panel below which a product is not split into panels across threads: a
/// panel's product packs the whole right operand again, which only pays on enough rows.
const MIN_PANEL_ROWS: usize = 64;

/// The epilogue of a panel: called with the whole output and the panel's rows once those rows
/// hold the product, on the thread that computed them. It may read and write those rows only.
pub type Epilogue<'a> = dyn Fn(&Tensor, Range<usize>) -> Result<(), KernelError> + Sync + 'a;

/// `out := a·b` for `float32`/`float64` matrices `a` (m×k) and `b` (k×n) of `out`'s dtype
/// (any strides and offsets), computed panel by panel of rows; `epilogue` runs on each panel
/// right after it is written (see the module documentation).
///
/// A product too small to split, or with too few rows for every thread to get
/// `MIN_PANEL_ROWS`, is one panel computed with `gemm`'s own threads.
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

/// A pointer to the output's elements that parallel panels share; each writes its own rows.
struct Rows<T>(*mut T);

// SAFETY: the panels write disjoint rows of the output (see `panels`), and nothing else
// touches the output while they run.
unsafe impl<T> Sync for Rows<T> {}

impl<T> Rows<T> {
    /// The pointer (a method, so that closures capture the whole wrapper, not the field).
    fn get(&self) -> *mut T {
        self.0
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
    let dst = Rows(out.data_ptr().cast_mut().cast::<T>());
    if m * n == 0 {
        return Ok(());
    }
    if k == 0 {
        // A sum over nothing: zeros, then the epilogue.
        // SAFETY: `out` holds m·n elements of `T` from its first, which nothing else uses;
        // all-zero bytes are `T`'s zero (`T` is a float).
        unsafe { std::ptr::write_bytes(dst.get(), 0, m * n) };
        return epilogue(out, 0..m);
    }
    let (lhs, rhs) = (storage_slice::<T>(a)?, storage_slice::<T>(b)?);
    let threads = rayon::current_num_threads();
    let split = threads > 1 && m * n * k >= GEMM_PARALLEL_WORK && m >= threads * MIN_PANEL_ROWS;
    let rows = if split { m.div_ceil(threads) } else { m };
    let parallelism = if !split && m * n * k >= GEMM_PARALLEL_WORK {
        gemm::Parallelism::Rayon(0)
    } else {
        gemm::Parallelism::None
    };
    let (ao, bo) = p.offsets[0];
    let panel = |r0: usize| -> Result<(), KernelError> {
        let len = rows.min(m - r0);
        // SAFETY: row `r0` < m starts inside the m×n output.
        let d = unsafe { dst.get().add(r0 * n) };
        // SAFETY: rows `r0..r0 + len` of the C-contiguous m×n output, len·n elements from
        // `d`, are this panel's alone (panels start `rows` apart, and our caller lends us the
        // elements); the epilogue reads them only after the product returns. The panel's
        // product is rows `r0..r0 + len` of `a` times `b`: moving the left operand's start by
        // `r0` rows keeps every offset it reads inside `a`'s view, and `b` is read as a whole;
        // both lie in their storages, which `lhs`/`rhs` cover. len, n, k ≥ 1.
        unsafe {
            gemm_into(
                &p,
                (len, n, k),
                d,
                lhs,
                ao + r0 as isize * p.a_rs,
                rhs,
                bo,
                parallelism,
            )
        };
        epilogue(out, r0..r0 + len)
    };
    let starts: Vec<usize> = (0..m).step_by(rows).collect();
    if split {
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
