//! [`InPlaceExtra`]: an arg-reduction, a cumulative sum or product, a sort, an argsort or a
//! vector made of scalars, run on the caller's C-order buffers with the interpreter kernel's
//! own per-element code ([`super::reduce::arg_into`], [`super::extra::cumulate_lanes`],
//! [`super::extra::sort_into`], [`super::extra::argsort_into`], `Element::cast_from`), so
//! that a staged loop's host call computes its step without tensors and gets the
//! interpreter's values bit for bit and its errors.

use super::extra::{
    CUMULATE_BOOL, SortScratch, argsort_into, cumulate_lanes, lanes_at_axis, sort_into,
};
use super::reduce::arg_into;
use crate::KernelError;
use oxtensor_data::{C64, C128, DType, Element, dispatch_dtype};
use oxtensor_graph::{ArgReduceOp, ExtraOp, Op};

/// The node an [`InPlaceExtra`] computes, with its extents.
enum Kind {
    /// `argmax`/`argmin` of an operand of extents `shape` (C-order `strides`).
    Arg {
        op: ArgReduceOp,
        axis: Option<usize>,
        shape: Vec<usize>,
        strides: Vec<isize>,
    },
    /// `cumsum`/`cumprod` over lanes `(outer, n, inner)`.
    Cumulate {
        lanes: (usize, usize, usize),
        mul: bool,
    },
    /// `sort` over lanes `(outer, n, inner)`.
    Sort((usize, usize, usize)),
    /// `argsort` over lanes `(outer, n, inner)`.
    ArgSort((usize, usize, usize)),
    /// A vector of the scalar operands, converted to the output's dtype.
    MakeVector,
}

/// One node of the ops above run on the caller's buffers (each operand's elements in C order,
/// as bytes of its dtype), with the index buffers of a sort kept between calls: a step
/// allocates nothing (but a sort along lanes of more than about 500 elements, whose merge
/// buffer the standard library's stable sort takes from the heap, and an arg-reduction along
/// an outer axis of rows wider than 32, whose row of candidates is then on the heap).
pub struct InPlaceExtra {
    kind: Kind,
    inputs: Vec<(DType, usize)>,
    output: (DType, usize),
    scratch: SortScratch,
}

impl InPlaceExtra {
    /// The node `op` on operands of dtypes and extents `params` (C order), or `None` when it is
    /// another op or extents the kernel rejects (an axis out of bounds, a `MakeVector` item
    /// that is not a scalar): the interpreter's kernel then runs it, or reports the error.
    pub fn new(op: &Op, params: &[(DType, &[usize])]) -> Option<InPlaceExtra> {
        let numel = |s: &[usize]| s.iter().product::<usize>();
        let inputs: Vec<(DType, usize)> = params.iter().map(|(d, s)| (*d, numel(s))).collect();
        let (kind, output) = match (op, params) {
            (Op::ArgReduce { op, axis }, [(_, shape)]) => {
                let out = match axis {
                    None => 1,
                    Some(a) => numel(shape) / shape.get(*a).copied().filter(|&n| n > 0)?,
                };
                let kind = Kind::Arg {
                    op: *op,
                    axis: *axis,
                    shape: shape.to_vec(),
                    strides: c_strides(shape),
                };
                (kind, (DType::I64, out))
            }
            (Op::Extra(e), [(dtype, shape)]) => {
                let out = numel(shape);
                match *e {
                    ExtraOp::Cumulate { axis, mul } => {
                        let lanes = lanes_at_axis(shape, axis).ok()?;
                        (Kind::Cumulate { lanes, mul }, (*dtype, out))
                    }
                    ExtraOp::Sort { axis } => {
                        (Kind::Sort(lanes_at_axis(shape, axis).ok()?), (*dtype, out))
                    }
                    ExtraOp::ArgSort { axis } => (
                        Kind::ArgSort(lanes_at_axis(shape, axis).ok()?),
                        (DType::I64, out),
                    ),
                    _ => return None,
                }
            }
            (Op::MakeVector(dtype), _) => {
                if params.iter().any(|(_, s)| !s.is_empty()) {
                    return None;
                }
                (Kind::MakeVector, (*dtype, params.len()))
            }
            _ => return None,
        };
        Some(InPlaceExtra {
            kind,
            inputs,
            output,
            scratch: SortScratch::default(),
        })
    }

    /// The dtype and number of elements of the node's output.
    pub fn output(&self) -> (DType, usize) {
        self.output
    }

