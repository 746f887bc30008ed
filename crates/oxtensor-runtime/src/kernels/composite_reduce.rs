//! A `Reduce` of an elementwise producer (`Elemwise`, or one output of a `Composite`) in one
//! pass: the producer is evaluated block by block and each block is reduced while it is still
//! in cache, so its full output is never materialized.
//!
//! The iteration space is the producer's output shape with dimensions of extent 1 dropped,
//! reordered so that the kept dimensions come first and the reduced ones after them: each
//! output's reduced elements are then a contiguous range of flat positions. A block is a range
//! of flat positions (cut into a few rectangular pieces where it crosses a dimension boundary);
//! for each piece every input is a strided view of its own storage (broadcast dimensions have
//! stride 0), and the producer runs on it through the Composite kernel's [`run_block`], so
//! every element gets exactly its `Elemwise` value. When the last dimension of the producer's
//! output is kept (reducing leading axes: the columns case) it stays last, and blocks are
//! several reduced rows of a chunk of consecutive outputs, accumulated elementwise.
//!
//! The blocks are combined exactly as [`super::reduce`] combines the elements of the
//! materialized output: the same path (rows, columns or general) is chosen from the output's
//! shape, the same pairwise tree is split at the same places ([`run_mid`], [`strided_mid`],
//! [`column_mid`]) down to a block, and the block is reduced by the same leaf code. The result
//! is therefore bit-for-bit the two-pass result, for floats too. Work above
//! [`PARALLEL_THRESHOLD`] elements runs on rayon's threads, over outputs and over halves of
//! long reductions, which does not change the result.

use super::composite::{BLOCK, Program, Value, run_block};
use super::reduce::{
    self, AllR, AnyR, Dims, MaxR, MinR, ProdR, Reducer, SumR, column_mid, column_tree, reduce_run,
    reduce_strided, run_mid, strided_mid,
};
use super::{KernelCtx, PARALLEL_THRESHOLD, eval};
use crate::KernelError;
use oxtensor_data::{DType, Element, Tensor, dispatch_dtype};
use oxtensor_graph::{FrozenGraph, Op, ReduceOp, TensorType, Var};
use rayon::prelude::*;

/// Outputs of the columns case evaluated together per block when the reduced rows are many: a
/// block is `BLOCK / COLS` rows of them.
const COLS: usize = 512;

/// The kernel of [`Op::FusedReduce`]: `reduce` over `axes` of the program `body` (a
/// Composite's inner graph with one output) applied elementwise to `args`, in one pass (see
/// [`reduce_of_elemwise`]). `ctx` holds the fused node's types.
pub fn fused_reduce(
    reduce: ReduceOp,
    axes: &[usize],
    body: &FrozenGraph,
    args: &[&Tensor],
    ctx: &KernelCtx<'_>,
) -> Result<Tensor, KernelError> {
    let Some(dtype) = body.outputs().first().map(Var::dtype) else {
        return Err(KernelError::Value(
            "a fused reduction's program has no output".into(),
        ));
    };
    // The program's value has the broadcast static shape of the inputs.
    let ndim = ctx.input_types.first().map_or(0, TensorType::ndim);
    let shape = (0..ndim)
        .map(|d| {
            let extents = ctx
                .input_types
                .iter()
                .filter_map(|t| t.shape.get(d).copied());
            let mut known = None;
            for e in extents {
                match e {
                    Some(1) => known = known.or(Some(Some(1))),
                    Some(n) => return Some(n),
                    None => known = Some(None),
                }
            }
            known.flatten()
        })
        .collect();
    let value = [TensorType { dtype, shape }];
    let producer_ctx = KernelCtx {
        input_types: ctx.input_types,
        output_types: &value,
    };
    let producer = Op::Composite(body.clone());
    reduce_of_elemwise(&producer, 0, reduce, axes, args, &producer_ctx)
}

