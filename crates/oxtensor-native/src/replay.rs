//! Replaying a small call: the per-call path of a function called again and again on arrays of
//! one layout (a sampler's log-density, W1's `sum(x**2)`).
//!
//! A normal call walks the [`Plan`](oxtensor_runtime::Plan): a slot table of tensors, a layout
//! lookup and an output allocation per kernel, views and shape arithmetic through the
//! interpreter. On ten elements all of that costs ten times the C. But once the inputs' dtypes,
//! shapes and strides (the *key*) are known, every decision of that path is fixed: each
//! kernel's walk, each view's offset into the buffer it views, every value computed from shapes
//! and constants alone (`Shape_i`, `Alloc` of a constant, sums of those). So the second call
//! with a key records what the path did, and later calls with the same key replay it: the C
//! kernels are called in order on the input pointers, reusable scratch buffers and the fresh
//! (or caller-lent) output buffers, and nothing else runs.
//!
//! A recording is made only of plans whose every step is a C kernel, a view
//! ([`VIEW_OPS`]) or shape arithmetic, with each kernel small enough to run on one thread; any
//! other step (a matrix product, an index read from an input, a loop) leaves the function on
//! the normal path. A kernel that reports an error element on replay makes the call run the
//! normal path from the start, which reports it in the interpreter's words; the kernels only
//! write scratch and output buffers, so nothing a failed replay wrote is seen.
//!
//! The key is compared in full on every call, dtypes included: a replayed kernel sees exactly
//! the dtypes, extents and strides the normal path checked when it recorded, so the replay
//! needs no other check, with or without `trust_input`, but that every input's elements lie
//! inside its storage ([`in_bounds`]).

use crate::exec::{ElemFn, ElemLayout, Kept, ReduceFn, ReduceLayout, call_reduce};
use crate::walk::in_bounds;
use oxtensor_data::{DType, Tensor};
use oxtensor_graph::{Node, Op};
use oxtensor_runtime::TryLock;
use oxtensor_runtime::kernels::PARALLEL_THRESHOLD;
use smallvec::SmallVec;
use std::ffi::c_void;
use std::sync::Arc;

/// Ops whose output views their first input at an offset fixed by the key (when their other
/// inputs are fixed by it too).
const VIEW_OPS: fn(&Op) -> bool = |op| {
    matches!(
        op,
        Op::DimShuffle { .. }
            | Op::Reshape { .. }
            | Op::SpecifyShape(_)
            | Op::Subtensor(_)
            | Op::GradMarker(_)
    )
};

/// The most memory a recording keeps between calls (scratch buffers and values computed from
/// the layout): replay is for small calls.
const MAX_HELD_BYTES: usize = 1 << 20;

/// Replays that failed (a kernel reported an error element) after which a function stops
/// recording.
const GIVE_UP: usize = 4;

/// The inputs' dtypes, ranks, extents and strides.
#[derive(Clone, PartialEq, Default)]
pub(crate) struct Key {
    dtypes: SmallVec<[DType; 4]>,
    dims: SmallVec<[isize; 24]>,
}

impl Key {
    /// The key of a call's input values.
    pub(crate) fn of(values: &[Tensor]) -> Key {
        let mut key = Key::default();
        for t in values {
            key.dtypes.push(t.dtype());
            key.dims.push(t.ndim() as isize);
            key.dims.extend(t.shape().iter().map(|&e| e as isize));
            key.dims.extend_from_slice(t.strides());
        }
        key
    }

    /// Whether `values` have this key, compared in place: the replay's hit path, which builds
    /// no key (a key is built only for a call that may be recorded).
    fn matches(&self, values: &[Tensor]) -> bool {
        if self.dtypes.len() != values.len() {
            return false;
        }
        let mut dims = self.dims.as_slice();
        for (t, &dtype) in values.iter().zip(&self.dtypes) {
            let n = t.ndim();
            let Some((&rank, rest)) = dims.split_first() else {
                return false;
            };
            if t.dtype() != dtype || rank != n as isize || rest.len() < 2 * n {
                return false;
            }
            let (extents, rest) = rest.split_at(n);
            let (strides, rest) = rest.split_at(n);
            if !extents
                .iter()
                .zip(t.shape())
                .all(|(&a, &b)| a == b as isize)
                || strides != t.strides()
            {
                return false;
            }
            dims = rest;
        }
        dims.is_empty()
    }
}

