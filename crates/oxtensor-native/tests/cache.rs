//! The compile cache: concurrent builds of one graph (threads and processes), corrupt
//! entries and objects, unusable (missing, read-only) directories, eviction at the size cap,
//! and the `oxtensor-cache` command. Each test has its own cache directory, set through the
//! backend's configuration.

use crate::common;

use oxtensor_data::{DType, Tensor};
use oxtensor_graph::{FunctionGraph, ScalarOp, TensorType, Var, build};
use oxtensor_native::{NativeBackend, NativeConfig};
use oxtensor_runtime::Executable;
use oxtensor_testkit::Tol;
use std::path::Path;
use std::sync::Barrier;

fn backend_in(dir: &Path, cap: Option<u64>) -> NativeBackend {
    NativeBackend::with_config(NativeConfig {
        cache_dir: Some(dir.to_path_buf()),
        cache_max_bytes: cap,
        ..NativeConfig::default()
    })
    .expect("backend")
}

/// A small graph, `exp(x) + k` with `k` inside a Composite (so distinct `k` give distinct
/// C sources).
fn graph(k: i64) -> (FunctionGraph, Vec<Tensor>) {
    let x = common::input("x", DType::F64, 1);
    let s = Var::input(Some("s"), TensorType::scalar(DType::F64));
    let inner =
        build::with_scalar(ScalarOp::Add, &build::exp(&s).expect("exp"), k, false).expect("add");
    let y = build::composite(&[s], &[inner], std::slice::from_ref(&x))
        .expect("composite")
        .remove(0);
    let g = FunctionGraph::new(vec![x], vec![y]).expect("graph");
    let v = vec![Tensor::from_slice(&[0.0f64, 1.0, -1.0], &[3]).expect("x")];
    (g, v)
}

fn check(exec: &dyn Executable, values: &[Tensor], k: i64) {
    let out = exec
        .run(values.to_vec())
        .expect("run")
        .remove(0)
        .to_vec::<f64>()
        .expect("f64");
    let want: Vec<f64> = [0.0f64, 1.0, -1.0]
        .iter()
        .map(|x| x.exp() + k as f64)
        .collect();
    // The kernel's `exp` is glibc's (a libmvec variant when vectorised), the reference Rust's:
    // equal on some CPUs, a few ulp apart on others.
    oxtensor_testkit::assert_close_slices("exp(x) + k", &out, &want, Tol::MATH_LIBRARIES, false);
}

#[test]
fn concurrent_builds_of_one_graph_build_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let barrier = Barrier::new(3);
    let hits: Vec<bool> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..3)
            .map(|_| {
                s.spawn(|| {
                    let b = backend_in(dir.path(), None);
                    let (g, v) = graph(1);
                    barrier.wait();
                    let (exec, info) = b.compile_graph(&g).expect("compile");
                    check(&exec, &v, 1);
                    info.cache_hit
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("thread"))
            .collect()
    });
    assert_eq!(
        hits.iter().filter(|&&h| !h).count(),
        1,
        "exactly one build: {hits:?}"
    );
    let cache = backend_in(dir.path(), None);
    assert_eq!(cache.cache().entries().expect("entries").len(), 1);
}

/// Replaces `path` by `bytes` without touching the old file's contents (it may be mapped by
/// this process, and truncating a mapped library would crash it).
fn replace(path: &Path, bytes: &[u8]) {
    let tmp = path.with_extension("corrupt");
    std::fs::write(&tmp, bytes).expect("write");
    std::fs::rename(&tmp, path).expect("rename");
}

#[test]
fn corrupt_entries_are_rebuilt() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (g, v) = graph(2);
    let (_, info) = backend_in(dir.path(), None)
        .compile_graph(&g)
        .expect("compile");
    assert!(!info.cache_hit);
    let so = info.library.expect("library");
    let bytes = std::fs::read(&so).expect("read");
    let key = so
        .file_stem()
        .and_then(|s| s.to_str())
        .expect("key")
        .to_string();
    let meta = so.with_extension("meta");
    let b = backend_in(dir.path(), None);
    assert!(b.cache().verify(&key));

    // A truncated library.
    replace(&so, &bytes[..bytes.len() / 2]);
    assert!(!b.cache().verify(&key));
    let (exec, info) = b.compile_graph(&g).expect("rebuild");
    assert!(!info.cache_hit, "a truncated entry is rebuilt");
    assert!(b.cache().verify(&key));
    check(&exec, &v, 2);

    // A library with a flipped byte, then a missing sidecar: both rebuilt.
    let mut flipped = bytes.clone();
    flipped[bytes.len() / 3] ^= 0xff;
    replace(&so, &flipped);
    assert!(!b.compile_graph(&g).expect("rebuild").1.cache_hit);
    std::fs::remove_file(&meta).expect("remove sidecar");
    assert!(!b.compile_graph(&g).expect("rebuild").1.cache_hit);
    let (exec, info) = b.compile_graph(&g).expect("hit");
    assert!(info.cache_hit);
    check(&exec, &v, 2);
}