/// `reduce(reduce, axes, producer(args)[output])`: the reduction over `axes` (sorted, unique)
/// of output `output` of the elementwise `producer` (an `Op::Elemwise`, or an `Op::Composite`
/// with any number of outputs) applied to `args`, without materializing the producer's output.
///
/// `args` may have any strides (negative, zero) and offsets and broadcast under the static-1
/// rule of `producer_ctx` (the producer node's types), as the producer's own kernel does. The
/// value is bit-for-bit the value of evaluating the producer with [`super::eval`] and reducing
/// its output with the `Reduce` kernel (see the module documentation), and so are the errors:
///
/// * every case this kernel does not fuse is computed in those two passes: a producer that is
///   not elementwise, inputs whose number, dtypes or ranks differ from the producer's types,
///   shapes that do not broadcast, invalid `axes`, and an empty producer output (where the
///   two passes cost nothing and `max`/`min` of an empty reduction fail as NumPy does);
/// * when evaluating a block fails (an integer raised to a negative power), the two passes are
///   run to report their error.
///
/// Of a multi-output Composite, only the inner nodes output `output` depends on are evaluated,
/// unless an inner node it does not need can fail on its data (an integer `power`): then the
/// whole inner graph is, so that error is raised as the two passes raise it.
pub fn reduce_of_elemwise(
    producer: &Op,
    output: usize,
    reduce: ReduceOp,
    axes: &[usize],
    args: &[&Tensor],
    producer_ctx: &KernelCtx<'_>,
) -> Result<Tensor, KernelError> {
    let two_pass = || {
        let mut outs = eval(producer, args, producer_ctx)?;
        if output >= outs.len() {
            return Err(KernelError::Value(format!(
                "{producer} has {} outputs; output {output} does not exist",
                outs.len()
            )));
        }
        reduce::reduce(reduce, axes, &outs.swap_remove(output))
    };
    let Some(plan) = Plan::new(producer, output, axes, args, producer_ctx) else {
        return two_pass();
    };
    let fused = dispatch_dtype!(plan.dtype, T => match reduce {
        ReduceOp::Sum => fused::<T, _>(SumR, &plan),
        ReduceOp::Prod => fused::<T, _>(ProdR, &plan),
        ReduceOp::Max => fused::<T, _>(MaxR, &plan),
        ReduceOp::Min => fused::<T, _>(MinR, &plan),
        ReduceOp::All => fused::<T, _>(AllR, &plan),
        ReduceOp::Any => fused::<T, _>(AnyR, &plan),
    });
    fused.or_else(|_| two_pass())
}

/// Which loop of [`super::reduce`] the materialized output would take, which decides how the
/// elements are combined.
enum Path {
    /// The reduced dimensions are trailing (or there are none): each output is one run.
    Rows,
    /// The last dimension is kept: reduced rows are accumulated into a row of outputs.
    Columns,
    /// Anything else: each output walks its reduced dimensions (as merged in the materialized
    /// output; here with contiguous strides over the flat positions of a block).
    General(Dims),
}

/// A fusable call, checked: the program, the iteration space and how each input walks it.
struct Plan<'a> {
    program: Program,
    /// The program output that is reduced.
    slot: usize,
    /// Its dtype.
    dtype: DType,
    args: &'a [&'a Tensor],
    out_shape: Vec<usize>,
    path: Path,
    /// The space before the columns (kept dimensions, then reduced ones), merged where every
    /// input allows it.
    dims: Vec<usize>,
    /// Each input's element strides along `dims` (0 where it is broadcast).
    strides: Vec<Vec<isize>>,
    /// The columns: the last (kept) dimension in the columns case, else a single column.
    cols: usize,
    /// Each input's stride along the columns.
    col_strides: Vec<isize>,
    /// Output positions before the columns (all outputs, unless in the columns case).
    n_out: usize,
    /// Reduced elements (rows, in the columns case) per output position.
    n_red: usize,
}

