//! Deflate engines and settings, timed (docs/formats.md, "gzip, zlib and deflate"). Build once per engine, with
//! the one target directory, and run on the uncompressed file:
//!
//! ```text
//! python3 scripts/bench/peer_batch.py make-ct /tmp/ct --count 1          # /tmp/ct/ct000.nii
//! python3 scripts/bench/peer_batch.py make-png /tmp/png --count 1 --shape 1024 1024
//! cd scripts/bench/gzip_engines
//! for e in miniz zrs zng; do cargo build --release --features $e && cp $CARGO_TARGET_DIR/release/gzip-engines /tmp/gz-$e; done
//! /tmp/gz-zrs /tmp/ct/ct000.nii         # gzip: serial levels 1, 2, 3, 6; blocks of 256 KiB–1 MiB, with and without dictionary
//! /tmp/gz-zrs /tmp/ct/ct000.nii tiff    # the volume's data as int16 TIFF pages, Deflate, as write_tiff_with writes them
//! /tmp/gz-zrs /tmp/png/img000.png       # PNG: deflate level × filter, and the crate's fdeflate mode
//! ```
//!
//! Every line is the best of 3 (PNG: 5) runs; every output is inflated and compared with its input. The
//! block-parallel gzip here is the same construction as src/io/gzip.rs, with the block size, level and
//! dictionary as parameters; rayon's threads are RAYON_NUM_THREADS.

use flate2::{Compress, Compression, FlushCompress, Status};
use rayon::prelude::*;
use std::io::{Read, Write};
use std::time::Instant;

fn gzip_header() -> [u8; 10] {
    [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255]
}

/// Raw deflate of one chunk, with `dict` as preset dictionary, ending in a sync flush (or finish when last).
fn deflate_chunk(chunk: &[u8], dict: Option<&[u8]>, level: u32, last: bool) -> Vec<u8> {
    let mut c = Compress::new(Compression::new(level), false);
    #[cfg(not(feature = "miniz"))]
    if let Some(d) = dict {
        c.set_dictionary(d).unwrap();
    }
    #[cfg(feature = "miniz")]
    let _ = dict;
    let mut out = Vec::with_capacity(chunk.len() / 2 + 1024);
    let flush = if last { FlushCompress::Finish } else { FlushCompress::Sync };
    loop {
        let consumed = c.total_in() as usize;
        let st = c.compress_vec(&chunk[consumed..], &mut out, flush).unwrap();
        if (last && st == Status::StreamEnd)
            || (!last && c.total_in() as usize == chunk.len() && out.len() < out.capacity())
        {
            break;
        }
        out.reserve(out.capacity().max(64 * 1024));
    }
    out
}

fn parallel_gzip(data: &[u8], chunk: usize, level: u32, use_dict: bool) -> Vec<u8> {
    let n = data.len().div_ceil(chunk).max(1);
    let parts: Vec<(Vec<u8>, crc32fast::Hasher)> = (0..n)
        .into_par_iter()
        .map(|i| {
            let start = i * chunk;
            let end = (start + chunk).min(data.len());
            let dict = (use_dict && start > 0).then(|| &data[start.saturating_sub(32768)..start]);
            let mut h = crc32fast::Hasher::new();
            h.update(&data[start..end]);
            (deflate_chunk(&data[start..end], dict, level, i + 1 == n), h)
        })
        .collect();
    let mut out = gzip_header().to_vec();
    let mut crc = crc32fast::Hasher::new();
    for (bytes, h) in parts {
        out.extend_from_slice(&bytes);
        crc.combine(&h);
    }
    out.extend_from_slice(&crc.finalize().to_le_bytes());
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out
}

fn serial_gzip(data: &[u8], level: u32) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), Compression::new(level));
    gz.write_all(data).unwrap();
    gz.finish().unwrap()
}

fn gunzip(gz: &[u8], len: usize) -> Vec<u8> {
    let mut d = flate2::bufread::MultiGzDecoder::new(gz);
    let mut out = Vec::with_capacity(len);
    d.read_to_end(&mut out).unwrap();
    out
}

fn best_of<T>(reps: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut best = f64::MAX;
    let mut last = None;
    for _ in 0..reps {
        let t = Instant::now();
        let r = f();
        best = best.min(t.elapsed().as_secs_f64());
        last = Some(r);
    }
    (best, last.unwrap())
}

