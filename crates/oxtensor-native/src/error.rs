use oxtensor_runtime::RuntimeError;
use std::path::PathBuf;

/// Why the native backend could not be set up or could not build a function.
#[derive(Debug, thiserror::Error)]
pub enum NativeError {
    /// No working C compiler: the facade turns this into one warning and the interpreter.
    #[error("no C compiler found: {0}")]
    NoCompiler(String),
    /// The compiler rejected the generated source (a bug in code generation, or a compiler
    /// without the flags we need).
    #[error("{compiler} failed to compile the generated C ({status}):\n{stderr}")]
    Compile {
        /// The compiler command.
        compiler: String,
        /// Its exit status.
        status: String,
        /// What it printed.
        stderr: String,
    },
    /// A file operation of the cache or the build failed.
    #[error("{context} ({path}): {source}")]
    Io {
        /// What was being done.
        context: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The body of an inner-graph node (OpFromGraph, IfElse) could not be compiled.
    #[error("compiling an inner graph: {0}")]
    Inner(#[from] RuntimeError),
    /// The compiled library could not be loaded or lacks a kernel.
    #[error("loading {path}: {message}")]
    Load {
        /// The library.
        path: PathBuf,
        /// The loader's message.
        message: String,
    },
}

impl NativeError {
    /// An [`NativeError::Io`] for `path`.
    pub(crate) fn io(
        context: &'static str,
        path: impl Into<PathBuf>,
        source: std::io::Error,
    ) -> Self {
        NativeError::Io {
            context,
            path: path.into(),
            source,
        }
    }
}

impl From<NativeError> for RuntimeError {
    fn from(e: NativeError) -> RuntimeError {
        RuntimeError::Unsupported(format!("native backend: {e}"))
    }
}
