//! The on-disk cache of compiled functions.
//!
//! An entry is three files named by its key (a blake3 hash of the C source, the compiler's
//! identity and the flags): `KEY.so`, the library; `KEY.meta`, a sidecar holding the library's
//! length and blake3 hash, checked before every load so that a truncated or corrupt library is
//! rebuilt instead of loaded; and `KEY.c`, the source, for people reading the cache.
//!
//! * The directory is private (created with mode 0700). One that cannot be created or written
//!   is replaced by a temporary directory for the process, with one warning.
//! * Writes are atomic: files are written under temporary names in the cache directory and
//!   renamed into place, the sidecar last, so a reader sees a whole entry or none.
//! * Building takes an exclusive file lock (one of 256 lock files, chosen by the key), so two
//!   processes compiling the same graph build it once; the second finds it built.
//! * The sidecar's modification time is the entry's last use (touched on every hit). After
//!   each build, the least recently used entries are removed while the cache is over its cap.
//! * Objects every library links (the shared drivers, one per compiler and flags) live in
//!   `objects/`, stored the same way (`KEY.o`, `KEY.meta`, `KEY.c`) under their own locks (256
//!   more, apart from the entries' because a library's build holds its entry's lock while it
//!   builds the objects it links; objects of different shards build in parallel). They
//!   are not entries: a few tens of kilobytes each, never evicted (so never removed under a
//!   build that links one), removed by [`Cache::clear`].

use crate::NativeError;
use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::SystemTime;

/// The first line of every sidecar; a different line means an entry of another format.
const META_HEADER: &str = "oxtensor-native-cache 1";

/// A cache of compiled libraries in one directory.
pub struct Cache {
    dir: PathBuf,
    max_bytes: u64,
    warning: Option<String>,
    /// The fallback directory, removed when the last handle on it goes.
    _temp: Option<Arc<tempfile::TempDir>>,
}

/// One cached function, as listed by [`Cache::entries`].
#[derive(Clone, Debug)]
pub struct CacheEntry {
    /// The key (hex).
    pub key: String,
    /// Bytes on disk (library, sidecar and source).
    pub bytes: u64,
    /// When it was last built or loaded.
    pub last_used: SystemTime,
}

/// The result of [`Cache::get_or_build`].
#[derive(Clone, Debug)]
pub struct Lookup {
    /// The verified library.
    pub path: PathBuf,
    /// True when it was already cached (nothing was compiled).
    pub hit: bool,
}

static WARNED: AtomicBool = AtomicBool::new(false);

/// Prints `msg` as a warning, the first time one is printed in this process.
fn warn_once(msg: &str) {
    if !WARNED.swap(true, Ordering::Relaxed) {
        eprintln!("oxtensor warning: {msg}");
    }
}

/// Creates `dir` (mode 0700) if needed and checks that files can be created in it.
fn prepare(dir: &Path) -> std::io::Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)?;
    builder.create(dir.join("locks"))?;
    builder.create(dir.join("objects"))?;
    tempfile::Builder::new().prefix(".tmp-").tempfile_in(dir)?;
    Ok(())
}

impl Cache {
    /// The cache in `dir` (created if missing), holding at most `max_bytes`.
    ///
    /// When `dir` is `None`, cannot be created or is not writable, a temporary directory is
    /// used instead (for this handle's lifetime) and [`Cache::warning`] says why; the warning
    /// is also printed once per process. Fails only when no temporary directory can be made.
    pub fn open(dir: Option<&Path>, max_bytes: u64) -> Result<Cache, NativeError> {
        let reason = match dir {
            Some(d) => match prepare(d) {
                Ok(()) => {
                    return Ok(Cache {
                        dir: d.to_path_buf(),
                        max_bytes,
                        warning: None,
                        _temp: None,
                    });
                }
                Err(e) => format!("the cache directory {} is not usable ({e})", d.display()),
            },
            None => "there is no user cache directory".to_string(),
        };
        let temp = tempfile::Builder::new()
            .prefix("oxtensor-cache-")
            .tempdir()
            .map_err(|e| NativeError::io("creating a temporary cache", std::env::temp_dir(), e))?;
        prepare(temp.path())
            .map_err(|e| NativeError::io("creating a temporary cache", temp.path(), e))?;
        let warning = format!(
            "{reason}; compiled code is cached in {} for this process only \
             (set OXTENSOR_CACHE_DIR to a writable directory)",
            temp.path().display()
        );
        warn_once(&warning);
        Ok(Cache {
            dir: temp.path().to_path_buf(),
            max_bytes,
            warning: Some(warning),
            _temp: Some(Arc::new(temp)),
        })
    }

    /// The directory entries live in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Why the configured directory was replaced by a temporary one, if it was.
    pub fn warning(&self) -> Option<&str> {
        self.warning.as_deref()
    }

    /// The size cap in bytes.
    pub fn max_bytes(&self) -> u64 {
        self.max_bytes
    }

