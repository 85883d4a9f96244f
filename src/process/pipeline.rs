//! How processes are called and chained: the [`Process`] trait, [`Pipeline`] (processes run in order on one
//! device) and its profile ([`Report`], [`KernelTiming`]).

use crate::app::ClApp;
use crate::data::Recorder;
use crate::error::{ClContext, Error, Result};
use std::fmt;
use std::sync::{Arc, Mutex};

/// An operation on device arrays. See `docs/writing-an-operation.md` for how to write one.
///
/// Every process is called the same way: `new(inputs…, output, params)` binds it to its arrays, `init` plans
/// (once), `launch` enqueues (as often as needed), and [`Process::run`] does both as needed. None of them waits
/// for the device: reading an output (`to_vec`) waits for the commands that wrote it, [`ClApp::finish`] for all.
///
/// ```
/// use cliper::{ClApp, Process, Transpose, XData};
/// let app = ClApp::new()?;
/// let a = XData::from_slice(&app, &[2, 3], &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
/// let at = XData::zeros(&app, &[3, 2])?;
/// let mut t = Transpose::new(&a, &at);
/// assert!(!t.is_initialized());
/// t.init()?;   // checks shapes, builds the kernel, plans
/// t.launch()?; // enqueues; may be called again and again
/// t.run()?;    // the same again: init only if needed, then launch
/// assert_eq!(at.to_vec()?, vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
/// # Ok::<(), cliper::Error>(())
/// ```
pub trait Process: Send {
    /// A short name for profiles and messages (`Transpose`).
    fn name(&self) -> &str;
    /// Validates shapes and types, builds kernels, chooses the algorithm and allocates scratch.
    fn init(&mut self) -> Result<()>;
    /// Enqueues the work. Only valid after a successful `init`; never waits for the device.
    fn launch(&mut self) -> Result<()>;
    /// Whether `init` has succeeded (so `launch` may be called).
    fn is_initialized(&self) -> bool;
    /// `init` if it has not run yet, then `launch`. Does not wait for the device.
    fn run(&mut self) -> Result<()> {
        if !self.is_initialized() {
            self.init()?;
        }
        self.launch()
    }

    /// Offers the next stage of a [`Pipeline`] to this one, before either is initialized: a process that can
    /// compute `next`'s result in its own kernel takes it over (and `next`'s launch then does nothing) and
    /// answers true. [`crate::Elementwise`] does this for a following element-wise stage; the default declines.
    fn fuse_next(&mut self, next: &mut dyn Process) -> bool {
        let _ = next;
        false
    }

    /// The process as `Any`, so that [`Process::fuse_next`] can recognise a stage it knows how to take over;
    /// `None` (the default) for processes that are never fused.
    fn as_any_mut(&mut self) -> Option<&mut dyn std::any::Any> {
        None
    }
}

/// A stage the caller also holds ([`Pipeline::push_shared`]).
struct Shared<P> {
    name: String,
    process: Arc<Mutex<P>>,
}

impl<P: Process> Shared<P> {
    fn lock(&self) -> Result<std::sync::MutexGuard<'_, P>> {
        self.process.lock().map_err(|_| Error::invalid(&self.name, "a failed run left it unusable"))
    }
}

impl<P: Process> Process for Shared<P> {
    fn name(&self) -> &str {
        &self.name
    }
    fn init(&mut self) -> Result<()> {
        self.lock()?.init()
    }
    fn launch(&mut self) -> Result<()> {
        self.lock()?.launch()
    }
    fn is_initialized(&self) -> bool {
        self.lock().is_ok_and(|p| p.is_initialized())
    }
    // The stage held may take the next (a convolution the caller keeps, to read its strategy); it cannot be
    // taken itself: the caller may launch it on its own.
    fn fuse_next(&mut self, next: &mut dyn Process) -> bool {
        self.lock().is_ok_and(|mut p| p.fuse_next(next))
    }
}

