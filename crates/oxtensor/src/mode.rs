use oxtensor_runtime::{Backend, Interpreter};
use std::sync::Arc;

/// How a function is compiled: which backend runs it (and, once the rewrite engine lands, which
/// passes rewrite it). PyTensor users know this as `mode=`.
#[derive(Clone)]
pub struct Mode {
    backend: Arc<dyn Backend>,
}

impl Default for Mode {
    fn default() -> Mode {
        Mode {
            backend: Arc::new(Interpreter),
        }
    }
}

impl Mode {
    /// A mode by PyTensor name (`"FAST_RUN"`, `"FAST_COMPILE"`) or backend name (`"interp"`).
    pub fn by_name(name: &str) -> Option<Mode> {
        match name {
            "FAST_RUN" | "FAST_COMPILE" | "interp" | "py" => Some(Mode::default()),
            _ => None,
        }
    }

    /// The backend that compiles graphs in this mode.
    pub fn backend(&self) -> &dyn Backend {
        self.backend.as_ref()
    }

    /// The backend's name.
    pub fn linker(&self) -> &'static str {
        self.backend.name()
    }
}
