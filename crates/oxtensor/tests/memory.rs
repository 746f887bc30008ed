//! Memory does not grow with graph length: each intermediate is freed after its last use, and
//! elementwise nodes write into the buffer of an input whose last use they are. (Its own test
//! binary, so the allocator's counters are these tests' alone; the tests take a lock so they
//! do not count each other's buffers.)

use oxtensor::{DType, Mode, Tensor, Var, function, get_value, shared, vector};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
/// Allocations of at least [`BIG`] bytes.
static BIG_ALLOCS: AtomicUsize = AtomicUsize::new(0);
const BIG: usize = 1 << 20;
static SERIAL: Mutex<()> = Mutex::new(());

fn count(size: usize) {
    let now = LIVE.fetch_add(size, Ordering::Relaxed) + size;
    PEAK.fetch_max(now, Ordering::Relaxed);
    if size >= BIG {
        BIG_ALLOCS.fetch_add(1, Ordering::Relaxed);
    }
}

// SAFETY: forwards every call to the system allocator unchanged; the counters are only
// statistics and do not affect the memory handed out.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

const N: usize = 1 << 20; // 8 MiB per float64 buffer
const OPS: usize = 200;

/// A 200-node chain of elementwise ops on `x`.
fn chain(x: &Var) -> Var {
    let mut y = x.clone();
    for i in 0..OPS {
        y = if i % 2 == 0 { y.sin() } else { &y * 1.0001 };
    }
    y
}

/// Runs `f` on an 8 MiB input; returns the peak of live memory above the start, in buffers,
/// and the number of large allocations.
fn measure(mode: Mode) -> (f64, usize, Vec<f64>) {
    let x = vector("x", DType::F64);
    let f = function(std::slice::from_ref(&x), &[chain(&x)])
        .mode(mode)
        .build()
        .unwrap();
    let input = Tensor::from_slice(&vec![0.5f64; N], &[N]).unwrap();
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    BIG_ALLOCS.store(0, Ordering::Relaxed);
    let out = f.call(std::slice::from_ref(&input)).unwrap();
    let peak = (PEAK.load(Ordering::Relaxed) - base) as f64 / (N * 8) as f64;
    let allocs = BIG_ALLOCS.load(Ordering::Relaxed);
    assert_eq!(out[0].numel(), N);
    assert_eq!(
        input.to_vec::<f64>().unwrap()[..3],
        [0.5; 3],
        "the input was overwritten"
    );
    (peak, allocs, out[0].to_vec::<f64>().unwrap()[..3].to_vec())
}

#[test]
fn a_long_fused_chain_keeps_a_few_buffers_alive() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    for name in ["FAST_RUN", "interp"] {
        let (peak, _, _) = measure(Mode::by_name(name).unwrap());
        assert!(
            peak < 4.0,
            "{name}: peak {peak:.1} buffers for a {OPS}-op chain"
        );
    }
}

#[test]
fn an_unfused_chain_runs_in_place_on_every_backend() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let unfused = |name: &str| Mode::by_name(name).unwrap().excluding(&["fusion"]);
    let (peak, allocs, native) = measure(unfused("FAST_RUN"));
    // The first node allocates its output (it may not overwrite the caller's input); every
    // later node overwrites its input's buffer.
    assert!(
        peak < 2.5,
        "native: peak {peak:.1} buffers for a {OPS}-op chain"
    );
    assert!(
        allocs <= 2,
        "native: {allocs} large allocations for a {OPS}-op chain"
    );
    let (peak, allocs, interp) = measure(unfused("interp"));
    assert!(
        peak < 2.5,
        "interp: peak {peak:.1} buffers for a {OPS}-op chain"
    );
    assert!(
        allocs <= 2,
        "interp: {allocs} large allocations for a {OPS}-op chain"
    );
    let mut expected = 0.5f64;
    for i in 0..OPS {
        expected = if i % 2 == 0 {
            expected.sin()
        } else {
            expected * 1.0001
        };
    }
    for v in native.iter().chain(&interp) {
        assert!(
            (v - expected).abs() <= 1e-12 * expected.abs(),
            "{v} != {expected}"
        );
    }
}

/// One step `w ← w − 0.5·g` on an 8 MiB shared `w`, twice; returns the number of large
/// allocations during the second call, whether `w`'s buffer stayed the same, and `w`'s values.
fn sgd_step(mode: Mode, hold_old_value: bool) -> (usize, bool, Vec<f64>, Option<Tensor>) {
    let w = shared(
        Tensor::from_slice(&vec![1.0f64; N], &[N]).unwrap(),
        Some("w"),
    );
    let g = vector("g", DType::F64);
    let step = &w - &(&g * 0.5);
    let f = function(std::slice::from_ref(&g), &[])
        .updates(&[(w.clone(), step)])
        .mode(mode)
        .build()
        .unwrap();
    let grad = Tensor::from_slice(&vec![0.25f64; N], &[N]).unwrap();
    f.call(std::slice::from_ref(&grad)).unwrap();
    let before = get_value(&w).unwrap();
    let ptr = before.data_ptr();
    let held = hold_old_value.then_some(before);
    BIG_ALLOCS.store(0, Ordering::Relaxed);
    f.call(std::slice::from_ref(&grad)).unwrap();
    let allocs = BIG_ALLOCS.load(Ordering::Relaxed);
    let after = get_value(&w).unwrap();
    (
        allocs,
        after.data_ptr() == ptr,
        after.to_vec::<f64>().unwrap(),
        held,
    )
}

#[test]
fn a_shared_variable_consumed_by_its_own_update_is_overwritten_in_place() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let interp = Mode::by_name("interp").unwrap();
    let unfused_interp = interp.excluding(&["fusion"]);
    for (name, mode) in [
        ("native", Mode::default()),
        ("interp", interp),
        ("interp, unfused", unfused_interp),
    ] {
        let (allocs, same_buffer, w, _) = sgd_step(mode, false);
        assert!(w.iter().all(|&v| v == 0.75), "{name}: w = {:?}", &w[..3]);
        assert!(same_buffer, "{name}: the update did not reuse w's buffer");
        // `0.5 * g` may take a buffer (unfused); the step itself must not.
        assert!(
            allocs <= 1,
            "{name}: {allocs} large allocations for one step"
        );
    }
}

#[test]
fn a_held_value_of_a_consumed_shared_variable_is_never_overwritten() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    for mode in [Mode::default(), Mode::by_name("interp").unwrap()] {
        let (_, same_buffer, w, held) = sgd_step(mode, true);
        assert!(!same_buffer, "the update overwrote a value someone holds");
        assert!(w.iter().all(|&v| v == 0.75), "w = {:?}", &w[..3]);
        let held = held.unwrap().to_vec::<f64>().unwrap();
        assert!(held.iter().all(|&v| v == 0.875), "held = {:?}", &held[..3]);
    }
}
