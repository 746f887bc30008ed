//! Reading one input in the output's element order, converted to the type a loop computes in.

use super::layout::Walk;
use crate::KernelError;
use oxtensor_data::{Element, Tensor, dispatch_dtype};
use smallvec::smallvec;

/// Fills `dst` with the elements at flat output positions `start..start + dst.len()`.
type Fill<'a, T> = Box<dyn Fn(usize, &mut [T]) + Send + Sync + 'a>;

/// Where one input's elements come from, in output order, as values of type `T`.
pub(super) enum Operand<'a, T> {
    /// The same value everywhere (a broadcast scalar or a fully stretched input).
    Scalar(T),
    /// A run of `T` that is already laid out in output order: read in place, no copy.
    Slice(&'a [T]),
    /// Anything else (strided, permuted, partly broadcast or of another dtype): copied block
    /// by block into a scratch buffer, converting with [`Element::cast_from`].
    Gather(Fill<'a, T>),
    /// The input whose buffer the output overwrites (a donor, see `Args::in_place`): its
    /// elements are the output block's values before the loop writes it, so the loop copies
    /// them into the scratch buffer ([`Operand::stage`]) first. Holds no reference to the
    /// buffer: the loop's output block is the only way to it.
    Output,
}

/// One block of an operand: a value to repeat or the block's elements.
pub(super) enum Arg<'b, T> {
    /// The same value for every element of the block.
    Scalar(T),
    /// One value per element of the block.
    Slice(&'b [T]),
}

impl<T: Element> Operand<'_, T> {
    /// Copies the output block `out` (converted to `T`) into `buf` if this operand is the
    /// output's own buffer ([`Operand::Output`]); does nothing for other operands.
    ///
    /// A loop calls this for each operand before it writes the block, then reads the operand
    /// with [`Operand::block`] as usual.
    #[inline]
    pub fn stage<O: Element>(&self, out: &[O], buf: &mut Vec<T>) {
        if let Operand::Output = self {
            buf.clear();
            buf.extend(out.iter().map(|&x| T::cast_from(x)));
        }
    }

    /// The operand's elements at flat output positions `start..start + len`, using `buf` as
    /// scratch when they must be gathered (or, for [`Operand::Output`], where
    /// [`Operand::stage`] copied them).
    #[inline]
    pub fn block<'b>(&'b self, start: usize, len: usize, buf: &'b mut Vec<T>) -> Arg<'b, T> {
        match self {
            Operand::Scalar(v) => Arg::Scalar(*v),
            _ => Arg::Slice(self.block_slice(start, len, buf)),
        }
    }

    /// Like [`Operand::block`], but always as a slice (a scalar is repeated into `buf`).
    #[inline]
    pub fn block_slice<'b>(&'b self, start: usize, len: usize, buf: &'b mut Vec<T>) -> &'b [T] {
        match self {
            Operand::Scalar(v) => {
                buf.clear();
                buf.resize(len, *v);
                buf
            }
            Operand::Slice(s) => &s[start..start + len],
            Operand::Gather(fill) => {
                buf.resize(len, T::default());
                fill(start, buf);
                buf
            }
            Operand::Output => &buf[..len],
        }
    }
}

