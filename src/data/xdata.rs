//! [`XData`], the N-d array on the device.

use super::command::TrackedCommand;
use super::layout::{Layout, element_count};
use super::storage::Storage;
use crate::app::ClApp;
use crate::element::Element;
use crate::error::{Error, Result};
use ndarray::{ArrayBase, Data, Dimension};
use std::fmt;
use std::marker::PhantomData;
use std::ops::{Bound, RangeBounds};
use std::sync::Arc;

/// A handle to an N-d array of `T` on the device: a shared buffer plus shape, strides and offset (in
/// elements). Cloning is shallow, as OpenCLIPER's `shared_ptr<XData>`: clones and views see the same memory.
///
/// Views (`t`, `permuted_axes`, `slice_axis`, `index_axis`, `reshape`) cost nothing and copy nothing; processes
/// read them through their strides. Reading (`to_vec`, `to_ndarray`) waits for the commands that write the
/// array and copies once to the host.
///
/// ```
/// use cliper::{ClApp, XData};
/// let app = ClApp::new()?;
/// let a = XData::from_slice(&app, &[2, 3], &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
/// let at = a.t(); // a view: shape [3, 2], strides [1, 3], no copy
/// assert_eq!((at.shape(), at.strides()), (&[3, 2][..], &[1, 3][..]));
/// assert_eq!(at.to_vec()?, vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
/// let row = a.index_axis(0, 1)?; // [4, 5, 6]
/// assert_eq!(row.to_vec()?, vec![4.0, 5.0, 6.0]);
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct XData<T: Element> {
    app: ClApp,
    storage: Arc<Storage>,
    layout: Layout,
    _element: PhantomData<T>,
}

impl<T: Element> Clone for XData<T> {
    fn clone(&self) -> Self {
        XData {
            app: self.app.clone(),
            storage: self.storage.clone(),
            layout: self.layout.clone(),
            _element: PhantomData,
        }
    }
}

impl<T: Element> fmt::Debug for XData<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("XData")
            .field("element", &T::NAME)
            .field("shape", &self.layout.shape)
            .field("strides", &self.layout.strides)
            .field("offset", &self.layout.offset)
            .field("device", &self.app.device().name)
            .finish()
    }
}

impl<T: Element> XData<T> {
    /// A new array whose contents are whatever the device memory held: for outputs a process overwrites in
    /// full, where zeroing first would cost a pass over memory.
    pub(crate) fn uninit(app: &ClApp, op: &str, shape: &[usize]) -> Result<XData<T>> {
        app.require::<T>()?;
        let bytes = element_count(op, shape)?
            .checked_mul(std::mem::size_of::<T>())
            .ok_or_else(|| Error::invalid(op, format!("shape {shape:?} has more bytes than fit in memory")))?;
        let buffer = app.allocate(bytes, &format!("a {shape:?} {} array", T::NAME))?;
        Ok(XData {
            app: app.clone(),
            storage: Arc::new(Storage::new(buffer)),
            layout: Layout::row_major(shape),
            _element: PhantomData,
        })
    }

    /// A new array of zeros (filled on the device, no host transfer).
    ///
    /// ```
    /// # let app = cliper::ClApp::new()?;
    /// let z = cliper::XData::<f64>::zeros(&app, &[3, 0])?; // empty arrays are fine
    /// assert_eq!((z.len(), z.to_vec()?), (0, vec![]));
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn zeros(app: &ClApp, shape: &[usize]) -> Result<XData<T>> {
        let x = XData::uninit(app, "XData::zeros", shape)?;
        let bytes = x.storage.bytes();
        if bytes > 0 {
            let writes = [x.storage.clone()];
            let command = TrackedCommand {
                app,
                owner: "XData::zeros",
                command: "fill",
                global: vec![bytes],
                local: None,
                reads: &[],
                writes: &writes,
                bytes: Some(bytes as u64),
                flops: None,
            };
            command.submit(|| crate::app::fill_zero(app, x.storage.buffer(), bytes))?;
        }
        Ok(x)
    }

