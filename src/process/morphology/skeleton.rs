//! [`Skeletonize`]: scikit-image 0.26's `skimage.morphology.skeletonize`. The input is loaded as 0/1 into a
//! zero-padded scratch (`kernels/morphology.cl`, skel_load); Zhang and Suen's 2-D thinning then runs on the device,
//! one kernel per sub-iteration (skel_zhang: each point decided from the image before the sub-iteration, so the
//! sub-iteration is parallel by design) with a deletion flag per iteration read back every [`FLAG_EVERY`]
//! iterations; Lee, Kashyap and Chu's thinning (3-D, and 2-D with `method = lee`) runs on the host in a host command
//! (`skeleton_lee.rs`), because its recheck of candidates is sequential by design; skel_store writes the result's
//! interior into the output.

use super::skeleton_lee::Volume;
use crate::app::Kernel;
use crate::app::ffi::{self, Region};
use crate::data::{HostCommand, XData};
use crate::element::RealElement;
use crate::error::{Error, Result};
use crate::kernel_args::IndexType;
use crate::kernels;
use crate::process::planning::{array_view, index_type_for};
use crate::process::{Prepared, Process};
use num_complex::Complex64;

/// Work-items per group.
const GROUP: usize = 256;
/// Zhang iterations run between two reads of the deletion flags. An iteration that deletes nothing leaves the image
/// as it is, so the iterations run past it change nothing: the result does not depend on this number, only the
/// waits for the device do (one read per `FLAG_EVERY` iterations; measured in docs/architecture.md).
const FLAG_EVERY: usize = 8;
/// The process's name in messages and profiles.
const OP: &str = "skeletonize";

/// The thinning algorithm of a [`Skeletonize`]: skimage's `method`.
///
/// ```
/// use cliper::SkeletonMethod;
/// assert_eq!("lee".parse::<SkeletonMethod>()?, SkeletonMethod::Lee);
/// assert!("medial".parse::<SkeletonMethod>().is_err());
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SkeletonMethod {
    /// Zhang and Suen (1984): 2-D only, the default there. On the device.
    Zhang,
    /// Lee, Kashyap and Chu (1994): 2-D or 3-D, the default in 3-D. On the host.
    Lee,
}

impl std::str::FromStr for SkeletonMethod {
    type Err = Error;
    fn from_str(text: &str) -> Result<SkeletonMethod> {
        match text {
            "zhang" => Ok(SkeletonMethod::Zhang),
            "lee" => Ok(SkeletonMethod::Lee),
            other => Err(Error::invalid(OP, format!("method is `zhang` or `lee`, not `{other}`"))),
        }
    }
}

impl std::fmt::Display for SkeletonMethod {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SkeletonMethod::Zhang => "zhang",
            SkeletonMethod::Lee => "lee",
        })
    }
}

/// The settings of a [`Skeletonize`]: the method (`None`: skimage's default, Zhang in 2-D and Lee in 3-D).
///
/// ```
/// use cliper::{SkeletonMethod, SkeletonParams};
/// let p = SkeletonParams::default().method(SkeletonMethod::Lee);
/// assert_eq!(p.method, Some(SkeletonMethod::Lee));
/// assert_eq!(SkeletonParams::default().resolve(&[13, 17, 11])?, SkeletonMethod::Lee);
/// assert!(SkeletonParams::default().method(SkeletonMethod::Zhang).resolve(&[13, 17, 11]).is_err());
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SkeletonParams {
    /// The algorithm; `None` chooses by the number of axes.
    pub method: Option<SkeletonMethod>,
}

impl SkeletonParams {
    /// Sets the method.
    pub fn method(mut self, method: SkeletonMethod) -> SkeletonParams {
        self.method = Some(method);
        self
    }

    /// The method for an input of shape `shape`, with skimage's refusals: 2 or 3 axes, and Zhang in 2-D only.
    pub fn resolve(&self, shape: &[usize]) -> Result<SkeletonMethod> {
        match (shape.len(), self.method) {
            (2, None) => Ok(SkeletonMethod::Zhang),
            (2, Some(method)) => Ok(method),
            (3, None | Some(SkeletonMethod::Lee)) => Ok(SkeletonMethod::Lee),
            (3, Some(SkeletonMethod::Zhang)) => Err(Error::invalid(
                OP,
                format!("method `zhang` only works for 2-D images; the input has shape {shape:?} (use `lee`)"),
            )),
            (n, _) => Err(Error::invalid(OP, format!("needs a 2-D or 3-D image; the input has {n} axes ({shape:?})"))),
        }
    }
}

