//! Memory does not grow with graph length: each intermediate is freed after its last use.
//! (Its own test binary, so the allocator's peak is this test's alone.)

use oxtensor::{DType, Tensor, function, vector};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards every call to the system allocator unchanged; the counters are only
// statistics and do not affect the memory handed out.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let now = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(now, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let now = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(now, Ordering::Relaxed);
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

#[test]
fn a_long_chain_keeps_a_few_buffers_alive() {
    const N: usize = 1 << 20; // 8 MiB per float64 buffer
    const OPS: usize = 200;
    let x = vector("x", DType::F64);
    let mut y = x.clone();
    for i in 0..OPS {
        y = if i % 2 == 0 { y.sin() } else { &y * 1.0001 };
    }
    let f = function(std::slice::from_ref(&x), &[y]).build().unwrap();
    let input = Tensor::from_slice(&vec![0.5f64; N], &[N]).unwrap();
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let out = f.call(std::slice::from_ref(&input)).unwrap();
    let peak_buffers = (PEAK.load(Ordering::Relaxed) - base) as f64 / (N * 8) as f64;
    assert!(
        peak_buffers < 4.0,
        "peak {peak_buffers:.1} buffers for a {OPS}-op chain"
    );
    assert_eq!(out[0].numel(), N);
}
