//! A lock that is only ever tried, never waited for: the per-call state of a small function
//! (a replay's recording, the Python call path's cached arguments and output arrays), which a
//! call uses when it is free and goes without when another call (on another thread, or from
//! inside this one) holds it.
//!
//! `std::sync::Mutex` would do, but releasing it is an atomic read-modify-write (it must look
//! for waiters), and on a call of half a microsecond every locked instruction shows: releasing
//! a [`TryLock`] is a plain store. There is no poisoning: a panic while held releases the lock
//! as the guard unwinds, and the values kept behind it stay valid (they are whole values, each
//! usable on its own).

use std::cell::UnsafeCell;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, Ordering};

/// A value behind a lock that [`TryLock::try_lock`] takes when it is free.
#[derive(Default)]
pub struct TryLock<T> {
    locked: AtomicBool,
    value: UnsafeCell<T>,
}

// SAFETY: the value is reached only through a `Held`, and at most one `Held` exists at a time
// (the flag is set by the swap that creates one and cleared by its drop), so sharing the lock
// between threads hands the value from one thread to another as a `Mutex` does: `T: Send`
// suffices.
unsafe impl<T: Send> Sync for TryLock<T> {}

/// The value of a [`TryLock`], held until dropped.
pub struct Held<'a, T> {
    lock: &'a TryLock<T>,
}

impl<T> TryLock<T> {
    /// A free lock holding `value`.
    pub const fn new(value: T) -> TryLock<T> {
        TryLock {
            locked: AtomicBool::new(false),
            value: UnsafeCell::new(value),
        }
    }

    /// The value, when no one else holds it.
    #[inline]
    pub fn try_lock(&self) -> Option<Held<'_, T>> {
        // A `Held` is made only when the swap took the lock: dropping one releases the lock,
        // so one made and dropped on failure (as `bool::then_some` would, its argument being
        // evaluated either way) would release another holder's lock.
        if self.locked.swap(true, Ordering::Acquire) {
            None
        } else {
            Some(Held { lock: self })
        }
    }
}

impl<T> Deref for Held<'_, T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        // SAFETY: this guard is the only one (see the `Sync` impl), so no `&mut` to the value
        // exists elsewhere; the `Acquire` swap that made it saw every write of the last holder.
        unsafe { &*self.lock.value.get() }
    }
}

impl<T> DerefMut for Held<'_, T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as for `deref`, and `&mut self` makes this the only reference through it.
        unsafe { &mut *self.lock.value.get() }
    }
}

impl<T> Drop for Held<'_, T> {
    #[inline]
    fn drop(&mut self) {
        self.lock.locked.store(false, Ordering::Release);
    }
}