/// What a [`Skeletonize`] runs: the method, and for Zhang's how often it reads the deletion flags.
///
/// ```
/// use cliper::{ClApp, Process, SkeletonMethod, SkeletonParams, Skeletonize, XData};
/// let app = ClApp::new()?;
/// let x = XData::<f32>::zeros(&app, &[5, 6])?;
/// let mut s = Skeletonize::new(&x, &XData::zeros(&app, &[5, 6])?, SkeletonParams::default());
/// s.init()?;
/// assert_eq!(s.strategy().unwrap().method, SkeletonMethod::Zhang);
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SkeletonStrategy {
    /// The algorithm.
    pub method: SkeletonMethod,
    /// Zhang: iterations between reads of the deletion flags (0 for Lee, which runs on the host).
    pub flag_every: usize,
}

impl std::fmt::Display for SkeletonStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.method {
            SkeletonMethod::Zhang => write!(
                f,
                "Zhang-Suen on the device: a kernel per sub-iteration, the flags read every {} iterations",
                self.flag_every
            ),
            SkeletonMethod::Lee => write!(f, "Lee-Kashyap-Chu on the host (sequential recheck), in a host command"),
        }
    }
}

/// The kernels and scratch `init` made.
struct Plan<T: RealElement> {
    method: SkeletonMethod,
    load: Kernel,
    store: Kernel,
    clear: Kernel,
    zhang: Kernel,
    /// The padded image and its ping-pong partner (Zhang) or the host's result (Lee).
    a: XData<T>,
    b: XData<T>,
    /// One deletion flag per iteration of a group (Zhang).
    flags: XData<T>,
    index: IndexType,
    /// The input's extents as `[z, y, x]` (z = 1 in 2-D) and its and the output's strides.
    extents: [usize; 3],
    x_strides: [usize; 3],
    y_strides: [usize; 3],
    /// 1 when z is padded too (Lee), else 0.
    pad_z: usize,
}

impl<T: RealElement> Plan<T> {
    fn new(input: &XData<T>, output: &XData<T>, params: &SkeletonParams) -> Result<Plan<T>> {
        let shape = input.shape();
        let method = params.resolve(shape)?;
        if output.shape() != shape {
            return Err(Error::shape(OP, shape, output.shape()));
        }
        let (extents, x_strides) = zyx(input)?;
        let (_, y_strides) = zyx(output)?;
        let pad_z = usize::from(method == SkeletonMethod::Lee);
        let padded = padded_extents(extents, pad_z);
        let padded_count: usize = padded.iter().product();
        let app = input.app();
        let a = XData::<T>::zeros(app, &padded)?;
        // b's border is never written: zeros now keep it zero for every launch.
        let b = XData::<T>::zeros(app, &padded)?;
        let flags = XData::<T>::zeros(app, &[FLAG_EVERY])?;
        let index = index_type_for(&[input.layout(), output.layout()], &[padded_count as u64 + 1]);
        let options = format!("{} -DIDX={}", T::build_options(), index.cl_type());
        let program = app.build_program("morphology.cl", &kernels::with_common(kernels::MORPHOLOGY), &options)?;
        let k = |name: &str| program.kernel(name).map(|k| k.owned_by(OP));
        Ok(Plan {
            method,
            load: k("skel_load")?,
            store: k("skel_store")?,
            clear: k("skel_clear")?,
            zhang: k("skel_zhang")?,
            a,
            b,
            flags,
            index,
            extents,
            x_strides,
            y_strides,
            pad_z,
        })
    }

    fn launch(&mut self, input: &XData<T>, output: &XData<T>) -> Result<()> {
        let count: usize = self.extents.iter().product();
        if count == 0 {
            return Ok(());
        }
        self.enqueue_load(input)?;
        let result = match self.method {
            SkeletonMethod::Zhang => {
                self.thin_zhang()?;
                self.a.clone()
            }
            SkeletonMethod::Lee => {
                self.thin_lee()?;
                self.b.clone()
            }
        };
        self.enqueue_store(&result, output)
    }

    /// The input as 0/1 into the padded scratch `a`.
    fn enqueue_load(&mut self, input: &XData<T>) -> Result<()> {
        let idx = self.index;
        let [nz, ny, nx] = self.extents;
        let [sz, sy, sx] = self.x_strides;
        let padded: usize = padded_extents(self.extents, self.pad_z).iter().product();
        self.load
            .launch()
            .input("x", input)
            .index("x0", idx, input.offset() as u64)
            .index("xsz", idx, sz as u64)
            .index("xsy", idx, sy as u64)
            .index("xsx", idx, sx as u64)
            .index("nz", idx, nz as u64)
            .index("ny", idx, ny as u64)
            .index("nx", idx, nx as u64)
            .scalar("pz", self.pad_z as i32)
            .output("a", &self.a)
            .global(&[padded.div_ceil(GROUP) * GROUP])
            .local(&[GROUP])
            .work((padded * std::mem::size_of::<T>()) as u64, 0)
            .enqueue()
    }

