//! Python slice and index arithmetic, shared by type inference (for constant indices) and the
//! kernels (for runtime ones), so both agree on every edge case.

/// A slice resolved against an extent: the first position, the step, and how many positions.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ResolvedSlice {
    /// First position taken (meaningless when `len == 0`).
    pub start: i64,
    /// Distance between positions (never 0).
    pub step: i64,
    /// Number of positions taken.
    pub len: usize,
}

/// Resolves `start:stop:step` against an extent `n` exactly as Python's `slice.indices` does:
/// negative bounds count from the end, out-of-range bounds clamp, the step may be negative.
pub fn resolve_slice(
    n: usize,
    start: Option<i64>,
    stop: Option<i64>,
    step: Option<i64>,
) -> Result<ResolvedSlice, String> {
    let step = step.unwrap_or(1);
    if step == 0 {
        return Err("slice step cannot be zero".into());
    }
    let n = n as i64;
    let clamp = |v: i64, lo: i64, hi: i64| v.max(lo).min(hi);
    let adjust = |v: i64, lo: i64, hi: i64| {
        if v < 0 {
            clamp(v + n, lo, hi)
        } else {
            clamp(v, lo, hi)
        }
    };
    let (start, stop) = if step > 0 {
        (
            start.map_or(0, |s| adjust(s, 0, n)),
            stop.map_or(n, |s| adjust(s, 0, n)),
        )
    } else {
        (
            start.map_or(n - 1, |s| adjust(s, -1, n - 1)),
            stop.map_or(-1, |s| adjust(s, -1, n - 1)),
        )
    };
    let len = if step > 0 {
        if stop > start {
            (stop - start + step - 1) / step
        } else {
            0
        }
    } else if start > stop {
        (start - stop + (-step) - 1) / (-step)
    } else {
        0
    };
    Ok(ResolvedSlice {
        start,
        step,
        len: len as usize,
    })
}

/// Resolves an integer index against an extent `n` (negative counts from the end).
pub fn resolve_index(n: usize, i: i64) -> Result<usize, String> {
    let r = if i < 0 { i + n as i64 } else { i };
    if r < 0 || r >= n as i64 {
        Err(format!("index {i} is out of bounds for axis with size {n}"))
    } else {
        Ok(r as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn python_slice(
        n: usize,
        start: Option<i64>,
        stop: Option<i64>,
        step: Option<i64>,
    ) -> Vec<i64> {
        let r = resolve_slice(n, start, stop, step).unwrap();
        (0..r.len as i64).map(|k| r.start + k * r.step).collect()
    }

    #[test]
    fn matches_python_slices() {
        // list(range(5))[::-1], [1:-1], [-10:10:2], [3:1], [::-2], [4:0:-1], [-1:-6:-1]
        assert_eq!(python_slice(5, None, None, Some(-1)), vec![4, 3, 2, 1, 0]);
        assert_eq!(python_slice(5, Some(1), Some(-1), None), vec![1, 2, 3]);
        assert_eq!(python_slice(5, Some(-10), Some(10), Some(2)), vec![0, 2, 4]);
        assert_eq!(python_slice(5, Some(3), Some(1), None), Vec::<i64>::new());
        assert_eq!(python_slice(5, None, None, Some(-2)), vec![4, 2, 0]);
        assert_eq!(
            python_slice(5, Some(4), Some(0), Some(-1)),
            vec![4, 3, 2, 1]
        );
        assert_eq!(
            python_slice(5, Some(-1), Some(-6), Some(-1)),
            vec![4, 3, 2, 1, 0]
        );
        assert_eq!(python_slice(0, None, None, Some(-1)), Vec::<i64>::new());
        assert!(resolve_slice(3, None, None, Some(0)).is_err());
    }

    #[test]
    fn indices_wrap_once() {
        assert_eq!(resolve_index(4, -1), Ok(3));
        assert!(resolve_index(4, 4).is_err());
        assert!(resolve_index(4, -5).is_err());
    }
}
