//! [`SheppLogan`]: the modified Shepp-Logan head phantom, generated on the device.

use crate::app::{ClApp, Kernel};
use crate::data::XData;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::kernel_args::IndexType;
use crate::kernels;
use crate::process::{Prepared, Process};

/// The ten ellipses (intensity, semi-axes a, b, c, centre x0, y0, cos and sin of the rotation), as in
/// `kernels/phantom.cl`; the kernel keeps them in `float`, so the reference rounds them the same way.
const ELLIPSES: [[f32; 8]; 10] = [
    [1.0, 0.69, 0.92, 0.81, 0.0, 0.0, 1.0, 0.0],
    [-0.8, 0.6624, 0.874, 0.78, 0.0, -0.0184, 1.0, 0.0],
    [-0.2, 0.11, 0.31, 0.22, 0.22, 0.0, 0.951_056_54, -0.309_017],
    [-0.2, 0.16, 0.41, 0.28, -0.22, 0.0, 0.951_056_54, 0.309_017],
    [0.1, 0.21, 0.25, 0.41, 0.0, 0.35, 1.0, 0.0],
    [0.1, 0.046, 0.046, 0.05, 0.0, 0.1, 1.0, 0.0],
    [0.1, 0.046, 0.046, 0.05, 0.0, -0.1, 1.0, 0.0],
    [0.1, 0.046, 0.023, 0.05, -0.08, -0.605, 1.0, 0.0],
    [0.1, 0.023, 0.023, 0.02, 0.0, -0.606, 1.0, 0.0],
    [0.1, 0.023, 0.046, 0.02, 0.06, -0.605, 1.0, 0.0],
];

/// Fills `output` with the modified Shepp-Logan phantom (Toft's intensities: 1 for the skull, 0.2 for the
/// brain, 0.1–0.4 for the features). A 2-D output `[height, width]` is the classic image; a 3-D output
/// `[depth, height, width]` is a volume of ellipsoids whose middle slice is that image. The field of view is
/// `[-1, 1]` on every axis, with row 0 at the top. Any element type (complex outputs get a zero imaginary
/// part) and any strides.
///
/// ```
/// use cliper::{ClApp, Process, SheppLogan, XData};
/// let app = ClApp::new()?;
/// let image = SheppLogan::<f32>::apply(&app, &[64, 64])?;
/// let pixels = image.to_vec()?;
/// assert!((pixels[32 * 64 + 32] - 0.2).abs() < 1e-6); // brain tissue at the centre (1 - 0.8)
/// assert_eq!(pixels[0], 0.0);            // air in the corner
/// let volume = XData::<f64>::zeros(&app, &[8, 32, 32])?;
/// SheppLogan::new(&volume).run()?;         // into an existing array (any strides)
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct SheppLogan<T: Element> {
    output: XData<T>,
    plan: Prepared<Plan>,
}

/// How [`SheppLogan`] fills its output: one work-item per voxel of `global` (x fastest, then rows and slices
/// folded together), in groups of `local`.
///
/// ```
/// use cliper::{Process, SheppLogan, XData};
/// let app = cliper::ClApp::new()?;
/// let mut p = SheppLogan::new(&XData::<f32>::zeros(&app, &[100, 100])?);
/// p.init()?;
/// assert_eq!(p.strategy().unwrap().local, [16, 16]);
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PhantomStrategy {
    /// Global size (zero for an empty output).
    pub global: [usize; 2],
    /// Work-group size.
    pub local: [usize; 2],
    /// The index type.
    pub index: IndexType,
}

impl std::fmt::Display for PhantomStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let [g0, g1] = self.global;
        let [l0, l1] = self.local;
        write!(f, "shepp_logan {g0}×{g1} work-items in {l0}×{l1} groups, {} indices", self.index.cl_type())
    }
}

/// What `init` works out once: the kernel, its index type, the kernel's integer arguments (offset, strides,
/// extents) and the global size.
struct Plan {
    kernel: Kernel,
    index: IndexType,
    args: [u64; 7],
    global: [usize; 2],
}

/// Work-group shape of `shepp_logan` (one fixed shape: PoCL compiles a work-group function per shape).
const LOCAL: [usize; 2] = [16, 16];

impl<T: Element> SheppLogan<T> {
    /// A phantom generator writing into `output` (2 or 3 axes).
    pub fn new(output: &XData<T>) -> SheppLogan<T> {
        SheppLogan { output: output.clone(), plan: Prepared::default() }
    }

