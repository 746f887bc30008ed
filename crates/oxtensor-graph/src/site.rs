use std::cell::RefCell;
use std::fmt;
use std::panic::Location;
use std::sync::Arc;

/// Where a variable was created: a Rust call site (`#[track_caller]`), or a Python `file:line`
/// supplied by the Python front end.
#[derive(Clone, Debug)]
pub enum Site {
    /// A Rust source location.
    Rust(&'static Location<'static>),
    /// A location given by a front end (Python's `file.py:12`).
    External(Arc<str>),
}

thread_local! {
    static EXTERNAL_SITE: RefCell<Option<Arc<str>>> = const { RefCell::new(None) };
}

impl Site {
    /// The site to record for a node built now: the front end's, if one is set on this thread,
    /// else the Rust caller's.
    #[track_caller]
    pub fn current() -> Site {
        let caller = Location::caller();
        EXTERNAL_SITE
            .with(|s| s.borrow().clone())
            .map_or(Site::Rust(caller), Site::External)
    }
}

/// Runs `f` with every node it creates attributed to `site` (used by the Python bindings to
/// record the user's `file:line` rather than a line inside the bindings).
pub fn with_site<R>(site: Arc<str>, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<Arc<str>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let prev = self.0.take();
            EXTERNAL_SITE.with(|s| *s.borrow_mut() = prev);
        }
    }
    let prev = EXTERNAL_SITE.with(|s| s.borrow_mut().replace(site));
    let _restore = Restore(prev);
    f()
}

impl fmt::Display for Site {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Site::Rust(l) => write!(f, "{}:{}", l.file(), l.line()),
            Site::External(s) => f.write_str(s),
        }
    }
}
