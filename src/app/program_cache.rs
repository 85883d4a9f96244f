//! The persistent program cache: the binaries OpenCL compiled, kept on disk so that the next process building the
//! same program for the same device and driver skips the compiler (PoCL: 1–3 s a program; NVIDIA: up to seconds
//! for large kernels).
//!
//! An entry is one file named by the SHA-256 of its identity — the program's source, the build options, the
//! device, its platform and driver versions, and cliper's version — holding that identity in full, the binary's
//! SHA-256 and length, and the binary. A load checks all of them, so a hash collision, a truncated or corrupt file
//! or another driver's binary is never used: such an entry is removed and the program compiled again. A store
//! writes a temporary file and renames it into place, so concurrent processes never see half an entry (the last
//! rename of identical content wins). After a store, entries beyond the size cap are removed, least recently used
//! first (a load touches its entry).
//!
//! Settings: `CLIPER_CACHE=off` turns the cache off (`on` turns it on for PoCL too, where it is off by default:
//! see [`ProgramCache::for_device`]); `CLIPER_CACHE_DIR` places it (default
//! `$XDG_CACHE_HOME/cliper/programs`, else `~/.cache/cliper/programs`); `CLIPER_CACHE_MAX_MB` caps it (default
//! 1024). `cliper cache info` and `cliper cache clear` show and empty it.

use super::device::DeviceInfo;
use crate::error::{Error, Result};
use sha2::{Digest, Sha256};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Turns the cache off when set to `off` (or `0`, `false`, `no`).
pub const CACHE_ENV: &str = "CLIPER_CACHE";
/// The cache's folder.
pub const CACHE_DIR_ENV: &str = "CLIPER_CACHE_DIR";
/// The cache's size cap in MiB.
pub const CACHE_MAX_ENV: &str = "CLIPER_CACHE_MAX_MB";

const MAGIC: &str = "cliper program cache 1";
const EXTENSION: &str = "clbin";

/// The program cache on disk: its folder and size cap.
///
/// ```
/// let dir = std::env::temp_dir().join(format!("cliper-doc-cache-{}", std::process::id()));
/// let cache = cliper::ProgramCache::at(&dir, 64);
/// assert_eq!(cache.info()?.entries, 0);
/// assert_eq!(cache.clear()?.entries, 0);
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProgramCache {
    dir: PathBuf,
    cap_bytes: u64,
}

/// What a cache holds.
///
/// ```
/// let c = cliper::CacheInfo { dir: "/tmp/x".into(), entries: 2, bytes: 4096 };
/// assert_eq!(c.to_string(), "2 program(s), 4.0 KiB in /tmp/x");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CacheInfo {
    /// The folder.
    pub dir: PathBuf,
    /// Entries.
    pub entries: usize,
    /// Their bytes.
    pub bytes: u64,
}

impl std::fmt::Display for CacheInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kib = self.bytes as f64 / 1024.0;
        let size = if kib < 1024.0 { format!("{kib:.1} KiB") } else { format!("{:.1} MiB", kib / 1024.0) };
        write!(f, "{} program(s), {size} in {}", self.entries, self.dir.display())
    }
}

/// What identifies a program build: everything that changes the binary.
pub(crate) struct Key {
    identity: String,
    name: String,
}

impl Key {
    pub(crate) fn new(source: &str, options: &str, device: &DeviceInfo) -> Key {
        let identity = format!(
            "source-sha256 {}\noptions {options}\ndevice {}\nplatform {}\ndevice-version {}\ndriver {}\ncliper {}\n",
            hex(&Sha256::digest(source.as_bytes())),
            device.name,
            device.platform_name,
            device.version,
            device.driver_version,
            env!("CARGO_PKG_VERSION"),
        );
        let name = hex(&Sha256::digest(identity.as_bytes()));
        Key { identity, name }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl ProgramCache {
    /// The cache the environment asks for: `None` when `CLIPER_CACHE` turns it off or no folder can be found.
    pub fn from_env() -> Option<ProgramCache> {
        if let Ok(v) = std::env::var(CACHE_ENV)
            && matches!(v.trim().to_ascii_lowercase().as_str(), "off" | "0" | "false" | "no")
        {
            return None;
        }
        Self::folder_from_env()
    }

    /// The cache for `device` by default: the environment's, except on PoCL unless `CLIPER_CACHE=on`. PoCL keeps
    /// its own cache of the kernels it compiled (`~/.cache/pocl`), and asking it for a program's binary compiles
    /// every kernel of the program at once, where it otherwise compiles only those launched: with both caches
    /// cold the doc-tests took 218 s instead of 76 s (2 cores); warm, 6.5 s instead of 12.3 s.
    pub fn for_device(device: &DeviceInfo) -> Option<ProgramCache> {
        let forced = std::env::var(CACHE_ENV)
            .is_ok_and(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "on" | "1" | "true" | "yes"));
        if device.platform_name.contains("Portable Computing Language") && !forced {
            return None;
        }
        Self::from_env()
    }

    fn folder_from_env() -> Option<ProgramCache> {
        let dir = match std::env::var_os(CACHE_DIR_ENV).filter(|d| !d.is_empty()) {
            Some(d) => PathBuf::from(d),
            None => {
                let base =
                    std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()).map(PathBuf::from).or_else(|| {
                        std::env::var_os("HOME").filter(|d| !d.is_empty()).map(|h| Path::new(&h).join(".cache"))
                    })?;
                base.join("cliper").join("programs")
            }
        };
        let mb = std::env::var(CACHE_MAX_ENV).ok().and_then(|v| v.trim().parse::<u64>().ok()).unwrap_or(1024);
        Some(ProgramCache::at(dir, mb))
    }