/// The buffer a value of a replay lies in.
#[derive(Clone, Copy, PartialEq)]
enum Base {
    /// Input value `i`.
    Input(usize),
    /// Fresh buffer `k` of the call, allocated (or lent) for a graph output.
    Fresh(usize),
    /// Tensor `h` the recording holds: a value fixed by the key (a constant, or computed from
    /// shapes and constants), or a scratch buffer a kernel rewrites on every replay.
    Held(usize),
}

/// Where a value lives during a replay: `bytes` past the first element of a buffer (views
/// are offsets; a reduction's operands are moved to the walk's first element), and whether
/// it is a view (whose shape and strides are not the buffer's).
#[derive(Clone, Copy)]
struct Place {
    base: Base,
    bytes: isize,
    view: bool,
}

impl Place {
    fn at(base: Base) -> Place {
        Place {
            base,
            bytes: 0,
            view: false,
        }
    }
}

/// A kernel and the layout it was recorded with.
enum Launch {
    /// An elementwise kernel.
    Elem(ElemFn, Arc<Kept<ElemLayout>>),
    /// A reduction kernel.
    Reduce(ReduceFn, Arc<Kept<ReduceLayout>>),
}

/// One kernel call: the kernel, where its operands are read and where its results go.
struct Call {
    launch: Launch,
    operands: SmallVec<[Place; 6]>,
    results: SmallVec<[Place; 2]>,
}

/// A recorded call: see the module docs.
struct Recording {
    key: Key,
    calls: Vec<Call>,
    /// The tensors the recording holds ([`Base::Held`]).
    held: Vec<Tensor>,
    /// Per fresh buffer: its dtype, shape, and the graph output it is (for a lent buffer).
    fresh: Vec<(DType, SmallVec<[usize; 4]>, usize)>,
    /// Where each graph output is: an input, a fixed value or a fresh buffer, unviewed.
    outputs: Vec<Base>,
}

/// What a function keeps for replaying: the recording, and what decides when to record.
#[derive(Default)]
pub(crate) struct Replay {
    state: TryLock<State>,
}

#[derive(Default)]
struct State {
    recording: Option<Recording>,
    /// The key of the last call not replayed: a second call with it records.
    last_miss: Option<Key>,
    /// Replays that failed.
    failures: usize,
    /// Calls replayed (see [`crate::NativeExecutable::replayed_calls`]), counted under the
    /// lock the replay holds anyway (an atomic counter cost a tenth of a replay).
    replayed: usize,
}

/// What the executor does with a call.
pub(crate) enum Decision {
    /// Run the normal path.
    Normal,
    /// Run the normal path and record it (a [`Recorder`] for the key).
    Record(Box<Recorder>),
}

impl Replay {
    /// How many calls were replayed (0 while a call holds the recording: ask between calls).
    pub(crate) fn replayed(&self) -> usize {
        self.state.try_lock().map_or(0, |s| s.replayed)
    }

    /// Replays the call when its key was recorded (the outputs; `None` when the call must take
    /// the normal path, with what to do there).
    pub(crate) fn replay(
        &self,
        values: &[Tensor],
        lent: &[Option<Tensor>],
    ) -> Result<Vec<Tensor>, Decision> {
        let Some(mut state) = self.state.try_lock() else {
            return Err(Decision::Normal);
        };
        if let Some(rec) = state.recording.as_ref().filter(|r| r.key.matches(values)) {
            if let Some(outs) = rec.run(values, lent) {
                state.replayed += 1;
                return Ok(outs);
            }
            state.failures += 1;
            state.recording = None;
            return Err(Decision::Normal);
        }
        if state.failures >= GIVE_UP || values.iter().any(|v| v.numel() == 0) {
            return Err(Decision::Normal);
        }
        let key = Key::of(values);
        if state.last_miss.as_ref() == Some(&key) {
            return Err(Decision::Record(Box::new(Recorder::new(key, values.len()))));
        }
        state.last_miss = Some(key);
        Err(Decision::Normal)
    }