#[test]
fn unusable_directory_falls_back_with_a_warning() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("not-a-directory");
    std::fs::write(&file, b"x").expect("file");
    // Even root cannot create a directory under a regular file.
    let wanted = file.join("cache");
    let b = backend_in(&wanted, None);
    let warning = b.cache().warning().expect("a warning");
    assert!(warning.contains("not usable"), "{warning}");
    assert_ne!(b.cache().dir(), wanted.as_path());
    let (g, v) = graph(3);
    let (exec, _) = b.compile_graph(&g).expect("compile in the fallback");
    check(&exec, &v, 3);
}

#[test]
fn missing_directory_is_created_private() {
    let dir = tempfile::tempdir().expect("tempdir");
    let wanted = dir.path().join("a").join("b");
    let b = backend_in(&wanted, None);
    assert!(b.cache().warning().is_none());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&wanted)
            .expect("dir")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700);
    }
}

#[test]
fn least_recently_used_entries_are_evicted_at_the_cap() {
    let dir = tempfile::tempdir().expect("tempdir");
    let unlimited = backend_in(dir.path(), None);
    let (g0, _) = graph(10);
    unlimited.compile_graph(&g0).expect("compile");
    let one = unlimited.cache().entries().expect("entries")[0].bytes;
    unlimited.cache().clear().expect("clear");

    // Room for two entries and a half.
    let b = backend_in(dir.path(), Some(one * 5 / 2));
    let pause = || std::thread::sleep(std::time::Duration::from_millis(20));
    let (ga, _) = graph(11);
    let (gb, _) = graph(12);
    let (gc, vc) = graph(13);
    let key = |info: oxtensor_native::CompileInfo| {
        info.library
            .and_then(|p| p.file_stem().and_then(|s| s.to_str()).map(str::to_string))
            .expect("key")
    };
    let ka = key(b.compile_graph(&ga).expect("a").1);
    pause();
    let kb = key(b.compile_graph(&gb).expect("b").1);
    pause();
    assert!(
        b.compile_graph(&ga).expect("a again").1.cache_hit,
        "a is used again"
    );
    pause();
    let (exec, info) = b.compile_graph(&gc).expect("c");
    let kc = key(info);
    check(&exec, &vc, 13);
    let keys: Vec<String> = b
        .cache()
        .entries()
        .expect("entries")
        .into_iter()
        .map(|e| e.key)
        .collect();
    assert_eq!(keys.len(), 2, "{keys:?}");
    assert!(
        keys.contains(&ka) && keys.contains(&kc),
        "b, the least recently used, went"
    );
    assert!(!keys.contains(&kb));
}

#[test]
fn flags_are_part_of_the_key() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (g, v) = graph(20);
    let plain = backend_in(dir.path(), None);
    let fast = NativeBackend::with_config(NativeConfig {
        cache_dir: Some(dir.path().to_path_buf()),
        fast_math: Some(true),
        ..NativeConfig::default()
    })
    .expect("backend");
    // An explicit target other than the environment's (so the key really differs).
    let other = match std::env::var("OXTENSOR_NATIVE_TARGET").as_deref() {
        Ok("x86-64-v2") => "x86-64-v3",
        _ => "x86-64-v2",
    };
    let lower = NativeBackend::with_config(NativeConfig {
        cache_dir: Some(dir.path().to_path_buf()),
        target: Some(other.into()),
        ..NativeConfig::default()
    })
    .expect("backend");
    let (_, a) = plain.compile_graph(&g).expect("plain");
    let (exec, b) = fast.compile_graph(&g).expect("fast");
    let (lower_exec, c) = lower.compile_graph(&g).expect("lower target");
    assert!(!a.cache_hit && !b.cache_hit && !c.cache_hit);
    assert_ne!(a.library, b.library);
    assert_ne!(a.library, c.library);
    check(&exec, &v, 20);
    check(&lower_exec, &v, 20);
}

#[test]
fn the_cache_command_shows_and_clears() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (g, _) = graph(30);
    backend_in(dir.path(), None)
        .compile_graph(&g)
        .expect("compile");
    let run = |cmd: &str| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_oxtensor-cache"))
            .arg("--dir")
            .arg(dir.path())
            .arg(cmd)
            .output()
            .expect("run oxtensor-cache");
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert!(run("show").contains("1 entries"), "{}", run("show"));
    assert!(run("clear").contains("removed 1 entries"));
    assert!(run("show").contains("0 entries"));
}

/// Set in the child processes of [`concurrent_processes_build_once`]: the cache directory.
const CHILD_CACHE: &str = "OXTENSOR_TEST_CHILD_CACHE";

