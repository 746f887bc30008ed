use std::alloc::{Layout, alloc, alloc_zeroed, dealloc};
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
    /// Allocated here; `base` is the allocation (the data pointer is rounded up from it).
    Aligned { base: NonNull<u8> },
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
    ///
    /// The allocator is asked for 16-byte alignment and `ALIGN` spare bytes, and the pointer is
    /// rounded up: with alignment ≤ 16 the system allocator zeroes through `calloc`, which hands
    /// large blocks out as fresh zero pages, where an over-aligned request would be zeroed by a
    /// full extra pass over memory.
    pub fn zeroed(bytes: usize) -> Storage {
        Storage::try_zeroed(bytes).unwrap_or_else(|| match Self::layout(bytes) {
            Some(layout) => std::alloc::handle_alloc_error(layout),
            None => panic!("allocation of {bytes} bytes overflows"),
        })
    }

    /// Like [`Storage::zeroed`], but `None` when the memory cannot be had (so a user asking for
    /// an absurd array gets an error, not an abort).
    pub fn try_zeroed(bytes: usize) -> Option<Storage> {
        let layout = Self::layout(bytes)?;
        // SAFETY: the layout has non-zero size and a valid alignment.
        let raw = unsafe { alloc_zeroed(layout) };
        Self::aligned(raw, bytes, layout)
    }

    /// Like [`Storage::try_zeroed`], but the bytes are left as the allocator hands them out.
    ///
    /// For buffers a kernel overwrites whole (a native kernel's outputs, a loop's trajectory):
    /// a reused heap block then costs no pass over memory, where zeroing it would cost one
    /// full write of the output before the kernel writes it again.
    ///
    /// # Safety
    /// Every byte must be written before anything reads it: the caller writes the whole
    /// buffer (or, at least, every byte any view of it will ever cover) through
    /// [`Storage::as_ptr`] before handing the storage, or a tensor over it, to anyone.
    pub unsafe fn try_uninit(bytes: usize) -> Option<Storage> {
        let layout = Self::layout(bytes)?;
        // SAFETY: the layout has non-zero size and a valid alignment.
        let raw = unsafe { alloc(layout) };
        Self::aligned(raw, bytes, layout)
    }

    /// The storage of the fresh allocation `raw` of `layout` (`None` when it failed), its data
    /// pointer rounded up to `ALIGN`.
    fn aligned(raw: *mut u8, bytes: usize, layout: Layout) -> Option<Storage> {
        let base = NonNull::new(raw)?;
        advise_huge_pages(raw, layout.size());
        let pad = raw.align_offset(ALIGN);
        // SAFETY: `pad < ALIGN` and the allocation has `ALIGN` spare bytes past `bytes`, so the
        // rounded-up pointer and the `bytes` after it stay inside the allocation.
        let ptr = unsafe { base.add(pad) };
        Some(Storage {
            ptr,
            bytes,
            owner: Owner::Aligned { base },
        })
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

    fn layout(bytes: usize) -> Option<Layout> {
        Layout::from_size_align(bytes.checked_add(ALIGN)?, 16).ok()
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
            Owner::Aligned { .. } | Owner::External { writable: true, .. } => {
                Some(self.ptr.as_ptr())
            }
            Owner::External {
                writable: false, ..
            } => None,
        }
    }

    /// True when the bytes belong to this storage (not borrowed from an external owner).
    pub fn is_owned(&self) -> bool {
        matches!(self.owner, Owner::Aligned { .. })
    }
}

impl Drop for Storage {
    fn drop(&mut self) {
        if let Owner::Aligned { base } = self.owner
            && let Some(layout) = Self::layout(self.bytes)
        {
            // SAFETY: `base` was allocated in `try_zeroed` or `try_uninit` with this layout
            // and not freed.
            unsafe { dealloc(base.as_ptr(), layout) }
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

/// Blocks from this size up are fresh zero pages from `mmap`; asking for transparent huge
/// pages there (as NumPy does for its arrays) makes the first write fault once per 2 MiB
/// instead of once per 4 KiB, which is most of the cost of filling a new large array.
const HUGE_PAGE_MIN: usize = 4 << 20;

/// `madvise(MADV_HUGEPAGE)` on the whole pages of the new allocation `[raw, raw + bytes)` when
/// it is large; a hint only, so its result is ignored.
#[cfg(target_os = "linux")]
fn advise_huge_pages(raw: *mut u8, bytes: usize) {
    const PAGE: usize = 4096;
    if bytes < HUGE_PAGE_MIN {
        return;
    }
    let start = (raw as usize).next_multiple_of(PAGE);
    let end = (raw as usize + bytes) & !(PAGE - 1);
    if end > start {
        // SAFETY: `[start, end)` lies inside the allocation just made (rounded inwards to
        // pages), which this storage owns; `madvise` with `MADV_HUGEPAGE` changes no contents,
        // only how the kernel backs the pages.
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
        }
    }
}

/// Elsewhere huge pages are not requested.
#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_raw: *mut u8, _bytes: usize) {}