    /// Keeps a finished recording, when the recorder could follow the whole call; else counts
    /// a failure, so that a function with a step no recording takes stops trying.
    pub(crate) fn keep(&self, recorder: Box<Recorder>, output_slots: &[usize]) {
        let recording = recorder.finish(output_slots);
        if let Some(mut state) = self.state.try_lock() {
            match recording {
                Some(recording) => state.recording = Some(recording),
                None => {
                    state.failures += 1;
                    state.last_miss = None;
                }
            }
        }
    }
}

/// Follows one normal call, step by step, and turns it into a [`Recording`].
pub(crate) struct Recorder {
    key: Key,
    n_inputs: usize,
    /// Where each slot's value lives, once known.
    places: Vec<Option<Place>>,
    calls: Vec<Call>,
    held: Vec<Tensor>,
    /// Per held tensor: whether it is a fixed value (else scratch).
    fixed: Vec<bool>,
    fresh: Vec<(DType, SmallVec<[usize; 4]>, usize)>,
    held_bytes: usize,
    /// False once a step could not be recorded.
    ok: bool,
}

/// What the executor tells the recorder about one step it ran.
pub(crate) struct Ran<'a> {
    /// The node.
    pub node: &'a Node,
    /// Its input and output slots.
    pub slots: (&'a [usize], &'a [usize]),
    /// Its input values.
    pub args: &'a [&'a Tensor],
    /// Its output values.
    pub outs: &'a [Tensor],
    /// The C kernel it ran with the layout, and the work (elements times cost), if any.
    pub launch: Option<(LaunchOf, usize)>,
}

/// A kernel and its layout, as the executor hands them to the recorder.
pub(crate) enum LaunchOf {
    /// An elementwise kernel.
    Elem(ElemFn, Arc<Kept<ElemLayout>>),
    /// A reduction kernel.
    Reduce(ReduceFn, Arc<Kept<ReduceLayout>>),
}

impl Recorder {
    fn new(key: Key, n_inputs: usize) -> Recorder {
        Recorder {
            key,
            n_inputs,
            places: Vec::new(),
            calls: Vec::new(),
            held: Vec::new(),
            fixed: Vec::new(),
            fresh: Vec::new(),
            held_bytes: 0,
            ok: true,
        }
    }

    /// Sets up the slot table: the inputs, then the constants.
    pub(crate) fn start(&mut self, n_slots: usize, constants: &[(usize, Tensor)]) {
        self.places = vec![None; n_slots];
        for i in 0..self.n_inputs.min(n_slots) {
            self.places[i] = Some(Place::at(Base::Input(i)));
        }
        for (s, t) in constants {
            self.hold(*s, t.clone(), true);
        }
    }

    /// Records one step the normal path ran; `output_slots` are the graph outputs' slots.
    pub(crate) fn step(&mut self, ran: Ran<'_>, output_slots: &[usize]) {
        if self.ok {
            self.ok = self.record(ran, output_slots).is_some();
        }
    }

    /// Puts `t` in slot `s` as a held tensor (`fixed`, or scratch).
    fn hold(&mut self, s: usize, t: Tensor, fixed: bool) -> Option<Place> {
        let place = Place::at(Base::Held(self.held.len()));
        self.held.push(t);
        self.fixed.push(fixed);
        *self.places.get_mut(s)? = Some(place);
        Some(place)
    }

    /// Counts `t` against the memory a recording may keep; `None` past [`MAX_HELD_BYTES`].
    fn budget(&mut self, t: &Tensor) -> Option<()> {
        self.held_bytes += t.numel() * t.dtype().size();
        (self.held_bytes <= MAX_HELD_BYTES).then_some(())
    }

    fn place(&self, slot: usize) -> Option<Place> {
        *self.places.get(slot)?
    }

    fn is_fixed(&self, slot: usize) -> bool {
        matches!(self.place(slot), Some(Place { base: Base::Held(h), .. }) if self.fixed[h])
    }