impl<'a> Plan<'a> {
    /// The plan, or `None` for a call to leave to the two-pass computation.
    fn new(
        producer: &Op,
        output: usize,
        axes: &[usize],
        args: &'a [&'a Tensor],
        ctx: &KernelCtx<'_>,
    ) -> Option<Plan<'a>> {
        let (program, slot, dtype, declared, ndim) = match producer {
            Op::Elemwise(op) => {
                let dtype = ctx.output_types.first()?.dtype;
                let declared: Vec<DType> = ctx.input_types.iter().map(|t| t.dtype).collect();
                let ndim = args.first()?.ndim();
                let program = Program::single(*op, args.len(), dtype);
                (output == 0).then_some((program, 0, dtype, declared, ndim))?
            }
            Op::Composite(g) => {
                let out = g.outputs().get(output)?;
                let full = Program::of_outputs(g.outputs()).ok()?;
                let own = Program::of_outputs(std::slice::from_ref(out)).ok()?;
                let (program, slot) = if full.fallible_steps() > own.fallible_steps() {
                    (full, output)
                } else {
                    (own, 0)
                };
                let declared = g.input_types().iter().map(|t| t.dtype).collect();
                let ndim = ctx.output_types.first().map_or(0, TensorType::ndim);
                (program, slot, out.dtype(), declared, ndim)
            }
            _ => return None,
        };
        let consistent = args.len() == declared.len()
            && args.len() == ctx.input_types.len()
            && args
                .iter()
                .zip(&declared)
                .all(|(a, &d)| a.dtype() == d && a.ndim() == ndim);
        let sorted = axes.windows(2).all(|w| w[0] < w[1]);
        if !consistent || !sorted || axes.last().is_some_and(|&a| a >= ndim) {
            return None;
        }
        let shape = broadcast_shape(args, ctx.input_types, ndim)?;
        let numel = shape.iter().try_fold(1usize, |n, &e| n.checked_mul(e))?;
        if numel == 0 {
            return None;
        }
        let stride = |i: usize, d: usize| {
            if args[i].shape()[d] == 1 {
                0
            } else {
                args[i].strides()[d]
            }
        };
        let reduced = |d: usize| axes.contains(&d);
        let nonunit: Vec<usize> = (0..ndim).filter(|&d| shape[d] != 1).collect();
        // Runs of adjacent reduced dimensions, as the materialized reduction merges them.
        let mut groups: Vec<usize> = Vec::new();
        let mut after_reduced = false;
        for &d in &nonunit {
            if reduced(d) {
                match groups.last_mut() {
                    Some(g) if after_reduced => *g *= shape[d],
                    _ => groups.push(shape[d]),
                }
            }
            after_reduced = reduced(d);
        }
        let last_kept = nonunit.last().filter(|&&d| !reduced(d)).copied();
        let path = match (groups.len(), last_kept) {
            (0, _) | (1, None) => Path::Rows,
            (_, Some(_)) => Path::Columns,
            (_, None) => {
                let mut dims: Dims = Dims::new();
                let mut step = 1isize;
                for &n in groups.iter().rev() {
                    dims.insert(0, (n, step));
                    step *= n as isize;
                }
                Path::General(dims)
            }
        };
        let col = match path {
            Path::Columns => last_kept,
            _ => None,
        };
        let kept: Vec<usize> = nonunit
            .iter()
            .copied()
            .filter(|&d| !reduced(d) && Some(d) != col)
            .collect();
        let red: Vec<usize> = nonunit.iter().copied().filter(|&d| reduced(d)).collect();
        let mut dims: Vec<usize> = Vec::new();
        let mut strides: Vec<Vec<isize>> = vec![Vec::new(); args.len()];
        for &d in kept.iter().chain(&red) {
            let n = shape[d];
            let merges = !dims.is_empty()
                && strides
                    .iter()
                    .enumerate()
                    .all(|(i, s)| s.last().copied() == stride(i, d).checked_mul(n as isize));
            if merges {
                if let Some(last) = dims.last_mut() {
                    *last *= n;
                }
                for (i, s) in strides.iter_mut().enumerate() {
                    if let Some(last) = s.last_mut() {
                        *last = stride(i, d);
                    }
                }
            } else {
                dims.push(n);
                for (i, s) in strides.iter_mut().enumerate() {
                    s.push(stride(i, d));
                }
            }
        }
        if dims.is_empty() {
            dims.push(1);
            strides.iter_mut().for_each(|s| s.push(0));
        }
        Some(Plan {
            program,
            slot,
            dtype,
            args,
            out_shape: (0..ndim)
                .filter(|&d| !reduced(d))
                .map(|d| shape[d])
                .collect(),
            path,
            dims,
            strides,
            cols: col.map_or(1, |c| shape[c]),
            col_strides: (0..args.len())
                .map(|i| col.map_or(0, |c| stride(i, c)))
                .collect(),
            n_out: kept.iter().map(|&d| shape[d]).product(),
            n_red: red.iter().map(|&d| shape[d]).product(),
        })
    }

    /// Calls `f` with the producer's values at the flat positions `a..b` of `dims` times the
    /// columns `c0..c1`, in C order (a copy only when the range is cut into several pieces).
    fn with_values<T: Element, A>(
        &self,
        a: usize,
        b: usize,
        (c0, c1): (usize, usize),
        f: impl FnOnce(&[T]) -> A,
    ) -> Result<A, KernelError> {
        let mut pieces: Vec<Tensor> = Vec::new();
        for_each_piece(&self.dims, a, b, |idx, d, start, len| {
            pieces.push(self.piece(idx, (d, start, len), (c0, c1))?);
            Ok(())
        })?;
        if let [one] = pieces.as_slice() {
            return Ok(f(block_slice(one)?));
        }
        let mut values = Vec::with_capacity((b - a) * (c1 - c0));
        for p in &pieces {
            values.extend_from_slice(block_slice(p)?);
        }
        Ok(f(&values))
    }

    /// The reduced producer output on one rectangular piece: the outer dimensions' indices
    /// `idx`, positions `start..start + len` of dimension `d`, all of the dimensions after it,
    /// and the columns `c0..c1`.
    fn piece(
        &self,
        idx: &[usize],
        (d, start, len): (usize, usize, usize),
        (c0, c1): (usize, usize),
    ) -> Result<Tensor, KernelError> {
        let mut shape = vec![len];
        shape.extend_from_slice(&self.dims[d + 1..]);
        shape.push(c1 - c0);
        let views = self
            .args
            .iter()
            .zip(&self.strides)
            .zip(&self.col_strides)
            .map(|((t, st), &cs)| {
                let mut offset = t.offset() as isize + start as isize * st[d] + c0 as isize * cs;
                for (&i, &s) in idx.iter().zip(st) {
                    offset += i as isize * s;
                }
                let mut vstrides = st[d..].to_vec();
                vstrides.push(cs);
                let vshape: Vec<usize> = shape
                    .iter()
                    .zip(&vstrides)
                    .map(|(&e, &s)| if s == 0 { 1 } else { e })
                    .collect();
                let statics: Vec<Option<usize>> = vshape
                    .iter()
                    .zip(&vstrides)
                    .map(|(&e, &s)| (s == 0 || e == 1).then_some(1))
                    .collect();
                let offset = usize::try_from(offset).map_err(|_| {
                    KernelError::Index("Reduce of a Composite: negative block offset".into())
                })?;
                Ok((
                    t.view(&vshape, &vstrides, offset)?,
                    TensorType::new(t.dtype(), &statics),
                ))
            })
            .collect::<Result<Vec<Value>, KernelError>>()?;
        let mut outs = run_block(&self.program, &shape, &views)?;
        if self.slot < outs.len() {
            Ok(outs.swap_remove(self.slot))
        } else {
            Err(KernelError::Value(
                "Reduce of a Composite: the program lacks the reduced output".into(),
            ))
        }
    }
}