    /// Computes the node from `inputs` (each operand's elements in C order, the bytes of its
    /// dtype, aligned for it) into `out` (the output's, likewise); errors as the interpreter's
    /// kernel does, or when a buffer is not of the extents and dtype given to [`Self::new`].
    pub fn run(&mut self, inputs: &[&[u8]], out: &mut [u8]) -> Result<(), KernelError> {
        let fits = |b: &[u8], (d, n): (DType, usize)| b.len() == n * d.size();
        if inputs.len() != self.inputs.len()
            || !inputs.iter().zip(&self.inputs).all(|(b, &p)| fits(b, p))
            || !fits(out, self.output)
        {
            return Err(KernelError::Value(
                "in-place kernel: buffers of other extents than laid out".into(),
            ));
        }
        let (out_dtype, _) = self.output;
        match &self.kind {
            Kind::Arg {
                op,
                axis,
                shape,
                strides,
            } => {
                let dst = typed_mut::<i64>(out)?;
                dispatch_dtype!(self.inputs[0].0, T => {
                    let xs = typed::<T>(inputs[0])?;
                    arg_into::<T>(*op, *axis, xs, (shape, strides, 0), dst)
                })
            }
            Kind::Cumulate { lanes, mul } => {
                out.copy_from_slice(inputs[0]);
                let (lanes, mul) = (*lanes, *mul);
                match out_dtype {
                    DType::Bool => return Err(KernelError::Value(CUMULATE_BOOL.into())),
                    DType::I8 => cumulate_lanes(typed_mut::<i8>(out)?, lanes, mul),
                    DType::I16 => cumulate_lanes(typed_mut::<i16>(out)?, lanes, mul),
                    DType::I32 => cumulate_lanes(typed_mut::<i32>(out)?, lanes, mul),
                    DType::I64 => cumulate_lanes(typed_mut::<i64>(out)?, lanes, mul),
                    DType::U8 => cumulate_lanes(typed_mut::<u8>(out)?, lanes, mul),
                    DType::U16 => cumulate_lanes(typed_mut::<u16>(out)?, lanes, mul),
                    DType::U32 => cumulate_lanes(typed_mut::<u32>(out)?, lanes, mul),
                    DType::U64 => cumulate_lanes(typed_mut::<u64>(out)?, lanes, mul),
                    DType::F32 => cumulate_lanes(typed_mut::<f32>(out)?, lanes, mul),
                    DType::F64 => cumulate_lanes(typed_mut::<f64>(out)?, lanes, mul),
                    DType::C64 => cumulate_lanes(typed_mut::<C64>(out)?, lanes, mul),
                    DType::C128 => cumulate_lanes(typed_mut::<C128>(out)?, lanes, mul),
                }
                Ok(())
            }
            Kind::Sort(lanes) => dispatch_dtype!(out_dtype, T => {
                let xs = typed::<T>(inputs[0])?;
                sort_into(xs, typed_mut::<T>(out)?, *lanes, &mut self.scratch);
                Ok(())
            }),
            Kind::ArgSort(lanes) => dispatch_dtype!(self.inputs[0].0, T => {
                let xs = typed::<T>(inputs[0])?;
                argsort_into(xs, typed_mut::<i64>(out)?, *lanes, &mut self.scratch);
                Ok(())
            }),
            Kind::MakeVector => dispatch_dtype!(out_dtype, T => {
                let dst = typed_mut::<T>(out)?;
                for (o, (b, &(dtype, _))) in dst.iter_mut().zip(inputs.iter().zip(&self.inputs)) {
                    *o = dispatch_dtype!(dtype, S => T::cast_from(typed::<S>(b)?[0]));
                }
                Ok(())
            }),
        }
    }
}

/// The C-order strides (in elements) of extents `shape`.
fn c_strides(shape: &[usize]) -> Vec<isize> {
    let mut strides = vec![1isize; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * shape[d + 1] as isize;
    }
    strides
}

/// Whether `b` holds a whole number of elements of `T` and is aligned for them.
fn fits<T: Element>(b: &[u8]) -> Result<(), KernelError> {
    if !b.len().is_multiple_of(size_of::<T>()) || b.as_ptr().align_offset(align_of::<T>()) != 0 {
        return Err(KernelError::Value(format!(
            "in-place kernel: a buffer that is not {} elements",
            T::DTYPE
        )));
    }
    Ok(())
}

/// `b` as a slice of `T` (for `bool`, when every byte is 0 or 1).
fn typed<T: Element>(b: &[u8]) -> Result<&[T], KernelError> {
    fits::<T>(b)?;
    if T::DTYPE == DType::Bool && b.iter().any(|&v| v > 1) {
        return Err(KernelError::Value(
            "in-place kernel: a bool buffer with bytes other than 0 and 1".into(),
        ));
    }
    // SAFETY: `b` holds a whole number of `T`s and is aligned for `T` (checked above); every
    // byte pattern is a valid `T` (plain data without padding, `Element`'s contract), but for
    // `bool`, whose bytes were checked to be 0 or 1; the slice borrows `b`.
    Ok(unsafe { std::slice::from_raw_parts(b.as_ptr().cast::<T>(), b.len() / size_of::<T>()) })
}

/// `b` as a mutable slice of `T`, to be written (a `bool` buffer is cleared first).
fn typed_mut<T: Element>(b: &mut [u8]) -> Result<&mut [T], KernelError> {
    fits::<T>(b)?;
    if T::DTYPE == DType::Bool {
        b.fill(0);
    }
    // SAFETY: as in `typed` (a `bool` buffer now holds only zeros); the slice borrows `b`
    // mutably, and only valid `T`s are ever written through it.
    Ok(unsafe {
        std::slice::from_raw_parts_mut(b.as_mut_ptr().cast::<T>(), b.len() / size_of::<T>())
    })
}
