//! What the native backend is configured by: the compiler, its flags and the cache, each from
//! an explicit setting, else the environment, else a default (PyTensor's `config.cxx` and
//! `config.compiledir` analogues).

use std::path::PathBuf;

/// Default cap on the cache's size: least recently used entries are evicted above it.
pub const DEFAULT_CACHE_MAX_BYTES: u64 = 512 << 20;

/// Settings of a [`crate::NativeBackend`]. `None` fields are resolved when the backend is made:
/// the compiler from `$OXTENSOR_CXX`, then `$CC`, then `cc`; the cache directory from
/// `$OXTENSOR_CACHE_DIR`, then the user cache directory (`~/.cache/oxtensor`).
///
/// Tests set `cache_dir` per backend rather than through the environment, which is shared by
/// every test thread.
#[derive(Clone, Debug)]
pub struct NativeConfig {
    /// The C compiler command.
    pub compiler: Option<String>,
    /// Where compiled functions are cached.
    pub cache_dir: Option<PathBuf>,
    /// The cache's size cap in bytes (`$OXTENSOR_CACHE_MAX_BYTES` when unset).
    pub cache_max_bytes: Option<u64>,
    /// The CPU the code is compiled for, as GCC's `-march` names it: `native` (the default:
    /// every vector unit of this machine), or a lower x86-64 level such as `x86-64-v3` (AVX2)
    /// or `x86-64-v2` (SSE4.2), so a machine with AVX-512 can build, test and measure the code
    /// that CPUs without it get (`$OXTENSOR_NATIVE_TARGET` when unset).
    pub target: Option<String>,
    /// Compile with `-ffast-math` (`$OXTENSOR_FAST_MATH=1`): faster, but NaN/∞ handling and
    /// rounding may then differ from the interpreter.
    pub fast_math: Option<bool>,
    /// Let the compiler call glibc's vector math library (libmvec) for `exp`, `log`, `sin`, …
    /// in vectorised loops: several times faster, results within a few ulp of the scalar
    /// functions instead of equal to them. On by default.
    pub vector_math: bool,
    /// Split large loops across rayon's threads. On by default.
    pub parallel: bool,
    /// Single elementwise ops and reductions whose inputs all have a static shape of fewer
    /// elements than this (0-d arithmetic on scalars, say) get no C and run on the
    /// interpreter's kernels: for them a kernel would add compile time and save nothing.
    /// Every other node with a kernel runs it whatever its runtime size, since kernels keep
    /// their layout between calls (per-call overhead is what a sampler calling a function
    /// 10^5 times feels). 256 by default; 0 gives every supported node C (the differential
    /// tests do).
    pub interpret_below: usize,
}

impl Default for NativeConfig {
    fn default() -> NativeConfig {
        NativeConfig {
            compiler: None,
            cache_dir: None,
            cache_max_bytes: None,
            target: None,
            fast_math: None,
            vector_math: true,
            parallel: true,
            interpret_below: 256,
        }
    }
}

/// A non-empty environment variable.
pub(crate) fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

impl NativeConfig {
    /// The compiler command: the setting, `$OXTENSOR_CXX`, `$CC`, or `cc`.
    pub fn resolved_compiler(&self) -> String {
        self.compiler
            .clone()
            .or_else(|| env("OXTENSOR_CXX"))
            .or_else(|| env("CC"))
            .unwrap_or_else(|| "cc".to_string())
    }

    /// The cache directory: the setting, `$OXTENSOR_CACHE_DIR`, or `<user cache dir>/oxtensor`
    /// (`None` when the platform has no user cache directory).
    pub fn resolved_cache_dir(&self) -> Option<PathBuf> {
        self.cache_dir
            .clone()
            .or_else(|| env("OXTENSOR_CACHE_DIR").map(PathBuf::from))
            .or_else(|| dirs::cache_dir().map(|d| d.join("oxtensor")))
    }

    /// The cache cap: the setting, `$OXTENSOR_CACHE_MAX_BYTES`, or [`DEFAULT_CACHE_MAX_BYTES`].
    pub fn resolved_cache_max_bytes(&self) -> u64 {
        self.cache_max_bytes
            .or_else(|| env("OXTENSOR_CACHE_MAX_BYTES").and_then(|v| v.trim().parse().ok()))
            .unwrap_or(DEFAULT_CACHE_MAX_BYTES)
    }

    /// The `-march` target: the setting, `$OXTENSOR_NATIVE_TARGET`, or `native`.
    pub fn resolved_target(&self) -> String {
        self.target
            .clone()
            .or_else(|| env("OXTENSOR_NATIVE_TARGET"))
            .map(|t| t.trim().to_string())
            .unwrap_or_else(|| "native".to_string())
    }

    /// Whether `-ffast-math` is on: the setting, or `$OXTENSOR_FAST_MATH` set to `1`/`true`.
    pub fn resolved_fast_math(&self) -> bool {
        self.fast_math.unwrap_or_else(|| {
            env("OXTENSOR_FAST_MATH").is_some_and(|v| matches!(v.trim(), "1" | "true" | "True"))
        })
    }

    /// The compiler flags. `-O2` with the dynamic vectoriser cost model runs elementwise
    /// kernels as fast as `-O3`, reductions about 10 % faster, and compiles faster (measured in
    /// `docs/native-backend.md`); `-ffp-contract=off` keeps `a * b + c` from becoming a fused
    /// multiply-add, so float results round as the interpreter's do; `-fno-math-errno` and
    /// `-fno-trapping-math` change no value but let math calls and selects vectorise;
    /// `-fno-strict-aliasing` because the shared drivers hand kernels untyped buffers;
    /// `-fopenmp-simd` honours the SIMD declarations of the math functions. The `-march` is
    /// [`NativeConfig::resolved_target`].
    pub fn flags(&self) -> Vec<String> {
        let mut flags: Vec<String> = [
            "-O2",
            "-fvect-cost-model=dynamic",
            "-mprefer-vector-width=512",
            "-fPIC",
            "-shared",
            "-std=gnu11",
            "-fno-math-errno",
            "-fno-trapping-math",
            "-ffp-contract=off",
            "-fno-strict-aliasing",
            "-fvisibility=hidden",
        ]
        .map(String::from)
        .to_vec();
        flags.insert(2, format!("-march={}", self.resolved_target()));
        if self.vector_math {
            flags.push("-fopenmp-simd".into());
        }
        if self.resolved_fast_math() {
            flags.push("-ffast-math".into());
        }
        flags
    }

    /// The libraries to link after the source file.
    pub fn libs(&self) -> Vec<String> {
        let mut libs = Vec::new();
        if self.vector_math {
            libs.push("-lmvec".to_string());
        }
        libs.push("-lm".to_string());
        libs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_target_becomes_the_march_flag() {
        let config = NativeConfig {
            target: Some(" x86-64-v3 ".into()),
            ..NativeConfig::default()
        };
        let flags = config.flags();
        assert!(flags.contains(&"-march=x86-64-v3".to_string()), "{flags:?}");
        assert_eq!(flags.iter().filter(|f| f.starts_with("-march=")).count(), 1);
    }
}
