//! The columns path: the innermost kept dimension is contiguous (leading axes of a C array), so
//! every reduced position holds a contiguous row of the outputs' elements, accumulated
//! elementwise into a row of accumulators.
//!
//! The rows are combined by a fixed pairwise tree ([`column_tree`]): leaves of up to
//! [`ROW_LEAF`] rows are accumulated one row after another, and halves are combined column by
//! column, so float error grows like `ROW_LEAF + log2(rows)` whatever the row length. The
//! columns are processed in chunks of [`COL_CHUNK`], so the accumulators of every level of the
//! tree stay in the L1 cache while the rows stream through: no temporary the size of a whole
//! row is ever allocated or combined.

use super::Reducer;
use super::walk::{Dim, at, for_each_offset};
use crate::kernels::PARALLEL_THRESHOLD;
use oxtensor_data::Element;
use rayon::prelude::*;

/// Rows a leaf of the tree accumulates one after another; a row sum's lanes likewise add
/// `LEAF / LANES` = 64 elements each in turn, so both paths have the same error growth.
const ROW_LEAF: usize = 64;
/// Columns accumulated together: the accumulators of a chunk at every tree level (a few KiB)
/// stay in the L1 cache, and each reduced row is read as runs of this many elements.
const COL_CHUNK: usize = 512;

/// Where the tree splits the rows `lo..hi` into halves, or `None` for a leaf. The fused
/// kernels split at the same places, so they combine exactly as this path does.
pub(in crate::kernels) fn column_mid(lo: usize, hi: usize) -> Option<usize> {
    (hi - lo > ROW_LEAF).then(|| lo + (hi - lo) / 2)
}

/// Reduces the rows `lo..hi` of a run of columns pairwise into `acc` (one accumulator per
/// column, overwritten): `leaf(lo, hi, acc)` pushes the rows `lo..hi` of a leaf, in order, into
/// `acc`, which starts at `identity`; the halves of an inner node are merged column by column
/// with `combine` (earlier rows first). With `parallel`, halves of more than
/// [`PARALLEL_THRESHOLD`] elements run on two threads; the result does not depend on it.
pub(in crate::kernels) fn column_tree<A: Copy + Send + Sync>(
    identity: A,
    combine: &(impl Fn(A, A) -> A + Sync),
    lo: usize,
    hi: usize,
    acc: &mut [A],
    parallel: bool,
    leaf: &(impl Fn(usize, usize, &mut [A]) + Sync),
) {
    let tree = Tree {
        identity,
        combine,
        parallel,
        leaf,
    };
    let mut scratch = vec![identity; depth(hi - lo) * acc.len()];
    tree.node(lo, hi, acc, &mut scratch);
}

/// Levels of halving below a node of `rows` rows (following the larger half).
fn depth(mut rows: usize) -> usize {
    let mut levels = 0;
    while rows > ROW_LEAF {
        rows = rows.div_ceil(2);
        levels += 1;
    }
    levels
}

/// The fixed parts of one [`column_tree`] call.
struct Tree<'a, A, C, L> {
    identity: A,
    combine: &'a C,
    parallel: bool,
    leaf: &'a L,
}

impl<A, C, L> Tree<'_, A, C, L>
where
    A: Copy + Send + Sync,
    C: Fn(A, A) -> A + Sync,
    L: Fn(usize, usize, &mut [A]) + Sync,
{
    /// Reduces rows `lo..hi` into `acc`; `scratch` holds at least `depth(hi - lo)` rows of
    /// accumulators, one per level below, for the right halves.
    fn node(&self, lo: usize, hi: usize, acc: &mut [A], scratch: &mut [A]) {
        let Some(mid) = column_mid(lo, hi) else {
            acc.fill(self.identity);
            (self.leaf)(lo, hi, acc);
            return;
        };
        let w = acc.len();
        if self.parallel && (hi - lo).saturating_mul(w) > PARALLEL_THRESHOLD {
            let mut right = vec![self.identity; w];
            let mut right_scratch = vec![self.identity; depth(hi - mid) * w];
            rayon::join(
                || self.node(lo, mid, acc, scratch),
                || self.node(mid, hi, &mut right, &mut right_scratch),
            );
            self.merge(acc, &right);
        } else {
            // A node that splits has `depth >= 1`, so the scratch holds this level's row.
            let (right, rest) = scratch.split_at_mut(w);
            self.node(lo, mid, acc, rest);
            self.node(mid, hi, right, rest);
            self.merge(acc, right);
        }
    }

    /// `acc[i] = combine(acc[i], right[i])`.
    fn merge(&self, acc: &mut [A], right: &[A]) {
        for (a, &b) in acc.iter_mut().zip(right) {
            *a = (self.combine)(*a, b);
        }
    }
}

/// Reduces the `rows` positions of the reduced dimensions `red` (from `base`) into `dst`, whose
/// outputs are the contiguous columns of each reduced position, [`COL_CHUNK`] columns at a
/// time. Above [`PARALLEL_THRESHOLD`] elements the chunks run in parallel, and so do halves of
/// the rows when there are too few chunks to keep every thread busy.
pub(super) fn reduce_columns<T: Element, R: Reducer<T>>(
    r: R,
    data: &[T],
    red: &[Dim],
    base: isize,
    rows: usize,
    dst: &mut [R::Out],
) {
    let big = rows.saturating_mul(dst.len()) > PARALLEL_THRESHOLD;
    let chunks = dst.len().div_ceil(COL_CHUNK);
    let split_rows = big && chunks < 2 * rayon::current_num_threads();
    let combine = |a, b| r.combine(a, b);
    let chunk = |(i, d): (usize, &mut [R::Out])| {
        let (from, w) = (base + (i * COL_CHUNK) as isize, d.len());
        let mut acc = vec![r.identity(); w];
        let leaf = |lo: usize, hi: usize, acc: &mut [R::Acc]| {
            for_each_offset(red, from, lo, hi, |o| {
                for (a, &x) in acc.iter_mut().zip(&data[at(o)..at(o) + w]) {
                    *a = r.push(*a, x);
                }
            });
        };
        column_tree(r.identity(), &combine, 0, rows, &mut acc, split_rows, &leaf);
        for (d, a) in d.iter_mut().zip(acc) {
            *d = r.finish(a);
        }
    };
    if big && chunks > 1 {
        dst.par_chunks_mut(COL_CHUNK).enumerate().for_each(chunk);
    } else {
        dst.chunks_mut(COL_CHUNK).enumerate().for_each(chunk);
    }
}