/// Compiles `graph(40)` into the cache named by [`CHILD_CACHE`], once `go` exists there,
/// and prints whether it was a cache hit.
fn child(dir: &Path) {
    let b = backend_in(dir, None);
    let (g, v) = graph(40);
    let go = dir.join("go");
    let started = std::time::Instant::now();
    while !go.exists() {
        assert!(started.elapsed().as_secs() < 60, "never told to go");
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let (exec, info) = b.compile_graph(&g).expect("compile");
    check(&exec, &v, 40);
    println!("oxtensor-child hit={}", info.cache_hit);
}

#[test]
fn concurrent_processes_build_once() {
    if let Some(dir) = std::env::var_os(CHILD_CACHE) {
        child(Path::new(&dir));
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let exe = std::env::current_exe().expect("test executable");
    // The test's name as the harness knows it: its module path within the test binary.
    let this_test = match module_path!().split_once("::") {
        Some((_, module)) => format!("{module}::concurrent_processes_build_once"),
        None => "concurrent_processes_build_once".to_owned(),
    };
    let children: Vec<_> = (0..3)
        .map(|_| {
            std::process::Command::new(&exe)
                .args(["--exact", &this_test, "--nocapture"])
                .env(CHILD_CACHE, dir.path())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("spawn a child")
        })
        .collect();
    // Every child has made its backend (probed the compiler) by now, most likely; they all
    // start compiling at this signal.
    std::thread::sleep(std::time::Duration::from_millis(200));
    std::fs::write(dir.path().join("go"), b"").expect("go");
    let mut hits = Vec::new();
    for c in children {
        let out = c.wait_with_output().expect("child");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let line = stdout
            .lines()
            .find_map(|l| l.strip_prefix("oxtensor-child hit="))
            .unwrap_or_else(|| panic!("no report from the child:\n{stdout}"));
        hits.push(line == "true");
    }
    assert_eq!(
        hits.iter().filter(|&&h| !h).count(),
        1,
        "exactly one process builds: {hits:?}"
    );
    let b = backend_in(dir.path(), None);
    let entries = b.cache().entries().expect("entries");
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert!(b.cache().verify(&entries[0].key));
    assert_eq!(objects(dir.path()).len(), 1, "one shared drivers' object");
    let (g, v) = graph(40);
    let (exec, info) = b.compile_graph(&g).expect("load");
    assert!(info.cache_hit);
    check(&exec, &v, 40);
}

#[test]
fn read_only_directory_falls_back_with_a_warning() {
    // `/proc/self` exists and no one, root included, can create files in it.
    #[cfg(target_os = "linux")]
    {
        let b = backend_in(Path::new("/proc/self"), None);
        let warning = b.cache().warning().expect("a warning");
        assert!(warning.contains("not usable"), "{warning}");
        let (g, v) = graph(4);
        let (exec, info) = b.compile_graph(&g).expect("compile in the fallback");
        assert!(info.library.is_some_and(|l| l.starts_with(b.cache().dir())));
        check(&exec, &v, 4);
    }
    // A directory without write permission (which root ignores, so only checked when the
    // permission holds).
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let ro = dir.path().join("ro");
        std::fs::create_dir(&ro).expect("dir");
        std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o500)).expect("chmod");
        if std::fs::write(ro.join("probe"), b"").is_err() {
            let b = backend_in(&ro, None);
            assert!(b.cache().warning().is_some());
            assert_ne!(b.cache().dir(), ro.as_path());
        }
        std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    }
}

/// The shared drivers' objects in the cache at `dir`.
fn objects(dir: &Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(dir.join("objects"))
        .expect("objects")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "o"))
        .collect()
}

#[test]
fn a_corrupt_drivers_object_is_rebuilt_and_clear_removes_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let b = backend_in(dir.path(), None);
    b.compile_graph(&graph(50).0).expect("compile");
    let object = objects(dir.path()).pop().expect("the drivers' object");
    let bytes = std::fs::read(&object).expect("read");
    replace(&object, &bytes[..bytes.len() / 2]);
    let (g, v) = graph(51);
    let (exec, info) = b
        .compile_graph(&g)
        .expect("compile with a truncated object");
    assert!(!info.cache_hit);
    check(&exec, &v, 51);
    let key = object.file_stem().and_then(|s| s.to_str()).expect("key");
    assert!(b.cache().cached_object(key).is_some(), "rebuilt whole");
    b.cache().clear().expect("clear");
    assert!(objects(dir.path()).is_empty());
    assert!(b.cache().entries().expect("entries").is_empty());
}

#[test]
fn the_compiler_version_is_remembered_for_later_processes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let first = backend_in(dir.path(), None);
    let notes: Vec<_> = std::fs::read_dir(dir.path().join("objects"))
        .expect("objects")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .collect();
    let [note] = notes.as_slice() else {
        panic!("one remembered version, found {notes:?}")
    };
    let version = std::fs::read_to_string(note).expect("read");
    assert!(
        first.compiler().identity().starts_with(&version),
        "the identity starts with the version the compiler printed"
    );
    // A later backend reads the note instead of running the compiler: an edited note shows up
    // in its identity (and so in every cache key it makes).
    replace(note, b"a compiler from the note\n");
    let second = backend_in(dir.path(), None);
    assert!(
        second
            .compiler()
            .identity()
            .starts_with("a compiler from the note\n"),
        "{}",
        second.compiler().identity()
    );
    second.cache().clear().expect("clear");
    let third = backend_in(dir.path(), None);
    assert_eq!(third.compiler().identity(), first.compiler().identity());
}
