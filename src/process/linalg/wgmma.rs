//! [`GemmStrategy::Wgmma`]: `f32` products of [`super::MatMul`] on Hopper's warpgroup tensor-core instructions
//! (`gemm_wgmma` and `wgmma_pack` in `kernels/linalg.cl`, built for `sm_90a` by
//! [`crate::ClApp::build_program_sm90a`]). Each launch first packs op(A) and op(B) into device scratch arrays, K
//! fastest and padded to whole blocks: rounded to TF32 to nearest at [`GemmPrecision::Tf32`], or split into
//! TF32 heads and rests (two arrays each) at [`GemmPrecision::Fp32Split`]. Each block of rows and K slice is packed
//! as one contiguous run laid out as the product's local buffer holds it, so the product moves it into local
//! memory, where the instructions find it, with one bulk copy (`cp.async.bulk`) per operand and plane.

use super::gemm_launch::GemmArgs;
use super::gemm_precision::GemmPrecision;
use super::gemm_strategy::GemmStrategy;
use crate::app::{ClApp, DeviceInfo, Kernel, Program};
use crate::data::XData;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::kernel_args::IndexType;
use crate::kernels;

/// Rows of C per warpgroup, and work-items per warpgroup.
const WARPGROUP: [usize; 2] = [64, 128];
/// The local memory a blocking may ask for: a Hopper SM's 227 KiB. NVIDIA's OpenCL reports 48 KiB a group, but
/// the retargeted program is built from PTX by the driver's JIT, which (driver 580) builds and launches static
/// local arrays up to the SM's size; each plan beyond the reported size is checked by a launch at `init`, and
/// falls back to a blocking within it ([`Room::Reported`]) where the driver refuses.
const LOCAL_BYTES: usize = 227 * 1024;

/// How much local memory the planner's blocking may take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Room {
    /// The SM's ([`LOCAL_BYTES`]): deeper slices and more buffers, fewer turns.
    Sm,
    /// The 48 KiB the driver reports.
    Reported,
}
/// Block rows of C whose work-groups are numbered together, for the L2 cache (H200, 8192³: 129 TF/s against
/// 125 in the launch's order; 16 rows the same as 8).
const GROUP: usize = 8;
/// Names the blocking for tuning: `ROWSxCOLUMNSxSLICExSTAGES/INFLIGHT` (like `128x256x8x4/1`).
pub(crate) const BLOCKING_ENV: &str = "CLIPER_WGMMA_BLOCKING";

/// The blocking of gemm_wgmma: rows of C per group (128 or 192: two or three warpgroups of 64), columns (128 or
/// 256: one m64n128k8 or m64n256k8 instruction per warpgroup and 8-deep step), the K depth of a slice, the number
/// of local buffers, and whether a slice's instructions stay in flight across the next turn's barrier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Blocking {
    rows: usize,
    columns: usize,
    slice: usize,
    stages: usize,
    inflight: bool,
}

impl Blocking {
    /// The blocking `CLIPER_WGMMA_BLOCKING` names, if it names one (checked against the split's limits).
    fn from_env(split: bool) -> Result<Option<Blocking>> {
        let Ok(text) = std::env::var(BLOCKING_ENV) else { return Ok(None) };
        if text.trim().is_empty() {
            return Ok(None);
        }
        let blocking = Blocking::parse(text.trim())?;
        if split && !blocking.fits_split() {
            return Err(Error::invalid(
                "MatMul",
                format!("{BLOCKING_ENV}=`{text}`: the split needs ROWS 64 or 128, COLUMNS 128, SLICE 8 and INFLIGHT 0"),
            ));
        }
        if blocking.local_bytes(split) > LOCAL_BYTES {
            return Err(Error::invalid(
                "MatMul",
                format!(
                    "{BLOCKING_ENV}=`{text}`: the split's two planes need {} bytes of local memory; the limit is \
                     {LOCAL_BYTES}",
                    blocking.local_bytes(split)
                ),
            ));
        }
        Ok(Some(blocking))
    }