    fn record(&mut self, ran: Ran<'_>, output_slots: &[usize]) -> Option<()> {
        let Ran {
            node,
            slots: (ins, outs_at),
            args,
            outs,
            launch,
        } = ran;
        let op = node.op()?;
        if outs.len() != outs_at.len() || args.len() != ins.len() {
            return None;
        }
        let pure = !matches!(
            op,
            Op::Random(_) | Op::Scan(_) | Op::OpFromGraph(_) | Op::IfElse(_)
        );
        let shapes_only = matches!(op, Op::Shape | Op::ShapeI(_));
        if shapes_only || (pure && ins.iter().all(|&s| self.is_fixed(s))) {
            for (&s, t) in outs_at.iter().zip(outs) {
                self.budget(t)?;
                self.hold(s, t.clone(), true)?;
            }
            return Some(());
        }
        if let Some((launch, work)) = launch {
            return self.record_launch(launch, work, (ins, outs_at), (args, outs), output_slots);
        }
        let (first, out) = (args.first()?, outs.first()?);
        if VIEW_OPS(op)
            && outs.len() == 1
            && ins[1..].iter().all(|&s| self.is_fixed(s))
            && Arc::ptr_eq(first.storage(), out.storage())
        {
            let mut place = self.place(*ins.first()?)?;
            place.bytes += out.data_ptr() as isize - first.data_ptr() as isize;
            place.view = true;
            *self.places.get_mut(*outs_at.first()?)? = Some(place);
            return Some(());
        }
        None
    }

    fn record_launch(
        &mut self,
        launch: LaunchOf,
        work: usize,
        (ins, outs_at): (&[usize], &[usize]),
        (args, outs): (&[&Tensor], &[Tensor]),
        output_slots: &[usize],
    ) -> Option<()> {
        if work > PARALLEL_THRESHOLD {
            return None;
        }
        let mut operands: SmallVec<[Place; 6]> = SmallVec::new();
        // A reduction reads its operands from the walk's first element (a reversed reduced
        // dimension starts at its last), as the normal path does.
        let starts: &[isize] = match &launch {
            LaunchOf::Reduce(_, kept) => &kept.layout.walk.base,
            LaunchOf::Elem(..) => &[],
        };
        for (k, (&s, t)) in ins.iter().zip(args).enumerate() {
            let mut place = self.place(s)?;
            place.bytes += starts.get(k).map_or(0, |&b| b * t.dtype().size() as isize);
            operands.push(place);
        }
        if !starts.is_empty() {
            // An unfused reduction's kernel reads its first input only.
            operands.truncate(starts.len());
        }
        let mut results = SmallVec::new();
        for (&s, t) in outs_at.iter().zip(outs) {
            if !t.is_contiguous() || t.offset() != 0 {
                return None;
            }
            let place = match output_slots.iter().position(|&o| o == s) {
                Some(j) => {
                    self.fresh.push((t.dtype(), t.shape().into(), j));
                    let place = Place::at(Base::Fresh(self.fresh.len() - 1));
                    *self.places.get_mut(s)? = Some(place);
                    place
                }
                None => {
                    self.budget(t)?;
                    // SAFETY: the kernel recorded here writes every element of its outputs
                    // on each replay before any later kernel reads them (the schedule's
                    // order), and nothing else ever reads this buffer.
                    let scratch = unsafe { Tensor::uninit(t.dtype(), t.shape()) }.ok()?;
                    self.hold(s, scratch, false)?
                }
            };
            results.push(place);
        }
        let launch = match launch {
            LaunchOf::Elem(f, l) => Launch::Elem(f, l),
            LaunchOf::Reduce(f, l) => Launch::Reduce(f, l),
        };
        self.calls.push(Call {
            launch,
            operands,
            results,
        });
        Some(())
    }

    /// The recording, when every step was recorded and every graph output is an input, a fixed
    /// value or a fresh buffer (not scratch, not a view).
    fn finish(self, output_slots: &[usize]) -> Option<Recording> {
        if !self.ok {
            return None;
        }
        let outputs = output_slots
            .iter()
            .map(|&s| match (*self.places.get(s)?)? {
                Place {
                    base: Base::Held(h),
                    ..
                } if !self.fixed[h] => None,
                Place {
                    base,
                    bytes: 0,
                    view: false,
                } => Some(base),
                _ => None,
            })
            .collect::<Option<_>>()?;
        Some(Recording {
            key: self.key,
            calls: self.calls,
            held: self.held,
            fresh: self.fresh,
            outputs,
        })
    }
}

