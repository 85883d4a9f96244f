//! gzip written on every core (`.nii.gz`): the data is cut into blocks of [`BLOCK`] bytes that are deflated at
//! once, each primed with the 32 KiB before it as its dictionary (so matches reach back across the cut as in a
//! serial stream) and ended with a sync flush (an empty stored block, which byte-aligns the output), the last
//! one with the final block. Their concatenation is one ordinary deflate stream, so the file is a single gzip
//! member that every reader takes unchanged (nibabel, `gzip -d`, flate2's `GzDecoder`); the CRC-32s of the
//! blocks, computed beside them, are combined into the trailer's. pigz writes the same way.
//!
//! The deflate engine is flate2's zlib-rs backend (Cargo.toml), at zlib's default level 6: docs/formats.md
//! ("gzip, zlib and deflate") has the measurements behind both choices.

use flate2::{Compress, Compression, FlushCompress, Status};
use rayon::prelude::*;
use std::io::Write;

/// Bytes deflated by one task: large enough that the flush and the fresh Huffman tables cost little (0.01 % on
/// a 21 MB CT volume, 1.7 KB on its 47 KB of labels), small enough that such a volume keeps 16 cores busy.
const BLOCK: usize = 512 << 10;

/// Deflate's window: how far back a match may reach, so how much of the data before a block primes it.
const WINDOW: usize = 32 << 10;

/// gzip's 10-byte header (RFC 1952): deflate, no name or time stamp, operating system "unknown" (as flate2
/// writes it).
const HEADER: [u8; 10] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255];

/// One block deflated: its raw deflate bytes and the CRC-32 of the data it holds.
struct Deflated {
    bytes: Vec<u8>,
    crc: crc32fast::Hasher,
}

/// Writes `data` gzipped to `out` (a single member; see the module's description), [`BLOCK`] bytes per task on
/// rayon's threads. The blocks are deflated a batch at a time, two per thread, and written in order, so memory
/// beyond `data` stays a few blocks, whatever its size.
pub(crate) fn write_gzip(data: &[u8], out: &mut impl Write) -> Result<(), String> {
    write_gzip_blocks(data, BLOCK, out)
}

/// [`write_gzip`] with blocks of `block` bytes (the tests cut small data into many).
fn write_gzip_blocks(data: &[u8], block: usize, out: &mut impl Write) -> Result<(), String> {
    let block = block.max(1);
    let blocks = data.len().div_ceil(block).max(1);
    let batch = 2 * rayon::current_num_threads().max(1);
    out.write_all(&HEADER).map_err(|e| e.to_string())?;
    let mut crc = crc32fast::Hasher::new();
    for first in (0..blocks).step_by(batch) {
        let deflated: Vec<Deflated> = (first..(first + batch).min(blocks))
            .into_par_iter()
            .map(|index| deflate_block(data, index * block, block, index + 1 == blocks))
            .collect::<Result<_, _>>()?;
        for part in deflated {
            out.write_all(&part.bytes).map_err(|e| e.to_string())?;
            crc.combine(&part.crc);
        }
    }
    // ISIZE is the length modulo 2³² (RFC 1952 §2.3.1).
    let length = (data.len() as u64 & u64::from(u32::MAX)) as u32;
    out.write_all(&crc.finalize().to_le_bytes())
        .and_then(|()| out.write_all(&length.to_le_bytes()))
        .map_err(|e| e.to_string())
}

/// Deflates the `block` bytes of `data` from `start` (fewer at its end), primed with the window before them;
/// the last block ends the stream, the others end on a sync flush so the next one can follow.
fn deflate_block(data: &[u8], start: usize, block: usize, last: bool) -> Result<Deflated, String> {
    let end = start.saturating_add(block).min(data.len());
    let input = data.get(start..end).unwrap_or_default();
    let mut compress = Compress::new(Compression::default(), false);
    if let Some(window) = data.get(start.saturating_sub(WINDOW)..start).filter(|w| !w.is_empty()) {
        compress.set_dictionary(window).map_err(|e| format!("deflate refused its dictionary: {e}"))?;
    }
    let flush = if last { FlushCompress::Finish } else { FlushCompress::Sync };
    let bytes = deflate_all(&mut compress, input, flush)?;
    let mut crc = crc32fast::Hasher::new();
    crc.update(input);
    Ok(Deflated { bytes, crc })
}

