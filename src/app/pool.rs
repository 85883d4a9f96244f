//! [`DevicePool`]: every device of a host working through one list of inputs — one worker thread per device,
//! each with its own state (a pipeline built for its device), taking the next input as soon as it is free, so a
//! faster device takes more (docs/scaling.md).

use super::cl_app::ClApp;
use crate::error::{Error, Result};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// What one input gave: its index in the input list, the device that ran it (`P:D` and name), the seconds it
/// took there, and the result — an error does not stop the other inputs.
///
/// ```
/// let done = cliper::PoolResult { input: 3, device: "0:1 GPU".into(), seconds: 0.5, result: Ok(7) };
/// assert_eq!(done.describe(), "input 3 on 0:1 GPU: done in 0.500 s");
/// ```
#[derive(Debug)]
pub struct PoolResult<O> {
    /// The input's index in the list given to [`DevicePool::map`].
    pub input: usize,
    /// The device: its `P:D` id and name.
    pub device: String,
    /// Seconds the work on this input took on that device.
    pub seconds: f64,
    /// The output, or why this input failed.
    pub result: Result<O>,
}

impl<O> PoolResult<O> {
    /// One line: the input, the device, and the time or the error.
    pub fn describe(&self) -> String {
        match &self.result {
            Ok(_) => format!("input {} on {}: done in {:.3} s", self.input, self.device, self.seconds),
            Err(e) => format!("input {} on {}: {e}", self.input, self.device),
        }
    }
}

/// Per device of a pool: inputs run and seconds busy.
///
/// ```
/// let share = cliper::DeviceShare { device: "0:0 CPU".into(), inputs: 4, seconds: 1.0 };
/// assert_eq!(share.inputs, 4);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceShare {
    /// The device: its `P:D` id and name.
    pub device: String,
    /// Inputs it ran (failed ones included).
    pub inputs: usize,
    /// Seconds it spent on them.
    pub seconds: f64,
}

/// Devices working through a list of inputs together.
///
/// ```
/// use cliper::{DevicePool, XData};
/// let pool = DevicePool::new(cliper::ClApp::all()?)?;
/// let inputs: Vec<f32> = (0..10).map(|i| i as f32).collect();
/// // Each worker's state counts what it ran; the work sends a value to its device and back, doubled.
/// let results = pool.map(&inputs, |_| Ok(0usize), |count, app, &x| {
///     *count += 1;
///     let a = XData::from_slice(app, &[1], &[x])?;
///     Ok(2.0 * a.to_vec()?[0])
/// });
/// assert_eq!(results.len(), 10);
/// assert_eq!(results[3].result.as_ref().ok(), Some(&6.0));
/// assert_eq!(pool.shares(&results).iter().map(|s| s.inputs).sum::<usize>(), 10);
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone)]
pub struct DevicePool {
    apps: Vec<ClApp>,
}

impl DevicePool {
    /// A pool of these devices (at least one).
    pub fn new(apps: Vec<ClApp>) -> Result<DevicePool> {
        if apps.is_empty() {
            return Err(Error::invalid("DevicePool", "a pool needs at least one device"));
        }
        Ok(DevicePool { apps })
    }

    /// The pool's devices.
    pub fn apps(&self) -> &[ClApp] {
        &self.apps
    }

    /// Runs `work` on every input, one worker thread per device. A worker first makes its state with
    /// `setup(app)` (a pipeline built for its device, buffers), then takes inputs one at a time from the shared
    /// list until none is left. A failing `setup` leaves that device idle and the others take its share (if
    /// every device fails, every input reports that error). Results come back in input order.
    pub fn map<I, S, O>(
        &self,
        inputs: &[I],
        setup: impl Fn(&ClApp) -> Result<S> + Sync,
        work: impl Fn(&mut S, &ClApp, &I) -> Result<O> + Sync,
    ) -> Vec<PoolResult<O>>
    where
        I: Sync,
        O: Send,
    {
        self.map_as_done(inputs, setup, work, |_| {})
    }