/// Builds the operand reading `t` (the node's input `index`) along a walk of extents `dims`
/// with the input's `strides`, as values of type `T`.
///
/// Fails (instead of reading out of bounds) if the view reaches outside its storage, which a
/// well-formed `Tensor` never does.
pub(super) fn operand<'a, T: Element>(
    t: &Tensor,
    whole: &'a Tensor,
    index: usize,
    dims: &[usize],
    strides: &[isize],
    numel: usize,
) -> Result<Operand<'a, T>, KernelError> {
    let base = t.offset();
    let out_of_bounds = || {
        KernelError::Index(format!(
            "input {index} (shape {:?}, strides {:?}, offset {base}) reaches outside its storage",
            t.shape(),
            t.strides()
        ))
    };
    if strides.iter().all(|&s| s == 0) {
        return dispatch_dtype!(t.dtype(), S => {
            let src = whole.as_slice::<S>().ok_or_else(out_of_bounds)?;
            let v = src.get(base).ok_or_else(out_of_bounds)?;
            Ok(Operand::Scalar(T::cast_from(*v)))
        });
    }
    // The lowest and highest storage positions the walk reaches.
    let (mut lo, mut hi) = (base as isize, base as isize);
    for (&n, &s) in dims.iter().zip(strides) {
        let span = (n as isize - 1).checked_mul(s).ok_or_else(out_of_bounds)?;
        let end = if span < 0 { &mut lo } else { &mut hi };
        *end = end.checked_add(span).ok_or_else(out_of_bounds)?;
    }
    if lo < 0 || hi >= whole.numel() as isize {
        return Err(out_of_bounds());
    }
    let mut expected = 1isize;
    let mut in_order = true;
    for (&n, &s) in dims.iter().zip(strides).rev() {
        in_order &= s == expected;
        expected = expected.saturating_mul(n as isize);
    }
    if in_order {
        // The elements are the run base..base + numel, which the bounds check above covers.
        let run = base..base + numel;
        if let Some(src) = whole.as_slice::<T>() {
            return Ok(Operand::Slice(&src[run]));
        }
        return dispatch_dtype!(t.dtype(), S => {
            let src = &whole.as_slice::<S>().ok_or_else(out_of_bounds)?[run];
            let fill: Fill<'a, T> = Box::new(move |start, dst: &mut [T]| {
                for (d, &s) in dst.iter_mut().zip(&src[start..]) {
                    *d = T::cast_from(s);
                }
            });
            Ok(Operand::Gather(fill))
        });
    }
    let dims: Walk<usize> = dims.into();
    let strides: Walk<isize> = strides.into();
    dispatch_dtype!(t.dtype(), S => {
        let src = whole.as_slice::<S>().ok_or_else(out_of_bounds)?;
        let fill: Fill<'a, T> = Box::new(move |start, dst: &mut [T]| {
            gather_strided(src, base, &dims, &strides, start, dst)
        });
        Ok(Operand::Gather(fill))
    })
}

/// Copies the elements at flat positions `start..start + dst.len()` of a strided walk (`dims`
/// and `strides` from storage position `base`) into `dst`, converting each to `T`.
///
/// The walk goes run by run along the innermost dimension, so the only per-element work is
/// one load, one conversion and one store. Every position is within `src` (checked by
/// [`operand`] for the whole walk).
fn gather_strided<S: Element, T: Element>(
    src: &[S],
    base: usize,
    dims: &[usize],
    strides: &[isize],
    start: usize,
    dst: &mut [T],
) {
    let rank = dims.len();
    let mut index: Walk<usize> = smallvec![0; rank];
    let mut pos = base as isize;
    let mut rest = start;
    for d in (0..rank).rev() {
        index[d] = rest % dims[d];
        rest /= dims[d];
        pos += index[d] as isize * strides[d];
    }
    let (inner, step) = (dims[rank - 1], strides[rank - 1]);
    let mut done = 0;
    while done < dst.len() {
        let run = (inner - index[rank - 1]).min(dst.len() - done);
        let out = &mut dst[done..done + run];
        match step {
            0 => out.fill(T::cast_from(src[pos as usize])),
            1 => {
                let p = pos as usize;
                for (d, &s) in out.iter_mut().zip(&src[p..p + run]) {
                    *d = T::cast_from(s);
                }
            }
            _ => {
                let mut p = pos;
                for d in out.iter_mut() {
                    *d = T::cast_from(src[p as usize]);
                    p += step;
                }
            }
        }
        done += run;
        index[rank - 1] += run;
        pos += run as isize * step;
        if index[rank - 1] == inner {
            // Carry into the outer dimensions.
            pos -= inner as isize * step;
            index[rank - 1] = 0;
            for d in (0..rank - 1).rev() {
                index[d] += 1;
                pos += strides[d];
                if index[d] < dims[d] {
                    break;
                }
                pos -= dims[d] as isize * strides[d];
                index[d] = 0;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gathers_a_transposed_walk_from_any_start() {
        // A 3x4 C array read transposed (4x3): strides (1, 4).
        let src: Vec<i32> = (0..12).collect();
        let mut all = vec![0i64; 12];
        gather_strided(&src, 0, &[4, 3], &[1, 4], 0, &mut all);
        assert_eq!(all, vec![0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11]);
        for start in 0..12 {
            for len in 0..=12 - start {
                let mut part = vec![0i64; len];
                gather_strided(&src, 0, &[4, 3], &[1, 4], start, &mut part);
                assert_eq!(part, all[start..start + len], "start {start} len {len}");
            }
        }
        let mut rev = vec![0.0f64; 5];
        gather_strided(&src, 11, &[5], &[-2], 0, &mut rev);
        assert_eq!(rev, vec![11.0, 9.0, 7.0, 5.0, 3.0]);
    }
}
