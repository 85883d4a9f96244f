//! A device buffer shared by all views of it, with what is known about the last command that wrote it.

use crate::app::{ClApp, DeviceBuffer};
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
    /// The last command that wrote the buffer (its event, when it was enqueued with one) and the process it
    /// belongs to.
    last_write: Option<(Option<Arc<Event>>, String)>,
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

    pub(crate) fn record_write(&self, event: Option<Arc<Event>>, producer: &str) {
        let mut s = self.state();
        s.failure = None;
        s.last_write = Some((event, producer.to_string()));
    }

    /// Runs `read`, a blocking read of this buffer on `app`'s queue, then: `Err` when the last write ended
    /// abnormally (a negative event status, which is how OpenCL reports a kernel that faulted or ran out of
    /// resources while executing). A write enqueued without its event is judged by a marker enqueued before the
    /// read, which completes after it on the in-order queue (and after every command before it).
    pub(crate) fn read_after_last_write(&self, app: &ClApp, read: impl FnOnce() -> Result<()>) -> Result<()> {
        let witness = match self.state().last_write.clone() {
            Some((Some(event), producer)) => Some((event, producer)),
            Some((None, producer)) => {
                let marker =
                    crate::app::marker(app).map_err(|e| Error::cl(e.0, "enqueueing a marker before a read"))?;
                Some((Arc::new(marker), producer))
            }
            None => None,
        };
        read()?;
        if let Some((event, producer)) = witness
            && let Ok(status) = event.command_execution_status()
            && status.0 < 0
        {
            let cause = Arc::new(Error::cl(status.0, "executing on the device"));
            return Err(Error::ProducerFailed { producer, cause });
        }
        Ok(())
    }
}

#[cfg(test)]
impl Storage {
    /// Whether the last write was recorded with its event (`None`: nothing wrote the buffer yet).
    fn last_write_has_event(&self) -> Option<bool> {
        self.state().last_write.as_ref().map(|(event, _)| event.is_some())
    }
}

#[cfg(test)]
mod tests {
    use crate::prelude::*;

    #[test]
    fn commands_ask_for_their_event_only_while_a_profile_is_recorded() {
        let app = ClApp::builder().use_env(true).profiling(true).build().unwrap();
        let data: Vec<f32> = (0..3 * 517).map(|v| v as f32 * 0.5 - 7.0).collect();
        let x = XData::from_slice(&app, &[3, 517], &data).unwrap();
        let (row, column) = (x.slice_axis(0, 1..2).unwrap(), XData::<f32>::zeros(&app, &[517, 1]).unwrap());
        let t = XData::<f32>::zeros(&app, &[517, 3]).unwrap();
        // A transpose kernel, and a [1, n] → [n, 1] copy, which is one clEnqueueCopyBuffer.
        let mut pipeline = Pipeline::new(&app).then(Transpose::new(&x, &t));
        let copy = pipeline.push_shared(Transpose::new(&row, &column));
        pipeline.init().unwrap();
        assert_eq!(copy.lock().unwrap().strategy(), Some(CopyStrategy::Buffer));
        let transposed: Vec<f32> = (0..3 * 517).map(|n| data[(n % 3) * 517 + n / 3]).collect();
        for profiled in [false, true, false] {
            if profiled {
                assert_eq!(pipeline.profile().unwrap().launches.len(), 2);
            } else {
                pipeline.run().unwrap();
            }
            for written in [&t, &column] {
                assert_eq!(written.storage().last_write_has_event(), Some(profiled), "profiled: {profiled}");
            }
            // Read after a write enqueued with or without its event (then a marker stands in for it).
            assert_eq!(t.to_vec().unwrap(), transposed);
            assert_eq!(column.to_vec().unwrap(), data.get(517..2 * 517).unwrap());
        }
    }
}