    /// The planner's blocking for `count` products of `m` × `n` on a device of `units` compute units within
    /// `room`: three warpgroups (192 × 256 blocks, 29 % fewer operand bytes per product than 128 × 256) where
    /// they make at least two waves, two (128 × 256) where those make about a wave, else 128 × 128, and one
    /// warpgroup (64 × 128) where 128 × 128 blocks would leave compute units without a group. Deeper
    /// slices where the room allows: the bulk copies then move twice or four times the bytes per turn and wait
    /// at a quarter of the barriers. Measured on the H200 (docs/benchmarks.md, 2026-11-30; TF/s at 2048³ /
    /// 4096³ / 8192³): 192x256x32x3 139 / 231 / 276 against 192x256x8x3's 144 / 168 / 211 within 48 KiB;
    /// 128x256x16x4 160 / 213 / 237; 128x256x8x4 182 / 207 at 4096³ / 8192³; at 1024³ 128x128x8x3 47 against
    /// gemm_tmma's 33.
    fn chosen(m: usize, n: usize, count: usize, units: usize, split: bool, room: Room) -> Blocking {
        let sm = room == Room::Sm;
        let (rows, columns, slice, stages) = if split {
            // Three accumulator sets of 64 (heads, rests, one step's heads) fill a work-item's registers at
            // 128 × 128, and each step's heads are added before the next: 8-deep slices, two planes per operand.
            // H200 4096³ / 8192³: 4 buffers 79.6 / 80.7 TF/s, 3 buffers 70.6 / 74.0. Groups of one warpgroup
            // (64 rows) where 128-row blocks would not give every compute unit one (1024³: 0.0514 ms against
            // 0.0664, cuBLAS FP32 0.0571).
            if m.div_ceil(128) * n.div_ceil(128) * count < units {
                (64, 128, 8, 4)
            } else if sm {
                (128, 128, 8, 4)
            } else {
                (128, 128, 8, 3)
            }
        } else if m.div_ceil(192) * n.div_ceil(256) * count >= 2 * units {
            if sm { (192, 256, 32, 3) } else { (192, 256, 8, 3) }
        } else if m.div_ceil(128) * n.div_ceil(256) * count >= 100 {
            if sm { (128, 256, 16, 4) } else { (128, 256, 8, 4) }
        } else if m.div_ceil(128) * n.div_ceil(128) * count >= units {
            (128, 128, 8, 3)
        } else {
            // Fewer 128 × 128 blocks than compute units: one warpgroup of 64 rows per group, twice the groups
            // (H200 1024³: 0.0315 ms against 0.0414 in 128 × 128 blocks; 64x128x8x4 0.0359, 64x256x8x4 0.0382),
            // within 48 KiB.
            (64, 128, 16, 4)
        };
        Blocking { rows, columns, slice, stages, inflight: false }
    }

    /// `ROWSxCOLUMNSxSLICExSTAGES/INFLIGHT`, checked against the kernel's limits.
    fn parse(text: &str) -> Result<Blocking> {
        let bad = |why: &str| Error::invalid("MatMul", format!("{BLOCKING_ENV}=`{text}`: {why}"));
        let form = "not ROWSxCOLUMNSxSLICExSTAGES/INFLIGHT";
        let (sizes, inflight) = text.split_once('/').unwrap_or((text, "0"));
        let numbers: Vec<usize> =
            sizes.split('x').map(|v| v.trim().parse().map_err(|_| bad(form))).collect::<Result<_>>()?;
        let &[rows, columns, slice, stages] = numbers.as_slice() else { return Err(bad(form)) };
        let inflight = match inflight.trim() {
            "0" => false,
            "1" => true,
            _ => return Err(bad("INFLIGHT must be 0 or 1")),
        };
        let blocking = Blocking { rows, columns, slice, stages, inflight };
        if rows != 64 && rows != 128 && rows != 192 {
            Err(bad("ROWS must be 64, 128 or 192"))
        } else if columns != 128 && columns != 256 {
            Err(bad("COLUMNS must be 128 or 256"))
        } else if slice == 0 || !slice.is_multiple_of(8) {
            Err(bad("SLICE must be a multiple of 8"))
        } else if stages < 2 + usize::from(inflight) {
            Err(bad("STAGES must be at least 2, 3 with INFLIGHT 1"))
        } else if blocking.local_bytes(false) > LOCAL_BYTES {
            Err(bad(&format!(
                "the buffers need {} bytes of local memory; the limit is {LOCAL_BYTES}",
                blocking.local_bytes(false)
            )))
        } else {
            Ok(blocking)
        }
    }