/// The elements of a block computed by [`run_block`] (contiguous, of the reduced dtype).
fn block_slice<T: Element>(t: &Tensor) -> Result<&[T], KernelError> {
    t.as_slice::<T>().ok_or_else(|| {
        KernelError::Value(format!(
            "Reduce of a Composite: a block of {} is not a contiguous {}",
            t.dtype(),
            T::DTYPE
        ))
    })
}

/// The output shape under the static-1 broadcasting rule (as the producer's kernel computes
/// it), or `None` when the inputs do not fit together.
fn broadcast_shape(args: &[&Tensor], types: &[TensorType], ndim: usize) -> Option<Vec<usize>> {
    let stretches = |i: usize, d: usize| {
        args[i].shape()[d] == 1
            && types.get(i).and_then(|t| t.shape.get(d).copied().flatten()) == Some(1)
    };
    (0..ndim)
        .map(|d| {
            let mut fixed = (0..args.len()).filter(|&i| !stretches(i, d));
            let first = fixed.next().map_or(1, |i| args[i].shape()[d]);
            fixed.all(|i| args[i].shape()[d] == first).then_some(first)
        })
        .collect()
}

/// Calls `f(idx, d, start, len)` for the rectangular pieces covering the flat C-order
/// positions `a..b` of `dims`, in order: fixed indices `idx` for the dimensions before `d`,
/// positions `start..start + len` along `d`, and every position of the dimensions after it.
fn for_each_piece(
    dims: &[usize],
    mut a: usize,
    b: usize,
    mut f: impl FnMut(&[usize], usize, usize, usize) -> Result<(), KernelError>,
) -> Result<(), KernelError> {
    let mut inner = vec![1usize; dims.len()];
    for e in (1..dims.len()).rev() {
        inner[e - 1] = inner[e] * dims[e];
    }
    let mut idx = Vec::with_capacity(dims.len());
    while a < b {
        // The outermost dimension whose whole sub-blocks start at `a` and fit before `b`;
        // the innermost one always qualifies.
        let d = (0..dims.len())
            .find(|&e| a.is_multiple_of(inner[e]) && b - a >= inner[e])
            .unwrap_or(dims.len() - 1);
        let start = (a / inner[d]) % dims[d];
        let len = (dims[d] - start).min((b - a) / inner[d]);
        idx.clear();
        idx.extend((0..d).map(|e| (a / inner[e]) % dims[e]));
        f(&idx, d, start, len)?;
        a += len * inner[d];
    }
    Ok(())
}