    /// The key of a build: a blake3 hash of each part, length-prefixed so that no two lists
    /// of parts hash alike.
    pub fn key(parts: &[&[u8]]) -> String {
        let mut h = blake3::Hasher::new();
        for p in parts {
            h.update(&(p.len() as u64).to_le_bytes());
            h.update(p);
        }
        h.finalize().to_hex().to_string()
    }

    fn file(&self, key: &str, ext: &str) -> PathBuf {
        self.dir.join(format!("{key}.{ext}"))
    }

    /// The files of entry `key`.
    fn entry(&self, key: &str) -> Slot {
        Slot {
            payload: self.file(key, "so"),
            meta: self.file(key, "meta"),
            source: self.file(key, "c"),
            lock: self.dir.join("locks").join(format!("{}.lock", shard(key))),
        }
    }

    /// The files of object `key`.
    fn object_slot(&self, key: &str) -> Slot {
        let dir = self.dir.join("objects");
        Slot {
            payload: dir.join(format!("{key}.o")),
            meta: dir.join(format!("{key}.meta")),
            source: dir.join(format!("{key}.c")),
            lock: self
                .dir
                .join("locks")
                .join(format!("object-{}.lock", shard(key))),
        }
    }

    /// True when the entry's library matches its sidecar (length and hash).
    pub fn verify(&self, key: &str) -> bool {
        self.entry(key).read().is_some()
    }

    /// Marks the entry as just used.
    fn touch(&self, key: &str) {
        if let Ok(f) = File::options().write(true).open(self.file(key, "meta")) {
            // Only the eviction order depends on this; failing to record it is harmless.
            let _ = f.set_modified(SystemTime::now());
        }
    }

    /// The verified library for `key`, building it first if it is missing or corrupt.
    ///
    /// `build(work, out)` must write the library to `out`; `work` is a private scratch
    /// directory inside the cache (removed afterwards). `source` is stored beside the entry.
    /// The build runs under the key's file lock, so concurrent callers (threads or processes)
    /// build once.
    pub fn get_or_build(
        &self,
        key: &str,
        source: &str,
        build: impl FnOnce(&Path, &Path) -> Result<(), NativeError>,
    ) -> Result<Lookup, NativeError> {
        let slot = self.entry(key);
        let (_, hit) = self.fetch_or_build(&slot, source, build)?;
        if hit {
            self.touch(key);
        } else {
            // Over the cap: a failure only leaves the cache larger than asked.
            let _ = self.evict(Some(key));
        }
        Ok(Lookup {
            path: slot.payload,
            hit,
        })
    }

    /// The verified bytes of object `key` (see the module's documentation), building it first
    /// if it is missing or corrupt, and whether it was cached. `build(work, out)` must write
    /// the object to `out`, as for [`Cache::get_or_build`].
    pub fn object(
        &self,
        key: &str,
        source: &str,
        build: impl FnOnce(&Path, &Path) -> Result<(), NativeError>,
    ) -> Result<(Vec<u8>, bool), NativeError> {
        self.fetch_or_build(&self.object_slot(key), source, build)
    }

    /// The verified bytes of object `key`, if cached.
    pub fn cached_object(&self, key: &str) -> Option<Vec<u8>> {
        self.object_slot(key).read()
    }

    /// The verified payload of `slot` and `true`, or, built under the slot's lock (after
    /// checking again), the new payload and `false`.
    fn fetch_or_build(
        &self,
        slot: &Slot,
        source: &str,
        build: impl FnOnce(&Path, &Path) -> Result<(), NativeError>,
    ) -> Result<(Vec<u8>, bool), NativeError> {
        if let Some(bytes) = slot.read() {
            return Ok((bytes, true));
        }
        let _lock = lock(&slot.lock)?;
        if let Some(bytes) = slot.read() {
            return Ok((bytes, true));
        }
        // A stale or corrupt entry: the sidecar goes first, so no reader trusts the rest.
        slot.remove();
        let work = tempfile::Builder::new()
            .prefix(".build-")
            .tempdir_in(&self.dir)
            .map_err(|e| NativeError::io("creating a build directory", &self.dir, e))?;
        let out = work.path().join("out");
        build(work.path(), &out)?;
        let bytes = fs::read(&out).map_err(|e| NativeError::io("reading the build", &out, e))?;
        write_atomic(&slot.source, source.as_bytes())?;
        fs::rename(&out, &slot.payload)
            .map_err(|e| NativeError::io("publishing the build", &slot.payload, e))?;
        write_atomic(&slot.meta, sidecar(&bytes).as_bytes())?;
        Ok((bytes, false))
    }

    /// Removes an entry (for instance one the loader rejected), sidecar first.
    pub fn remove(&self, key: &str) {
        self.entry(key).remove();
    }

