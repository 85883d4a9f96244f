//! [`HostCommand`]: the bookkeeping of `command.rs` for commands the host runs itself in mapped device memory.

use super::command::TrackedCommand;
use super::storage::Storage;
use super::xdata::XData;
use crate::app::ClApp;
use crate::app::ffi::{self, Queue, Region};
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
        command.submit_timed(|_| run(queue).map(Some), true)
    }
}

/// What a one-input host pass of a CPU device maps: the span `[lo, hi)` of its input's elements and the elements
/// of its output, which is contiguous, non-empty and in a buffer of its own (the host writes it through one
/// mapping, which must not alias the input's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct HostRegions {
    input: (usize, usize),
    output: (usize, usize),
}

impl HostRegions {
    /// The regions of a pass from `input` to `output`, or `None` where a host pass does not apply: a device that
    /// is not a CPU (its mapping would copy), an output that is empty, strided or shares the input's buffer.
    pub(crate) fn for_pass<T: Element, O: Element>(input: &XData<T>, output: &XData<O>) -> Option<HostRegions> {
        let applies = output.app().device().kind == crate::app::DeviceKind::Cpu
            && output.is_contiguous()
            && !output.is_empty()
            && !Arc::ptr_eq(input.storage(), output.storage());
        let (lo, hi) = input.layout().span().filter(|_| applies)?;
        Some(HostRegions { input: (lo, hi + 1), output: (output.offset(), output.offset() + output.len()) })
    }

    /// Where `input`'s element 0 lies in its mapped region.
    pub(crate) fn input_start<T: Element>(&self, input: &XData<T>) -> usize {
        input.offset() - self.input.0
    }

    /// Runs `f` over the mapped input and output of the pass as host command `command` of process `owner`
    /// (`bytes` and `flops` for profiles); `overwriting`: `f` writes every output element, whose old values are
    /// not fetched.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn run<T: Element, R>(
        &self,
        owner: &str,
        command: &str,
        input: &XData<T>,
        output: &XData<T>,
        (bytes, flops): (u64, u64),
        overwriting: bool,
        f: impl FnOnce(&[T], &mut [T]) -> R,
    ) -> Result<R> {
        let reads = [Region { buffer: input.storage().buffer(), lo: self.input.0, hi: self.input.1 }];
        let write = Region { buffer: output.storage().buffer(), lo: self.output.0, hi: self.output.1 };
        let mut result = None;
        HostCommand::new::<T, T>(owner, command, &[input], &[output])?.work(bytes, flops).run(|queue| {
            let body = |ins: &[&[T]], out: &mut [T]| result = Some(f(ins.first().copied().unwrap_or_default(), out));
            let mapped = if overwriting {
                ffi::with_mapped_overwriting::<T, T, ()>(queue, &reads, &write, body)
            } else {
                ffi::with_mapped::<T, T, ()>(queue, &reads, &write, body)
            };
            mapped.map(|((), event)| event)
        })?;
        result.ok_or_else(|| Error::invalid(owner, format!("`{command}` did not run")))
    }
}
