//! The compile cache: concurrent builds of one graph, corrupt entries, unusable directories,
//! eviction at the size cap, and the `oxtensor-cache` command. Each test has its own cache
//! directory, set through the backend's configuration.

mod common;

use oxtensor_data::{DType, Tensor};
use oxtensor_graph::{FunctionGraph, ScalarOp, TensorType, Var, build};
use oxtensor_native::{NativeBackend, NativeConfig};
use oxtensor_runtime::Executable;
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
        .run(values)
        .expect("run")
        .remove(0)
        .to_vec::<f64>()
        .expect("f64");
    let want: Vec<f64> = [0.0f64, 1.0, -1.0]
        .iter()
        .map(|x| x.exp() + k as f64)
        .collect();
    assert_eq!(out, want);
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
    let (_, a) = plain.compile_graph(&g).expect("plain");
    let (exec, b) = fast.compile_graph(&g).expect("fast");
    assert!(!a.cache_hit && !b.cache_hit);
    assert_ne!(a.library, b.library);
    check(&exec, &v, 20);
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