    /// Allocates an array of `shape` (2 or 3 axes) on `app`'s device, fills it with the phantom and returns it.
    pub fn apply(app: &ClApp, shape: &[usize]) -> Result<XData<T>> {
        let output = XData::uninit(app, "SheppLogan", &Self::output_shape(shape)?)?;
        SheppLogan::new(&output).run()?;
        Ok(output)
    }

    /// The output shape: `shape` itself, which must have 2 or 3 axes.
    ///
    /// ```
    /// assert_eq!(cliper::SheppLogan::<f32>::output_shape(&[8, 64, 64])?, vec![8, 64, 64]);
    /// assert!(cliper::SheppLogan::<f32>::output_shape(&[64]).is_err());
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn output_shape(shape: &[usize]) -> Result<Vec<usize>> {
        grid("SheppLogan", shape)?;
        Ok(shape.to_vec())
    }

    /// The launch `init` planned; `None` before `init`.
    pub fn strategy(&self) -> Option<PhantomStrategy> {
        self.plan.as_ref().map(|p| PhantomStrategy { global: p.global, local: LOCAL, index: p.index })
    }

    /// The phantom computed on the host in `f64` from the same (float-rounded) ellipse table, row-major:
    /// the reference the device output is checked against.
    pub fn reference(shape: &[usize]) -> Result<Vec<f64>> {
        let (depth, height, width) = grid("SheppLogan::reference", shape)?;
        let mut out = Vec::with_capacity(depth * height * width);
        for k in 0..depth {
            let z = if depth > 1 { ((2 * k + 1) as f64 - depth as f64) / depth as f64 } else { 0.0 };
            for i in 0..height {
                let y = (height as f64 - (2 * i + 1) as f64) / height as f64;
                for j in 0..width {
                    let x = ((2 * j + 1) as f64 - width as f64) / width as f64;
                    let mut value = 0.0;
                    for e in &ELLIPSES {
                        let e = e.map(f64::from);
                        let (c, s) = (e[6], e[7]);
                        let (dx, dy) = (x - e[4], y - e[5]);
                        let (u, v, w) = ((dx * c + dy * s) / e[1], (dy * c - dx * s) / e[2], z / e[3]);
                        if u * u + v * v + w * w <= 1.0 {
                            value += e[0];
                        }
                    }
                    out.push(value);
                }
            }
        }
        Ok(out)
    }
}

/// (depth, height, width) of a 2-D or 3-D shape.
fn grid(op: &str, shape: &[usize]) -> Result<(usize, usize, usize)> {
    match *shape {
        [h, w] => Ok((1, h, w)),
        [d, h, w] => Ok((d, h, w)),
        _ => Err(Error::invalid(op, format!("needs a 2-D or 3-D shape, got {shape:?}"))),
    }
}

impl<T: Element> Process for SheppLogan<T> {
    fn name(&self) -> &str {
        "SheppLogan"
    }

    fn init(&mut self) -> Result<()> {
        let (depth, height, width) = grid("SheppLogan", self.output.shape())?;
        let extent = self.output.layout().span().map_or(0, |(_, hi)| hi as u64 + 1);
        let index = IndexType::for_extent(extent.max(self.output.len() as u64));
        let options = format!("{} -DIDX={}", T::build_options(), index.cl_type());
        let program =
            self.output.app().build_program("phantom.cl", &kernels::with_common(kernels::PHANTOM), &options)?;
        // grid() accepted 2 or 3 axes; a 2-D image has no depth stride.
        let strides = self.output.strides();
        let stride = |from_end: usize| strides.len().checked_sub(from_end).and_then(|k| strides.get(k)).copied();
        let (s_k, s_i, s_j) = (stride(3).unwrap_or(0), stride(2).unwrap_or(0), stride(1).unwrap_or(0));
        let rows = depth * height;
        let global = if self.output.is_empty() {
            [0, 0]
        } else {
            [width.div_ceil(LOCAL[0]) * LOCAL[0], rows.div_ceil(LOCAL[1]).min(65535) * LOCAL[1]]
        };
        let args = [self.output.offset(), s_k, s_i, s_j, depth, height, width].map(|v| v as u64);
        self.plan.set(Plan { kernel: program.kernel("shepp_logan")?.owned_by("SheppLogan"), index, args, global });
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        let plan = self.plan.get("SheppLogan")?;
        let bytes = (self.output.len() * std::mem::size_of::<T>()) as u64;
        let mut launch = plan.kernel.launch().output("out", &self.output);
        for (name, v) in ["off", "s_k", "s_i", "s_j", "depth", "height", "width"].into_iter().zip(plan.args) {
            launch = launch.index(name, plan.index, v);
        }
        launch.global(&plan.global).local(&LOCAL).work(bytes, 0).enqueue()
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}
