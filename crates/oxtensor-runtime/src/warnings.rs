//! Warnings a kernel raises while still returning its result, as NumPy raises a
//! `RuntimeWarning` (`invalid value encountered in sqrt`) and carries on. A kernel calls
//! [`warn`]; a front end calls [`take`] after each call and shows them its own way (the Python
//! module as `RuntimeWarning`s). Without pending warnings [`take`] is one atomic load, so a call
//! pays nothing for the channel.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// At most this many warnings wait for a front end (a Rust caller that never calls [`take`]
/// must not accumulate them without bound); later ones are dropped.
const MAX_PENDING: usize = 64;

static PENDING: AtomicBool = AtomicBool::new(false);
static QUEUE: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Records a warning (NumPy's message, e.g. `invalid value encountered in sqrt`) for the
/// front end to show after the current call.
pub fn warn(message: impl Into<String>) {
    let mut queue = QUEUE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if queue.len() < MAX_PENDING {
        queue.push(message.into());
    }
    PENDING.store(true, Ordering::Release);
}

/// The warnings recorded since the last call, oldest first (empty almost always).
pub fn take() -> Vec<String> {
    if !PENDING.load(Ordering::Acquire) {
        return Vec::new();
    }
    let mut queue = QUEUE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    PENDING.store(false, Ordering::Release);
    std::mem::take(&mut *queue)
}
