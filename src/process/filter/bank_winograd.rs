//! Winograd F(2×2, 3×3) and F(4×4, 3×3) for [`super::FilterBank`]: filter_bank.cl's `bank_wino_*` transforms
//! around 16 or 36 batched [`MatMul`]s (the algorithm and its error bounds are in filter_bank.cl and on
//! `FilterBank`).

use crate::app::{ClApp, Kernel};
use crate::data::XData;
use crate::element::Element;
use crate::error::Result;
use crate::kernel_args::IndexType;
use crate::process::Process;
use crate::process::linalg::{GemmStrategy, MatMul, MatMulParams};

/// Winograd F(m×m, 3×3)'s launch state (filter_bank.cl's `bank_wino_*` kernels around batched [`MatMul`]s).
pub(super) struct Winograd<T: Element> {
    filter: Kernel,
    input: Kernel,
    output: Kernel,
    /// Transformed filters `[(m + 2)², K, C]`.
    u: XData<T>,
    /// Transformed patches `[(m + 2)², C, images·TP·TQ]` and products `[(m + 2)², K, images·TP·TQ]` of one chunk.
    v: XData<T>,
    m: XData<T>,
    /// Outputs per tile side, m: 2 or 4.
    side: usize,
    /// Tiles of m × m outputs per image: ⌈P/m⌉ × ⌈Q/m⌉.
    tiles: [usize; 2],
    /// Filters and channels.
    kc: [usize; 2],
    /// The row length of `v` and `m`: tiles of a whole chunk.
    ld: usize,
    /// (first image, images, product) per chunk.
    chunks: Vec<(usize, usize, MatMul<T>)>,
}

impl<T: Element> Winograd<T> {
    /// Builds the transforms and the chunks' batched products for `[n, c, k]` images, channels and filters, in tiles
    /// of `side` × `side` outputs (the program behind `kernel` built with `-DWINO_M=side`).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        app: &ClApp,
        op: &str,
        [n, c, k]: [usize; 3],
        side: usize,
        tiles: [usize; 2],
        images: usize,
        params: MatMulParams<T>,
        kernel: impl Fn(&str) -> Result<Kernel>,
    ) -> Result<Winograd<T>> {
        let per_image = tiles[0] * tiles[1];
        let points = (side + 2) * (side + 2);
        let u = XData::uninit(app, op, &[points, k, c])?;
        let v = XData::uninit(app, op, &[points, c, images * per_image])?;
        let m = XData::uninit(app, op, &[points, k, images * per_image])?;
        let mut chunks = Vec::new();
        for n0 in (0..n).step_by(images.max(1)) {
            let count = images.min(n - n0);
            let columns = 0..count * per_image;
            let mut product = MatMul::new(&u, &v.slice_axis(2, columns.clone())?, &m.slice_axis(2, columns)?, params);
            product.init()?;
            chunks.push((n0, count, product));
        }
        Ok(Winograd {
            filter: kernel("bank_wino_filter")?,
            input: kernel("bank_wino_input")?,
            output: kernel("bank_wino_output")?,
            u,
            v,
            m,
            side,
            tiles,
            kc: [k, c],
            ld: images * per_image,
            chunks,
        })
    }

    /// The batched product's kernel (every chunk's is planned alike).
    pub(super) fn gemm(&self) -> GemmStrategy {
        self.chunks.first().and_then(|(_, _, product)| product.strategy()).unwrap_or(GemmStrategy::Direct)
    }

    /// Transforms the filters, then per chunk the patches, the (m + 2)² products and the outputs.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn launch(
        &mut self,
        x: &XData<T>,
        idx: IndexType,
        xs: [u64; 8],
        f: &XData<T>,
        y: &XData<T>,
        ys: [u64; 8],
        geo: [i32; 16],
        value: T,
    ) -> Result<()> {
        const WG: usize = 256;
        let groups = |items: usize| items.div_ceil(WG).clamp(1, 1 << 16) * WG;
        let element = std::mem::size_of::<T>() as u64;
        let [tiles_p, tiles_q] = self.tiles;
        let [k, c] = self.kc;
        let (side, points) = (self.side as u64, ((self.side + 2) * (self.side + 2)) as u64);
        // G·g·Gᵀ: 9 reads and (m + 2)² writes per filter.
        self.filter
            .launch()
            .input("f", f)
            .index("f_off", idx, f.offset() as u64)
            .scalar("xs", xs)
            .output("u", &self.u)
            .scalar("geo", geo)
            .global(&[groups((self.side + 2) * k * c)])
            .local(&[WG])
            .work((k * c) as u64 * (9 + points) * element, 0)
            .enqueue()?;
        let ld = self.ld as u64;
        for (n0, count, product) in &mut self.chunks {
            let tiles = (*count * tiles_p * tiles_q) as u64;
            self.input
                .launch()
                .input("x", x)
                .index("x_off", idx, x.offset() as u64)
                .scalar("xs", xs)
                .output("v", &self.v)
                .index("ldv", idx, ld)
                .scalar("geo", geo)
                .scalar("value", value)
                .index("n0", idx, *n0 as u64)
                .scalar("tiles_p", tiles_p as i32)
                .scalar("tiles_q", tiles_q as i32)
                .index("tiles", idx, tiles)
                .global(&[groups(c * tiles as usize)])
                .local(&[WG])
                .work(c as u64 * tiles * (side * side + points) * element, 0)
                .enqueue()?;
            product.launch()?;
            self.output
                .launch()
                .input("m", &self.m)
                .index("ldm", idx, ld)
                .output("y", y)
                .index("y_off", idx, y.offset() as u64)
                .scalar("ys", ys)
                .scalar("geo", geo)
                .index("n0", idx, *n0 as u64)
                .scalar("tiles_p", tiles_p as i32)
                .scalar("tiles_q", tiles_q as i32)
                .index("tiles", idx, tiles)
                .global(&[groups(k * tiles as usize)])
                .local(&[WG])
                .work(k as u64 * tiles * (points + side * side) * element, 0)
                .enqueue()?;
        }
        Ok(())
    }
}