    /// [`DevicePool::map`], telling `done` of each result as it finishes (on the calling thread).
    pub fn map_as_done<I, S, O>(
        &self,
        inputs: &[I],
        setup: impl Fn(&ClApp) -> Result<S> + Sync,
        work: impl Fn(&mut S, &ClApp, &I) -> Result<O> + Sync,
        mut done: impl FnMut(&PoolResult<O>),
    ) -> Vec<PoolResult<O>>
    where
        I: Sync,
        O: Send,
    {
        let next = AtomicUsize::new(0);
        let failed_setups: Mutex<Vec<(String, Error)>> = Mutex::new(Vec::new());
        let mut slots: Vec<Option<PoolResult<O>>> = (0..inputs.len()).map(|_| None).collect();
        std::thread::scope(|scope| {
            let (sender, receiver) = std::sync::mpsc::channel::<PoolResult<O>>();
            for app in &self.apps {
                let sender = sender.clone();
                let (next, setup, work, failed_setups) = (&next, &setup, &work, &failed_setups);
                scope.spawn(move || {
                    let device = format!("{} {}", app.device().id(), app.device().name);
                    let mut state = match setup(app) {
                        Ok(s) => s,
                        Err(e) => {
                            failed_setups.lock().unwrap_or_else(|p| p.into_inner()).push((device, e));
                            return;
                        }
                    };
                    loop {
                        let input = next.fetch_add(1, Ordering::Relaxed);
                        let Some(item) = inputs.get(input) else { break };
                        let clock = Instant::now();
                        let result = work(&mut state, app, item);
                        let seconds = clock.elapsed().as_secs_f64();
                        if sender.send(PoolResult { input, device: device.clone(), seconds, result }).is_err() {
                            break;
                        }
                    }
                });
            }
            drop(sender);
            for result in receiver {
                done(&result);
                let input = result.input;
                if let Some(slot) = slots.get_mut(input) {
                    *slot = Some(result);
                }
            }
        });
        // Inputs no worker took: every device's setup failed.
        let failed = failed_setups.into_inner().unwrap_or_else(|p| p.into_inner());
        slots
            .into_iter()
            .enumerate()
            .map(|(input, slot)| {
                slot.unwrap_or_else(|| {
                    let (device, why) = failed
                        .first()
                        .map(|(d, e)| (d.clone(), e.to_string()))
                        .unwrap_or_else(|| ("no device".into(), "no worker ran".into()));
                    let result = Err(Error::invalid("DevicePool", format!("no device could start: {device}: {why}")));
                    PoolResult { input, device, seconds: 0.0, result }
                })
            })
            .collect()
    }

    /// A batched array cut along `axis` into pieces of at most `piece` indices, each piece run by `work` on a
    /// device of the pool (with that device's `setup` state) and the results gathered along the same axis, in
    /// order: the same array one device would give, when `work` treats the indices of `axis` independently
    /// (slices, coils, frames). The first failing piece's error is returned, naming the piece and its device.
    ///
    /// ```
    /// use cliper::{DevicePool, XData};
    /// let pool = DevicePool::new(cliper::ClApp::all()?)?;
    /// let stack = ndarray::Array::from_shape_fn((7, 3, 4), |(k, i, j)| (k * 12 + i * 4 + j) as f32).into_dyn();
    /// // Each piece goes to a device and comes back doubled.
    /// let doubled = pool.map_axis(&stack, 0, 2, |_| Ok(()), |_, app, piece| {
    ///     let x = XData::from_ndarray(app, &piece)?;
    ///     Ok(x.to_ndarray()?.mapv(|v| 2.0 * v))
    /// })?;
    /// assert_eq!(doubled, stack.mapv(|v| 2.0 * v));
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn map_axis<T, S>(
        &self,
        array: &ndarray::ArrayD<T>,
        axis: usize,
        piece: usize,
        setup: impl Fn(&ClApp) -> Result<S> + Sync,
        work: impl Fn(&mut S, &ClApp, ndarray::ArrayViewD<'_, T>) -> Result<ndarray::ArrayD<T>> + Sync,
    ) -> Result<ndarray::ArrayD<T>>
    where
        T: Clone + Send + Sync,
    {
        let extent = array.shape().get(axis).copied().ok_or_else(|| {
            Error::invalid("DevicePool::map_axis", format!("an array of shape {:?} has no axis {axis}", array.shape()))
        })?;
        let ranges: Vec<std::ops::Range<usize>> =
            (0..extent).step_by(piece.max(1)).map(|a| a..extent.min(a + piece.max(1))).collect();
        let results = self.map(&ranges, setup, |state, app, range| {
            work(state, app, array.slice_axis(ndarray::Axis(axis), ndarray::Slice::from(range.clone())))
        });
        let mut pieces = Vec::with_capacity(results.len());
        for (done, range) in results.into_iter().zip(&ranges) {
            let piece = done.result.map_err(|e| {
                Error::invalid(
                    "DevicePool::map_axis",
                    format!("piece {range:?} of axis {axis} on {}: {e}", done.device),
                )
            })?;
            pieces.push(piece);
        }
        let views: Vec<ndarray::ArrayViewD<'_, T>> = pieces.iter().map(|p| p.view()).collect();
        ndarray::concatenate(ndarray::Axis(axis), &views)
            .map_err(|e| Error::invalid("DevicePool::map_axis", format!("the pieces do not fit together: {e}")))
    }

    /// Per device: how many of `results` it ran and the seconds it spent, in the pool's device order.
    pub fn shares<O>(&self, results: &[PoolResult<O>]) -> Vec<DeviceShare> {
        self.apps
            .iter()
            .map(|app| {
                let device = format!("{} {}", app.device().id(), app.device().name);
                let mine: Vec<&PoolResult<O>> = results.iter().filter(|r| r.device == device).collect();
                DeviceShare { inputs: mine.len(), seconds: mine.iter().map(|r| r.seconds).sum(), device }
            })
            .collect()
    }
}