    /// A cache in `dir` capped at `max_mb` MiB.
    pub fn at(dir: impl Into<PathBuf>, max_mb: u64) -> ProgramCache {
        ProgramCache { dir: dir.into(), cap_bytes: max_mb.saturating_mul(1 << 20) }
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path(&self, key: &Key) -> PathBuf {
        self.dir.join(format!("{}.{EXTENSION}", key.name))
    }

    /// The binary stored for `key`, if an intact entry of exactly that identity is there; a damaged or foreign
    /// entry is removed.
    pub(crate) fn load(&self, key: &Key) -> Option<Vec<u8>> {
        let path = self.path(key);
        let bytes = std::fs::read(&path).ok()?;
        match parse(&bytes, &key.identity) {
            Some(binary) => {
                // Touch it: the size cap removes the least recently used first.
                if let Ok(f) = std::fs::File::options().append(true).open(&path) {
                    let _ = f.set_modified(SystemTime::now());
                }
                Some(binary.to_vec())
            }
            None => {
                let _ = std::fs::remove_file(&path);
                None
            }
        }
    }

    /// Removes the entry of `key` (a binary the driver refused).
    pub(crate) fn remove(&self, key: &Key) {
        let _ = std::fs::remove_file(self.path(key));
    }

    /// Stores `binary` for `key`: written beside, then renamed into place; then the cap is enforced.
    pub(crate) fn store(&self, key: &Key, binary: &[u8]) -> Result<()> {
        if binary.is_empty() {
            return Ok(());
        }
        let io = |what: &str, e: std::io::Error| Error::invalid("program cache", format!("{what}: {e}"));
        std::fs::create_dir_all(&self.dir).map_err(|e| io(&format!("creating {}", self.dir.display()), e))?;
        let unique = format!(
            ".{}.{}.{}.tmp",
            key.name,
            std::process::id(),
            SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_nanos())
        );
        let temp = self.dir.join(unique);
        let mut entry = Vec::with_capacity(binary.len() + key.identity.len() + 256);
        entry.extend_from_slice(format!("{MAGIC}\n{}--\n", key.identity).as_bytes());
        entry.extend_from_slice(format!("{}\n{}\n", hex(&Sha256::digest(binary)), binary.len()).as_bytes());
        entry.extend_from_slice(binary);
        let written = std::fs::File::create(&temp).and_then(|mut f| f.write_all(&entry));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&temp);
            return Err(io(&format!("writing {}", temp.display()), e));
        }
        if let Err(e) = std::fs::rename(&temp, self.path(key)) {
            let _ = std::fs::remove_file(&temp);
            return Err(io("renaming an entry into place", e));
        }
        self.trim()
    }

    /// The entries (path, bytes, last use), oldest first; leftover temporary files older than an hour too.
    fn entries(&self) -> Vec<(PathBuf, u64, SystemTime)> {
        let Ok(dir) = std::fs::read_dir(&self.dir) else { return Vec::new() };
        let mut entries: Vec<(PathBuf, u64, SystemTime)> = dir
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let path = e.path();
                let meta = e.metadata().ok()?;
                let when = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
                let name = path.file_name()?.to_string_lossy().to_string();
                if name.ends_with(".tmp") {
                    // A writer that died mid-store leaves its temporary file: clear it once it is old.
                    if when.elapsed().is_ok_and(|age| age.as_secs() > 3600) {
                        let _ = std::fs::remove_file(&path);
                    }
                    return None;
                }
                (path.extension()? == EXTENSION).then_some((path, meta.len(), when))
            })
            .collect();
        entries.sort_by_key(|(_, _, when)| *when);
        entries
    }

    /// Removes the least recently used entries until the cache is within 80 % of its cap, once it exceeds it.
    fn trim(&self) -> Result<()> {
        let entries = self.entries();
        let mut total: u64 = entries.iter().map(|(_, b, _)| b).sum();
        if total <= self.cap_bytes {
            return Ok(());
        }
        let goal = self.cap_bytes / 5 * 4;
        for (path, bytes, _) in entries {
            if total <= goal {
                break;
            }
            if std::fs::remove_file(&path).is_ok() {
                total = total.saturating_sub(bytes);
            }
        }
        Ok(())
    }

    /// What the cache holds.
    pub fn info(&self) -> Result<CacheInfo> {
        let entries = self.entries();
        Ok(CacheInfo { dir: self.dir.clone(), entries: entries.len(), bytes: entries.iter().map(|(_, b, _)| b).sum() })
    }

    /// Removes every entry; returns what was there.
    pub fn clear(&self) -> Result<CacheInfo> {
        let before = self.info()?;
        for (path, _, _) in self.entries() {
            std::fs::remove_file(&path)
                .map_err(|e| Error::invalid("program cache", format!("removing {}: {e}", path.display())))?;
        }
        Ok(before)
    }
}

