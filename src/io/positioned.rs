//! Positioned reads and writes of one file in pieces, on threads of their own. A read or write call blocks in
//! the kernel (on the disk, or on the file's inode lock, which serialises writes to one file on tmpfs and ext4);
//! on rayon's threads such calls would hold up the CPU work queued behind them there — a tile's host-to-device
//! copy waited for the previous tile's writes (H200, 16 cores: uploads of 1.4 GB took 0.3–0.7 s instead of
//! 0.12 s while a write ran). Writes go either by positioned calls or by copies into the file's memory maps
//! (`mapped_writes` says which, by the file system and the cores).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

/// Bytes per positioned call.
pub(crate) const PIECE: usize = 64 << 20;

/// Threads for reads: a slab of a file in the page cache comes at memory speed on several (H200 host: 20 GB/s on
/// 16 threads, 2 GB/s on one).
const READ_THREADS: usize = 8;

/// Positioned writes: bytes per call, and threads. The inode lock serialises the calls, but the next call's
/// preparation overlaps the current one (tmpfs, 4 GiB: 1.8 GB/s on one thread, 2.6 GB/s on sixteen).
pub(crate) const POSITIONED_WRITES: (usize, usize) = (PIECE, 4);

/// Copies into a file's memory map: bytes per copy (small enough that a tile's rows spread over every thread),
/// and threads. Their page faults run in parallel (tmpfs, 4 GiB: 1.2 GB/s on one thread, 4.1 on four, 4.7 on
/// sixteen). Eight, because the tiles' reads run at the same time: a 16 GiB tiled run on the H200's 16-core host
/// took 4.41–4.52 s with 8 threads, 5.40–6.58 with 16 (reads slowed from 2.4 s to 5.0), 5.80–6.09 with 4.
pub(crate) const MAPPED_WRITES: (usize, usize) = (8 << 20, 8);

/// Cores from which copies into maps beat positioned writes: on the H200's host four threads copied 4.1 GB/s
/// against positioned writes' 1.8–2.6; on two cores (PoCL's CI machine) a tiled run's writes took 0.25 s through
/// maps against 0.13–0.17 positioned.
const MAPPED_WRITES_FROM_CORES: usize = 4;

/// Whether `file` is written through maps: as [`MAPPED_WRITES_ENV`] says, or, when it is unset or `auto`, where
/// the file is in memory (tmpfs) and the machine has [`MAPPED_WRITES_FROM_CORES`] cores. Files on disks take
/// positioned writes: mapped writers stall in the kernel's dirty-page throttling and page faults (H200 host, ext4,
/// 16 GiB tiled f32 run: 17.9 s through maps against 11.5 positioned; on tmpfs 6.3 against 7.6–8.4).
pub(crate) fn mapped_writes(file: &std::fs::File) -> crate::error::Result<bool> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let setting = std::env::var(MAPPED_WRITES_ENV).ok();
    maps_by(setting.as_deref(), cores, || in_memory(file))
}

/// Whether a file is in memory: on tmpfs, whose pages are the file (no writeback to wait for).
fn in_memory(file: &std::fs::File) -> bool {
    nix::sys::statfs::fstatfs(file).is_ok_and(|fs| fs.filesystem_type() == nix::sys::statfs::TMPFS_MAGIC)
}

/// [`mapped_writes`]'s rule, given the setting, the cores and whether the file is in memory.
fn maps_by(setting: Option<&str>, cores: usize, in_memory: impl FnOnce() -> bool) -> crate::error::Result<bool> {
    match setting.map(str::trim) {
        None | Some("" | "auto") => Ok(cores >= MAPPED_WRITES_FROM_CORES && in_memory()),
        Some("on") => Ok(true),
        Some("off") => Ok(false),
        Some(other) => Err(crate::error::Error::invalid(
            MAPPED_WRITES_ENV,
            format!(
                "`{other}` is not a setting: give on, off or auto (the default: on for files in memory, tmpfs, \
                 from {MAPPED_WRITES_FROM_CORES} cores)"
            ),
        )),
    }
}

/// The environment variable that says how streamed outputs (NPY and RAW files written slab by slab: tiled runs)
/// are written: `on`, by copies through memory maps of the part being written, from many threads (buffered
/// writes to one file serialise on its inode lock); `off`, by positioned writes; `auto` (or unset), through maps
/// for files in memory (tmpfs, `/dev/shm`) on machines of four cores or more, positioned writes otherwise (on
/// disks, mapped writers stall in the kernel's writeback). Maps are taken only where the file system has room
/// for the whole file, so a full disk is reported as an error, never met in a page fault.
///
/// ```
/// assert_eq!(cliper::MAPPED_WRITES_ENV, "CLIPER_MAPPED_WRITES");
/// ```
pub const MAPPED_WRITES_ENV: &str = "CLIPER_MAPPED_WRITES";