/// Runs reducer `r` over the plan into a fresh output.
fn fused<T: Element, R: Reducer<T>>(r: R, plan: &Plan<'_>) -> Result<Tensor, KernelError> {
    let mut out = Tensor::zeros(R::Out::DTYPE, &plan.out_shape)?;
    let dst = out.data_mut::<R::Out>().ok_or_else(|| {
        KernelError::Value("Reduce of a Composite: fresh output is not writable".into())
    })?;
    match &plan.path {
        Path::Rows => Runs {
            plan,
            r,
            split: |lo: usize, hi: usize| run_mid(hi - lo).map(|m| lo + m),
            leaf: |xs: &[T], _: usize, _: usize| reduce_run(r, xs),
        }
        .fill::<T>(dst)?,
        Path::General(red) => Runs {
            plan,
            r,
            split: strided_mid,
            leaf: |xs: &[T], lo: usize, hi: usize| {
                reduce_strided(r, xs, red, -(lo as isize), lo, hi)
            },
        }
        .fill::<T>(dst)?,
        Path::Columns => Columns { plan, r }.fill::<T>(dst)?,
    }
    Ok(out)
}

/// The rows and general paths: each output reduces `plan.n_red` consecutive flat positions.
struct Runs<'p, R, S, L> {
    plan: &'p Plan<'p>,
    r: R,
    /// Where the materialized reduction splits positions `lo..hi` into halves.
    split: S,
    /// The materialized reduction of the positions `lo..hi` (of one output), given their values.
    leaf: L,
}

