//! An output file's bytes mapped into memory, written from many threads at once.
//!
//! Why: a buffered write to one file takes the file's inode lock (tmpfs and ext4 alike), so writes from several
//! threads run one after another — 1.8 GB/s from one thread and 2.6 GB/s from sixteen on an H200's host (tmpfs,
//! `scripts/bench/io_probe.py`). Copies into a shared memory map of the file take no such lock: their page faults
//! run in parallel, 4.7 GB/s from sixteen threads on the same host.
//!
//! Each copy maps only the part of the file it writes, and unmaps it when done: a process's resident set counts
//! every mapped page it touched, and an output larger than the host's memory budget must not be counted whole.
//!
//! Why this is sound on its own:
//! - [`memmap2::MmapRaw`] hands out raw pointers only; nothing here makes a Rust reference into a mapping, so no
//!   `&`/`&mut` can alias memory that a copy writes;
//! - every copy is bounds-checked against the file's length, and its mapping is exactly its bytes;
//! - two copies whose byte ranges overlap never run at once: each claims its range first and waits while another
//!   claim overlaps it (so there is no data race between this process's threads, whichever mappings they use);
//! - the file's length was set before anything was mapped; the file is a temporary one that cliper created and
//!   renames into place only when complete. Another process that truncated it would make a copy fault (SIGBUS, a
//!   crash rather than undefined behaviour), as it would make any writer's data wrong.
//! - A full disk is the one way a copy could fault on its own; [`MappedFile::new`] takes the file only when its
//!   file system has room for all of it, and writers use positioned writes (which report the disk as full)
//!   otherwise.

use std::fs::File;
use std::io;
use std::ops::Range;
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

/// A file written through shared memory maps: what is copied in lands in the file's pages (see the module's notes).
pub(crate) struct MappedFile {
    file: File,
    length: u64,
    /// Byte ranges being copied into now.
    writing: Mutex<Vec<Range<usize>>>,
    /// Signalled when a copy ends, for copies waiting on an overlapping one.
    ended: Condvar,
}

/// A copy's claim on its byte range, given up when dropped.
struct Claim<'a> {
    file: &'a MappedFile,
    range: Range<usize>,
}

impl Drop for Claim<'_> {
    fn drop(&mut self) {
        let mut writing = self.file.claims();
        if let Some(k) = writing.iter().position(|r| *r == self.range) {
            writing.swap_remove(k);
        }
        drop(writing);
        self.file.ended.notify_all();
    }
}

impl MappedFile {
    /// `file` (opened for reading and writing, its length already set) written through maps, or `None` where
    /// that is not worth the risk: a file system without room for all of it (the pages a copy faults in could not
    /// be had), an empty file, or a system call that failed.
    pub(crate) fn new(file: &File) -> Option<MappedFile> {
        let length = file.metadata().ok()?.len();
        let room = nix::sys::statvfs::fstatvfs(file).ok()?;
        let free = room.blocks_available().saturating_mul(room.fragment_size());
        if length == 0 || free < length {
            return None;
        }
        let file = file.try_clone().ok()?;
        Some(MappedFile { file, length, writing: Mutex::new(Vec::new()), ended: Condvar::new() })
    }

