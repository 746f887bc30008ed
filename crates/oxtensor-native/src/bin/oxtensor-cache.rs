//! `oxtensor-cache`: shows or clears the native backend's compile cache.
//!
//! ```text
//! oxtensor-cache [--dir DIR] [show]    entries, their sizes and last use, and the total
//! oxtensor-cache [--dir DIR] clear     removes every entry
//! oxtensor-cache [--dir DIR] path      prints the directory
//! ```
//!
//! The directory is `--dir`, else `$OXTENSOR_CACHE_DIR`, else the user cache directory.

use oxtensor_native::{Cache, NativeConfig};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::SystemTime;

const USAGE: &str = "usage: oxtensor-cache [--dir DIR] [show|clear|path]";

/// A byte count for people.
fn human(bytes: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < units.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", units[u])
    }
}

fn run() -> Result<(), String> {
    let mut dir: Option<PathBuf> = None;
    let mut command = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--dir" => dir = Some(args.next().ok_or(USAGE)?.into()),
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(());
            }
            "show" | "clear" | "path" if command.is_none() => command = Some(a),
            _ => return Err(USAGE.to_string()),
        }
    }
    let config = NativeConfig {
        cache_dir: dir,
        ..NativeConfig::default()
    };
    let dir = config
        .resolved_cache_dir()
        .ok_or("there is no user cache directory; pass --dir")?;
    let command = command.unwrap_or_else(|| "show".to_string());
    if command == "path" {
        println!("{}", dir.display());
        return Ok(());
    }
    if !dir.exists() {
        println!("{}: no cache yet", dir.display());
        return Ok(());
    }
    let cache =
        Cache::open(Some(&dir), config.resolved_cache_max_bytes()).map_err(|e| e.to_string())?;
    if cache.warning().is_some() {
        return Err(format!("{} is not a usable cache directory", dir.display()));
    }
    if command == "clear" {
        let n = cache
            .clear()
            .map_err(|e| format!("{}: {e}", dir.display()))?;
        println!("{}: removed {n} entries", dir.display());
        return Ok(());
    }
    let mut entries = cache
        .entries()
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    entries.sort_by_key(|e| std::cmp::Reverse(e.last_used));
    let total: u64 = entries.iter().map(|e| e.bytes).sum();
    println!(
        "{}: {} entries, {} (cap {})",
        dir.display(),
        entries.len(),
        human(total),
        human(cache.max_bytes())
    );
    let now = SystemTime::now();
    for e in &entries {
        let age = now.duration_since(e.last_used).map_or(0, |d| d.as_secs());
        println!(
            "  {}  {:>10}  used {age} s ago",
            &e.key[..16.min(e.key.len())],
            human(e.bytes)
        );
    }
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("oxtensor-cache: {e}");
            ExitCode::FAILURE
        }
    }
}