/// Runs `compress` over all of `input` with `flush`, growing the output until zlib's condition for done holds:
/// the stream's end for `Finish`; for `Sync`, all input taken and room left in the output (zlib fills the output
/// completely only when it has more to write).
fn deflate_all(compress: &mut Compress, input: &[u8], flush: FlushCompress) -> Result<Vec<u8>, String> {
    // At least zlib's deflateBound and the flush marker: usually one pass.
    let mut out = Vec::with_capacity(input.len() + input.len() / 1000 + 64);
    loop {
        let taken = usize::try_from(compress.total_in()).unwrap_or(usize::MAX);
        let rest = input.get(taken..).unwrap_or_default();
        let status = compress.compress_vec(rest, &mut out, flush).map_err(|e| format!("deflate failed: {e}"))?;
        let all_taken = usize::try_from(compress.total_in()).is_ok_and(|n| n == input.len());
        let done = match flush {
            FlushCompress::Finish => status == Status::StreamEnd,
            _ => all_taken && out.len() < out.capacity(),
        };
        if done {
            return Ok(out);
        }
        out.reserve(out.capacity().max(1 << 16));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    /// Data that deflate compresses (runs and repeats) but not to nothing (a position-dependent hash).
    fn sample(len: usize) -> Vec<u8> {
        (0..len)
            .map(|i| if (i / 700) % 3 == 0 { (i.wrapping_mul(2_654_435_761) >> 13) as u8 } else { (i / 64) as u8 })
            .collect()
    }

    fn gzip_with(data: &[u8], block: usize) -> Vec<u8> {
        let mut out = Vec::new();
        write_gzip_blocks(data, block, &mut out).unwrap();
        out
    }

    /// A plain single-member reader: flate2's `GzDecoder` stops at the first member's end, so trailing members
    /// or a broken block chain would show as missing or wrong bytes.
    fn gunzip_one_member(gz: &[u8]) -> Vec<u8> {
        let mut back = Vec::new();
        flate2::read::GzDecoder::new(gz).read_to_end(&mut back).unwrap();
        back
    }

    #[test]
    fn blocks_make_one_gzip_member_that_a_plain_reader_inflates_exactly() {
        // 9 blocks of 4 KiB, the last one short; the dictionary of a block reaches over several before it.
        let data = sample(9 * 4096 - 1000);
        let gz = gzip_with(&data, 4096);
        assert_eq!(gunzip_one_member(&gz), data);
        // The trailer holds the CRC-32 and length of the whole data (a reader that skips the check would miss a
        // wrongly combined CRC).
        let trailer = gz.last_chunk::<8>().unwrap();
        assert_eq!(trailer[..4], crc32fast::hash(&data).to_le_bytes());
        assert_eq!(trailer[4..], (data.len() as u32).to_le_bytes());
        // Our own reader checks the same CRC.
        let (back, total) =
            super::super::inflate::inflate_checked(&gz, super::super::inflate::Wrapper::Gzip, u64::MAX).unwrap();
        assert_eq!((back.as_slice(), total), (data.as_slice(), data.len() as u64));
    }

    #[test]
    fn every_block_but_the_last_ends_on_a_sync_flush() {
        // A sync flush ends in an empty stored block, 00 00 ff ff: one per cut, which a serial writer never emits
        // for data this regular (none appear in the single-block stream).
        let data = sample(6 * 4096);
        let count = |gz: &[u8]| gz.windows(4).filter(|w| *w == [0, 0, 0xff, 0xff]).count();
        assert_eq!(count(&gzip_with(&data, data.len())), 0);
        assert_eq!(count(&gzip_with(&data, 4096)), 5);
    }

    #[test]
    fn the_dictionary_keeps_the_size_of_a_serial_stream() {
        // Repeats 2 KiB apart cross every cut: primed with the previous window, each block still finds them.
        // Tolerance 2 % and 100 bytes a cut (a flush marker and a fresh Huffman table); without the dictionary each
        // cut would cost the 2 KiB of literals before the first repeat.
        let motif: Vec<u8> = (0..2048u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 7) as u8).collect();
        let data: Vec<u8> = motif.iter().copied().cycle().take(64 * 4096).collect();
        let serial = gzip_with(&data, data.len()).len();
        let blocked = gzip_with(&data, 4096).len();
        assert!((blocked as f64) < serial as f64 * 1.02 + 64.0 * 100.0, "{blocked} bytes blocked vs {serial} serial");
        assert_eq!(gunzip_one_member(&gzip_with(&data, 4096)), data);
    }

    #[test]
    fn empty_and_exact_multiples_of_the_block_round_trip() {
        for len in [0, 1, 4096, 3 * 4096] {
            let data = sample(len);
            assert_eq!(gunzip_one_member(&gzip_with(&data, 4096)), data, "{len} bytes");
        }
    }
}
