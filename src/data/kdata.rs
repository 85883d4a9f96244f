//! [`KData`], k-space (MRI raw) data: complex samples with frame and coil axes, plus optional coil
//! sensitivity maps and a sampling mask.

use super::xdata::XData;
use crate::app::ClApp;
use crate::element::ComplexElement;
use crate::error::{Error, Result};

/// K-space data: a complex array of shape `[frames…, coils, spatial…]` (zero or more frame axes, one coil
/// axis, one to three spatial axes), with optional coil sensitivity maps (`[coils, spatial…]`) and sampling mask
/// (`[spatial…]`, or `[frames…, spatial…]` for a mask per frame; 1 where a sample was acquired, 0 elsewhere).
///
/// It wraps an [`XData`] without copying: [`KData::as_xdata`] and `XData::from` hand the array to any process.
///
/// ```
/// use cliper::{ClApp, KData, XData};
/// use num_complex::Complex32;
/// let app = ClApp::new()?;
/// // 5 frames, 8 coils, 64 × 48 samples
/// let k = KData::<Complex32>::zeros(&app, &[5], 8, &[64, 48])?;
/// assert_eq!((k.frame_shape(), k.num_coils(), k.spatial_shape()), (&[5][..], 8, &[64, 48][..]));
/// let mask = XData::<f32>::zeros(&app, &[64, 48])?;
/// let k = k.with_sampling_mask(mask)?;
/// assert!(k.sampling_mask().is_some());
/// let raw: XData<Complex32> = k.into(); // the samples, no copy
/// assert_eq!(raw.shape(), &[5, 8, 64, 48]);
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct KData<T: ComplexElement> {
    data: XData<T>,
    spatial_dims: usize,
    sensitivity_maps: Option<XData<T>>,
    sampling_mask: Option<XData<T::Real>>,
}

impl<T: ComplexElement> KData<T> {
    /// Wraps `data` whose last `spatial_dims` (1 to 3) axes are spatial, the axis before them the coils, and
    /// any axes before that frames.
    pub fn new(data: XData<T>, spatial_dims: usize) -> Result<KData<T>> {
        if !(1..=3).contains(&spatial_dims) {
            return Err(Error::invalid("KData::new", format!("spatial_dims must be 1, 2 or 3, got {spatial_dims}")));
        }
        if data.ndim() < spatial_dims + 1 {
            let rule = format!("[frames…, coils, {spatial_dims} spatial axes] (at least {} axes)", spatial_dims + 1);
            return Err(Error::shape_rule("KData::new", rule, data.shape()));
        }
        Ok(KData { data, spatial_dims, sensitivity_maps: None, sampling_mask: None })
    }

    /// Zero-filled k-space of `frames` (may be empty), `coils` and `spatial` extents.
    pub fn zeros(app: &ClApp, frames: &[usize], coils: usize, spatial: &[usize]) -> Result<KData<T>> {
        let shape: Vec<usize> = frames.iter().copied().chain([coils]).chain(spatial.iter().copied()).collect();
        KData::new(XData::zeros(app, &shape)?, spatial.len())
    }

    /// The frame extents, the coil count and the spatial extents. `KData::new` checked that the coil axis
    /// exists, so the fallback is never taken.
    fn axes(&self) -> (&[usize], usize, &[usize]) {
        match self.data.shape().split_at_checked(self.coil_axis()) {
            Some((frames, [coils, spatial @ ..])) => (frames, *coils, spatial),
            _ => (&[], 0, &[]),
        }
    }

    /// Number of coils.
    pub fn num_coils(&self) -> usize {
        self.axes().1
    }

    /// The coil axis of the data (it follows the frame axes).
    ///
    /// ```
    /// let app = cliper::ClApp::new()?;
    /// let k = cliper::KData::<num_complex::Complex32>::zeros(&app, &[5], 8, &[32, 32])?;
    /// assert_eq!(k.coil_axis(), 1);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn coil_axis(&self) -> usize {
        self.data.ndim() - self.spatial_dims - 1
    }

    /// Extents of the frame axes (empty for a single frame).
    pub fn frame_shape(&self) -> &[usize] {
        self.axes().0
    }

    /// Number of frames (the product of the frame extents; 1 without frame axes).
    pub fn num_frames(&self) -> usize {
        self.frame_shape().iter().product()
    }

    /// Extents of the spatial axes.
    pub fn spatial_shape(&self) -> &[usize] {
        self.axes().2
    }

    /// Attaches coil sensitivity maps of shape `[coils, spatial…]`.
    pub fn with_sensitivity_maps(mut self, maps: XData<T>) -> Result<KData<T>> {
        let expected: Vec<usize> = [self.num_coils()].into_iter().chain(self.spatial_shape().iter().copied()).collect();
        if maps.shape() != expected.as_slice() {
            return Err(Error::shape("KData sensitivity maps", &expected, maps.shape()));
        }
        self.sensitivity_maps = Some(maps);
        Ok(self)
    }

    /// Attaches a sampling mask of shape `[spatial…]` or `[frames…, spatial…]`.
    pub fn with_sampling_mask(mut self, mask: XData<T::Real>) -> Result<KData<T>> {
        let spatial = self.spatial_shape().to_vec();
        let per_frame: Vec<usize> = self.frame_shape().iter().chain(&spatial).copied().collect();
        if mask.shape() != spatial.as_slice() && mask.shape() != per_frame.as_slice() {
            return Err(Error::shape_rule(
                "KData sampling mask",
                format!("{spatial:?} or {per_frame:?}"),
                mask.shape(),
            ));
        }
        self.sampling_mask = Some(mask);
        Ok(self)
    }

    /// The coil sensitivity maps, if attached.
    pub fn sensitivity_maps(&self) -> Option<&XData<T>> {
        self.sensitivity_maps.as_ref()
    }

    /// The sampling mask, if attached.
    pub fn sampling_mask(&self) -> Option<&XData<T::Real>> {
        self.sampling_mask.as_ref()
    }

    /// The samples as an array (no copy).
    pub fn as_xdata(&self) -> &XData<T> {
        &self.data
    }

    /// The samples as an array, dropping maps and mask (no copy).
    pub fn into_xdata(self) -> XData<T> {
        self.data
    }
}

impl<T: ComplexElement> From<KData<T>> for XData<T> {
    fn from(k: KData<T>) -> XData<T> {
        k.into_xdata()
    }
}