/// The binary of an entry, if the entry is intact and of exactly `identity`.
fn parse<'a>(bytes: &'a [u8], identity: &str) -> Option<&'a [u8]> {
    let header = format!("{MAGIC}\n{identity}--\n");
    let rest = bytes.strip_prefix(header.as_bytes())?;
    let end = rest.iter().position(|&b| b == b'\n')?;
    let digest = std::str::from_utf8(rest.get(..end)?).ok()?;
    let rest = rest.get(end + 1..)?;
    let end = rest.iter().position(|&b| b == b'\n')?;
    let length: usize = std::str::from_utf8(rest.get(..end)?).ok()?.parse().ok()?;
    let binary = rest.get(end + 1..)?;
    (binary.len() == length && hex(&Sha256::digest(binary)) == digest).then_some(binary)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn device(driver: &str) -> DeviceInfo {
        let mut d = DeviceInfo::for_tests(crate::app::DeviceKind::Cpu);
        d.driver_version = driver.into();
        d
    }

    fn scratch(name: &str) -> ProgramCache {
        let dir = std::env::temp_dir().join(format!("cliper-cache-test-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        ProgramCache::at(dir, 1)
    }

    #[test]
    fn entries_round_trip_and_refuse_other_identities() {
        let cache = scratch("round");
        let key = Key::new("kernel void k() {}", "-DX=1", &device("1.0"));
        assert_eq!(cache.load(&key), None);
        cache.store(&key, b"binary bytes").unwrap();
        assert_eq!(cache.load(&key).as_deref(), Some(&b"binary bytes"[..]));
        // Another driver, other options or another source: another entry, not this one.
        for other in [
            Key::new("kernel void k() {}", "-DX=1", &device("2.0")),
            Key::new("kernel void k() {}", "-DX=2", &device("1.0")),
            Key::new("kernel void k() { }", "-DX=1", &device("1.0")),
        ] {
            assert_ne!(other.name, key.name);
            assert_eq!(cache.load(&other), None);
        }
        // An entry renamed onto another key's name (a hash collision, in effect) is refused and removed.
        let other = Key::new("kernel void j() {}", "", &device("1.0"));
        std::fs::copy(cache.path(&key), cache.path(&other)).unwrap();
        assert_eq!(cache.load(&other), None);
        assert!(!cache.path(&other).exists());
        assert_eq!(cache.clear().unwrap().entries, 1);
        assert_eq!(cache.info().unwrap().entries, 0);
    }

    #[test]
    fn corrupt_and_truncated_entries_are_removed() {
        let cache = scratch("corrupt");
        let key = Key::new("src", "", &device("1.0"));
        cache.store(&key, &[7u8; 1000]).unwrap();
        let path = cache.path(&key);
        let mut bytes = std::fs::read(&path).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 0xFF;
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(cache.load(&key), None, "a flipped byte");
        assert!(!path.exists());
        cache.store(&key, &[7u8; 1000]).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() - 10]).unwrap();
        assert_eq!(cache.load(&key), None, "a truncated entry");
        std::fs::write(&path, b"garbage").unwrap();
        assert_eq!(cache.load(&key), None, "garbage");
    }

    #[test]
    fn concurrent_writers_leave_one_intact_entry() {
        let cache = scratch("concurrent");
        let key = std::sync::Arc::new(Key::new("shared", "-O", &device("1.0")));
        let binary: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        std::thread::scope(|s| {
            for _ in 0..8 {
                let (cache, key, binary) = (&cache, key.clone(), &binary);
                s.spawn(move || {
                    for _ in 0..5 {
                        cache.store(&key, binary).unwrap();
                        // Readers meanwhile see the whole entry or none, never half of one.
                        if let Some(b) = cache.load(&key) {
                            assert_eq!(&b, binary);
                        }
                    }
                });
            }
        });
        assert_eq!(cache.load(&key).as_deref(), Some(binary.as_slice()));
        assert_eq!(cache.info().unwrap().entries, 1);
    }

    #[test]
    fn the_cap_removes_the_least_recently_used() {
        let cache = scratch("cap"); // 1 MiB
        let keys: Vec<Key> = (0..6).map(|i| Key::new(&format!("p{i}"), "", &device("1.0"))).collect();
        for key in &keys {
            cache.store(key, &vec![1u8; 300 << 10]).unwrap();
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let info = cache.info().unwrap();
        assert!(info.bytes <= 1 << 20, "{info}");
        assert!(cache.load(keys.last().unwrap()).is_some(), "the newest stays");
        assert!(cache.load(&keys[0]).is_none(), "the oldest went");
    }
}
