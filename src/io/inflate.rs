//! Inflating the compressed streams inside the files cliper reads — gzip (`.nii.gz`, NRRD, MetaImage), zlib
//! (MetaImage, MAT) and raw deflate (deflated DICOM) — always to the stream's end, so that the checksum in its
//! trailer (gzip's CRC-32 and length, zlib's Adler-32) is verified even when a reader wants only a prefix of the
//! data: a flipped bit must be refused, never loaded as wrong voxels. Raw deflate has no checksum; reading it to
//! its end still refuses a stream that stops before its final block.

use std::io::Read;

/// The most deflate expands data (RFC 1951: 258 bytes from 2 bits, plus block headers).
const DEFLATE_RATIO: u64 = 1032;

/// The container around a deflate stream, which decides what is checked at its end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Wrapper {
    /// RFC 1952, one or more members, each with a CRC-32 and the length of its data.
    Gzip,
    /// RFC 1950: a 2-byte header and the Adler-32 of the data after the stream.
    Zlib,
    /// RFC 1951 alone (DICOM's deflated transfer syntax): no checksum.
    Deflate,
}

impl Wrapper {
    /// gzip when `bytes` start with its magic number, else zlib (what ITK writes for MetaImage).
    pub fn gzip_or_zlib(bytes: &[u8]) -> Wrapper {
        if bytes.starts_with(&[0x1f, 0x8b]) { Wrapper::Gzip } else { Wrapper::Zlib }
    }
}

/// The decoder for one wrapper. zlib is inflated as raw deflate after its 2-byte header so that the Adler-32 is
/// ours to compare and to report: flate2's own zlib check fails with the same message as any corrupt block.
enum Decoder<'a> {
    Gzip(flate2::bufread::MultiGzDecoder<&'a [u8]>),
    Zlib { body: &'a [u8], deflate: flate2::bufread::DeflateDecoder<&'a [u8]>, adler: adler2::Adler32 },
    Deflate(flate2::bufread::DeflateDecoder<&'a [u8]>),
}

/// A deflate stream being inflated: read what is wanted with [`Inflater::read_up_to`], then [`Inflater::finish`]
/// reads the rest and checks the trailer. Errors are one line saying what failed.
pub(crate) struct Inflater<'a> {
    decoder: Decoder<'a>,
    wrapper: Wrapper,
    /// Bytes inflated so far.
    total: u64,
}

impl<'a> Inflater<'a> {
    /// Starts inflating `compressed`; a zlib header that is not one (wrong method, bad header check, a preset
    /// dictionary, which no image format uses) is refused here.
    pub fn new(compressed: &'a [u8], wrapper: Wrapper) -> Result<Self, String> {
        let decoder = match wrapper {
            Wrapper::Gzip => Decoder::Gzip(flate2::bufread::MultiGzDecoder::new(compressed)),
            Wrapper::Deflate => Decoder::Deflate(flate2::bufread::DeflateDecoder::new(compressed)),
            Wrapper::Zlib => {
                let body = zlib_body(compressed)?;
                Decoder::Zlib {
                    body,
                    deflate: flate2::bufread::DeflateDecoder::new(body),
                    adler: adler2::Adler32::new(),
                }
            }
        };
        Ok(Inflater { decoder, wrapper, total: 0 })
    }

    /// Appends the next bytes of the inflated data to `out`, up to `count` of them (fewer when the stream ends
    /// first; the caller compares).
    pub fn read_up_to(&mut self, count: u64, out: &mut Vec<u8>) -> Result<(), String> {
        let mut chunk = [0u8; 1 << 16];
        let mut left = count;
        while left > 0 {
            let want = usize::try_from(left).map_or(chunk.len(), |l| l.min(chunk.len()));
            let n = self.read(chunk.get_mut(..want).unwrap_or_default())?;
            if n == 0 {
                break;
            }
            out.extend_from_slice(chunk.get(..n).unwrap_or_default());
            left -= n as u64;
        }
        Ok(())
    }