    /// The interior of the padded `result` into the output's view.
    fn enqueue_store(&mut self, result: &XData<T>, output: &XData<T>) -> Result<()> {
        let idx = self.index;
        let [nz, ny, nx] = self.extents;
        let [sz, sy, sx] = self.y_strides;
        let count = nz * ny * nx;
        self.store
            .launch()
            .input("a", result)
            .scalar("pz", self.pad_z as i32)
            .output("y", output)
            .index("y0", idx, output.offset() as u64)
            .index("ysz", idx, sz as u64)
            .index("ysy", idx, sy as u64)
            .index("ysx", idx, sx as u64)
            .index("nz", idx, nz as u64)
            .index("ny", idx, ny as u64)
            .index("nx", idx, nx as u64)
            .global(&[count.div_ceil(GROUP) * GROUP])
            .local(&[GROUP])
            .work((2 * count * std::mem::size_of::<T>()) as u64, 0)
            .enqueue()
    }

    /// Zhang and Suen's iterations until one deletes nothing, `a` → `b` → `a` per iteration. Every iteration that
    /// changes the image deletes a point, so there are at most as many as points, plus the last.
    fn thin_zhang(&mut self) -> Result<()> {
        let [_, ny, nx] = self.extents;
        let most_groups = (ny * nx).div_ceil(FLAG_EVERY) + 1;
        for _ in 0..most_groups {
            self.clear
                .launch()
                .output("flags", &self.flags)
                .index("n", self.index, FLAG_EVERY as u64)
                .global(&[GROUP])
                .local(&[GROUP])
                .enqueue()?;
            let (a, b) = (self.a.clone(), self.b.clone());
            for slot in 0..FLAG_EVERY {
                self.enqueue_zhang(&a, &b, true, slot)?;
                self.enqueue_zhang(&b, &a, false, slot)?;
            }
            if self.flags.to_vec()?.iter().any(|&flag| flag == T::default()) {
                return Ok(());
            }
        }
        Ok(())
    }

    /// One sub-iteration from `from` into `to`, its deletions flagged in `slot`.
    fn enqueue_zhang(&mut self, from: &XData<T>, to: &XData<T>, first: bool, slot: usize) -> Result<()> {
        let idx = self.index;
        let [_, ny, nx] = self.extents;
        self.zhang
            .launch()
            .input("a", from)
            .output("b", to)
            .index("ny", idx, ny as u64)
            .index("nx", idx, nx as u64)
            .scalar("first", i32::from(first))
            .in_out("flags", &self.flags)
            .index("slot", idx, slot as u64)
            .global(&[(ny * nx).div_ceil(GROUP) * GROUP])
            .local(&[GROUP])
            .work((ny * nx * 10 * std::mem::size_of::<T>()) as u64, 0)
            .enqueue()
    }

    /// Lee's thinning of `a` into `b` on the host (a host command: mapped memory, the queue's order kept).
    fn thin_lee(&self) -> Result<()> {
        let dims = padded_extents(self.extents, self.pad_z);
        let count: usize = dims.iter().product();
        let reads = [Region { buffer: self.a.storage().buffer(), lo: 0, hi: count }];
        let write = Region { buffer: self.b.storage().buffer(), lo: 0, hi: count };
        let bytes = (2 * count * std::mem::size_of::<T>()) as u64;
        HostCommand::new::<T, T>(OP, "lee_thinning", &[&self.a], &[&self.b])?.work(bytes, 0).run(|queue| {
            ffi::with_mapped::<T, T, ()>(queue, &reads, &write, |read, out| {
                let Some(padded) = read.first() else { return };
                let mut voxels: Vec<u8> = padded.iter().map(|&v| u8::from(v != T::default())).collect();
                if let Some(mut volume) = Volume::new(&mut voxels, dims) {
                    volume.thin();
                }
                let one = T::from_c64(Complex64::new(1.0, 0.0));
                for (o, &v) in out.iter_mut().zip(&voxels) {
                    *o = if v == 1 { one } else { T::default() };
                }
            })
            .map(|((), event)| event)
        })
    }
}