impl Recording {
    /// Replays the recording on `values` (whose key is the recording's): the outputs, or
    /// `None` when an input lies outside its storage or a kernel reported an error element.
    fn run(&self, values: &[Tensor], lent: &[Option<Tensor>]) -> Option<Vec<Tensor>> {
        if !values.iter().all(in_bounds) {
            return None;
        }
        let mut fresh: SmallVec<[Option<Tensor>; 2]> = SmallVec::with_capacity(self.fresh.len());
        for (dtype, shape, j) in &self.fresh {
            let fits = |t: &&Tensor| {
                t.dtype() == *dtype
                    && t.shape() == shape.as_slice()
                    && t.is_contiguous()
                    && t.offset() == 0
                    && t.storage().is_owned()
                    && t.numel() * t.dtype().size() <= t.storage().len()
            };
            fresh.push(Some(
                match lent.get(*j).and_then(Option::as_ref).filter(fits) {
                    Some(t) => t.clone(),
                    // SAFETY: the kernel recorded as this buffer's producer writes every element
                    // before the call returns it (a failing replay drops it unread).
                    None => unsafe { Tensor::uninit(*dtype, shape) }.ok()?,
                },
            ));
        }
        let address = |p: &Place| -> Option<*const c_void> {
            let base = match p.base {
                Base::Input(i) => values.get(i)?.data_ptr(),
                Base::Fresh(k) => fresh.get(k)?.as_ref()?.data_ptr(),
                Base::Held(h) => self.held.get(h)?.data_ptr(),
            };
            Some(base.wrapping_offset(p.bytes).cast())
        };
        let mut ins: SmallVec<[*const c_void; 8]> = SmallVec::new();
        let mut outs: SmallVec<[*mut c_void; 2]> = SmallVec::new();
        for call in &self.calls {
            ins.clear();
            outs.clear();
            for p in &call.operands {
                ins.push(address(p)?);
            }
            for p in &call.results {
                outs.push(address(p)?.cast_mut());
            }
            let status = match &call.launch {
                Launch::Elem(f, kept) => {
                    let ElemLayout { walk, numel, .. } = &kept.layout;
                    // SAFETY: the walk was built by the normal path for operands of exactly
                    // these dtypes, extents and strides (the key: inputs compared in full;
                    // views, scratch and fresh buffers follow from it), whose positions lie in
                    // their storage (`in_bounds` for the inputs; the others are this
                    // recording's buffers or views into them at the recorded offsets); each
                    // result is a contiguous buffer of `numel` elements of its dtype that only
                    // this call writes (scratch is the recording's, held under its lock;
                    // fresh buffers are this call's or lent for it, see `Call::out`).
                    unsafe {
                        f(
                            0,
                            *numel as i64,
                            walk.dims.len() as i32,
                            walk.dims.as_ptr(),
                            ins.as_ptr(),
                            walk.strides.as_ptr(),
                            outs.as_ptr(),
                        )
                    }
                }
                Launch::Reduce(f, kept) => {
                    let rw = &kept.layout.walk;
                    let n_out = rw.kept.dims.iter().product::<i64>();
                    // SAFETY: as for an elementwise call; the operand addresses are the walk's
                    // starting elements (recorded as the normal path computes them), and the
                    // result holds the `n_out` outputs.
                    unsafe { call_reduce(*f, rw, &rw.reduced.dims, &ins, 0, n_out, *outs.first()?) }
                }
            };
            if status != 0 {
                return None;
            }
        }
        let mut result = Vec::with_capacity(self.outputs.len());
        for (j, base) in self.outputs.iter().enumerate() {
            result.push(match *base {
                Base::Input(i) => values.get(i)?.clone(),
                // Moved out at its last use (a clone is an atomic increment and decrement).
                Base::Fresh(k) if self.outputs[j + 1..].contains(base) => fresh.get(k)?.clone()?,
                Base::Fresh(k) => fresh.get_mut(k)?.take()?,
                Base::Held(h) => self.held.get(h)?.clone(),
            });
        }
        Some(result)
    }
}