fn png_bench(path: &str, backend: &str) {
    let file = std::fs::File::open(path).unwrap();
    let mut reader = png::Decoder::new(std::io::BufReader::new(file)).read_info().unwrap();
    let mut buf = vec![0u8; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    buf.truncate(info.buffer_size());
    let mb = buf.len() as f64 / 1e6;
    let settings: Vec<(&str, png::DeflateCompression, png::Filter)> = vec![
        ("Balanced(L6) Adaptive [today]", png::DeflateCompression::Level(6), png::Filter::Adaptive),
        ("L6 Up", png::DeflateCompression::Level(6), png::Filter::Up),
        ("L6 Paeth", png::DeflateCompression::Level(6), png::Filter::Paeth),
        ("L3 Adaptive", png::DeflateCompression::Level(3), png::Filter::Adaptive),
        ("L2 Adaptive", png::DeflateCompression::Level(2), png::Filter::Adaptive),
        ("L1 Adaptive", png::DeflateCompression::Level(1), png::Filter::Adaptive),
        ("Fast(fdeflate) Adaptive", png::DeflateCompression::FdeflateUltraFast, png::Filter::Adaptive),
        ("Fast(fdeflate) Up", png::DeflateCompression::FdeflateUltraFast, png::Filter::Up),
        ("Fast(fdeflate) Paeth", png::DeflateCompression::FdeflateUltraFast, png::Filter::Paeth),
    ];
    for (name, deflate, filter) in settings {
        let (wt, out) = best_of(5, || {
            let mut out = Vec::new();
            let mut enc = png::Encoder::new(&mut out, info.width, info.height);
            enc.set_color(info.color_type);
            enc.set_depth(info.bit_depth);
            enc.set_deflate_compression(deflate);
            enc.set_filter(filter);
            let mut w = enc.write_header().unwrap();
            w.write_image_data(&buf).unwrap();
            w.finish().unwrap();
            out
        });
        let (rt, back) = best_of(5, || {
            let mut r = png::Decoder::new(std::io::Cursor::new(&out)).read_info().unwrap();
            let mut b = vec![0u8; r.output_buffer_size().unwrap()];
            let i = r.next_frame(&mut b).unwrap();
            b.truncate(i.buffer_size());
            b
        });
        assert!(back == buf);
        println!(
            "{backend:11} png {name:32} size {:>9} ratio {:5.2} write {:7.1} MB/s ({:6.4} s) read {:7.1} MB/s",
            out.len(),
            buf.len() as f64 / out.len() as f64,
            mb / wt,
            wt,
            mb / rt
        );
    }
}

/// CT int16 pages (the .nii's data after its 352-byte header) as a Deflate TIFF through the tiff crate, as
/// cliper's write_tiff_with does (Compression::Deflate(Balanced), one image per page).
fn tiff_bench(path: &str, backend: &str) {
    use tiff::encoder::{Compression as TC, DeflateLevel, TiffEncoder, colortype::GrayI16};
    let bytes = std::fs::read(path).unwrap();
    let samples: Vec<i16> = bytes[352..].chunks_exact(2).map(|b| i16::from_le_bytes([b[0], b[1]])).collect();
    let page = 256 * 256;
    let mb = (samples.len() * 2) as f64 / 1e6;
    for (name, c) in [
        ("Deflate(Balanced)", TC::Deflate(DeflateLevel::Balanced)),
        ("Deflate(Fast)", TC::Deflate(DeflateLevel::Fast)),
        ("Uncompressed", TC::Uncompressed),
    ] {
        let (wt, out) = best_of(3, || {
            let mut out = std::io::Cursor::new(Vec::new());
            {
                let mut enc = TiffEncoder::new(&mut out).unwrap().with_compression(c);
                for p in samples.chunks(page) {
                    enc.write_image::<GrayI16>(256, 256, p).unwrap();
                }
            }
            out.into_inner()
        });
        let (rt, _) = best_of(3, || {
            let mut d = tiff::decoder::Decoder::new(std::io::Cursor::new(&out)).unwrap();
            let mut n = 0;
            loop {
                if let tiff::decoder::DecodingResult::I16(v) = d.read_image().unwrap() {
                    n += v.len();
                }
                if !d.more_images() {
                    break;
                }
                d.next_image().unwrap();
            }
            assert_eq!(n, samples.len());
        });
        println!(
            "{backend:11} tiff {name:20} size {:>10} ratio {:5.2} write {:7.1} MB/s ({:6.3} s) read {:7.1} MB/s ({:6.3} s)",
            out.len(),
            mb * 1e6 / out.len() as f64,
            mb / wt,
            wt,
            mb / rt,
            rt
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() > 2 && args[2] == "tiff" {
        let b = if cfg!(feature = "zrs") {
            "zlib-rs"
        } else if cfg!(feature = "zng") {
            "zlib-ng"
        } else {
            "miniz_oxide"
        };
        return tiff_bench(&args[1], b);
    }
    let backend0 = if cfg!(feature = "zrs") {
        "zlib-rs"
    } else if cfg!(feature = "zng") {
        "zlib-ng"
    } else {
        "miniz_oxide"
    };
    if args[1].ends_with(".png") {
        return png_bench(&args[1], backend0);
    }
    let data = std::fs::read(&args[1]).unwrap();
    let backend = if cfg!(feature = "zrs") {
        "zlib-rs"
    } else if cfg!(feature = "zng") {
        "zlib-ng"
    } else {
        "miniz_oxide"
    };
    let reps = 3;
    let mb = data.len() as f64 / 1e6;
    let threads = rayon::current_num_threads();
    let report = |name: &str, wt: f64, gz: &[u8]| {
        let (rt, back) = best_of(reps, || gunzip(gz, data.len()));
        assert!(back == data, "{name}: round trip differs");
        println!(
            "{backend:11} {name:34} size {:>10} ratio {:5.2}  write {:7.1} MB/s ({:6.3} s)  read {:7.1} MB/s ({:6.3} s)",
            gz.len(),
            data.len() as f64 / gz.len() as f64,
            mb / wt,
            wt,
            mb / rt,
            rt
        );
    };
    for level in [1u32, 2, 3, 6] {
        let (wt, gz) = best_of(reps, || serial_gzip(&data, level));
        report(&format!("serial L{level}"), wt, &gz);
    }
    for level in [3u32, 6] {
        for chunk_kib in [256usize, 512, 1024] {
            for dict in [false, true] {
                if dict && cfg!(feature = "miniz") {
                    continue;
                }
                let (wt, gz) = best_of(reps, || parallel_gzip(&data, chunk_kib << 10, level, dict));
                report(&format!("parallel{threads} L{level} {chunk_kib}K dict={dict}"), wt, &gz);
            }
        }
    }
}