    /// A new array of `shape` holding `data` in row-major order (one host→device copy).
    ///
    /// ```
    /// # let app = cliper::ClApp::new()?;
    /// let err = cliper::XData::from_slice(&app, &[2, 2], &[1.0f32; 3]).unwrap_err();
    /// assert!(err.to_string().contains("[2, 2]"));
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn from_slice(app: &ClApp, shape: &[usize], data: &[T]) -> Result<XData<T>> {
        let n = element_count("XData::from_slice", shape)?;
        if n != data.len() {
            return Err(Error::Length { op: "XData::from_slice".into(), shape: shape.to_vec(), got: data.len() });
        }
        let x = XData::uninit(app, "XData::from_slice", shape)?;
        if !data.is_empty() {
            app.upload(x.storage.buffer(), 0, data)?;
        }
        Ok(x)
    }

    /// A new array with the shape and elements of an ndarray array (any layout; one host→device copy).
    ///
    /// ```
    /// # let app = cliper::ClApp::new()?;
    /// let a = ndarray::array![[1.0f32, 2.0], [3.0, 4.0]];
    /// let x = cliper::XData::from_ndarray(&app, &a.t())?; // a transposed ndarray view is fine
    /// assert_eq!(x.to_ndarray()?, a.t().into_dyn());
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn from_ndarray<S, D>(app: &ClApp, array: &ArrayBase<S, D>) -> Result<XData<T>>
    where
        S: Data<Elem = T>,
        D: Dimension,
    {
        match array.as_slice() {
            Some(slice) => XData::from_slice(app, array.shape(), slice),
            None => XData::from_slice(app, array.shape(), &array.iter().copied().collect::<Vec<T>>()),
        }
    }

    /// Reads this view, which must be contiguous, into `out` (of its length) in one device→host copy after the
    /// commands that write it (`to_vec` and `read_into`, in `process/layout/views.rs`, gather other views first).
    pub(crate) fn read_contiguous_into(&self, out: &mut [T]) -> Result<()> {
        self.storage.check()?;
        let at = self.layout.offset * std::mem::size_of::<T>();
        self.storage.read_after_last_write(&self.app, || self.app.download(self.storage.buffer(), at, out))
    }

    /// Overwrites this view, which must be contiguous, with `data` in one host→device copy (`write`, in
    /// `process/layout/views.rs`, scatters into other views).
    pub(crate) fn write_contiguous(&self, data: &[T]) -> Result<()> {
        let event = self.app.upload(self.storage.buffer(), self.layout.offset * std::mem::size_of::<T>(), data)?;
        self.storage.record_write(Some(Arc::new(event)), "XData::write");
        Ok(())
    }

    /// The `ClApp` (device) this array lives on.
    pub fn app(&self) -> &ClApp {
        &self.app
    }

    /// Extent of each axis.
    ///
    /// ```
    /// # let app = cliper::ClApp::new()?;
    /// let x = cliper::XData::<f32>::zeros(&app, &[4, 5, 6])?;
    /// let v = x.slice_axis(2, 1..4)?;
    /// assert_eq!((v.shape(), v.strides(), v.offset()), (&[4, 5, 3][..], &[30, 6, 1][..], 1));
    /// assert_eq!((v.ndim(), v.len(), v.is_empty(), v.is_contiguous()), (3, 60, false, false));
    /// assert!(v.app().same_as(x.app()));
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn shape(&self) -> &[usize] {
        &self.layout.shape
    }

    /// Step in elements between neighbours along each axis.
    pub fn strides(&self) -> &[usize] {
        &self.layout.strides
    }

    /// Position of element `[0, 0, …]` in the buffer, in elements.
    pub fn offset(&self) -> usize {
        self.layout.offset
    }

    /// Number of axes.
    pub fn ndim(&self) -> usize {
        self.layout.shape.len()
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.layout.len()
    }

    /// Whether the array has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the view is row-major without gaps (what a single block copy can read).
    pub fn is_contiguous(&self) -> bool {
        self.layout.is_contiguous()
    }

