//! Running the system C compiler: finding it, naming it (for the cache key), and building a
//! shared library from one generated translation unit.

use crate::NativeError;
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
    /// Checks that `command` runs and records its identity.
    pub fn probe(command: &str) -> Result<Compiler, NativeError> {
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
        let version = String::from_utf8_lossy(&out.stdout).into_owned();
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

/// Writes `source` to `work/NAME.c`.
fn write_source(source: &str, name: &str, work: &Path) -> Result<PathBuf, NativeError> {
    let src = work.join(format!("{name}.c"));
    std::fs::write(&src, source).map_err(|e| NativeError::io("writing the C source", &src, e))?;
    Ok(src)
}

/// The CPU model and feature flags (Linux's `/proc/cpuinfo`), or the architecture elsewhere.
fn cpu_identity() -> String {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let pick = |key: &str| {
        info.lines()
            .find(|l| l.starts_with(key))
            .map(|l| l.to_string())
            .unwrap_or_default()
    };
    format!(
        "{} {} {}",
        std::env::consts::ARCH,
        pick("model name"),
        pick("flags")
    )
}
