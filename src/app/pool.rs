//! [`DevicePool`]: every device of a host working through one list of inputs — one worker thread per device,
//! each with its own state (a pipeline built for its device), taking the next input as soon as it is free, so a
//! faster device takes more (docs/scaling.md).

use super::cl_app::ClApp;
use crate::error::{Error, Result};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// Where a pool's workers get their next input: a counter over a list here, or rank 0 of an MPI job.
pub(crate) trait Handout: Sync {
    /// Inputs not handed out yet, as last known (what weighing the devices goes by).
    fn remaining(&self) -> usize;
    /// The next input's index, or `None` when every input has been handed out.
    fn next(&self) -> Option<usize>;
}

/// A list's inputs handed out in order, each once, from a shared counter.
pub(crate) struct Counter {
    next: AtomicUsize,
    len: usize,
}

impl Counter {
    pub(crate) fn new(len: usize) -> Counter {
        Counter { next: AtomicUsize::new(0), len }
    }
}

impl Handout for Counter {
    fn remaining(&self) -> usize {
        self.len.saturating_sub(self.next.load(Ordering::Relaxed))
    }

    fn next(&self) -> Option<usize> {
        let input = self.next.fetch_add(1, Ordering::Relaxed);
        (input < self.len).then_some(input)
    }
}

/// The result of an input no device of the pool could start on.
pub(crate) fn not_started<O>(input: usize, failed: &[(String, Error)]) -> PoolResult<O> {
    let (device, why) = failed
        .first()
        .map(|(d, e)| (d.clone(), e.to_string()))
        .unwrap_or_else(|| ("no device".into(), "no worker ran".into()));
    let result = Err(Error::invalid("DevicePool", format!("no device could start: {device}: {why}")));
    PoolResult { input, device, seconds: 0.0, result }
}

/// What the pool knows of each device's speed, so that a slow device does not take one of the last inputs when
/// the faster ones would finish it sooner (a CPU beside a GPU must not hold the batch's end).
struct Weights {
    devices: Mutex<Vec<Pace>>,
}

/// One device's pace: inputs done, seconds spent on them (and on the first alone: it includes building the
/// device's pipeline, compiling its programs), when its current input started, whether it still works.
#[derive(Clone, Copy)]
struct Pace {
    done: usize,
    seconds: f64,
    first: f64,
    started: Option<Instant>,
    active: bool,
}

impl Pace {
    /// Seconds per input, the first left out once there are others (its setup costs are not the pace).
    fn each(&self) -> f64 {
        if self.done > 1 { (self.seconds - self.first) / (self.done - 1) as f64 } else { self.seconds }
    }
}

impl Weights {
    fn new(devices: usize) -> Weights {
        let pace = Pace { done: 0, seconds: 0.0, first: 0.0, started: None, active: true };
        Weights { devices: Mutex::new(vec![pace; devices]) }
    }

    fn with<R>(&self, f: impl FnOnce(&mut Vec<Pace>) -> R) -> R {
        f(&mut self.devices.lock().unwrap_or_else(|p| p.into_inner()))
    }

    fn start(&self, worker: usize) {
        self.with(|d| d.get_mut(worker).map(|p| p.started = Some(Instant::now())));
    }

    fn finish(&self, worker: usize, seconds: f64) {
        self.with(|d| {
            d.get_mut(worker).map(|p| {
                if p.done == 0 {
                    p.first = seconds;
                }
                p.done += 1;
                p.seconds += seconds;
                p.started = None;
            })
        });
    }

    fn leave(&self, worker: usize) {
        self.with(|d| d.get_mut(worker).map(|p| p.active = false));
    }

