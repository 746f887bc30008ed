//! Running the system C compiler: finding it, naming it (for the cache key), and building a
//! shared library from one generated translation unit.

use crate::NativeError;
use crate::cache::Cache;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A C compiler that answered `--version`, with what identifies its output: the version text
/// and the host CPU (the code is built with `-march=native`, so a cache shared between
/// machines must not hand one machine's code to another).
#[derive(Clone, Debug)]
pub struct Compiler {
    command: String,
    identity: String,
}

impl Compiler {
    /// Checks that `command` runs and records its identity. The version text is remembered in
    /// `cache`, under the executable `command` names (its canonical path, size and
    /// modification time): a new process then finds it without running the compiler, which
    /// was most of what loading a function from the cache cost. A compiler that is replaced
    /// or upgraded is a different file, so it is asked again.
    pub fn probe(command: &str, cache: &Cache) -> Result<Compiler, NativeError> {
        let version = match executable_fingerprint(command) {
            Some(file) => {
                let key = Cache::key(&[b"compiler version", file.as_bytes()]);
                cache.remembered(&key, || version(command))?
            }
            None => version(command)?,
        };
        Ok(Compiler {
            command: command.to_string(),
            identity: format!("{version}\n{}", cpu_identity()),
        })
    }

    /// The command.
    pub fn command(&self) -> &str {
        &self.command
    }

    /// The version text and host CPU, hashed into every cache key.
    pub fn identity(&self) -> &str {
        &self.identity
    }

    /// Compiles `source` (written to `work/NAME.c`, `work` being a private scratch
    /// directory) into the object file `out`, with `flags`.
    pub fn object(
        &self,
        source: &str,
        name: &str,
        flags: &[String],
        work: &Path,
        out: &Path,
    ) -> Result<(), NativeError> {
        let src = write_source(source, name, work)?;
        let mut args: Vec<&OsStr> = flags.iter().map(OsStr::new).collect();
        args.extend([
            OsStr::new("-c"),
            OsStr::new("-o"),
            out.as_os_str(),
            src.as_os_str(),
        ]);
        self.run(&args)
    }

    /// Builds the shared library `out` from `source` (written to `work/NAME.c`; `None` when
    /// everything is in `objects` already) and `objects`, with `flags` before the inputs and
    /// `libs` after them.
    pub fn link(
        &self,
        source: Option<(&str, &str)>,
        objects: &[&Path],
        flags: &[String],
        libs: &[String],
        work: &Path,
        out: &Path,
    ) -> Result<(), NativeError> {
        let src = match source {
            Some((text, name)) => Some(write_source(text, name, work)?),
            None => None,
        };
        let mut args: Vec<&OsStr> = flags.iter().map(OsStr::new).collect();
        args.extend([OsStr::new("-o"), out.as_os_str()]);
        args.extend(src.iter().map(|p| p.as_os_str()));
        args.extend(objects.iter().map(|p| p.as_os_str()));
        args.extend(libs.iter().map(OsStr::new));
        self.run(&args)
    }

    /// Runs the compiler with `args`.
    fn run(&self, args: &[&OsStr]) -> Result<(), NativeError> {
        let result = Command::new(&self.command)
            .args(args)
            .output()
            .map_err(|e| NativeError::NoCompiler(format!("running `{}`: {e}", self.command)))?;
        if result.status.success() {
            Ok(())
        } else {
            Err(NativeError::Compile {
                compiler: self.command.clone(),
                status: result.status.to_string(),
                stderr: String::from_utf8_lossy(&result.stderr).into_owned(),
            })
        }
    }
}

/// What `command --version` prints (the compiler's identity, hashed into cache keys).
fn version(command: &str) -> Result<String, NativeError> {
    let out = Command::new(command)
        .arg("--version")
        .output()
        .map_err(|e| NativeError::NoCompiler(format!("`{command} --version`: {e}")))?;
    if !out.status.success() {
        return Err(NativeError::NoCompiler(format!(
            "`{command} --version` exited with {}",
            out.status
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The canonical path, size and modification time of the executable `command` runs (found on
/// `PATH` as the shell would), or `None` when it cannot be found or read.
fn executable_fingerprint(command: &str) -> Option<String> {
    let path = if command.contains('/') {
        PathBuf::from(command)
    } else {
        std::env::split_paths(&std::env::var_os("PATH")?)
            .map(|dir| dir.join(command))
            .find(|p| p.is_file())?
    };
    let path = path.canonicalize().ok()?;
    let meta = path.metadata().ok()?;
    let modified = meta
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?;
    Some(format!(
        "{}\n{}\n{}",
        path.display(),
        meta.len(),
        modified.as_nanos()
    ))
}

/// Writes `source` to `work/NAME.c`.
fn write_source(source: &str, name: &str, work: &Path) -> Result<PathBuf, NativeError> {
    let src = work.join(format!("{name}.c"));
    std::fs::write(&src, source).map_err(|e| NativeError::io("writing the C source", &src, e))?;
    Ok(src)
}

/// The CPU model and feature flags (Linux's `/proc/cpuinfo`), or the architecture elsewhere.
fn cpu_identity() -> String {
    use std::io::BufRead;
    // The first processor's block only: on a machine with many cores the whole file is large
    // and slow to produce.
    let info: Vec<String> = std::fs::File::open("/proc/cpuinfo")
        .map(|f| {
            std::io::BufReader::new(f)
                .lines()
                .map_while(Result::ok)
                .take_while(|l| !l.trim().is_empty())
                .collect()
        })
        .unwrap_or_default();
    let pick = |key: &str| {
        info.iter()
            .find(|l| l.starts_with(key))
            .cloned()
            .unwrap_or_default()
    };
    format!(
        "{} {} {}",
        std::env::consts::ARCH,
        pick("model name"),
        pick("flags")
    )
}
