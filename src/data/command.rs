//! The bookkeeping every device command needs: the storages it reads and writes (so a failure marks its outputs
//! and a read of them reports it), its event on the outputs, and profiling records. It belongs to the arrays'
//! layer: a command is bookkept by the arrays it touches.

use super::storage::Storage;
use crate::app::ClApp;
use crate::error::{Error, Result};
use opencl3::error_codes::ClError;
use opencl3::event::Event;
use std::cell::RefCell;
use std::sync::Arc;

/// A device command with its bookkeeping, for kernel launches (`Launch`) and buffer copies alike.
pub(crate) struct TrackedCommand<'a> {
    pub app: &'a ClApp,
    pub owner: &'a str,
    pub command: &'a str,
    pub global: Vec<usize>,
    pub local: Option<Vec<usize>>,
    pub reads: &'a [Arc<Storage>],
    pub writes: &'a [Arc<Storage>],
    pub bytes: Option<u64>,
    pub flops: Option<u64>,
}

impl TrackedCommand<'_> {
    fn producer(&self) -> String {
        if self.owner == self.command {
            self.owner.to_string()
        } else {
            format!("{} (kernel {})", self.owner, self.command)
        }
    }

    /// Marks every output invalid, naming this command as the producer that failed with `cause`.
    fn poison_outputs(&self, producer: &str, cause: &Arc<Error>) {
        for w in self.writes {
            w.poison(producer, cause.clone());
        }
    }

    /// Marks every output invalid with `error` and returns it.
    pub(crate) fn fail(&self, error: Error) -> Error {
        self.poison_outputs(&self.producer(), &Arc::new(error.clone()));
        error
    }

    /// `Err` when an input's producer failed; the outputs are then marked invalid in turn.
    pub(crate) fn check_inputs(&self) -> Result<()> {
        for r in self.reads {
            if let Err(e) = r.check() {
                let (producer, cause) = (self.producer(), Arc::new(e));
                self.poison_outputs(&producer, &cause);
                return Err(Error::ProducerFailed { producer, cause });
            }
        }
        Ok(())
    }

    /// Runs `enqueue` unless an input is invalid, then records the event on the outputs and in the profile.
    pub(crate) fn submit(self, enqueue: impl FnOnce() -> std::result::Result<Event, ClError>) -> Result<()> {
        self.submit_timed(|_| enqueue().map(Some), false)
    }

    /// [`TrackedCommand::submit`] for an enqueue that can go without its event: `enqueue(want_event)` asks for one
    /// only when this thread is recording a profile, the one reader of a command's times. An output written
    /// without one is checked after a read by a marker instead (`Storage::read_after_last_write`).
    pub(crate) fn submit_lazy(
        self,
        enqueue: impl FnOnce(bool) -> std::result::Result<Option<Event>, ClError>,
    ) -> Result<()> {
        self.submit_timed(enqueue, false)
    }

    /// [`TrackedCommand::submit_lazy`]; with `host_timed` (a `HostCommand`) the profile gets the host time
    /// `enqueue` took (a command the host runs to completion itself) rather than the event's device times.
    pub(crate) fn submit_timed(
        self,
        enqueue: impl FnOnce(bool) -> std::result::Result<Option<Event>, ClError>,
        host_timed: bool,
    ) -> Result<()> {
        self.check_inputs()?;
        let profiled = self.app.profiling() && recording();
        // A host command waits for the commands before it (its blocking map); a profile should not count that wait
        // as its own time, so a profiling queue drains first.
        if host_timed && self.app.profiling() {
            self.app.finish()?;
        }
        let started = std::time::Instant::now();
        let enqueued = enqueue(profiled);
        let host_ms = host_timed.then(|| started.elapsed().as_secs_f64() * 1e3);
        match enqueued {
            Ok(event) => {
                let event = event.map(Arc::new);
                let producer = self.producer();
                for w in self.writes {
                    w.record_write(event.clone(), &producer);
                }
                if let (true, Some(event)) = (profiled, event) {
                    record(LaunchRecord {
                        process: self.owner.to_string(),
                        kernel: self.command.to_string(),
                        global: self.global,
                        local: self.local,
                        event,
                        host_ms,
                        bytes: self.bytes,
                        flops: self.flops,
                    });
                }
                Ok(())
            }
            Err(e) => {
                let during = format!(
                    "enqueueing `{}` of {} (global {:?}, local {:?})",
                    self.command, self.owner, self.global, self.local
                );
                Err(self.fail(Error::cl(e.0, during)))
            }
        }
    }
}

/// One enqueued command, as a profile sees it.
pub(crate) struct LaunchRecord {
    pub process: String,
    pub kernel: String,
    pub global: Vec<usize>,
    pub local: Option<Vec<usize>>,
    pub event: Arc<Event>,
    /// For a command the host ran itself (see `HostCommand`): how long it took, which the profile reports
    /// instead of the event's times.
    pub host_ms: Option<f64>,
    pub bytes: Option<u64>,
    pub flops: Option<u64>,
}

thread_local! {
    static RECORDING: RefCell<Option<Vec<LaunchRecord>>> = const { RefCell::new(None) };
}

/// Whether this thread is recording a profile (a [`Recorder`] lives).
fn recording() -> bool {
    RECORDING.with(|r| r.borrow().is_some())
}

fn record(rec: LaunchRecord) {
    RECORDING.with(|r| {
        if let Some(log) = r.borrow_mut().as_mut() {
            log.push(rec);
        }
    });
}

/// Collects the commands this thread enqueues while it lives (profiling queues only). Dropping it without
/// `finish` restores whatever recording was active before.
pub(crate) struct Recorder {
    /// `Some` until finished: the recording that was active when this one started.
    previous: Option<Option<Vec<LaunchRecord>>>,
}

impl Recorder {
    pub(crate) fn start() -> Recorder {
        Recorder { previous: Some(RECORDING.with(|r| r.borrow_mut().replace(Vec::new()))) }
    }

    pub(crate) fn finish(mut self) -> Vec<LaunchRecord> {
        let previous = self.previous.take().unwrap_or(None);
        RECORDING.with(|r| std::mem::replace(&mut *r.borrow_mut(), previous)).unwrap_or_default()
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        if let Some(previous) = self.previous.take() {
            RECORDING.with(|r| *r.borrow_mut() = previous);
        }
    }
}
