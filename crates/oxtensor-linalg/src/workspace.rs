//! One matrix at a time, in the caller's buffers: [`Workspace`] runs the per-matrix kernels
//! of [`crate::cholesky`], [`crate::cho_solve`] and [`crate::solve_triangular`] on row-major
//! slices the caller owns, writing the result into a slice it gives, with the workspace
//! those kernels need kept between calls. A caller that repeats the same small problem (a
//! loop step's host call) then allocates nothing per call, where the tensor ops allocate
//! their output and batch bookkeeping every time. Both run the same kernel, so they agree
//! bit for bit.

use crate::decomp::{CholeskyParams, cholesky_one, cholesky_scratch};
use crate::solve::{ChoSolveParams, SolveTriangularParams, cho_solve_one, solve_triangular_one};
use crate::{LinalgError, Real};
use faer::dyn_stack::{MemBuffer, MemStack};

/// The workspace kept between calls of the per-matrix kernels (empty until a factorisation
/// larger than the unblocked kernels' needs one).
#[derive(Default)]
pub struct Workspace {
    mem: Option<MemBuffer>,
    bytes: usize,
}

/// The error for a slice `arg` of `len` elements where the extents give another length.
fn lengths(op: &'static str, arg: &'static str, len: usize, expected: usize) -> LinalgError {
    LinalgError::Shape {
        op,
        arg,
        expected: format!("{expected} elements"),
        got: vec![len],
    }
}

/// The first of `slices` (name, length, expected length) whose length is not the expected one.
fn check(op: &'static str, slices: &[(&'static str, usize, usize)]) -> Result<(), LinalgError> {
    match slices.iter().find(|(_, len, want)| len != want) {
        Some(&(arg, len, want)) => Err(lengths(op, arg, len, want)),
        None => Ok(()),
    }
}

impl Workspace {
    /// An empty workspace.
    pub fn new() -> Workspace {
        Workspace::default()
    }

    /// The Cholesky factor of the row-major `n × n` `a` into `out` (row-major `n × n`), as
    /// [`crate::cholesky`] computes it for one matrix (errors included).
    pub fn cholesky<T: Real>(
        &mut self,
        a: &[T],
        out: &mut [T],
        n: usize,
        p: &CholeskyParams,
    ) -> Result<(), LinalgError> {
        check(
            "cholesky",
            &[("a", a.len(), n * n), ("out", out.len(), n * n)],
        )?;
        let req = cholesky_scratch::<T>(n);
        if self.mem.is_none() || self.bytes < req.size_bytes() {
            self.mem = Some(MemBuffer::new(req));
            self.bytes = req.size_bytes();
        }
        let mem = self.mem.get_or_insert_with(|| MemBuffer::new(req));
        cholesky_one(a, out, n, p, MemStack::new(mem))
    }

    /// `x` with `a x = b` from the row-major `m × m` Cholesky factor `c` of `a` and the
    /// row-major `m × cols` `b`, into `x` (row-major `m × cols`), as [`crate::cho_solve`]
    /// computes it for one system.
    pub fn cho_solve<T: Real>(
        &mut self,
        c: &[T],
        b: &[T],
        x: &mut [T],
        (m, cols): (usize, usize),
        p: &ChoSolveParams,
    ) -> Result<(), LinalgError> {
        let (mm, mk) = (m * m, m * cols);
        check(
            "cho_solve",
            &[("c", c.len(), mm), ("b", b.len(), mk), ("x", x.len(), mk)],
        )?;
        cho_solve_one(c, b, x, m, cols, p.lower)
    }

    /// `x` with `t x = b` for the triangle of the row-major `m × m` `a` that `p` names and the
    /// row-major `m × k` `b`, into `x` (row-major `m × k`), as [`crate::solve_triangular`]
    /// computes it for one system.
    pub fn solve_triangular<T: Real>(
        &mut self,
        a: &[T],
        b: &[T],
        x: &mut [T],
        (m, k): (usize, usize),
        p: &SolveTriangularParams,
    ) -> Result<(), LinalgError> {
        let (mm, mk) = (m * m, m * k);
        check(
            "solve_triangular",
            &[("a", a.len(), mm), ("b", b.len(), mk), ("x", x.len(), mk)],
        )?;
        solve_triangular_one(a, b, x, m, k, p)
    }
}
