use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::any::Any;
use std::ptr::NonNull;

/// Alignment of owned buffers: one cache line, enough for any SIMD load.
pub(crate) const ALIGN: usize = 64;

/// A block of bytes holding tensor elements: owned and 64-byte aligned, or borrowed from an
/// external owner (a NumPy array) kept alive for as long as the storage lives.
pub struct Storage {
    ptr: NonNull<u8>,
    bytes: usize,
    owner: Owner,
}

enum Owner {
    Aligned,
    External {
        _keep_alive: Box<dyn Any + Send + Sync>,
        writable: bool,
    },
}

// SAFETY: the bytes are either owned by this value or kept alive by `_keep_alive`; they are only
// mutated through `&mut Storage` (unique access), so sharing `&Storage` across threads only reads.
unsafe impl Send for Storage {}
// SAFETY: see `Send`; no interior mutability is reachable from `&Storage`.
unsafe impl Sync for Storage {}

impl Storage {
    /// Allocates `bytes` zeroed bytes, 64-byte aligned.
    pub fn zeroed(bytes: usize) -> Storage {
        let layout = Self::layout(bytes);
        // SAFETY: the layout has non-zero size (at least ALIGN bytes) and a valid alignment.
        let raw = unsafe { alloc_zeroed(layout) };
        let ptr = NonNull::new(raw).unwrap_or_else(|| std::alloc::handle_alloc_error(layout));
        Storage {
            ptr,
            bytes,
            owner: Owner::Aligned,
        }
    }

    /// Wraps memory owned by someone else.
    ///
    /// # Safety
    /// `ptr` must be valid for reads of `bytes` bytes (and writes, if `writable`) for as long as
    /// `keep_alive` is alive, and nothing else may write to it while this storage exists.
    pub unsafe fn external(
        ptr: NonNull<u8>,
        bytes: usize,
        keep_alive: Box<dyn Any + Send + Sync>,
        writable: bool,
    ) -> Storage {
        Storage {
            ptr,
            bytes,
            owner: Owner::External {
                _keep_alive: keep_alive,
                writable,
            },
        }
    }

    fn layout(bytes: usize) -> Layout {
        let size = bytes.max(1).next_multiple_of(ALIGN);
        Layout::from_size_align(size, ALIGN)
            .unwrap_or_else(|_| panic!("allocation of {bytes} bytes overflows"))
    }

    /// Number of bytes.
    pub fn len(&self) -> usize {
        self.bytes
    }

    /// True when the storage holds no bytes.
    pub fn is_empty(&self) -> bool {
        self.bytes == 0
    }

    /// Pointer to the first byte.
    pub fn as_ptr(&self) -> *const u8 {
        self.ptr.as_ptr()
    }

    /// Mutable pointer to the first byte, if this storage may be written.
    pub fn as_mut_ptr(&mut self) -> Option<*mut u8> {
        match self.owner {
            Owner::Aligned | Owner::External { writable: true, .. } => Some(self.ptr.as_ptr()),
            Owner::External {
                writable: false, ..
            } => None,
        }
    }

    /// True when the bytes belong to this storage (not borrowed from an external owner).
    pub fn is_owned(&self) -> bool {
        matches!(self.owner, Owner::Aligned)
    }
}

impl Drop for Storage {
    fn drop(&mut self) {
        if let Owner::Aligned = self.owner {
            // SAFETY: allocated in `zeroed` with exactly this layout and not freed before.
            unsafe { dealloc(self.ptr.as_ptr(), Self::layout(self.bytes)) }
        }
    }
}

impl std::fmt::Debug for Storage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Storage({} bytes, owned={})",
            self.bytes,
            self.is_owned()
        )
    }
}