impl<R, S, L> Runs<'_, R, S, L>
where
    S: Fn(usize, usize) -> Option<usize> + Sync,
{
    /// Fills `dst`: outputs with a short reduction in groups per block, others one by one, a
    /// tree of blocks each.
    fn fill<T: Element>(&self, dst: &mut [R::Out]) -> Result<(), KernelError>
    where
        R: Reducer<T>,
        L: Fn(&[T], usize, usize) -> R::Acc + Sync,
    {
        let (r, n) = (self.r, self.plan.n_red);
        let parallel = self.plan.n_out.saturating_mul(n) > PARALLEL_THRESHOLD;
        if n <= BLOCK {
            let group = (BLOCK / n).max(1);
            let work = |(c, d): (usize, &mut [R::Out])| {
                let first = c * group;
                let span = (first * n, (first + d.len()) * n);
                self.plan.with_values(span.0, span.1, (0, 1), |xs: &[T]| {
                    for (o, run) in d.iter_mut().zip(xs.chunks_exact(n)) {
                        *o = r.finish((self.leaf)(run, 0, n));
                    }
                })
            };
            return if parallel {
                dst.par_chunks_mut(group).enumerate().try_for_each(work)
            } else {
                dst.chunks_mut(group).enumerate().try_for_each(work)
            };
        }
        let work = |(k, o): (usize, &mut R::Out)| {
            *o = r.finish(self.node(k * n, 0, n)?);
            Ok(())
        };
        if parallel {
            dst.par_iter_mut().enumerate().try_for_each(work)
        } else {
            dst.iter_mut().enumerate().try_for_each(work)
        }
    }

    /// The accumulator of positions `lo..hi` of the output whose positions start at `base`:
    /// split as the materialized reduction splits them, down to a block.
    fn node<T: Element>(&self, base: usize, lo: usize, hi: usize) -> Result<R::Acc, KernelError>
    where
        R: Reducer<T>,
        L: Fn(&[T], usize, usize) -> R::Acc + Sync,
    {
        match (self.split)(lo, hi) {
            Some(mid) if hi - lo > BLOCK => {
                let (x, y) = if hi - lo > PARALLEL_THRESHOLD {
                    rayon::join(|| self.node(base, lo, mid), || self.node(base, mid, hi))
                } else {
                    (self.node(base, lo, mid), self.node(base, mid, hi))
                };
                Ok(self.r.combine(x?, y?))
            }
            _ => self
                .plan
                .with_values(base + lo, base + hi, (0, 1), |xs| (self.leaf)(xs, lo, hi)),
        }
    }
}

/// The columns path: each output position before the columns accumulates `plan.n_red` rows of
/// `plan.cols` outputs.
struct Columns<'p, R> {
    plan: &'p Plan<'p>,
    r: R,
}

