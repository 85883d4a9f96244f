//! Reading, writing and copying `XData` views whatever their strides: `to_vec`, `to_ndarray`, `write`,
//! `copy_from` and `contiguous`. They live with the copy planner because views that are not contiguous are
//! gathered and scattered by its kernels; `data/xdata.rs` has the plain contiguous transfers they end in.

use super::strided_copy::{CopyParams, StridedCopy};
use crate::data::XData;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::process::Process;
use ndarray::{ArrayD, IxDyn};

impl<T: Element> XData<T> {
    /// The elements in row-major order of this view. Waits for pending writes; one device→host copy (a
    /// non-contiguous view is first gathered on the device).
    ///
    /// ```
    /// # let app = cliper::ClApp::new()?;
    /// let x = cliper::XData::from_slice(&app, &[2, 2], &[1.0f32, 2.0, 3.0, 4.0])?;
    /// assert_eq!(x.t().to_vec()?, vec![1.0, 3.0, 2.0, 4.0]); // gathered on the device, one copy to the host
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn to_vec(&self) -> Result<Vec<T>> {
        self.storage().check()?;
        let mut out = vec![T::default(); self.len()];
        self.read_into(&mut out)?;
        Ok(out)
    }

    /// Reads this view's elements (row-major order of the view) into `out`, which must hold exactly that many:
    /// the copy to the host without a new allocation, for loops that read arrays of one size again and again.
    ///
    /// ```
    /// # let app = cliper::ClApp::new()?;
    /// let x = cliper::XData::from_slice(&app, &[2, 2], &[1.0f32, 2.0, 3.0, 4.0])?;
    /// let mut out = vec![0.0f32; 4];
    /// x.t().read_into(&mut out)?;
    /// assert_eq!(out, vec![1.0, 3.0, 2.0, 4.0]);
    /// assert!(x.read_into(&mut [0.0f32; 3]).is_err());
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn read_into(&self, out: &mut [T]) -> Result<()> {
        if out.len() != self.len() {
            return Err(Error::Length { op: "XData::read_into".into(), shape: self.shape().to_vec(), got: out.len() });
        }
        if out.is_empty() {
            return Ok(());
        }
        if !self.is_contiguous() {
            return self.contiguous()?.read_contiguous_into(out);
        }
        self.read_contiguous_into(out)
    }

    /// The elements as an ndarray array of this view's shape.
    ///
    /// ```
    /// # let app = cliper::ClApp::new()?;
    /// let x = cliper::XData::from_slice(&app, &[2, 2], &[1.0f64, 2.0, 3.0, 4.0])?;
    /// assert_eq!(x.to_ndarray()?, ndarray::array![[1.0, 2.0], [3.0, 4.0]].into_dyn());
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn to_ndarray(&self) -> Result<ArrayD<T>> {
        let data = self.to_vec()?;
        ArrayD::from_shape_vec(IxDyn(self.shape()), data)
            .map_err(|e| Error::invalid("XData::to_ndarray", e.to_string()))
    }

    /// Overwrites this view's elements with `data` (row-major order of the view). A strided view is filled
    /// through a device-side scatter from one uploaded block.
    ///
    /// ```
    /// # let app = cliper::ClApp::new()?;
    /// let x = cliper::XData::<f32>::zeros(&app, &[2, 2])?;
    /// x.t().write(&[1.0, 2.0, 3.0, 4.0])?; // writes through the transposed view
    /// assert_eq!(x.to_vec()?, vec![1.0, 3.0, 2.0, 4.0]);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn write(&self, data: &[T]) -> Result<()> {
        if data.len() != self.len() {
            return Err(Error::Length { op: "XData::write".into(), shape: self.shape().to_vec(), got: data.len() });
        }
        if data.is_empty() {
            return Ok(());
        }
        if self.is_contiguous() {
            return self.write_contiguous(data);
        }
        let staging = XData::from_slice(self.app(), self.shape(), data)?;
        self.copy_from(&staging)
    }

    /// Copies `src` (same shape, any strides) into this view, on the device.
    ///
    /// ```
    /// # let app = cliper::ClApp::new()?;
    /// let big = cliper::XData::<f32>::zeros(&app, &[4, 4])?;
    /// let patch = cliper::XData::from_slice(&app, &[2, 2], &[1.0f32, 2.0, 3.0, 4.0])?;
    /// big.slice_axis(0, 1..3)?.slice_axis(1, 2..4)?.copy_from(&patch)?;
    /// assert_eq!(big.index_axis(0, 2)?.to_vec()?, vec![0.0, 0.0, 3.0, 4.0]);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn copy_from(&self, src: &XData<T>) -> Result<()> {
        StridedCopy::new(src, self, CopyParams::default()).run()
    }

    /// A packed array ([`XData::is_packed`]: row-major from its buffer's start) with this view's elements,
    /// gathered on the device without a host round trip. An array that is already packed is returned as is (a
    /// shallow clone); a contiguous view into a larger buffer (a frame of a batch) is copied, so that kernels that
    /// read from the buffer's start see its elements.
    ///
    /// ```
    /// # let app = cliper::ClApp::new()?;
    /// let x = cliper::XData::from_slice(&app, &[2, 3], &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
    /// let xt = x.t().contiguous()?; // a new [3, 2] array, gathered on the device
    /// assert!(xt.is_contiguous() && !xt.overlaps(&x));
    /// let row = x.index_axis(0, 1)?; // contiguous, at offset 3: copied
    /// assert!(row.is_contiguous() && !row.is_packed() && row.contiguous()?.is_packed());
    /// assert_eq!(xt.reshape(&[6])?.to_vec()?, vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn contiguous(&self) -> Result<XData<T>> {
        if self.is_packed() {
            return Ok(self.clone());
        }
        let out = XData::uninit(self.app(), "XData::contiguous", self.shape())?;
        StridedCopy::new(self, &out, CopyParams::default()).run()?;
        Ok(out)
    }
}