    /// Whether `worker` should take one of the `remaining` inputs. It should unless it is slower than another
    /// working device and the others, at their measured paces, would finish all the remaining inputs (after
    /// what they are running now) before this device finished one: taking it would then only delay the end.
    /// A device measured on fewer than two inputs always takes (its first input's time includes its setup), and
    /// so does the fastest.
    fn should_take(&self, worker: usize, remaining: usize) -> bool {
        self.with(|devices| {
            let Some(mine) = devices.get(worker).filter(|p| p.done > 1).map(Pace::each) else {
                return true;
            };
            let now = Instant::now();
            let (mut rate, mut backlog, mut faster) = (0.0, 0.0, false);
            for (_, p) in devices.iter().enumerate().filter(|(i, p)| *i != worker && p.active && p.done > 0) {
                let each = p.each();
                faster |= each < mine;
                rate += 1.0 / each.max(1e-9);
                // The part of its current input it has still to do.
                if let Some(t) = p.started {
                    backlog += (1.0 - now.duration_since(t).as_secs_f64() / each.max(1e-9)).max(0.0);
                }
            }
            !faster || rate == 0.0 || mine < (remaining as f64 + backlog) / rate
        })
    }
}

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
    /// list until none is left. Devices are weighed by their measured seconds per input: near the end, a device
    /// slower than another stops taking inputs once the faster ones would finish all that remain before it
    /// finished one (so a CPU beside a GPU never holds the batch's last input). A failing `setup` leaves that device idle and the others take its share (if
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
        done: impl FnMut(&PoolResult<O>),
    ) -> Vec<PoolResult<O>>
    where
        I: Sync,
        O: Send,
    {
        let counter = Counter::new(inputs.len());
        let (ran, failed) = self.work_through(inputs, &counter, &setup, &work, done, || {});
        // Inputs no worker took: every device's setup failed.
        let mut slots: Vec<Option<PoolResult<O>>> = (0..inputs.len()).map(|_| None).collect();
        for result in ran {
            let input = result.input;
            if let Some(slot) = slots.get_mut(input) {
                *slot = Some(result);
            }
        }
        slots.into_iter().enumerate().map(|(input, slot)| slot.unwrap_or_else(|| not_started(input, &failed))).collect()
    }

    /// The pool's workers taking inputs from `handout` until it has none left (or each device's weighing says the
    /// others will finish the rest sooner), `done` told of each result on the calling thread and `serve` called
    /// there at least every millisecond while they work (MPI's rank 0 answers the other ranks from it). Gives the
    /// results in the order they finished, and each device whose setup failed with why.
    pub(crate) fn work_through<I, S, O>(
        &self,
        inputs: &[I],
        handout: &dyn Handout,
        setup: &(impl Fn(&ClApp) -> Result<S> + Sync),
        work: &(impl Fn(&mut S, &ClApp, &I) -> Result<O> + Sync),
        mut done: impl FnMut(&PoolResult<O>),
        mut serve: impl FnMut(),
    ) -> (Vec<PoolResult<O>>, Vec<(String, Error)>)
    where
        I: Sync,
        O: Send,
    {
        let failed_setups: Mutex<Vec<(String, Error)>> = Mutex::new(Vec::new());
        let weights = Weights::new(self.apps.len());
        let mut ran = Vec::new();
        std::thread::scope(|scope| {
            let (sender, receiver) = std::sync::mpsc::channel::<PoolResult<O>>();
            for (worker, app) in self.apps.iter().enumerate() {
                let sender = sender.clone();
                let (weights, failed_setups) = (&weights, &failed_setups);
                scope.spawn(move || {
                    let device = format!("{} {}", app.device().id(), app.device().name);
                    let mut state = match setup(app) {
                        Ok(s) => s,
                        Err(e) => {
                            weights.leave(worker);
                            failed_setups.lock().unwrap_or_else(|p| p.into_inner()).push((device, e));
                            return;
                        }
                    };
                    while weights.should_take(worker, handout.remaining()) {
                        let Some(input) = handout.next() else { break };
                        let Some(item) = inputs.get(input) else { break };
                        weights.start(worker);
                        let clock = Instant::now();
                        let result = work(&mut state, app, item);
                        let seconds = clock.elapsed().as_secs_f64();
                        weights.finish(worker, seconds);
                        if sender.send(PoolResult { input, device: device.clone(), seconds, result }).is_err() {
                            break;
                        }
                    }
                    weights.leave(worker);
                });
            }
            drop(sender);
            loop {
                match receiver.recv_timeout(std::time::Duration::from_millis(1)) {
                    Ok(result) => {
                        done(&result);
                        ran.push(result);
                    }
                    Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                    Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
                }
                serve();
            }
        });
        (ran, failed_setups.into_inner().unwrap_or_else(|p| p.into_inner()))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Paces: `(inputs done, seconds each, running now)`.
    fn weights(paces: &[(usize, f64, bool)]) -> Weights {
        let w = Weights::new(paces.len());
        w.with(|d| {
            for (p, &(done, each, running)) in d.iter_mut().zip(paces) {
                let seconds = done as f64 * each;
                *p = Pace { done, seconds, first: each, started: running.then(Instant::now), active: true };
            }
        });
        w
    }

    #[test]
    fn a_slow_device_leaves_the_last_inputs_to_a_fast_one() {
        // A GPU at 10 ms an input beside a CPU at 1 s: with 50 left, the GPU needs 0.5 s (+ its current one):
        // the CPU, at 1 s, must not take one; with 200 left it should.
        let w = weights(&[(10, 0.01, true), (2, 1.0, false)]);
        assert!(!w.should_take(1, 50));
        assert!(w.should_take(1, 200));
        // The fast device always takes, and so does one measured on fewer than two inputs.
        assert!(w.should_take(0, 1));
        assert!(weights(&[(10, 0.01, true), (0, 0.0, false)]).should_take(1, 1));
        assert!(weights(&[(10, 0.01, true), (1, 1.0, false)]).should_take(1, 1));
        // The first input (setup included) is not the pace: 2 s then 0.1 s a piece is a device at 0.1 s.
        let w = weights(&[(10, 0.1, true), (3, 0.0, false)]);
        w.with(|d| d.get_mut(1).map(|p| (p.first, p.seconds) = (2.0, 2.2)));
        assert!(w.should_take(1, 1));
        // Equal devices always take: neither is faster.
        assert!(weights(&[(5, 0.1, true), (5, 0.1, false)]).should_take(1, 1));
        // A faster device that has left (its setup failed, or it declined) does not count.
        let w = weights(&[(10, 0.01, false), (2, 1.0, false)]);
        w.leave(0);
        assert!(w.should_take(1, 1));
        // Three devices: two at 0.1 s share 3 remaining in about 0.15 s (+ their current ones, just started:
        // 0.1 s): a device at 0.2 s finishing one in 0.2 s takes, at 0.3 s it does not.
        assert!(weights(&[(4, 0.1, true), (4, 0.1, true), (2, 0.2, false)]).should_take(2, 3));
        assert!(!weights(&[(4, 0.1, true), (4, 0.1, true), (2, 0.3, false)]).should_take(2, 3));
    }
}