    /// Whether the split (`Fp32Split`) can run this blocking: its three accumulator sets take 216 registers a
    /// work-item at 128 columns (256 columns would not fit a work-item's registers, three warpgroups not an SM's),
    /// and it adds each 8-deep step's head products before the next step starts.
    fn fits_split(&self) -> bool {
        self.rows <= 128 && self.columns == 128 && self.slice == 8 && !self.inflight
    }

    /// Work-items of a group.
    fn threads(&self) -> usize {
        self.rows / WARPGROUP[0] * WARPGROUP[1]
    }

    /// The local memory of the buffers, with the split's two planes per operand or one.
    fn local_bytes(&self, split: bool) -> usize {
        self.stages * self.slice * (self.rows + self.columns) * 4 * (1 + usize::from(split))
    }

    /// The build options of gemm_wgmma for this blocking.
    fn options(&self) -> String {
        let ahead = self.stages - 1 - usize::from(self.inflight);
        format!(
            "-DWG_GROUPS={} -DWG_BN={} -DWG_BK={} -DWG_STAGES={} -DWG_INFLIGHT={} -DWG_AHEAD={ahead} \
             -DWG_GROUP={GROUP}",
            self.rows / WARPGROUP[0],
            self.columns,
            self.slice,
            self.stages,
            u8::from(self.inflight),
        )
    }
}

impl GemmStrategy {
    /// Whether [`GemmStrategy::Wgmma`] can run `T` at `precision` on the device: `f32` products at
    /// [`GemmPrecision::Tf32`] or [`GemmPrecision::Fp32Split`] on an NVIDIA GPU of compute capability 9.x (H100,
    /// H200: `wgmma` is specific to sm_90a); `c32` ones there too, as real products
    /// ([`GemmStrategy::RealEmbedding`]). The error says what is missing. Whether the driver builds the retargeted program is known only
    /// when it does ([`crate::ClApp::build_program_sm90a`]); the planner then falls back to
    /// [`GemmStrategy::TensorCore`].
    ///
    /// ```
    /// use cliper::{GemmPrecision, GemmStrategy};
    /// let app = cliper::ClApp::new()?;
    /// let why = GemmStrategy::wgmma::<f32>(app.device(), GemmPrecision::Full).unwrap_err().to_string();
    /// assert!(why.contains("Tf32"), "{why}");
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn wgmma<T: Element>(info: &DeviceInfo, precision: GemmPrecision) -> Result<()> {
        if T::IS_COMPLEX && !T::IS_DOUBLE {
            // c32 products run on it as real ones (GemmStrategy::RealEmbedding).
            return Self::wgmma::<T::Real>(info, precision);
        }
        let missing = if T::IS_DOUBLE {
            Some(format!("f32 data, not {}", T::NAME))
        } else if !precision.allows_tf32() {
            Some(format!("f32 products at GemmPrecision::Tf32 or Fp32Split (this one asks for {precision})"))
        } else {
            match info.compute_capability {
                Some((9, _)) => None,
                Some((major, minor)) => Some(format!("compute capability 9.x (sm_90a), not {major}.{minor}")),
                None => Some("an NVIDIA GPU (it has no compute capability)".to_string()),
            }
        };
        match missing {
            None => Ok(()),
            Some(what) => {
                Err(Error::Unsupported { what: format!("the wgmma GEMM needs {what}; device: {}", info.name) })
            }
        }
    }
}

/// What a [`GemmStrategy::Wgmma`] product keeps between launches: the pack kernel, the scratch arrays of the packed
/// operands and their padded sizes.
pub(super) struct WgmmaPlan<T: Element> {
    pack: Kernel,
    /// op(A) as [count][MP][KP] and op(B)ᵀ as [count][NP][KP] (TF32 values, or the split's heads).
    packed: [XData<T>; 2],
    /// The split's rests, in the same layout.
    rests: Option<[XData<T>; 2]>,
    /// MP, NP, KP.
    padded: [usize; 3],
    count: usize,
    index: IndexType,
    /// How the product kernel is blocked.
    blocking: Blocking,
}