    /// The entries, in no particular order.
    pub fn entries(&self) -> std::io::Result<Vec<CacheEntry>> {
        let mut out = Vec::new();
        for item in fs::read_dir(&self.dir)? {
            let path = item?.path();
            if path.extension().is_none_or(|e| e != "so") {
                continue;
            }
            let Some(key) = path
                .file_stem()
                .and_then(|s| s.to_str())
                .map(str::to_string)
            else {
                continue;
            };
            let mut bytes = 0;
            let mut last_used = SystemTime::UNIX_EPOCH;
            for ext in ["so", "c", "meta"] {
                if let Ok(m) = fs::metadata(self.file(&key, ext)) {
                    bytes += m.len();
                    if let Ok(t) = m.modified() {
                        // The sidecar (listed last) decides; an orphan library has its own time.
                        if ext == "meta" || last_used == SystemTime::UNIX_EPOCH {
                            last_used = t;
                        }
                    }
                }
            }
            out.push(CacheEntry {
                key,
                bytes,
                last_used,
            });
        }
        Ok(out)
    }

    /// Removes least recently used entries (never `keep`) until the cache fits its cap.
    /// Skipped when another process is evicting. Returns how many entries were removed.
    pub fn evict(&self, keep: Option<&str>) -> std::io::Result<usize> {
        let lock = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(self.dir.join("locks").join("evict.lock"))?;
        if lock.try_lock().is_err() {
            return Ok(0);
        }
        let mut entries = self.entries()?;
        let mut total: u64 = entries.iter().map(|e| e.bytes).sum();
        entries.sort_by_key(|e| e.last_used);
        let mut removed = 0;
        for e in entries {
            if total <= self.max_bytes {
                break;
            }
            if keep == Some(e.key.as_str()) {
                continue;
            }
            self.remove(&e.key);
            total = total.saturating_sub(e.bytes);
            removed += 1;
        }
        Ok(removed)
    }

    /// The text `compute` gives, remembered under `key` in `objects/KEY.txt` for later
    /// processes: for a fact that costs a process to find out (the compiler's version), keyed
    /// by everything that could change it. A failure to remember is ignored (the next process
    /// computes it again); a failure to compute is returned.
    pub fn remembered(
        &self,
        key: &str,
        compute: impl FnOnce() -> Result<String, NativeError>,
    ) -> Result<String, NativeError> {
        let path = self.dir.join("objects").join(format!("{key}.txt"));
        if let Ok(text) = fs::read_to_string(&path) {
            return Ok(text);
        }
        let text = compute()?;
        let _ = write_atomic(&path, text.as_bytes());
        Ok(text)
    }

    /// Removes every entry, object and leftover temporary file. Returns how many entries
    /// went.
    pub fn clear(&self) -> std::io::Result<usize> {
        let entries = self.entries()?;
        for e in &entries {
            self.remove(&e.key);
        }
        let objects = self.dir.join("objects");
        if objects.is_dir() {
            for item in fs::read_dir(&objects)? {
                fs::remove_file(item?.path())?;
            }
        }
        for item in fs::read_dir(&self.dir)? {
            let path = item?.path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if name.starts_with(".build-") {
                fs::remove_dir_all(&path)?;
            } else if name.starts_with(".tmp-") || name.ends_with(".meta") || name.ends_with(".c") {
                fs::remove_file(&path)?;
            }
        }
        Ok(entries.len())
    }
}

/// The files of one cached build: its payload (a library or an object), the sidecar, the
/// source, and the lock file guarding its build.
struct Slot {
    payload: PathBuf,
    meta: PathBuf,
    source: PathBuf,
    lock: PathBuf,
}

impl Slot {
    /// The payload, if it matches its sidecar (length and hash).
    fn read(&self) -> Option<Vec<u8>> {
        let meta = fs::read_to_string(&self.meta).ok()?;
        let bytes = fs::read(&self.payload).ok()?;
        (meta == sidecar(&bytes)).then_some(bytes)
    }

    /// Removes the files, sidecar first.
    fn remove(&self) {
        for path in [&self.meta, &self.payload, &self.source] {
            // Missing files are the usual case; any other failure is found at the next read.
            let _ = fs::remove_file(path);
        }
    }
}

/// The lock file of entry `key`: one of 256, by the key's first two hex digits. Lock files
/// are never deleted: removing one while another process waits on it would let two holders in.
fn shard(key: &str) -> &str {
    key.get(..2).unwrap_or("00")
}

/// Takes the exclusive lock on `path` (blocking until it is free).
fn lock(path: &Path) -> Result<File, NativeError> {
    let file = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(|e| NativeError::io("opening a lock file", path, e))?;
    file.lock()
        .map_err(|e| NativeError::io("locking", path, e))?;
    Ok(file)
}

/// Writes `bytes` to `path` through a temporary file beside it and a rename.
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), NativeError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(".tmp-")
        .tempfile_in(dir)
        .map_err(|e| NativeError::io("creating a temporary file", dir, e))?;
    tmp.write_all(bytes)
        .map_err(|e| NativeError::io("writing a temporary file", tmp.path(), e))?;
    tmp.persist(path)
        .map_err(|e| NativeError::io("renaming into the cache", path, e.error))?;
    Ok(())
}

/// The sidecar text for a library's bytes.
fn sidecar(bytes: &[u8]) -> String {
    format!(
        "{META_HEADER}\nlen {}\nblake3 {}\n",
        bytes.len(),
        blake3::hash(bytes).to_hex()
    )
}
