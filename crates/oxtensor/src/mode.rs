use crate::Error;
use oxtensor_graph::FunctionGraph;
use oxtensor_rewrite::{Optimizer, RewriteReport};
use oxtensor_runtime::{Backend, Interpreter};
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};

/// The backend a mode compiles with.
#[derive(Clone)]
enum Linker {
    /// The reference interpreter.
    Interpreter,
    /// Generated C (the interpreter, after one warning, when no C compiler works).
    Native,
    /// Generated C for another CPU than this one (GCC's `-march` name, e.g. `x86-64-v3`).
    NativeFor(Arc<str>),
    /// A backend given by the user.
    Custom(Arc<dyn Backend>),
}

/// The reference interpreter, for modes that name it.
static INTERPRETER: Interpreter = Interpreter;

/// The process's native backend, made on first use; `None` (after one warning) when no C
/// compiler answers, so functions still run, in the interpreter.
fn native_backend() -> Option<&'static oxtensor_native::NativeBackend> {
    static NATIVE: OnceLock<Option<oxtensor_native::NativeBackend>> = OnceLock::new();
    NATIVE
        .get_or_init(|| match oxtensor_native::NativeBackend::new() {
            Ok(b) => Some(b),
            Err(e) => {
                eprintln!("oxtensor warning: {e}; functions run in the interpreter (set OXTENSOR_CXX or CC to a C compiler)");
                None
            }
        })
        .as_ref()
}

/// The process's native backend compiling for `target` (a GCC `-march` name), made on first
/// use of each target and kept for the process, like the default one.
fn native_backend_for(target: &str) -> Option<&'static oxtensor_native::NativeBackend> {
    type Backends = Mutex<HashMap<String, Option<&'static oxtensor_native::NativeBackend>>>;
    static BY_TARGET: OnceLock<Backends> = OnceLock::new();
    let mut map = BY_TARGET
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    *map.entry(target.to_string()).or_insert_with(|| {
        let config = oxtensor_native::NativeConfig {
            target: Some(target.to_string()),
            ..Default::default()
        };
        match oxtensor_native::NativeBackend::with_config(config) {
            // A handful of targets per process at most; each backend lives as long as the
            // process, as the default one does.
            Ok(b) => Some(&*Box::leak(Box::new(b))),
            Err(e) => {
                eprintln!("oxtensor warning: {e}; functions for {target} run in the interpreter");
                None
            }
        }
    })
}

/// The target named by a linker `native:TARGET`: a GCC `-march` name, so letters, digits,
/// `-`, `_` and `.` only (it becomes a compiler flag).
fn native_target(linker: &str) -> Result<Option<Arc<str>>, Error> {
    let Some(target) = linker.strip_prefix("native:") else {
        return Ok(None);
    };
    let valid = !target.is_empty()
        && target
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !valid {
        return Err(Error::Option(format!(
            "invalid native target {target:?} in linker {linker:?}; expected a GCC -march name such as 'x86-64-v3'"
        )));
    }
    Ok(Some(target.into()))
}

/// How a function is compiled: which rewrites run on its graph (the optimizer) and which
/// backend runs the result (the linker). PyTensor users know it as `mode=`; the API follows
/// PyTensor's `Mode`: [`Mode::new`], the predefined [`Mode::FAST_RUN`] (the default) and
/// [`Mode::FAST_COMPILE`], and [`Mode::including`] / [`Mode::excluding`] /
/// [`Mode::requiring`] to adjust the rewrites by tag (`Mode::FAST_RUN.excluding(&["stabilize"])`).
#[derive(Clone)]
pub struct Mode {
    linker: Linker,
    optimizer: Optimizer,
}

impl Default for Mode {
    /// [`Mode::FAST_RUN`].
    fn default() -> Mode {
        Mode::FAST_RUN
    }
}

impl Mode {
    /// Every rewrite, and the best backend available: generated C when a compiler works.
    pub const FAST_RUN: Mode = Mode {
        linker: Linker::Native,
        optimizer: Optimizer::FAST_RUN,
    };

    /// Minimal rewrites (useless operations and constant folding) and the interpreter: the
    /// quickest compile.
    pub const FAST_COMPILE: Mode = Mode {
        linker: Linker::Interpreter,
        optimizer: Optimizer::FAST_COMPILE,
    };

