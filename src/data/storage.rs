//! A device buffer shared by all views of it, with what is known about the last command that wrote it.

use crate::app::DeviceBuffer;
use crate::error::{Error, Result};
use opencl3::event::Event;
use opencl3::memory::Buffer;
use std::sync::{Arc, Mutex};

/// One device allocation. Views (`XData` handles) share it through an `Arc`.
pub(crate) struct Storage {
    buffer: DeviceBuffer,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// The last command that wrote the buffer and the process it belongs to.
    last_write: Option<(Arc<Event>, String)>,
    /// Set when a producer failed: reading the buffer reports this instead of stale contents.
    failure: Option<(String, Arc<Error>)>,
}

impl Storage {
    pub(crate) fn new(buffer: DeviceBuffer) -> Storage {
        Storage { buffer, state: Mutex::new(State::default()) }
    }

    pub(crate) fn buffer(&self) -> &Buffer<u8> {
        self.buffer.buffer()
    }

    /// Size in bytes as requested (the allocation itself is at least one byte).
    pub(crate) fn bytes(&self) -> usize {
        self.buffer.bytes()
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic while the lock was held cannot leave `State` half-updated (each update is one assignment).
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// `Err(ProducerFailed)` when the last producer of this buffer failed.
    pub(crate) fn check(&self) -> Result<()> {
        match &self.state().failure {
            Some((producer, cause)) => Err(Error::ProducerFailed { producer: producer.clone(), cause: cause.clone() }),
            None => Ok(()),
        }
    }

    pub(crate) fn poison(&self, producer: &str, cause: Arc<Error>) {
        self.state().failure = Some((producer.to_string(), cause));
    }

    pub(crate) fn record_write(&self, event: Arc<Event>, producer: &str) {
        let mut s = self.state();
        s.failure = None;
        s.last_write = Some((event, producer.to_string()));
    }

    /// After the queue has passed the last write: `Err` when that command ended abnormally (a negative event
    /// status, which is how OpenCL reports a kernel that faulted or ran out of resources while executing).
    pub(crate) fn check_completed(&self) -> Result<()> {
        let s = self.state();
        if let Some((event, producer)) = &s.last_write
            && let Ok(status) = event.command_execution_status()
            && status.0 < 0
        {
            let cause = Arc::new(Error::cl(status.0, "executing on the device"));
            return Err(Error::ProducerFailed { producer: producer.clone(), cause });
        }
        Ok(())
    }
}
