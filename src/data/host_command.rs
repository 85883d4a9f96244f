//! [`HostCommand`]: the bookkeeping of `command.rs` for commands the host runs itself in mapped device memory.

use super::command::TrackedCommand;
use super::storage::Storage;
use super::xdata::XData;
use crate::app::ClApp;
use crate::app::ffi::Queue;
use crate::element::Element;
use crate::error::{Error, Result};
use opencl3::error_codes::ClError;
use opencl3::event::Event;
use std::sync::Arc;

/// A command the host runs itself, to completion, in the mapped memory of device buffers: the native paths of
/// CPU devices (`GemmStrategy::Native`). It has the bookkeeping of a kernel launch — a failed producer of an
/// input stops it, its failure marks the outputs, its last event is recorded on them — and profiles report the
/// host time it took.
pub(crate) struct HostCommand<'a> {
    owner: &'a str,
    command: &'a str,
    app: ClApp,
    reads: Vec<Arc<Storage>>,
    writes: Vec<Arc<Storage>>,
    bytes: Option<u64>,
    flops: Option<u64>,
}

impl<'a> HostCommand<'a> {
    /// A command of process `owner` named `command` (as profiles show it), reading `reads` and writing `writes`
    /// (all of one `ClApp`: the outputs').
    pub(crate) fn new<T: Element, O: Element>(
        owner: &'a str,
        command: &'a str,
        reads: &[&XData<T>],
        writes: &[&XData<O>],
    ) -> Result<HostCommand<'a>> {
        let app = writes.first().map(|x| x.app().clone()).ok_or_else(|| Error::invalid(owner, "no output"))?;
        if reads.iter().any(|x| !x.app().same_as(&app)) || writes.iter().any(|x| !x.app().same_as(&app)) {
            return Err(Error::invalid(owner, format!("the arrays of `{command}` belong to different ClApps")));
        }
        Ok(HostCommand {
            owner,
            command,
            app,
            reads: reads.iter().map(|x| x.storage().clone()).collect(),
            writes: writes.iter().map(|x| x.storage().clone()).collect(),
            bytes: None,
            flops: None,
        })
    }

    /// The bytes it moves and the floating-point operations it does, for profiles' rates.
    pub(crate) fn work(mut self, bytes: u64, flops: u64) -> Self {
        self.bytes = Some(bytes);
        self.flops = Some(flops);
        self
    }

    /// Runs `run` on the app's queue (it returns the event after which the outputs hold their values) unless an
    /// input is invalid; its failure marks the outputs invalid and is returned. `run` maps the buffers through
    /// `ffi::host_gemm` or `ffi::with_mapped`, which hold the queue alone meanwhile: no other thread's command runs
    /// on them until they are unmapped.
    pub(crate) fn run(self, run: impl FnOnce(&Queue) -> std::result::Result<Event, ClError>) -> Result<()> {
        let command = TrackedCommand {
            app: &self.app,
            owner: self.owner,
            command: self.command,
            global: Vec::new(),
            local: None,
            reads: &self.reads,
            writes: &self.writes,
            bytes: self.bytes,
            flops: self.flops,
        };
        let queue = self.app.queue();
        command.submit_timed(|| run(queue), true)
    }
}