    /// A mode from PyTensor's linker and optimizer names. Linkers: `"interp"` (also PyTensor's
    /// `"py"` and `"vm"`) for the interpreter; `"native"` (also `"c"`, `"cvm"`, `"c|py"`,
    /// `"auto"`, `"default"`) for generated C; `"native:TARGET"` for generated C compiled for
    /// another CPU (a GCC `-march` name: `"native:x86-64-v3"` gives an AVX-512 machine the code
    /// AVX2-only machines run, to test and measure it). Optimizers: `"fast_run"`, `"fast_compile"`, `"None"`
    /// (see [`Optimizer::by_name`]).
    pub fn new(linker: &str, optimizer: &str) -> Result<Mode, Error> {
        let linker = match linker {
            _ if let Some(target) = native_target(linker)? => Linker::NativeFor(target),
            "interp" | "py" | "vm" => Linker::Interpreter,
            "native" | "c" | "cvm" | "c|py" | "auto" | "default" => Linker::Native,
            other => {
                return Err(Error::Option(format!(
                    "unknown linker {other:?}; expected 'native', 'native:TARGET' (a GCC -march name), 'interp', 'py', 'vm', 'cvm', 'c', 'c|py' or 'auto'"
                )));
            }
        };
        let optimizer = Optimizer::by_name(optimizer).ok_or_else(|| {
            Error::Option(format!(
                "unknown optimizer {optimizer:?}; expected 'fast_run', 'fast_compile' or 'None'"
            ))
        })?;
        Ok(Mode { linker, optimizer })
    }

    /// A mode compiling with `backend` after the rewrites `optimizer` selects.
    pub fn with_backend(backend: Arc<dyn Backend>, optimizer: Optimizer) -> Mode {
        Mode {
            linker: Linker::Custom(backend),
            optimizer,
        }
    }

    /// A mode by PyTensor name (`"FAST_RUN"`, `"FAST_COMPILE"`) or backend name (`"native"`,
    /// `"interp"`, `"py"`: that backend with every rewrite).
    pub fn by_name(name: &str) -> Option<Mode> {
        match name {
            "FAST_RUN" | "native" => Some(Mode::FAST_RUN),
            "interp" | "py" => Some(Mode {
                linker: Linker::Interpreter,
                optimizer: Optimizer::FAST_RUN,
            }),
            "FAST_COMPILE" => Some(Mode::FAST_COMPILE),
            _ => None,
        }
    }

    /// The same mode also running the rewrites with any of these tags.
    pub fn including(&self, tags: &[&str]) -> Mode {
        self.with_optimizer(self.optimizer.including(tags))
    }

    /// The same mode without the rewrites that have any of these tags (a pass or rule name is a
    /// tag too): `excluding(&["stabilize"])`, `excluding(&["nan_unsafe"])`.
    pub fn excluding(&self, tags: &[&str]) -> Mode {
        self.with_optimizer(self.optimizer.excluding(tags))
    }

    /// The same mode keeping only the rewrites that have all of these tags.
    pub fn requiring(&self, tags: &[&str]) -> Mode {
        self.with_optimizer(self.optimizer.requiring(tags))
    }

    /// The same backend with another optimizer.
    pub fn with_optimizer(&self, optimizer: Optimizer) -> Mode {
        Mode {
            linker: self.linker.clone(),
            optimizer,
        }
    }

    /// The rewrite selection.
    pub fn optimizer(&self) -> &Optimizer {
        &self.optimizer
    }

    /// The backend that compiles graphs in this mode.
    pub fn backend(&self) -> &dyn Backend {
        match &self.linker {
            Linker::Interpreter => &INTERPRETER,
            Linker::Native => match native_backend() {
                Some(b) => b,
                None => &INTERPRETER,
            },
            Linker::NativeFor(target) => match native_backend_for(target) {
                Some(b) => b,
                None => &INTERPRETER,
            },
            Linker::Custom(b) => b.as_ref(),
        }
    }

    /// The backend's name.
    pub fn linker(&self) -> &'static str {
        self.backend().name()
    }

    /// Rewrites a function's graph with this mode's optimizer (what compiling does before
    /// handing the graph to the backend).
    pub fn rewrite(&self, graph: &FunctionGraph) -> Result<(FunctionGraph, RewriteReport), Error> {
        oxtensor_rewrite::rewrite(graph, &self.optimizer).map_err(|e| Error::Graph(e.into()))
    }
}

impl fmt::Debug for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Mode")
            .field("linker", &self.linker())
            .field("optimizer", &self.optimizer)
            .finish()
    }
}