/// An array of 2 or 3 axes as `[z, y, x]` extents and strides (z of extent 1 in 2-D).
fn zyx<T: RealElement>(a: &XData<T>) -> Result<([usize; 3], [usize; 3])> {
    let ([_, nz, ny, nx], [_, sz, sy, sx]) = array_view(OP, a, a.shape().len().clamp(1, 3))?;
    Ok(([nz, ny, nx], [sz, sy, sx]))
}

/// The padded scratch's extents: y and x padded by one on each side, z too when `pad_z` is 1.
fn padded_extents([nz, ny, nx]: [usize; 3], pad_z: usize) -> [usize; 3] {
    [nz + 2 * pad_z, ny + 2, nx + 2]
}

/// scikit-image 0.26's `skimage.morphology.skeletonize(image, method=...)` on real data: every connected component of
/// the non-zero elements (NaN included, as `astype(bool)` makes it) thinned to a line one element wide; the output
/// is 0/1.
///
/// 2-D images take Zhang and Suen's thinning by default (with scikit-image's table of deletable neighbourhoods), on
/// the device: a kernel per sub-iteration, a flag per iteration read back every `FLAG_EVERY` (8) iterations, until an
/// iteration deletes nothing. 3-D images (and 2-D ones with [`SkeletonMethod::Lee`]) take Lee, Kashyap and Chu's
/// thinning, which runs **on the host** inside the process (a host command over the device's padded copy): its
/// candidates are rechecked one after another in raster order, each deletion changing the next check, as
/// scikit-image does; only the collection of candidates runs on every core. Both are exact: the result equals
/// scikit-image's element for element.
///
/// ```
/// use cliper::{ClApp, SkeletonParams, Skeletonize, XData};
/// let app = ClApp::new()?;
/// // A 3 × 5 bar: skimage's table thins it to four points, the last step aside.
/// let x = XData::from_slice(&app, &[5, 7], &[
///     0.0f32, 0., 0., 0., 0., 0., 0.,
///     0., 1., 1., 1., 1., 1., 0.,
///     0., 1., 1., 1., 1., 1., 0.,
///     0., 1., 1., 1., 1., 1., 0.,
///     0., 0., 0., 0., 0., 0., 0.,
/// ])?;
/// let y = Skeletonize::apply(&x, SkeletonParams::default())?.to_vec()?;
/// let ones: Vec<usize> = (0..y.len()).filter(|&i| y[i] == 1.0).collect();
/// assert_eq!(ones, vec![11, 15, 16, 17]); // (1, 4), (2, 1), (2, 2), (2, 3)
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct Skeletonize<T: RealElement> {
    input: XData<T>,
    output: XData<T>,
    params: SkeletonParams,
    plan: Prepared<Plan<T>>,
}

impl<T: RealElement> Skeletonize<T> {
    /// `output = skeletonize(input)`.
    pub fn new(input: &XData<T>, output: &XData<T>, params: SkeletonParams) -> Skeletonize<T> {
        Skeletonize { input: input.clone(), output: output.clone(), params, plan: Prepared::default() }
    }

    /// Allocates the output, runs once and returns it.
    pub fn apply(input: &XData<T>, params: SkeletonParams) -> Result<XData<T>> {
        let out = XData::uninit(input.app(), OP, &Self::output_shape(input.shape(), &params)?)?;
        Skeletonize::new(input, &out, params).run()?;
        Ok(out)
    }

    /// The method `init` chose; `None` before `init`.
    pub fn strategy(&self) -> Option<SkeletonStrategy> {
        let plan = self.plan.as_ref()?;
        let flag_every = if plan.method == SkeletonMethod::Zhang { FLAG_EVERY } else { 0 };
        Some(SkeletonStrategy { method: plan.method, flag_every })
    }

    /// The output shape: the input's (2 or 3 axes; Zhang in 2-D only).
    ///
    /// ```
    /// use cliper::{SkeletonParams, Skeletonize};
    /// assert_eq!(Skeletonize::<f32>::output_shape(&[37, 45], &SkeletonParams::default())?, vec![37, 45]);
    /// assert!(Skeletonize::<f32>::output_shape(&[45], &SkeletonParams::default()).is_err());
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn output_shape(input: &[usize], params: &SkeletonParams) -> Result<Vec<usize>> {
        params.resolve(input)?;
        Ok(input.to_vec())
    }
}

impl<T: RealElement> Process for Skeletonize<T> {
    fn name(&self) -> &str {
        OP
    }

    fn init(&mut self) -> Result<()> {
        self.plan.set(Plan::new(&self.input, &self.output, &self.params)?);
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        let (input, output) = (self.input.clone(), self.output.clone());
        self.plan.get(OP)?.launch(&input, &output)
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}