impl<T: Element> WgmmaPlan<T> {
    /// Builds the program for `count` products of `mnk` whose operands and C span `extent` elements, with C's
    /// column stride `scn`; returns the plan with the program and the product's kernel.
    pub(super) fn new(
        app: &ClApp,
        mnk: [usize; 3],
        count: usize,
        precision: GemmPrecision,
        extent: u64,
        scn: usize,
    ) -> Result<(WgmmaPlan<T>, Program, Kernel)> {
        GemmStrategy::wgmma::<T>(app.device(), precision)?;
        let [m, n, _] = mnk;
        let split = precision == GemmPrecision::Fp32Split;
        if let Some(named) = Blocking::from_env(split)? {
            return Self::with_blocking(app, mnk, count, split, extent, scn, named);
        }
        let units = app.device().compute_units as usize;
        let roomy = Blocking::chosen(m, n, count, units, split, Room::Sm);
        match Self::with_blocking(app, mnk, count, split, extent, scn, roomy) {
            Ok(plan) => Ok(plan),
            // A driver that does not build or launch a group beyond the local memory it reports.
            Err(_) if roomy.local_bytes(split) as u64 > app.device().local_mem_bytes => {
                let within = Blocking::chosen(m, n, count, units, split, Room::Reported);
                Self::with_blocking(app, mnk, count, split, extent, scn, within)
            }
            Err(e) => Err(e),
        }
    }

    /// [`WgmmaPlan::new`] with the given blocking; a blocking beyond the local memory the device reports is
    /// launched once on an empty product (one group, M = N = 0, which returns before its first copy), so that
    /// a driver that refuses it says so here.
    fn with_blocking(
        app: &ClApp,
        mnk: [usize; 3],
        count: usize,
        split: bool,
        extent: u64,
        scn: usize,
        blocking: Blocking,
    ) -> Result<(WgmmaPlan<T>, Program, Kernel)> {
        let [m, n, k] = mnk;
        let padded = [
            m.div_ceil(blocking.rows) * blocking.rows,
            n.div_ceil(blocking.columns) * blocking.columns,
            k.div_ceil(blocking.slice) * blocking.slice,
        ];
        let [mp, np, kp] = padded;
        let (a_len, b_len) = (count * mp * kp, count * np * kp);
        let index = IndexType::for_extent(extent.max(a_len.max(b_len) as u64));
        let c_unit = u8::from(scn == 1 || n <= 1);
        let options = format!(
            "{} -DIDX={} -DWGMMA=1 -DWG_SPLIT={} {} -DC_N_UNIT={c_unit}",
            T::build_options(),
            index.cl_type(),
            u8::from(split),
            blocking.options(),
        );
        let program = app.build_program_sm90a("linalg.cl", &kernels::with_common(kernels::LINALG), &options)?;
        let gemm = program.kernel("gemm_wgmma")?.owned_by("MatMul");
        let pack = program.kernel("wgmma_pack")?.owned_by("MatMul");
        let scratch = || -> Result<[XData<T>; 2]> {
            Ok([XData::uninit(app, "MatMul", &[a_len.max(1)])?, XData::uninit(app, "MatMul", &[b_len.max(1)])?])
        };
        let packed = scratch()?;
        let rests = if split { Some(scratch()?) } else { None };
        let plan = WgmmaPlan { pack, packed, rests, padded, count, index, blocking };
        let mut gemm = gemm;
        if blocking.local_bytes(split) as u64 > app.device().local_mem_bytes {
            plan.launch_empty(&mut gemm)?;
            app.finish()?;
        }
        Ok((plan, program, gemm))
    }