/// Runs `init` of every one of `processes` at once, a thread each, so that their programs compile concurrently:
/// a first run's time is mostly the OpenCL compiler's, which overlaps builds (NVIDIA H200: four filter
/// programs 4.66 s one after another, 2.63 s from four threads) — at most as many at once as the host has cores
/// (four at the least). The first error in the given order is returned, after every `init` has finished; a process
/// whose `init` panicked is reported as an error.
pub(crate) fn init_together(processes: Vec<&mut (dyn Process + 'static)>) -> Result<()> {
    init_together_telling(processes).map_err(|(_, e)| e)
}

/// [`init_together`], telling the position in `processes` of the one whose error is returned.
fn init_together_telling(processes: Vec<&mut (dyn Process + 'static)>) -> std::result::Result<(), (usize, Error)> {
    if processes.len() < 2 {
        return processes.into_iter().enumerate().try_for_each(|(i, p)| p.init().map_err(|e| (i, e)));
    }
    // At most this many at once: a pipeline file of many steps would otherwise start a compiler per step, each
    // holding its own memory (four already overlap NVIDIA's builds, the gain measured above).
    let at_once = std::thread::available_parallelism().map_or(4, |n| n.get().max(4));
    let mut results: Vec<Result<()>> = Vec::with_capacity(processes.len());
    let mut pending = processes.into_iter().peekable();
    while pending.peek().is_some() {
        let wave: Vec<_> = pending.by_ref().take(at_once).collect();
        std::thread::scope(|scope| {
            let running: Vec<_> = wave
                .into_iter()
                .map(|p| {
                    let name = p.name().to_string();
                    (name, scope.spawn(move || p.init()))
                })
                .collect();
            results.extend(running.into_iter().map(|(name, handle)| {
                handle.join().unwrap_or_else(|_| Err(Error::invalid(&name, "init panicked on its thread")))
            }));
        });
    }
    results.into_iter().enumerate().try_for_each(|(i, r)| r.map_err(|e| (i, e)))
}

/// A chain of processes run in order on one device, with optional profiling.
///
/// ```
/// use cliper::{ClApp, Permute, Pipeline, Transpose, XData};
/// let app = ClApp::builder().profiling(true).build()?;
/// let x = XData::from_slice(&app, &[2, 3, 4], &(0..24).map(|v| v as f32).collect::<Vec<_>>())?;
/// let (y, z) = (XData::zeros(&app, &[2, 4, 3])?, XData::zeros(&app, &[3, 2, 4])?);
/// let mut pipeline = Pipeline::new(&app).then(Transpose::new(&x, &y)).then(Permute::new(&y, &z, &[2, 0, 1]));
/// let report = pipeline.profile()?; // init, launch, wait, and time every kernel
/// println!("{report}");
/// assert_eq!(report.launches.len(), 2);
/// assert_eq!(z.to_vec()?, XData::from_slice(&app, &[2, 3, 4], &x.to_vec()?)?.permuted_axes(&[1, 0, 2])?.to_vec()?);
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct Pipeline {
    app: ClApp,
    stages: Vec<Box<dyn Process>>,
}

impl Pipeline {
    /// An empty pipeline on `app`'s device.
    pub fn new(app: &ClApp) -> Pipeline {
        Pipeline { app: app.clone(), stages: Vec::new() }
    }

    /// Appends a process (builder style).
    pub fn then(mut self, process: impl Process + 'static) -> Pipeline {
        self.push(Box::new(process));
        self
    }

    /// Appends a boxed process.
    pub fn push(&mut self, process: Box<dyn Process>) -> &mut Pipeline {
        self.stages.push(process);
        self
    }

    /// Appends `process` and keeps a handle to it, so that what it computed can be read after the run (a
    /// solver's residuals, the strategy it chose) while the pipeline runs it — and `profile` times it — as any
    /// stage.
    ///
    /// ```
    /// # use cliper::{ClApp, Pipeline, Process, Transpose, XData};
    /// let app = ClApp::new()?;
    /// let (x, y) = (XData::<f32>::zeros(&app, &[3, 2])?, XData::<f32>::zeros(&app, &[2, 3])?);
    /// let mut p = Pipeline::new(&app);
    /// let transpose = p.push_shared(Transpose::new(&x, &y));
    /// p.run()?;
    /// assert!(transpose.lock().unwrap().is_initialized());
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn push_shared<P: Process + 'static>(&mut self, process: P) -> Arc<Mutex<P>> {
        let process = Arc::new(Mutex::new(process));
        let name = process.lock().map(|p| p.name().to_string()).unwrap_or_default();
        self.push(Box::new(Shared { name, process: process.clone() }));
        process
    }

    /// Number of processes.
    pub fn len(&self) -> usize {
        self.stages.len()
    }

    /// Whether the pipeline has no process.
    pub fn is_empty(&self) -> bool {
        self.stages.is_empty()
    }

    /// The processes' names, in order.
    pub fn names(&self) -> Vec<&str> {
        self.stages.iter().map(|s| s.name()).collect()
    }

    /// Runs `init` of every process that has not been initialized yet (so a process initialized before it
    /// was added, or one added after an earlier `init`, is planned exactly once), all at once on threads of
    /// their own so that their kernels compile concurrently. Before that, back-to-back
    /// stages that are not yet initialized are offered to each other ([`Process::fuse_next`]): a run of
    /// [`crate::Elementwise`] stages becomes one kernel that writes every stage's output.
    ///
    /// ```
    /// use cliper::{ClApp, Elementwise, ExprStrategy, Expr, Pipeline, XData};
    /// let app = ClApp::builder().profiling(true).build()?;
    /// let x = XData::from_slice(&app, &[4], &[-2.0f32, 0.5, 3.0, 9.0])?;
    /// let (y, z) = (XData::<f32>::zeros(&app, &[4])?, XData::<f32>::zeros(&app, &[4])?);
    /// let mut p = Pipeline::new(&app)
    ///     .then(Elementwise::new(&[&x], &y, Expr::input(0).clip(0.0, 4.0)))
    ///     .then(Elementwise::new(&[&y], &z, Expr::input(0).sqrt()));
    /// let report = p.profile()?;
    /// assert_eq!(report.launches.len(), 1); // one kernel wrote y and z
    /// assert_eq!(y.to_vec()?, vec![0.0, 0.5, 3.0, 4.0]);
    /// assert_eq!(z.to_vec()?, vec![0.0, 0.5f32.sqrt(), 3.0f32.sqrt(), 2.0]);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn init(&mut self) -> Result<()> {
        self.init_telling().map_err(|(_, e)| e)
    }

    /// [`Pipeline::init`], telling the index of the stage whose error is returned (the first failing one).
    pub(crate) fn init_telling(&mut self) -> std::result::Result<(), (usize, Error)> {
        let mut first = 0;
        while first < self.stages.len() {
            let mut next = first + 1;
            while next < self.stages.len() {
                let (head, tail) = self.stages.split_at_mut(next);
                let (Some(a), Some(b)) = (head.get_mut(first), tail.first_mut()) else { break };
                if a.is_initialized() || b.is_initialized() || !a.fuse_next(b.as_mut()) {
                    break;
                }
                next += 1;
            }
            first = next;
        }
        let (indices, pending): (Vec<usize>, Vec<&mut (dyn Process + 'static)>) = self
            .stages
            .iter_mut()
            .enumerate()
            .filter(|(_, s)| !s.is_initialized())
            .map(|(i, s)| (i, s.as_mut()))
            .unzip();
        init_together_telling(pending).map_err(|(k, e)| (indices.get(k).copied().unwrap_or(k), e))
    }

    /// Whether every process has been initialized.
    pub fn is_initialized(&self) -> bool {
        self.stages.iter().all(|s| s.is_initialized())
    }

    /// Enqueues every process in order. Only valid after `init`; does not wait.
    pub fn launch(&mut self) -> Result<()> {
        if !self.is_initialized() {
            return Err(Error::NotInitialized { op: "Pipeline".into() });
        }
        for stage in &mut self.stages {
            stage.launch()?;
        }
        Ok(())
    }

    /// `init` if needed, then `launch`, as [`Process::run`]. Does not wait: reading an output waits for it,
    /// [`ClApp::finish`] waits for everything.
    pub fn run(&mut self) -> Result<()> {
        self.init()?;
        self.launch()
    }

    /// Runs the pipeline once and reports every command it enqueued with its device time. Needs a `ClApp`
    /// built with `profiling(true)`.
    ///
    /// ```
    /// # use cliper::{ClApp, Pipeline, Transpose, XData};
    /// let app = ClApp::builder().profiling(true).build()?;
    /// let (x, y) = (XData::<f32>::zeros(&app, &[300, 200])?, XData::<f32>::zeros(&app, &[200, 300])?);
    /// let mut p = Pipeline::new(&app).then(Transpose::new(&x, &y));
    /// assert_eq!((p.len(), p.names()), (1, vec!["Transpose"]));
    /// let report = p.profile()?;
    /// assert_eq!(report.launches[0].bytes, Some(2 * 300 * 200 * 4));
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn profile(&mut self) -> Result<Report> {
        if !self.app.profiling() {
            return Err(Error::Unsupported {
                what: "profiling is off for this ClApp; build it with ClApp::builder().profiling(true)".into(),
            });
        }
        self.init()?;
        let recorder = Recorder::start();
        let launched = self.launch();
        let records = recorder.finish();
        launched?;
        self.app.finish()?;
        let mut launches = Vec::with_capacity(records.len());
        for r in records {
            let device_ms = match r.host_ms {
                Some(ms) => ms,
                None => {
                    let start = r
                        .event
                        .profiling_command_start()
                        .during(|| format!("reading the start time of `{}`", r.kernel))?;
                    let end =
                        r.event.profiling_command_end().during(|| format!("reading the end time of `{}`", r.kernel))?;
                    end.saturating_sub(start) as f64 * 1e-6
                }
            };
            launches.push(KernelTiming {
                process: r.process,
                kernel: r.kernel,
                global: r.global,
                local: r.local,
                device_ms,
                bytes: r.bytes,
                flops: r.flops,
            });
        }
        Ok(Report { launches })
    }
}

/// The device time of one enqueued command.
///
/// ```
/// let t = cliper::KernelTiming {
///     process: "Transpose".into(), kernel: "copy_tiled".into(), global: vec![4096], local: Some(vec![512]),
///     device_ms: 0.5, bytes: Some(1_000_000_000), flops: None,
/// };
/// assert_eq!(t.gb_per_s(), Some(2000.0));
/// assert_eq!(t.gflop_per_s(), None);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct KernelTiming {
    /// The process that enqueued it.
    pub process: String,
    /// The kernel (or command, like `copy_buffer`).
    pub kernel: String,
    /// Global work size (bytes for buffer commands).
    pub global: Vec<usize>,
    /// Work-group size, when one was given.
    pub local: Option<Vec<usize>>,
    /// Device time from start to end, in milliseconds.
    pub device_ms: f64,
    /// Bytes the command moves, when the process states it.
    pub bytes: Option<u64>,
    /// Floating-point operations, when the process states them.
    pub flops: Option<u64>,
}

impl KernelTiming {
    /// Achieved bandwidth (bytes moved over device time), when the byte count is known.
    pub fn gb_per_s(&self) -> Option<f64> {
        self.bytes.filter(|_| self.device_ms > 0.0).map(|b| b as f64 / (self.device_ms * 1e6))
    }

    /// Achieved arithmetic rate, when the process states a nonzero flop count.
    pub fn gflop_per_s(&self) -> Option<f64> {
        self.flops.filter(|&f| f > 0 && self.device_ms > 0.0).map(|f| f as f64 / (self.device_ms * 1e6))
    }
}

/// What [`Pipeline::profile`] measured; `Display` prints it as a table.
///
/// ```
/// use cliper::{ClApp, Pipeline, SheppLogan, XData};
/// let app = ClApp::builder().profiling(true).build()?;
/// let image = XData::<f32>::zeros(&app, &[256, 256])?;
/// let report = Pipeline::new(&app).then(SheppLogan::new(&image)).profile()?;
/// assert_eq!(report.launches[0].kernel, "shepp_logan");
/// println!("{report}\n{:.3} ms in all", report.total_ms());
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Report {
    /// One entry per enqueued command, in order.
    pub launches: Vec<KernelTiming>,
}

impl Report {
    /// Sum of the device times, in milliseconds.
    pub fn total_ms(&self) -> f64 {
        self.launches.iter().map(|l| l.device_ms).sum()
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dims = |d: &[usize]| d.iter().map(usize::to_string).collect::<Vec<_>>().join("×");
        writeln!(
            f,
            "{:<20} {:<14} {:>18} {:>10} {:>11} {:>9} {:>9}",
            "process", "kernel", "global", "local", "device ms", "GB/s", "GFLOP/s"
        )?;
        for l in &self.launches {
            let opt = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.1}"));
            writeln!(
                f,
                "{:<20} {:<14} {:>18} {:>10} {:>11.4} {:>9} {:>9}",
                l.process,
                l.kernel,
                dims(&l.global),
                l.local.as_deref().map_or("-".to_string(), dims),
                l.device_ms,
                opt(l.gb_per_s()),
                opt(l.gflop_per_s())
            )?;
        }
        write!(f, "{:<20} {:<14} {:>18} {:>10} {:>11.4}", "total", "", "", "", self.total_ms())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stage whose `init` succeeds, fails or panics.
    struct Stage {
        name: &'static str,
        outcome: Option<bool>,
        ready: bool,
    }

    impl Process for Stage {
        fn name(&self) -> &str {
            self.name
        }
        fn init(&mut self) -> Result<()> {
            match self.outcome {
                None => panic!("{} panics", self.name),
                Some(false) => Err(Error::invalid(self.name, "refused")),
                Some(true) => {
                    self.ready = true;
                    Ok(())
                }
            }
        }
        fn launch(&mut self) -> Result<()> {
            Ok(())
        }
        fn is_initialized(&self) -> bool {
            self.ready
        }
    }

    #[test]
    fn every_init_runs_and_the_first_error_in_order_is_returned() {
        let stage = |name, outcome| Stage { name, outcome, ready: false };
        let mut stages = [stage("a", Some(true)), stage("b", Some(false)), stage("c", None), stage("d", Some(true))];
        let e = init_together(stages.iter_mut().map(|s| s as &mut dyn Process).collect()).unwrap_err().to_string();
        assert!(e.contains("b") && e.contains("refused"), "{e}");
        assert!(stages[0].ready && stages[3].ready, "the others still ran");
        let mut panics = [stage("p", None), stage("q", Some(true))];
        let e = init_together(panics.iter_mut().map(|s| s as &mut dyn Process).collect()).unwrap_err().to_string();
        assert!(e.contains("p") && e.contains("panicked"), "{e}");
        let mut one = [stage("one", Some(true))];
        init_together(one.iter_mut().map(|s| s as &mut dyn Process).collect()).unwrap();
        assert!(one[0].ready);
        // More stages than run at once: every one runs, in waves, and the failing one is named by its position.
        let mut many: Vec<Stage> = (0..70).map(|i| stage(if i == 41 { "x" } else { "s" }, Some(i != 41))).collect();
        let (at, e) = init_together_telling(many.iter_mut().map(|s| s as &mut dyn Process).collect()).unwrap_err();
        assert_eq!((at, e.to_string().contains("x")), (41, true));
        assert!(many.iter().enumerate().all(|(i, s)| s.ready == (i != 41)), "every other stage ran");
    }
}
