use crate::{DataError, Shape, Strides};

/// C-order (row-major) element strides for a shape.
pub fn contiguous_strides(shape: &[usize]) -> Strides {
    let mut strides: Strides = smallvec::smallvec![0; shape.len()];
    let mut acc: isize = 1;
    for (s, &d) in strides.iter_mut().zip(shape).rev() {
        *s = acc;
        acc = acc.wrapping_mul(d.max(1) as isize);
    }
    strides
}

/// NumPy broadcasting of two shapes (right-aligned; a 1 stretches to match).
pub fn broadcast_shapes(a: &[usize], b: &[usize]) -> Result<Shape, DataError> {
    let n = a.len().max(b.len());
    let mut out: Shape = smallvec::smallvec![0; n];
    for i in 0..n {
        let da = if i + a.len() >= n {
            a[i + a.len() - n]
        } else {
            1
        };
        let db = if i + b.len() >= n {
            b[i + b.len() - n]
        } else {
            1
        };
        out[i] = match (da, db) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            _ => {
                return Err(DataError::Broadcast {
                    a: a.to_vec(),
                    b: b.to_vec(),
                });
            }
        };
    }
    Ok(out)
}

/// Strides that read an array of `shape`/`strides` as if it had shape `target` (right-aligned);
/// stretched dimensions get stride 0. `None` when the shapes do not broadcast.
pub fn broadcast_strides(shape: &[usize], strides: &[isize], target: &[usize]) -> Option<Strides> {
    if shape.len() > target.len() {
        return None;
    }
    let lead = target.len() - shape.len();
    let mut out: Strides = smallvec::smallvec![0; target.len()];
    for (i, &t) in target.iter().enumerate().skip(lead) {
        let d = shape[i - lead];
        out[i] = if d == t {
            strides[i - lead]
        } else if d == 1 {
            0
        } else {
            return None;
        };
    }
    Some(out)
}

/// Iterates the element offsets of a strided array in C order.
///
/// This is the general (slow) path of the interpreter's kernels; contiguous arrays take fast
/// paths that never build one.
pub struct StridedIndex {
    shape: Shape,
    strides: Strides,
    index: Shape,
    offset: isize,
    remaining: usize,
}

impl StridedIndex {
    /// Starts at `offset` (in elements) and walks `shape` with `strides`.
    pub fn new(shape: &[usize], strides: &[isize], offset: usize) -> StridedIndex {
        let remaining = shape.iter().product();
        StridedIndex {
            shape: shape.into(),
            strides: strides.into(),
            index: smallvec::smallvec![0; shape.len()],
            offset: offset as isize,
            remaining,
        }
    }
}

impl Iterator for StridedIndex {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        let current = self.offset as usize;
        for d in (0..self.shape.len()).rev() {
            self.index[d] += 1;
            self.offset += self.strides[d];
            if self.index[d] < self.shape[d] {
                break;
            }
            self.offset -= self.strides[d] * self.shape[d] as isize;
            self.index[d] = 0;
        }
        Some(current)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl ExactSizeIterator for StridedIndex {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broadcast_follows_numpy() {
        assert_eq!(broadcast_shapes(&[3, 1], &[4]).unwrap().as_slice(), &[3, 4]);
        assert_eq!(broadcast_shapes(&[], &[2, 2]).unwrap().as_slice(), &[2, 2]);
        assert!(broadcast_shapes(&[3], &[4]).is_err());
    }

    #[test]
    fn strided_index_walks_transposed() {
        // A 2x3 C array viewed transposed (3x2): strides (1, 3).
        let offs: Vec<usize> = StridedIndex::new(&[3, 2], &[1, 3], 0).collect();
        assert_eq!(offs, vec![0, 3, 1, 4, 2, 5]);
        let rev: Vec<usize> = StridedIndex::new(&[3], &[-1], 2).collect();
        assert_eq!(rev, vec![2, 1, 0]);
        assert_eq!(StridedIndex::new(&[2, 0], &[0, 1], 0).count(), 0);
    }
}