impl<R> Columns<'_, R> {
    /// Fills `dst`: positions with few rows in groups per block; otherwise each position's
    /// outputs in chunks, a tree of blocks each.
    fn fill<T: Element>(&self, dst: &mut [R::Out]) -> Result<(), KernelError>
    where
        R: Reducer<T>,
    {
        let (r, rows, width) = (self.r, self.plan.n_red, self.plan.cols);
        let parallel = self.plan.n_out.saturating_mul(rows * width) > PARALLEL_THRESHOLD;
        let combine = |a, b| r.combine(a, b);
        if rows * width <= BLOCK {
            let group = (BLOCK / (rows * width)).max(1);
            let work = |(c, d): (usize, &mut [R::Out])| {
                let first = c * group;
                let span = (first * rows, (first + d.len() / width) * rows);
                self.plan
                    .with_values(span.0, span.1, (0, width), |xs: &[T]| {
                        let per = rows * width;
                        for (d, xs) in d.chunks_exact_mut(width).zip(xs.chunks_exact(per)) {
                            let mut acc = vec![r.identity(); width];
                            let leaf = |lo: usize, hi: usize, acc: &mut [R::Acc]| {
                                push_rows(r, &xs[lo * width..hi * width], acc);
                            };
                            column_tree(r.identity(), &combine, 0, rows, &mut acc, false, &leaf);
                            finish_into(r, d, acc);
                        }
                    })
            };
            return if parallel {
                dst.par_chunks_mut(group * width)
                    .enumerate()
                    .try_for_each(work)
            } else {
                dst.chunks_mut(group * width).enumerate().try_for_each(work)
            };
        }
        let chunk = width.min((BLOCK / rows).max(COLS));
        let mut items: Vec<(usize, usize, &mut [R::Out])> = dst
            .chunks_mut(width)
            .enumerate()
            .flat_map(|(k, row)| {
                row.chunks_mut(chunk)
                    .enumerate()
                    .map(move |(c, d)| (k, c * chunk, d))
            })
            .collect();
        let split = parallel && items.len() < 2 * rayon::current_num_threads();
        let work = |(k, c0, d): &mut (usize, usize, &mut [R::Out])| {
            let cols = (*c0, *c0 + d.len());
            let acc = self.node(k.saturating_mul(rows), 0, rows, cols, split)?;
            finish_into(r, d, acc);
            Ok(())
        };
        if parallel {
            items.par_iter_mut().try_for_each(work)
        } else {
            items.iter_mut().try_for_each(work)
        }
    }

    /// The accumulators of rows `lo..hi` (of the position whose rows start at `base`) for the
    /// columns `cols`: split as the materialized reduction splits them, down to a block.
    fn node<T: Element>(
        &self,
        base: usize,
        lo: usize,
        hi: usize,
        cols: (usize, usize),
        parallel: bool,
    ) -> Result<Vec<R::Acc>, KernelError>
    where
        R: Reducer<T>,
    {
        let (r, w) = (self.r, cols.1 - cols.0);
        let combine = |a, b| r.combine(a, b);
        let mut acc = vec![r.identity(); w];
        if (hi - lo) * w <= BLOCK {
            self.plan
                .with_values(base + lo, base + hi, cols, |xs: &[T]| {
                    let leaf = |a: usize, b: usize, acc: &mut [R::Acc]| {
                        push_rows(r, &xs[(a - lo) * w..(b - lo) * w], acc);
                    };
                    column_tree(r.identity(), &combine, lo, hi, &mut acc, false, &leaf);
                })?;
            return Ok(acc);
        }
        let Some(mid) = column_mid(lo, hi) else {
            // A leaf too wide for one block: its rows in order, a few per block.
            let step = (BLOCK / w).max(1);
            for a in (lo..hi).step_by(step) {
                let b = (a + step).min(hi);
                self.plan
                    .with_values(base + a, base + b, cols, |xs: &[T]| {
                        push_rows(r, xs, &mut acc)
                    })?;
            }
            return Ok(acc);
        };
        let (left, right) = if parallel && (hi - lo) * w > PARALLEL_THRESHOLD {
            rayon::join(
                || self.node(base, lo, mid, cols, parallel),
                || self.node(base, mid, hi, cols, parallel),
            )
        } else {
            (
                self.node(base, lo, mid, cols, parallel),
                self.node(base, mid, hi, cols, parallel),
            )
        };
        let mut acc = left?;
        for (a, b) in acc.iter_mut().zip(right?) {
            *a = r.combine(*a, b);
        }
        Ok(acc)
    }
}

/// Pushes the rows of `xs` (each `acc.len()` long), in order, into `acc`, elementwise.
fn push_rows<T: Element, R: Reducer<T>>(r: R, xs: &[T], acc: &mut [R::Acc]) {
    for row in xs.chunks_exact(acc.len()) {
        for (a, &x) in acc.iter_mut().zip(row) {
            *a = r.push(*a, x);
        }
    }
}

/// Writes the finished accumulators into `dst`.
fn finish_into<T: Element, R: Reducer<T>>(r: R, dst: &mut [R::Out], acc: Vec<R::Acc>) {
    for (d, a) in dst.iter_mut().zip(acc) {
        *d = r.finish(a);
    }
}