    /// One group of `gemm` on an empty product (M = N = 0, a one-element C): it returns before any copy.
    fn launch_empty(&self, gemm: &mut Kernel) -> Result<()> {
        let idx = self.index;
        let [packed_a, packed_b] = &self.packed;
        let threads = self.blocking.threads();
        gemm.launch()
            .input("a", packed_a)
            .input("b", packed_b)
            .input("a_rest", packed_a)
            .input("b_rest", packed_b)
            .index("KP", idx, 0)
            .index("a_plane", idx, 0)
            .index("b_plane", idx, 0)
            .output("c", packed_a)
            .index("c_off", idx, 0)
            .index("scm", idx, 0)
            .index("scn", idx, 0)
            .index("M", idx, 0)
            .index("N", idx, 0)
            .scalar("alpha", T::default())
            .scalar("beta", T::default())
            .scalar("use_beta", 0u32)
            .scalar("nd", 0u32)
            .scalar("shape", [0u64; 8])
            .scalar("batch_c", [0u64; 8])
            .global(&[threads, 1, 1])
            .local(&[threads, 1, 1])
            .work(0, 0)
            .enqueue()
    }

    /// Packs op(A) and op(B) and enqueues `gemm` (the plan's product kernel) on them.
    pub(super) fn enqueue(&mut self, gemm: &mut Kernel, args: &GemmArgs<T>) -> Result<()> {
        let [m, n, k] = args.mnk;
        let [mp, np, kp] = self.padded;
        let idx = self.index;
        let ((a, [sam, sak]), (b, [sbk, sbn]), (c, [scm, scn])) = (args.a, args.b, args.c);
        // op(A) [M, K] as it is; op(B) [K, N] as rows of N: its rows are n, its K stride sbk.
        let operands = [(a, sam, sak, m, mp, 0u32), (b, sbn, sbk, n, np, 1u32)];
        let rests = self.rests.as_ref().unwrap_or(&self.packed);
        for (((x, sr, sk, rows, padded_rows, which), packed), rest) in operands.into_iter().zip(&self.packed).zip(rests)
        {
            let bytes = ((rows * k) as u64 + (padded_rows * kp) as u64) * 4 * self.count as u64;
            self.pack
                .launch()
                .input("x", x)
                .index("x_off", idx, x.offset() as u64)
                .index("sr", idx, sr as u64)
                .index("sk", idx, sk as u64)
                .index("ROWS", idx, rows as u64)
                .index("K", idx, k as u64)
                .index("RP", idx, padded_rows as u64)
                .index("KP", idx, kp as u64)
                .scalar("which", which)
                .scalar("nd", args.batch.axes)
                .scalar("shape", args.batch.shape)
                .scalar("batch_a", args.batch.strides[0])
                .scalar("batch_b", args.batch.strides[1])
                .output("hi", packed)
                .output("lo", rest)
                .global(&[kp.div_ceil(32) * 32, padded_rows.div_ceil(32) * 8, self.count])
                .local(&[32, 8, 1])
                .work(bytes, 0)
                .enqueue()?;
        }
        let use_beta = args.beta != T::default();
        let threads = self.blocking.threads();
        let [packed_a, packed_b] = &self.packed;
        let [rest_a, rest_b] = rests;
        let launch = gemm
            .launch()
            .input("a", packed_a)
            .input("b", packed_b)
            .input("a_rest", rest_a)
            .input("b_rest", rest_b)
            .index("KP", idx, kp as u64)
            .index("a_plane", idx, (mp * kp) as u64)
            .index("b_plane", idx, (np * kp) as u64);
        let launch = if use_beta { launch.in_out("c", c) } else { launch.output("c", c) };
        launch
            .index("c_off", idx, c.offset() as u64)
            .index("scm", idx, scm as u64)
            .index("scn", idx, scn as u64)
            .index("M", idx, m as u64)
            .index("N", idx, n as u64)
            .scalar("alpha", args.alpha)
            .scalar("beta", args.beta)
            .scalar("use_beta", u32::from(use_beta))
            .scalar("nd", args.batch.axes)
            .scalar("shape", args.batch.shape)
            .scalar("batch_c", args.batch.strides[2])
            .global(&[n.div_ceil(self.blocking.columns) * threads, m.div_ceil(self.blocking.rows), self.count])
            .local(&[threads, 1, 1])
            .work(args.work[0], args.work[1])
            .enqueue()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_planner_takes_deeper_slices_where_the_sm_has_room_and_keeps_to_48_kib_otherwise() {
        let h200 = 132;
        let big = |room| Blocking::chosen(8192, 8192, 1, h200, false, room);
        assert_eq!(big(Room::Sm), Blocking { rows: 192, columns: 256, slice: 32, stages: 3, inflight: false });
        assert_eq!(big(Room::Reported), Blocking { rows: 192, columns: 256, slice: 8, stages: 3, inflight: false });
        // 2048² makes 128 blocks of 128 × 256 (about a wave) but only 88 of 192 × 256 (less than two).
        let wave = |room| Blocking::chosen(2048, 2048, 1, h200, false, room);
        assert_eq!((wave(Room::Sm).rows, wave(Room::Sm).columns, wave(Room::Sm).slice), (128, 256, 16));
        assert_eq!((wave(Room::Reported).rows, wave(Room::Reported).slice), (128, 8));
        // 1024² makes 64 blocks of 128 × 128 for 132 units: blocks of one warpgroup, 128 of them.
        for split in [false, true] {
            let small = Blocking::chosen(1024, 1024, 1, h200, split, Room::Sm);
            assert_eq!((small.rows, small.columns, small.threads()), (64, 128, 128), "{small:?}");
            assert_eq!(small.fits_split(), split, "{small:?}");
            assert!(small.local_bytes(split) <= 48 << 10);
        }
        // 1536² makes 144 blocks of 128 × 128: one each; too few of 128 × 256 (72) for that width.
        let middle = Blocking::chosen(1536, 1536, 1, h200, false, Room::Sm);
        assert_eq!((middle.rows, middle.columns), (128, 128));
        let split = |room| Blocking::chosen(8192, 8192, 1, h200, true, room);
        assert!(split(Room::Sm).fits_split() && split(Room::Reported).fits_split());
        assert_eq!((split(Room::Sm).local_bytes(true), split(Room::Reported).local_bytes(true)), (64 << 10, 48 << 10));
        for (m, split) in [(8192, false), (2048, false), (1024, false), (8192, true), (1024, true)] {
            let within = Blocking::chosen(m, m, 1, h200, split, Room::Reported);
            assert!(within.local_bytes(split) <= 48 << 10, "{within:?}");
            assert!(Blocking::chosen(m, m, 1, h200, split, Room::Sm).local_bytes(split) <= LOCAL_BYTES);
        }
    }

    #[test]
    fn blockings_parse_and_are_checked_against_the_local_memory() {
        let b = Blocking::parse("128x256x8x4/0").unwrap();
        assert_eq!(b, Blocking { rows: 128, columns: 256, slice: 8, stages: 4, inflight: false });
        assert_eq!((b.local_bytes(false), b.threads()), (48 * 1024, 256));
        assert!(Blocking::parse("192x256x8x12").is_ok(), "a tuning blocking may pass the 48 KiB the driver reports");
        assert!(b.options().contains("-DWG_GROUPS=2 -DWG_BN=256"), "{}", b.options());
        assert!(b.options().contains("-DWG_STAGES=4 -DWG_INFLIGHT=0 -DWG_AHEAD=3 "), "{}", b.options());
        assert!(Blocking::parse("128x128x8x3/0").unwrap().fits_split());
        assert!(Blocking::parse("64x128x8x4/0").unwrap().fits_split());
        for other in ["192x128x8x3/0", "128x256x8x3/0", "128x128x16x3/0", "128x128x8x3/1"] {
            assert!(!Blocking::parse(other).unwrap().fits_split(), "{other}");
        }
        let three = Blocking::parse("192x256x8x3/1").unwrap();
        assert_eq!(three.threads(), 384);
        assert!(three.options().contains("-DWG_INFLIGHT=1 -DWG_AHEAD=1 "), "{}", three.options());
        for (text, why) in [
            ("192x256x16x9", "local memory"),
            ("256x128x8x4", "ROWS"),
            ("128x192x8x4", "COLUMNS"),
            ("128x128x12x3", "SLICE"),
            ("128x128x8x2/1", "STAGES"),
            ("128x8x3", "ROWSxCOLUMNSxSLICExSTAGES"),
            ("128x128x8x3/2", "INFLIGHT"),
        ] {
            let err = Blocking::parse(text).unwrap_err().to_string();
            assert!(err.contains(why) && err.contains(text), "{text}: {err}");
        }
    }
}
