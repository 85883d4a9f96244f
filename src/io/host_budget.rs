//! The host memory budget: how many bytes cliper may take on the host for data whose size a file decides, asked
//! before every such allocation, so that a small file claiming a huge array (a zip bomb, a sparse file, a header
//! that lies) is refused in one line instead of aborting the process when the allocator gives up.
//!
//! The rule: [`HOST_MEMORY_LIMIT_ENV`] when set (bytes, or with `K`, `M`, `G`, `T`), else the memory the system
//! can give — `MemAvailable` of `/proc/meminfo`, or less when the process's cgroup (v2 `memory.max`, v1
//! `memory.limit_in_bytes`) leaves less. The budget is read afresh at every check, so it follows what other
//! programs take meanwhile. It bounds what cliper holds for data at once — one file's array and its conversion,
//! or one tile's buffers — not the process's whole resident size, which also holds the OpenCL runtime.

use crate::error::{Error, Result};
use std::path::Path;

/// The environment variable that caps the host memory cliper takes for data (bytes, or with a `K`, `M`, `G` or
/// `T` suffix, powers of 1024); without it the cap is the memory available (`/proc/meminfo`, the cgroup limit).
///
/// ```
/// // CLIPER_HOST_MEMORY_LIMIT=2G cliper info big.nii.gz
/// assert_eq!(cliper::HOST_MEMORY_LIMIT_ENV, "CLIPER_HOST_MEMORY_LIMIT");
/// ```
pub const HOST_MEMORY_LIMIT_ENV: &str = "CLIPER_HOST_MEMORY_LIMIT";

/// The host memory budget now: its size in bytes and where that number comes from (for messages).
///
/// ```
/// let budget = cliper::HostBudget::current()?;
/// assert!(budget.bytes > 0 && !budget.source.is_empty());
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostBudget {
    /// Bytes of data cliper may hold on the host at once.
    pub bytes: u64,
    /// Where the number comes from: the environment variable, `/proc/meminfo` or the cgroup.
    pub source: String,
}

impl HostBudget {
    /// The budget by the rule of this module; an error naming [`HOST_MEMORY_LIMIT_ENV`] when it is set but is
    /// not a size. Where the system says nothing (no `/proc`), the budget is unbounded.
    pub fn current() -> Result<HostBudget> {
        if let Ok(text) = std::env::var(HOST_MEMORY_LIMIT_ENV) {
            let bytes =
                crate::app::parse_bytes(&text).map_err(|e| Error::invalid(HOST_MEMORY_LIMIT_ENV, format!("{e}")))?;
            return Ok(HostBudget { bytes, source: format!("{HOST_MEMORY_LIMIT_ENV}={}", text.trim()) });
        }
        let available = std::fs::read_to_string("/proc/meminfo").ok().and_then(|t| meminfo_field(&t, "MemAvailable"));
        let budget = match (available, cgroup_room()) {
            (Some(free), Some(room)) if room < free => HostBudget {
                bytes: room,
                source: format!(
                    "the room left under this process's cgroup memory limit; {HOST_MEMORY_LIMIT_ENV} sets it"
                ),
            },
            (Some(free), _) => HostBudget {
                bytes: free,
                source: format!("MemAvailable in /proc/meminfo; {HOST_MEMORY_LIMIT_ENV} sets it"),
            },
            (None, Some(room)) => HostBudget {
                bytes: room,
                source: format!(
                    "the room left under this process's cgroup memory limit; {HOST_MEMORY_LIMIT_ENV} sets it"
                ),
            },
            (None, None) => {
                HostBudget { bytes: u64::MAX, source: "no limit known (no /proc/meminfo and no cgroup limit)".into() }
            }
        };
        Ok(budget)
    }