    /// Reads the stream to its end without keeping the bytes, checks its trailer, and returns how many bytes the
    /// whole stream inflates to (for the caller's size check).
    pub fn finish(mut self) -> Result<u64, String> {
        let mut chunk = [0u8; 1 << 16];
        while self.read(&mut chunk)? > 0 {}
        if let Decoder::Zlib { body, deflate, adler } = &self.decoder {
            check_adler(body, deflate.total_in(), adler.checksum())?;
        }
        Ok(self.total)
    }

    fn read(&mut self, buf: &mut [u8]) -> Result<usize, String> {
        let result = match &mut self.decoder {
            Decoder::Gzip(d) => d.read(buf),
            Decoder::Deflate(d) => d.read(buf),
            Decoder::Zlib { deflate, adler, .. } => {
                deflate.read(buf).inspect(|&n| adler.write_slice(buf.get(..n).unwrap_or_default()))
            }
        };
        let n = result.map_err(|e| self.describe(&e))?;
        self.total += n as u64;
        Ok(n)
    }

    /// What failed, in words a user can act on: gzip's trailer check has a message of its own in flate2.
    fn describe(&self, e: &std::io::Error) -> String {
        let at = self.total;
        match self.wrapper {
            Wrapper::Gzip if e.to_string().contains("checksum") => {
                format!(
                    "gzip CRC mismatch: the {at} inflated bytes do not match the CRC-32 and length in the stream's \
                     trailer (the file is corrupt)"
                )
            }
            Wrapper::Gzip => format!("not a readable gzip stream after {at} inflated bytes: {e}"),
            Wrapper::Zlib => format!("not a readable zlib stream after {at} inflated bytes: {e}"),
            Wrapper::Deflate => format!("not a readable deflate stream after {at} inflated bytes: {e}"),
        }
    }
}

/// The deflate stream inside a zlib stream, after its header is checked (RFC 1950 §2.2).
fn zlib_body(compressed: &[u8]) -> Result<&[u8], String> {
    let Some((&[cmf, flg], body)) = compressed.split_first_chunk::<2>() else {
        return Err(format!("a zlib stream of {} bytes is shorter than its 2-byte header", compressed.len()));
    };
    let check = u16::from_be_bytes([cmf, flg]);
    if cmf & 0x0f != 8 || cmf >> 4 > 7 || check % 31 != 0 {
        return Err(format!("not a zlib stream: header bytes {cmf:#04x} {flg:#04x}"));
    }
    if flg & 0x20 != 0 {
        return Err("the zlib stream needs a preset dictionary, which image formats do not use".into());
    }
    Ok(body)
}

/// Compares the Adler-32 of the inflated data with the 4 big-endian bytes after the deflate stream's
/// `consumed` bytes.
fn check_adler(body: &[u8], consumed: u64, computed: u32) -> Result<(), String> {
    let at = usize::try_from(consumed).unwrap_or(usize::MAX);
    let stored =
        body.get(at..).and_then(|t| t.first_chunk::<4>()).map(|b| u32::from_be_bytes(*b)).ok_or_else(|| {
            format!(
                "the zlib stream ends without its Adler-32 checksum ({} bytes after the data, 4 needed)",
                body.len().saturating_sub(at)
            )
        })?;
    if stored != computed {
        return Err(format!(
            "zlib Adler-32 mismatch: the trailer says {stored:#010x}, the inflated data sums to {computed:#010x} (the \
             file is corrupt)"
        ));
    }
    Ok(())
}

/// Inflates all of `compressed`, keeping at most `keep` bytes, and checks the trailer: the kept bytes and the
/// stream's whole inflated length.
pub(crate) fn inflate_checked(compressed: &[u8], wrapper: Wrapper, keep: u64) -> Result<(Vec<u8>, u64), String> {
    let mut inflater = Inflater::new(compressed, wrapper)?;
    let mut out = Vec::new();
    // A size the stream can hold (a header's claim checked by the caller) is reserved at once, not grown into.
    if keep <= (compressed.len() as u64).saturating_mul(DEFLATE_RATIO) {
        out.reserve(usize::try_from(keep).unwrap_or(0));
    }
    inflater.read_up_to(keep, &mut out)?;
    let total = inflater.finish()?;
    Ok((out, total))
}
