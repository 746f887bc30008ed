//! What a function keeps between calls to make the next small call cheaper: the tensors its
//! last array arguments were wrapped in ([`ArgCache`]) and the arrays its outputs returned
//! ([`Recycler`]), under one lock that a call takes once (`try_lock`: a call on another thread,
//! or one made from inside a call, just goes without).
//!
//! A sampler passes the same few arrays on every call (the position it moves, the data), and
//! wrapping an array as a tensor allocates twice (the storage and the handle that keeps the
//! array alive) and frees both after the call: on ten elements that is a tenth of the call. So
//! each input remembers the array object it was last given and the tensor made from it; when
//! the same object comes again and still has the dtype, first element, extents and strides the
//! tensor describes ([`still_wraps`]), the tensor is used again. Its storage sees the array's
//! current values (it is the array's memory), so nothing is stale.
//!
//! Only arrays of at most [`CACHE_BYTES`] are remembered: the tensor keeps its array alive
//! until the input is given another one (or `Function.free()`), as PyTensor's functions keep
//! their input storage, and that should not pin a large array the caller has dropped.

use oxtensor_data::Tensor;
use pyo3::prelude::*;

use crate::convert::still_wraps;
use crate::recycle::Recycler;

/// The largest array (in bytes of its memory) whose tensor is remembered.
pub const CACHE_BYTES: usize = 1 << 16;

/// Per input, the array it was last given and its tensor (see the module docs): the array
/// object's address and the tensor wrapping it, whose storage holds a reference to the object,
/// so the address is the same live object.
pub struct ArgCache(Vec<Option<(usize, Tensor)>>);

/// Everything a function keeps between calls (see the module docs).
pub struct CallState {
    /// The inputs' last arrays.
    pub args: ArgCache,
    /// Per output, the arrays it returned.
    pub outs: Vec<Recycler>,
}

impl CallState {
    /// Empty state for `n_inputs` inputs and `n_outputs` outputs.
    pub fn new(n_inputs: usize, n_outputs: usize) -> CallState {
        CallState {
            args: ArgCache(vec![None; n_inputs]),
            outs: (0..n_outputs).map(|_| Recycler::default()).collect(),
        }
    }

    /// Takes out everything kept: the caller drops it after releasing the lock, which frees
    /// the arrays nobody else holds.
    pub fn forget(&mut self) -> CallState {
        let n_inputs = self.args.0.len();
        std::mem::replace(self, CallState::new(n_inputs, self.outs.len()))
    }
}

impl ArgCache {
    /// The tensor input `i` was last given for the array `obj`, when it still wraps it.
    #[inline]
    pub fn get(&self, i: usize, obj: &Bound<'_, PyAny>) -> Option<Tensor> {
        match self.0.get(i)? {
            Some((addr, t)) if *addr == obj.as_ptr() as usize && still_wraps(obj, t) => {
                Some(t.clone())
            }
            _ => None,
        }
    }

    /// Remembers `t`, just made from the array `obj` without a copy, for input `i` (when it
    /// is small enough; else forgets the input's last array).
    #[inline]
    pub fn put(&mut self, i: usize, obj: &Bound<'_, PyAny>, t: &Tensor) {
        let entry = (!t.storage().is_owned() && t.storage().len() <= CACHE_BYTES)
            .then(|| (obj.as_ptr() as usize, t.clone()));
        if let Some(slot) = self.0.get_mut(i) {
            *slot = entry;
        }
    }
}