    /// `Ok` when `bytes` fit the budget; otherwise the error that refuses `what` (which names the data: "the
    /// NPY header's shape [..] of u8") of `path`, with both numbers.
    ///
    /// ```
    /// let budget = cliper::HostBudget { bytes: 1000, source: "a test".into() };
    /// assert!(budget.check("a.npy".as_ref(), "the data", 1000).is_ok());
    /// let e = budget.check("a.npy".as_ref(), "the data", 1001).unwrap_err().to_string();
    /// assert!(e.contains("a.npy") && e.contains("1001 bytes") && e.contains("1000 bytes") && !e.contains('\n'), "{e}");
    /// ```
    pub fn check(&self, path: &Path, what: &str, bytes: u64) -> Result<()> {
        if bytes <= self.bytes {
            return Ok(());
        }
        Err(Error::HostMemory {
            path: path.to_path_buf(),
            what: what.to_string(),
            bytes,
            budget: self.bytes,
            source_of_budget: self.source.clone(),
        })
    }
}

/// Checks that `bytes` of host memory for `what` of `path` fit the budget now: the one call every reader makes
/// before an allocation a file sizes.
pub(crate) fn check_host_memory(path: &Path, what: &str, bytes: u64) -> Result<()> {
    HostBudget::current()?.check(path, what, bytes)
}

/// [`check_host_memory`] for readers whose errors are text that the caller prefixes with the file's name.
pub(crate) fn check_host_memory_text(what: &str, bytes: u64) -> std::result::Result<(), String> {
    let budget = HostBudget::current().map_err(|e| e.to_string())?;
    if bytes <= budget.bytes {
        return Ok(());
    }
    Err(format!(
        "{what} needs {bytes} bytes of host memory; the host budget is {} bytes ({})",
        budget.bytes, budget.source
    ))
}

/// A `kB` field of `/proc/meminfo`, in bytes.
fn meminfo_field(text: &str, name: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.split(':').next() == Some(name))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// How much more memory this process's cgroup lets it take: its limit less what it uses besides the page cache
/// (which the kernel reclaims before it refuses); `None` without a limit.
fn cgroup_room() -> Option<u64> {
    let read = |path: &str| std::fs::read_to_string(path).ok();
    let number = |text: Option<String>| text.and_then(|t| t.trim().parse::<u64>().ok());
    // v2: memory.max ("max" when unlimited), memory.current, memory.stat's `file`.
    let v2 = number(read("/sys/fs/cgroup/memory.max")).map(|limit| {
        (limit, number(read("/sys/fs/cgroup/memory.current")), read("/sys/fs/cgroup/memory.stat"), "file")
    });
    // v1: memory.limit_in_bytes (a huge number when unlimited), memory.usage_in_bytes, memory.stat's
    // `total_cache`.
    let v1 = || {
        number(read("/sys/fs/cgroup/memory/memory.limit_in_bytes")).map(|limit| {
            (
                limit,
                number(read("/sys/fs/cgroup/memory/memory.usage_in_bytes")),
                read("/sys/fs/cgroup/memory/memory.stat"),
                "total_cache",
            )
        })
    };
    let (limit, usage, stat, cache_key) = v2.or_else(v1)?;
    let total = std::fs::read_to_string("/proc/meminfo").ok().and_then(|t| meminfo_field(&t, "MemTotal"));
    // A limit at or above the machine's memory is no limit.
    if total.is_some_and(|t| limit >= t) {
        return None;
    }
    let cache = stat
        .and_then(|s| s.lines().find_map(|l| l.strip_prefix(cache_key)?.strip_prefix(' ')?.trim().parse::<u64>().ok()))
        .unwrap_or(0);
    Some(limit.saturating_sub(usage.unwrap_or(0).saturating_sub(cache)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meminfo_fields_are_read_in_bytes() {
        let text = "MemTotal:       24576000 kB\nMemFree:         1000 kB\nMemAvailable:   20000000 kB\n";
        assert_eq!(meminfo_field(text, "MemAvailable"), Some(20_000_000 * 1024));
        assert_eq!(meminfo_field(text, "MemTotal"), Some(24_576_000 * 1024));
        assert_eq!(meminfo_field(text, "Mem"), None);
    }
}