/// Runs `job(k)` for `k` in `0..pieces` on up to `threads` scoped threads (on this one when there is a single
/// piece); the first error, after every thread has stopped taking pieces.
fn each_piece<E: Send>(pieces: usize, threads: usize, job: impl Fn(usize) -> Result<(), E> + Sync) -> Result<(), E> {
    let threads = threads.min(pieces).min(std::thread::available_parallelism().map_or(1, |n| n.get()));
    if threads <= 1 {
        return (0..pieces).try_for_each(job);
    }
    let next = AtomicUsize::new(0);
    let failure: Mutex<Option<E>> = Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                loop {
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    if k >= pieces {
                        break;
                    }
                    if let Err(e) = job(k) {
                        // Every thread stops at its next piece; the first error is kept.
                        next.store(pieces, Ordering::Relaxed);
                        failure.lock().unwrap_or_else(PoisonError::into_inner).get_or_insert(e);
                        break;
                    }
                }
            });
        }
    });
    failure.into_inner().unwrap_or_else(PoisonError::into_inner).map_or(Ok(()), Err)
}

/// Runs `fill(k, part)` for each part `k` of `bytes` of `piece` bytes (the last may be shorter) on the reading
/// threads: `fill` reads the file into its part (one positioned read or several).
pub(crate) fn read_in_pieces(
    bytes: &mut [u8],
    piece: usize,
    fill: impl Fn(usize, &mut [u8]) -> std::io::Result<()> + Sync,
) -> std::io::Result<()> {
    // Each part behind its own lock, taken once: the threads fill disjoint parts without `unsafe`.
    let parts: Vec<Mutex<&mut [u8]>> = bytes.chunks_mut(piece.max(1)).map(Mutex::new).collect();
    each_piece(parts.len(), READ_THREADS, |k| match parts.get(k) {
        Some(part) => fill(k, &mut part.lock().unwrap_or_else(PoisonError::into_inner)),
        None => Ok(()),
    })
}

/// Writes `bytes` from byte `at` of a file in pieces of `piece` bytes on up to `threads` threads: `write(offset,
/// piece)` writes one (a positioned write, or a copy into the file's memory map).
pub(crate) fn write_pieces(
    bytes: &[u8],
    at: u64,
    (piece, threads): (usize, usize),
    write: impl Fn(u64, &[u8]) -> std::io::Result<()> + Sync,
) -> std::io::Result<()> {
    let piece = piece.max(1);
    let pieces: Vec<&[u8]> = bytes.chunks(piece).collect();
    each_piece(pieces.len(), threads, |k| match pieces.get(k) {
        Some(part) => write(at + (k * piece) as u64, part),
        None => Ok(()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileExt;

    #[test]
    fn outputs_in_memory_go_through_maps_from_four_cores() {
        let yes = || true;
        let no = || false;
        assert!(maps_by(None, 16, yes).unwrap() && maps_by(Some(" auto "), 4, yes).unwrap());
        assert!(!maps_by(None, 3, yes).unwrap() && !maps_by(Some(""), 16, no).unwrap());
        assert!(maps_by(Some("on"), 1, no).unwrap() && !maps_by(Some("off"), 16, yes).unwrap());
        let refused = maps_by(Some("yes"), 16, yes).unwrap_err().to_string();
        assert!(refused.contains(MAPPED_WRITES_ENV) && refused.contains("`yes`"), "{refused}");
        // The build's own folder is on a disk; /dev/shm is tmpfs where the machine has one.
        let disk = std::fs::File::open(env!("CARGO_MANIFEST_DIR")).unwrap();
        assert!(!in_memory(&disk));
        if let Ok(shm) = std::fs::File::open("/dev/shm")
            && std::fs::read_to_string("/proc/mounts").is_ok_and(|m| m.contains(" /dev/shm tmpfs "))
        {
            assert!(in_memory(&shm));
        }
    }

    #[test]
    fn pieces_land_where_they_belong_and_the_first_error_is_returned() {
        let path = std::env::temp_dir().join(format!("cliper-positioned-{}", std::process::id()));
        let file = std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(true).open(&path).unwrap();
        let data: Vec<u8> = (0..10_007u32).map(|i| (i * 7 % 251) as u8).collect();
        file.write_all_at(&data, 0).unwrap();
        // Pieces of 1000 read in reverse order of the file: piece k comes from where the last-but-k lies.
        let mut back = vec![0u8; 3000];
        read_in_pieces(&mut back, 1000, |k, part| file.read_exact_at(part, (2000 - 1000 * k) as u64 + 5000)).unwrap();
        for (k, piece) in back.chunks(1000).enumerate() {
            let from = 7000 - 1000 * k;
            assert_eq!(piece, &data[from..from + 1000], "piece {k}");
        }
        // Past the end: an error, not a short read taken for data.
        let mut too_far = vec![0u8; 4000];
        let err =
            read_in_pieces(&mut too_far, 1000, |k, part| file.read_exact_at(part, 7000 + 1000 * k as u64)).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::UnexpectedEof);
        let shifted: Vec<u8> = data.iter().map(|v| v.wrapping_add(1)).collect();
        write_pieces(&shifted, 3, (1000, 4), |at, part| file.write_all_at(part, at)).unwrap();
        let mut all = vec![0u8; 10_010];
        file.read_exact_at(&mut all, 0).unwrap();
        assert_eq!(&all[3..], &shifted[..]);
        std::fs::remove_file(&path).ok();
    }
}