    /// Whether the view is contiguous and starts at its buffer's start: what a kernel that takes no offset reads
    /// correctly. A frame of a batch (`index_axis(0, f)` with f > 0) is contiguous but not packed.
    ///
    /// ```
    /// # let app = cliper::ClApp::new()?;
    /// let x = cliper::XData::<f32>::zeros(&app, &[2, 3])?;
    /// assert!(x.is_packed() && x.index_axis(0, 0)?.is_packed());
    /// assert!(x.index_axis(0, 1)?.is_contiguous() && !x.index_axis(0, 1)?.is_packed());
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn is_packed(&self) -> bool {
        self.is_contiguous() && (self.offset() == 0 || self.is_empty())
    }

    fn view(&self, layout: Layout) -> XData<T> {
        XData { app: self.app.clone(), storage: self.storage.clone(), layout, _element: PhantomData }
    }

    /// A view with the last two axes swapped (the matrix transpose of each matrix in a batch). Arrays of
    /// fewer than two axes are returned unchanged, as numpy's `.T` does for vectors.
    ///
    /// ```
    /// # let app = cliper::ClApp::new()?;
    /// let x = cliper::XData::<f32>::zeros(&app, &[8, 3, 5])?;
    /// assert_eq!(x.t().shape(), &[8, 5, 3]);
    /// assert_eq!(x.index_axis(0, 0)?.index_axis(0, 0)?.t().shape(), &[5]); // vectors are their own transpose
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn t(&self) -> XData<T> {
        self.view(self.layout.swap_last_two())
    }

    /// A view whose axis `k` is axis `axes[k]` of this array.
    ///
    /// ```
    /// # let app = cliper::ClApp::new()?;
    /// let x = cliper::XData::<f32>::zeros(&app, &[2, 3, 4])?;
    /// assert_eq!(x.permuted_axes(&[2, 0, 1])?.shape(), &[4, 2, 3]);
    /// assert!(x.permuted_axes(&[0, 0, 1]).is_err());
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn permuted_axes(&self, axes: &[usize]) -> Result<XData<T>> {
        Ok(self.view(self.layout.permuted("XData::permuted_axes", axes)?))
    }

    /// A view of a range of `axis` (`1..3`, `..5`, `2..`, `..`).
    ///
    /// ```
    /// # let app = cliper::ClApp::new()?;
    /// let x = cliper::XData::from_slice(&app, &[6], &[0.0f32, 1.0, 2.0, 3.0, 4.0, 5.0])?;
    /// assert_eq!(x.slice_axis(0, 2..4)?.to_vec()?, vec![2.0, 3.0]);
    /// assert_eq!(x.slice_axis(0, 4..)?.to_vec()?, vec![4.0, 5.0]);
    /// assert!(x.slice_axis(0, 5..9).is_err());
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn slice_axis(&self, axis: usize, range: impl RangeBounds<usize>) -> Result<XData<T>> {
        let op = "XData::slice_axis";
        let extent = self.shape().get(axis).copied().unwrap_or(0);
        let start = match range.start_bound() {
            Bound::Included(&s) => s,
            Bound::Excluded(&s) => s.saturating_add(1),
            Bound::Unbounded => 0,
        };
        let end = match range.end_bound() {
            Bound::Included(&e) => e.saturating_add(1),
            Bound::Excluded(&e) => e,
            Bound::Unbounded => extent,
        };
        Ok(self.view(self.layout.sliced(op, axis, start, end)?))
    }

    /// A view of the sub-array at `index` along `axis`, with that axis removed.
    ///
    /// ```
    /// # let app = cliper::ClApp::new()?;
    /// let x = cliper::XData::from_slice(&app, &[2, 3], &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
    /// assert_eq!(x.index_axis(1, 2)?.to_vec()?, vec![3.0, 6.0]); // the last column
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn index_axis(&self, axis: usize, index: usize) -> Result<XData<T>> {
        Ok(self.view(self.layout.indexed("XData::index_axis", axis, index)?))
    }

