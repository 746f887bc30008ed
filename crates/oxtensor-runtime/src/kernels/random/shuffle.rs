//! A permutation's or a choice without replacement's draws for
//! [`InPlaceDraws`](super::InPlaceDraws): the generator's `permutation_into` and
//! `choice_without_replacement(_p)_into` write the sampled rows' indices into a buffer kept
//! between calls, with the choice's scratch kept too, and the rows are copied out of the
//! parameter's values, the same indices and rows the interpreter kernel's `permutation` and
//! `choice` take, from the same generator state.

use super::{Column, bad};
use crate::KernelError;
use oxtensor_data::{DType, Element};
use oxtensor_graph::random::{Distribution, RandomOp};
use oxtensor_random::{ChoiceScratch, Generator};

/// The sample of a permutation or a choice without replacement laid out in advance.
pub(super) struct Shuffle {
    dist: Distribution,
    /// The rows each batch element takes: a permutation's `n` or `x`'s first extent, or a
    /// choice's sample size (the product of its `core_shape`).
    rows: usize,
    /// Values per row: 1 when the draw is the indices themselves, else the product of the
    /// extents of `x` or `a` after the first.
    rest: usize,
    /// The draw is the indices themselves: `x` or `a` is an integer scalar.
    indices: bool,
    /// A choice's population when `a` is an array: its first extent.
    pop: usize,
    /// A choice's `core_shape` as laid out.
    core_shape: Vec<usize>,
    /// The indices drawn, `rows` per batch element.
    idx: Vec<i64>,
    scratch: ChoiceScratch,
}

impl Shuffle {
    /// The sample of `r` (a permutation or a choice without replacement) from parameters of
    /// dtypes and extents `params` into a draw of extents `shape`, with the batch shape it
    /// draws over (a permutation's `size`; none for a choice); `None` when `r` is neither, or
    /// the extents are not those the graph gives its draw.
    pub fn new(
        r: RandomOp,
        params: &[(DType, &[usize])],
        shape: &[usize],
    ) -> Option<(Shuffle, Vec<usize>)> {
        let &(a_dtype, a_shape) = params.first()?;
        let (batch, rows, sample) = match r.dist {
            Distribution::Permutation if params.len() == 1 => {
                if a_shape.is_empty() {
                    let ([n], None | Some(0)) = (shape, r.size_ndim) else {
                        return None;
                    };
                    (0, *n, Vec::new())
                } else {
                    let nb = r.size_ndim.unwrap_or(0);
                    if shape.len() != nb + a_shape.len() || shape[nb..] != *a_shape {
                        return None;
                    }
                    (nb, a_shape[0], Vec::new())
                }
            }
            Distribution::ChoiceWithoutReplacement | Distribution::ChoiceWithoutReplacementP
                if params.len() == r.dist.params().len() =>
            {
                let &[len] = params.last()?.1 else {
                    return None;
                };
                if matches!(r.size_ndim, Some(n) if n > 0)
                    || shape.len() < len
                    || (!a_shape.is_empty() && shape[len..] != a_shape[1..])
                    || (a_shape.is_empty() && shape.len() != len)
                {
                    return None;
                }
                let sample = shape[..len].to_vec();
                (0, sample.iter().product(), sample)
            }
            _ => return None,
        };
        let indices = a_shape.is_empty();
        if indices && !a_dtype.is_int() {
            return None;
        }
        let count: usize = shape[..batch].iter().product();
        let shuffle = Shuffle {
            dist: r.dist,
            rows,
            rest: a_shape.iter().skip(1).product(),
            indices,
            pop: a_shape.first().copied().unwrap_or(0),
            core_shape: sample,
            idx: vec![0; count * rows],
            scratch: ChoiceScratch::default(),
        };
        Some((shuffle, shape[..batch].to_vec()))
    }

    /// The values each batch element draws.
    pub fn support(&self) -> usize {
        self.rows * self.rest
    }

    /// Draws the indices from `g`, the parameters' values in `floats` (and in `ints`, at
    /// `int_slot`, for those of integer dtype); errors as the kernel does, or when the
    /// parameters' values ask for other extents than those laid out.
    pub fn draw(
        &mut self,
        g: &mut Generator,
        floats: &[Column<f64>],
        ints: &[Column<i64>],
        int_slot: &[Option<usize>],
    ) -> Result<(), KernelError> {
        let dist = self.dist;
        let int_value = |k: usize| {
            int_slot
                .get(k)
                .copied()
                .flatten()
                .and_then(|j| ints.get(j))
                .map_or(&[][..], |c| c.values.as_slice())
        };
        if dist == Distribution::Permutation {
            if self.indices && int_value(0) != [self.rows as i64] {
                return Err(KernelError::Shape(format!(
                    "permutation: n {:?} is not the {} laid out",
                    int_value(0),
                    self.rows
                )));
            }
            if self.rows > 0 {
                for chunk in self.idx.chunks_mut(self.rows) {
                    g.permutation_into(chunk);
                }
            }
            return Ok(());
        }
        let core_shape = int_value(int_slot.len().saturating_sub(1));
        if core_shape.len() != self.core_shape.len()
            || core_shape
                .iter()
                .zip(&self.core_shape)
                .any(|(&c, &s)| usize::try_from(c).ok() != Some(s))
        {
            return Err(KernelError::Shape(format!(
                "choice: core_shape {core_shape:?} is not the sample shape {:?} laid out",
                self.core_shape
            )));
        }
        let pop = if self.indices {
            let n = int_value(0).first().copied().unwrap_or(0);
            usize::try_from(n).map_err(|_| {
                KernelError::Value(format!(
                    "choice: a must be >= 0 (a population size), got {n}"
                ))
            })?
        } else {
            self.pop
        };
        if dist == Distribution::ChoiceWithoutReplacementP {
            let p = floats.get(1).map_or(&[][..], |c| c.values.as_slice());
            if p.len() != pop {
                return Err(KernelError::Shape(format!(
                    "choice: a and p must have same size ({pop} and [{}])",
                    p.len()
                )));
            }
            g.choice_without_replacement_p_into(p, &mut self.idx, &mut self.scratch)
        } else {
            g.choice_without_replacement_into(pop, &mut self.idx, &mut self.scratch)
        }
        .map_err(|e| bad(dist, e))
    }

    /// Copies the last draw into `out`: the indices, or the rows of parameter 0 (`x` or `a`,
    /// from `ints` when `int_values` holds its integers, else from `floats`) they select,
    /// converted to `out`'s element type.
    pub fn write<T: Element>(&self, out: &mut [T], floats: &[f64], int_values: Option<&[i64]>) {
        if self.indices {
            for (o, &i) in out.iter_mut().zip(&self.idx) {
                *o = T::cast_from(i);
            }
            return;
        }
        if self.rest == 0 {
            return;
        }
        for (row, &i) in out.chunks_mut(self.rest).zip(&self.idx) {
            let at = i as usize * self.rest..(i as usize + 1) * self.rest;
            match int_values {
                Some(v) => {
                    for (o, &x) in row.iter_mut().zip(v.get(at).unwrap_or_default()) {
                        *o = T::cast_from(x);
                    }
                }
                None => {
                    for (o, &x) in row.iter_mut().zip(floats.get(at).unwrap_or_default()) {
                        *o = T::cast_from(x);
                    }
                }
            }
        }
    }
}