    fn claims(&self) -> MutexGuard<'_, Vec<Range<usize>>> {
        self.writing.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits until no copy in flight overlaps `range`, then claims it.
    fn claim(&self, range: Range<usize>) -> Claim<'_> {
        let mut writing = self.claims();
        while writing.iter().any(|r| r.start < range.end && range.start < r.end) {
            writing = self.ended.wait(writing).unwrap_or_else(PoisonError::into_inner);
        }
        writing.push(range.clone());
        Claim { file: self, range }
    }

    /// Copies `bytes` into the file from byte `at`, through a map of those bytes alone, unmapped before it returns
    /// (the pages stay in the file's page cache for the writer's sync); an error, writing nothing, when they would
    /// pass the file's end.
    pub(crate) fn write(&self, at: u64, bytes: &[u8]) -> io::Result<()> {
        let start = usize::try_from(at).ok();
        let range = match start.and_then(|s| Some(s..s.checked_add(bytes.len())?)) {
            Some(r) if r.end as u64 <= self.length => r,
            _ => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("{} bytes at {at} pass the end of a file of {} bytes", bytes.len(), self.length),
                ));
            }
        };
        if bytes.is_empty() {
            return Ok(());
        }
        let _claim = self.claim(range.clone());
        let map = memmap2::MmapOptions::new().offset(at).len(bytes.len()).map_raw(&self.file)?;
        if map.len() != bytes.len() {
            return Err(io::Error::other(format!("a map of {} bytes came back with {}", bytes.len(), map.len())));
        }
        // SAFETY: the map is exactly `bytes.len()` bytes (checked above) of the file, within its length, and lives
        // until after the copy. No other thread copies into any of these bytes of the file while the claim is
        // held, and nothing in this process holds a reference into a mapping (only raw pointers exist), so
        // `bytes` cannot overlap it and no reference is invalidated.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), map.as_mut_ptr(), bytes.len()) };
        // Unmapping (the drop) leaves the pages dirty in the file, where the writer's sync finds them, and takes
        // them out of this process's resident set.
        drop(map);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileExt;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn scratch(name: &str, length: u64) -> (std::path::PathBuf, File) {
        let path = std::env::temp_dir().join(format!("cliper-mapped-{name}-{}", std::process::id()));
        let file = std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(true).open(&path).unwrap();
        file.set_len(length).unwrap();
        (path, file)
    }

    #[test]
    fn copies_land_in_the_file_and_none_passes_its_end() {
        let (path, file) = scratch("land", 10_007);
        let mapped = MappedFile::new(&file).expect("a temporary file maps");
        let data: Vec<u8> = (0..10_000u32).map(|i| (i * 7 % 251) as u8).collect();
        // From many threads at once, in pieces of 333 bytes.
        std::thread::scope(|s| {
            for (k, piece) in data.chunks(333).enumerate() {
                let mapped = &mapped;
                s.spawn(move || mapped.write(7 + (k * 333) as u64, piece).unwrap());
            }
        });
        let too_far = mapped.write(10_000, &[1u8; 8]).unwrap_err();
        assert_eq!(too_far.kind(), io::ErrorKind::InvalidInput);
        assert!(mapped.write(u64::MAX, &[1u8]).is_err());
        mapped.write(10_007, &[]).unwrap();
        let mut back = vec![0u8; 10_007];
        file.read_exact_at(&mut back, 0).unwrap();
        assert_eq!(&back[..7], &[0u8; 7]);
        assert_eq!(&back[7..], &data[..]);
        std::fs::remove_file(&path).ok();
    }

    #[test]
    fn overlapping_copies_wait_for_each_other() {
        let (path, file) = scratch("overlap", 1 << 16);
        let mapped = MappedFile::new(&file).expect("a temporary file maps");
        let inside = AtomicUsize::new(0);
        let most = AtomicUsize::new(0);
        // Ranges that all overlap byte 40 000: at most one may hold its claim at a time.
        std::thread::scope(|s| {
            for k in 0..8usize {
                let (mapped, inside, most) = (&mapped, &inside, &most);
                s.spawn(move || {
                    for _ in 0..50 {
                        let claim = mapped.claim(30_000 + k * 1000..41_000 + k * 1000);
                        let now = inside.fetch_add(1, Ordering::SeqCst) + 1;
                        most.fetch_max(now, Ordering::SeqCst);
                        std::thread::yield_now();
                        inside.fetch_sub(1, Ordering::SeqCst);
                        drop(claim);
                    }
                });
            }
        });
        assert_eq!(most.load(Ordering::SeqCst), 1);
        assert!(mapped.claims().is_empty());
        // Disjoint ranges do not wait: two claims held together.
        let a = mapped.claim(0..10);
        let b = mapped.claim(10..20);
        assert_eq!(mapped.claims().len(), 2);
        drop((a, b));
        std::fs::remove_file(&path).ok();
    }

    #[test]
    fn an_empty_file_is_not_mapped() {
        let (path, file) = scratch("empty", 0);
        assert!(MappedFile::new(&file).is_none());
        std::fs::remove_file(&path).ok();
    }
}