    /// A view without `(before, after)` elements at the two ends of each axis (one pair per axis, or one pair
    /// for every axis): the inverse of `Pad`, at no cost.
    ///
    /// ```
    /// # let app = cliper::ClApp::new()?;
    /// let x = cliper::XData::from_slice(&app, &[3, 4], &(0..12).map(|v| v as f32).collect::<Vec<_>>())?;
    /// assert_eq!(x.crop(&[(1, 0), (1, 2)])?.to_vec()?, vec![5.0, 9.0]);
    /// assert!(x.crop(&[(2, 2)]).is_err()); // more than axis 0 holds
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn crop(&self, widths: &[(usize, usize)]) -> Result<XData<T>> {
        let op = "XData::crop";
        let pairs = match widths {
            all if all.len() == self.ndim() => widths.to_vec(),
            [one] => vec![*one; self.ndim()],
            _ => {
                let n = widths.len();
                return Err(Error::invalid(
                    op,
                    format!(
                        "{n} (before, after) pairs for an array of shape {:?}; give one per axis or one",
                        self.shape()
                    ),
                ));
            }
        };
        let mut layout = self.layout.clone();
        for (axis, (&(before, after), &n)) in pairs.iter().zip(self.shape()).enumerate() {
            if before.saturating_add(after) > n {
                return Err(Error::invalid(
                    op,
                    format!(
                        "cannot crop ({before}, {after}) from axis {axis} of extent {n} (shape {:?})",
                        self.shape()
                    ),
                ));
            }
            layout = layout.sliced(op, axis, before, n - after)?;
        }
        Ok(self.view(layout))
    }

    /// A view with a new shape of the same number of elements. Only contiguous arrays can be reshaped
    /// without a copy; others return an error (call [`XData::contiguous`] first).
    ///
    /// ```
    /// # let app = cliper::ClApp::new()?;
    /// let x = cliper::XData::<f32>::zeros(&app, &[4, 6])?;
    /// assert_eq!(x.reshape(&[2, 3, 4])?.shape(), &[2, 3, 4]);
    /// assert!(x.t().reshape(&[24]).is_err()); // a transposed view is not contiguous
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn reshape(&self, shape: &[usize]) -> Result<XData<T>> {
        Ok(self.view(self.layout.reshaped("XData::reshape", shape)?))
    }

    /// For a complex array whose last axis is contiguous (unit stride, or at most one element), the same memory
    /// as real numbers: the last axis twice as long, real and imaginary parts in turn, every other stride and
    /// the offset doubled (numpy's `a.view(np.float64)` of a complex128 array). `None` for real types and for
    /// other strides.
    pub(crate) fn reals_along_last(&self) -> Option<XData<T::Real>> {
        let (&last, &last_stride) = (self.layout.shape.last()?, self.layout.strides.last()?);
        if !T::IS_COMPLEX || (last_stride != 1 && last > 1) {
            return None;
        }
        let mut layout = Layout {
            shape: self.layout.shape.clone(),
            strides: self.layout.strides.iter().map(|s| 2 * s).collect(),
            offset: 2 * self.layout.offset,
        };
        if let (Some(extent), Some(stride)) = (layout.shape.last_mut(), layout.strides.last_mut()) {
            *extent = 2 * last;
            *stride = 1;
        }
        Some(XData { app: self.app.clone(), storage: self.storage.clone(), layout, _element: PhantomData })
    }

    pub(crate) fn storage(&self) -> &Arc<Storage> {
        &self.storage
    }

    pub(crate) fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Whether this array and `other` may share elements (same buffer, overlapping element ranges).
    ///
    /// ```
    /// # let app = cliper::ClApp::new()?;
    /// let x = cliper::XData::<f32>::zeros(&app, &[4, 4])?;
    /// assert!(x.overlaps(&x.t()));
    /// assert!(!x.slice_axis(0, 0..2)?.overlaps(&x.slice_axis(0, 2..4)?));
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn overlaps<U: Element>(&self, other: &XData<U>) -> bool {
        if !Arc::ptr_eq(&self.storage, &other.storage) {
            return false;
        }
        let bytes = |l: &Layout, size: usize| l.span().map(|(a, b)| (a * size, (b + 1) * size));
        match (bytes(&self.layout, std::mem::size_of::<T>()), bytes(&other.layout, std::mem::size_of::<U>())) {
            (Some((a0, a1)), Some((b0, b1))) => a0 < b1 && b0 < a1,
            _ => false,
        }
    }
}
