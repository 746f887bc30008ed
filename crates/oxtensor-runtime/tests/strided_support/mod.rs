//! Strided views for kernel tests, shared by the matmul, reduce and composite-reduce tests: a
//! [`Layout`] describes a view of a shape over a larger buffer (dimensions in any memory order,
//! stepped, reversed, broadcast with stride 0, after a pad), proptest strategies generate
//! them, and [`Rng`] fills the buffers deterministically.

#![allow(dead_code)] // each test binary uses a different subset

use oxtensor_data::{Element, Tensor};
use proptest::prelude::*;

/// A view of `shape` over a larger buffer: memory order `perm` (outermost first), a step of 1
/// or 2 per dimension, reversed dimensions, broadcast (stride 0) dimensions and a leading pad.
#[derive(Debug, Clone)]
pub struct Layout {
    /// The view's shape.
    pub shape: Vec<usize>,
    /// The dimensions in memory order, outermost first.
    pub perm: Vec<usize>,
    /// The distance, in units of the dimension's packed stride, between consecutive elements.
    pub step: Vec<usize>,
    /// Dimensions walked backwards (negative strides).
    pub neg: Vec<bool>,
    /// Dimensions of stride 0: every index reads the same elements.
    pub bcast: Vec<bool>,
    /// Buffer elements before the view's first one.
    pub pad: usize,
}

impl Layout {
    /// The C-contiguous view of `shape`.
    pub fn contiguous(shape: &[usize]) -> Layout {
        let r = shape.len();
        Layout {
            shape: shape.to_vec(),
            perm: (0..r).collect(),
            step: vec![1; r],
            neg: vec![false; r],
            bcast: vec![false; r],
            pad: 0,
        }
    }

    /// The contiguous layout with the last two dimensions swapped in memory (a transposed
    /// view); `shape` has rank 2 or more.
    pub fn transposed(shape: &[usize]) -> Layout {
        let mut l = Layout::contiguous(shape);
        let r = shape.len();
        l.perm.swap(r - 2, r - 1);
        l
    }

    /// Buffer length, strides and offset of the view.
    pub fn geometry(&self) -> (usize, Vec<isize>, usize) {
        let r = self.shape.len();
        let mut strides = vec![0isize; r];
        let mut acc = 1usize;
        for &d in self.perm.iter().rev() {
            let extent = if self.bcast[d] {
                1
            } else {
                strides[d] = (acc * self.step[d]) as isize;
                self.shape[d] * self.step[d]
            };
            acc *= extent.max(1);
        }
        let mut offset = self.pad;
        for ((s, &n), &neg) in strides.iter_mut().zip(&self.shape).zip(&self.neg) {
            if neg && n > 0 {
                offset += (n - 1) * *s as usize;
                *s = -*s;
            }
        }
        (self.pad + acc, strides, offset)
    }

    /// The view, over a buffer filled by `value(i)` for element `i` of the buffer.
    pub fn build<T: Element>(&self, value: impl FnMut(usize) -> T) -> Tensor {
        let (len, strides, offset) = self.geometry();
        let data: Vec<T> = (0..len).map(value).collect();
        let base = Tensor::from_slice(&data, &[len]).unwrap();
        base.view(&self.shape, &strides, offset).unwrap()
    }
}

/// Any layout of `shape`: random memory order, steps, reversals, a pad, and stride-0
/// dimensions each with probability `bcast`.
pub fn layout_for(shape: Vec<usize>, bcast: f64) -> impl Strategy<Value = Layout> {
    let r = shape.len();
    (
        Just((0..r).collect::<Vec<usize>>()).prop_shuffle(),
        prop::collection::vec(1usize..=2, r),
        prop::collection::vec(any::<bool>(), r),
        prop::collection::vec(prop::bool::weighted(bcast), r),
        0usize..3,
    )
        .prop_map(move |(perm, step, neg, bcast, pad)| Layout {
            shape: shape.clone(),
            perm,
            step,
            neg,
            bcast,
            pad,
        })
}

/// A layout of rank up to `max_rank` with extents up to `max_extent` (zero one time in nine).
pub fn layout(max_rank: usize, max_extent: usize) -> impl Strategy<Value = Layout> {
    (0..=max_rank)
        .prop_flat_map(move |r| {
            prop::collection::vec(prop_oneof![1 => Just(0), 8 => 1..=max_extent], r)
        })
        .prop_flat_map(|shape| layout_for(shape, 0.15))
}

/// A small deterministic generator (splitmix64) for buffer contents.
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in [-1, 1).
    pub fn signed_unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
}
