//! One matrix at a time, in the caller's buffers: [`Workspace`] runs the per-matrix kernels
//! of [`crate::cholesky`], [`crate::cho_solve`], [`crate::solve_triangular`],
//! [`crate::solve`], [`crate::inv`], [`crate::det`] and [`crate::slogdet`] on row-major
//! slices the caller owns, writing the result into a slice it gives, with the workspace
//! those kernels need kept between calls. A caller that repeats the same small problem (a
//! loop step's host call) then allocates nothing per call, where the tensor ops allocate
//! their output and batch bookkeeping every time. Both run the same kernel, so they agree
//! bit for bit.

use crate::decomp::{CholeskyParams, cholesky_one, cholesky_scratch};
use crate::reduce::{det_one, det_scratch};
use crate::solve::{
    ChoSolveParams, SolveParams, SolveTriangularParams, cho_solve_one, inv_one, inv_scratch,
    solve_one, solve_scratch, solve_triangular_one,
};
use crate::{LinalgError, Real};
use faer::dyn_stack::{MemBuffer, MemStack, StackReq};

/// The workspace kept between calls of the per-matrix kernels, grown to the largest one a
/// call has needed (after the first call of a given problem, no call allocates, but a
/// positive definite `solve` above order 16, whose faer `llt` allocates its factor; a general
/// or symmetric `solve` and an `inv` factor by LU in this workspace).
#[derive(Default)]
pub struct Workspace {
    mem: Option<MemBuffer>,
    bytes: usize,
    /// The alignment `mem` was allocated with.
    align: usize,
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
        let stack = self.stack(cholesky_scratch::<T>(n));
        cholesky_one(a, out, n, p, stack)
    }

    /// A stack of at least `req`, allocated only when `req` needs more bytes or a larger
    /// alignment (faer's matrices in it are aligned to 64 bytes) than every earlier one.
    fn stack(&mut self, req: StackReq) -> &mut MemStack {
        if self.bytes < req.size_bytes() || self.align < req.align_bytes() {
            self.mem = None;
            self.bytes = self.bytes.max(req.size_bytes());
            self.align = self.align.max(req.align_bytes()).max(1);
        }
        let grown = StackReq::new_aligned::<u8>(self.bytes, self.align);
        MemStack::new(self.mem.get_or_insert_with(|| MemBuffer::new(grown)))
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

    /// `x` with `a x = b` for the row-major `m × m` `a` and the row-major `m × k` `b`, into `x`
    /// (row-major `m × k`), as [`crate::solve`] computes it for one system.
    pub fn solve<T: Real>(
        &mut self,
        a: &[T],
        b: &[T],
        x: &mut [T],
        (m, k): (usize, usize),
        p: &SolveParams,
    ) -> Result<(), LinalgError> {
        let (mm, mk) = (m * m, m * k);
        check(
            "solve",
            &[("a", a.len(), mm), ("b", b.len(), mk), ("x", x.len(), mk)],
        )?;
        let stack = self.stack(solve_scratch::<T>(m, k, p));
        solve_one(a, b, x, (m, k), p, stack)
    }

    /// The inverse of the row-major `m × m` `a` into `x` (row-major `m × m`), as [`crate::inv`]
    /// computes it for one matrix.
    pub fn inv<T: Real>(&mut self, a: &[T], x: &mut [T], m: usize) -> Result<(), LinalgError> {
        check("inv", &[("a", a.len(), m * m), ("x", x.len(), m * m)])?;
        let stack = self.stack(inv_scratch::<T>(m));
        inv_one(a, x, m, stack)
    }

    /// The determinant of the row-major `n × n` `a`, as [`crate::det`] computes it for one
    /// matrix.
    pub fn det<T: Real>(&mut self, a: &[T], n: usize) -> Result<T, LinalgError> {
        check("det", &[("a", a.len(), n * n)])?;
        let stack = self.stack(det_scratch::<T>(n, false));
        Ok(det_one(a, n, false, stack).0)
    }

    /// The sign and the logarithm of the absolute value of the determinant of the row-major
    /// `n × n` `a`, as [`crate::slogdet`] computes them for one matrix.
    pub fn slogdet<T: Real>(&mut self, a: &[T], n: usize) -> Result<(T, T), LinalgError> {
        check("slogdet", &[("a", a.len(), n * n)])?;
        let stack = self.stack(det_scratch::<T>(n, true));
        Ok(det_one(a, n, true, stack))
    }
}
