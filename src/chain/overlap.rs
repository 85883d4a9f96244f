//! A batch on one device with its host work overlapped: while the device runs file k, reader threads read and
//! decode the files after it and writer threads convert, encode and write the files before it; the decoding and
//! conversions themselves use every core ([`crate::io`]'s conversions run on rayon's threads).
//!
//! Host memory stays within the one budget ([`HostBudget`]): the first file runs alone and its host footprint
//! (the file's values, their copy in the device's type, its outputs and their encoding) is measured; from then on
//! as many files are in flight — read, running or being written — as half the budget holds at that size (at
//! least one; at most the readers, the device and the writers can use).

use super::any_data::FileSpec;
use super::pipeline_file::Chain;
use super::run::{BatchInput, ChainRunner, Loader, Outcome, PendingOutput, Progress, RunRecord};
use crate::{ClApp, HostBudget, Image, Report, Result};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Condvar, Mutex};

/// The files in flight at once: a count the first file's measured footprint sets ([`Gate::size_for`]).
struct Gate {
    state: Mutex<(usize, usize)>,
    changed: Condvar,
}

impl Gate {
    /// A gate that lets one file through until its limit is set.
    fn new() -> Gate {
        Gate { state: Mutex::new((0, 1)), changed: Condvar::new() }
    }

    /// Waits until one more file may be in flight, and counts it.
    fn enter(&self) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        while state.0 >= state.1 {
            state = self.changed.wait(state).unwrap_or_else(|p| p.into_inner());
        }
        state.0 += 1;
    }

    /// A file left (written, or failed).
    fn leave(&self) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.0 = state.0.saturating_sub(1);
        self.changed.notify_all();
    }

    /// Sets how many files may be in flight.
    fn set_limit(&self, files: usize) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.1 = files.max(1);
        self.changed.notify_all();
    }

    /// Files of `footprint` host bytes that fit half of `budget` (the other half is the headroom the formats'
    /// decoders and encoders take beside the arrays), between 1 and `most`.
    fn size_for(footprint: u64, budget: u64, most: usize) -> usize {
        let fit = (budget / 2).checked_div(footprint.max(1)).unwrap_or(1);
        usize::try_from(fit).unwrap_or(usize::MAX).clamp(1, most.max(1))
    }
}

/// Threads for the host work beside the device's: readers and writers, a quarter of the cores each (one at
/// least, four at most: past that, reading and writing are the disk's, and within a file the conversions use
/// every core anyway).
fn helper_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get()).div_ceil(4).clamp(1, 4)
}

/// A file read, waiting for the device.
type Loaded = (usize, Result<(FileSpec, Image)>, u64);

/// A file's run, waiting for its outputs to be written.
struct ToWrite {
    index: usize,
    record: RunRecord,
    pending: Vec<PendingOutput>,
}

/// What the device lanes tell the calling thread.
enum Event {
    /// File `index` starts on a device.
    Starting(usize),
    /// File `index` is done: its outputs are written, or it failed.
    Finished(usize, RunRecord),
    /// The profile of the first run.
    Profiled(Report),
}

impl Chain {
    /// [`Chain::run`] over a batch: the files read ahead and written behind on threads while the devices run,
    /// within the host memory budget. Each of `lanes` runs files one after another with its own built chain —
    /// queues of one device (their transfers and host work then overlap each other's) or several devices.
    /// `progress` hears of each file on the calling thread as it starts on a device and as its outputs are
    /// written. Records come back in the batch's order.
    ///
    /// ```
    /// use cliper::chain::{BatchInput, Chain};
    /// let text = "input = { x = 'data/phantom_256.png' }\n[[step]]\nop = 'threshold'\nvalue = 30000\nin = 'x'\nout = 'y'";
    /// let chain = Chain::from_toml(text, "t.toml".as_ref())?;
    /// let lanes = [cliper::ClApp::new()?, cliper::ClApp::new()?];
    /// let batch = BatchInput { input: 0, files: vec!["data/phantom_256.png".into(), "data/phantom_256.tif".into()] };
    /// let outcome = chain.run_on_lanes(&lanes, &batch, false, |_| {})?;
    /// assert_eq!(outcome.records.len(), 2);
    /// assert!(outcome.failures().next().is_none());
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn run_on_lanes(
        &self,
        lanes: &[ClApp],
        batch: &BatchInput,
        profile: bool,
        mut progress: impl FnMut(Progress<'_>),
    ) -> Result<Outcome> {
        let budget = HostBudget::current()?.bytes;
        let runners = lanes.iter().map(|_| self.runner(Some(batch.input))).collect::<Result<Vec<_>>>()?;
        let Some(loader) = runners.first().map(ChainRunner::loader) else {
            return Err(crate::Error::invalid("batch", "no device to run on"));
        };
        let threads = helper_threads();
        let gate = Gate::new();
        let next = AtomicUsize::new(0);
        let (sized, profiled) = (AtomicBool::new(false), AtomicBool::new(!profile));
        let files = &batch.files;
        let mut records: Vec<Option<RunRecord>> = (0..files.len()).map(|_| None).collect();
        let mut report: Option<Report> = None;
        let (write_tx, write_rx) = channel::<ToWrite>();
        let (loaded_tx, loaded_rx) = channel::<Loaded>();
        let (write_rx, loaded_rx) = (Mutex::new(write_rx), Mutex::new(loaded_rx));
        std::thread::scope(|scope| {
            let (events, heard) = channel::<Event>();
            for _ in 0..threads {
                let (loaded_tx, loader, gate, next) = (loaded_tx.clone(), &loader, &gate, &next);
                scope.spawn(move || read_ahead(files, next, gate, loader, loaded_tx));
            }
            drop(loaded_tx);
            for _ in 0..threads {
                let (write_rx, events, gate) = (&write_rx, events.clone(), &gate);
                scope.spawn(move || write_behind(write_rx, gate, events));
            }
            for (mut runner, app) in runners.into_iter().zip(lanes) {
                let (loaded_rx, write_tx, events) = (&loaded_rx, write_tx.clone(), events.clone());
                let (gate, sized, profiled) = (&gate, &sized, &profiled);
                scope.spawn(move || {
                    loop {
                        let job = loaded_rx.lock().unwrap_or_else(|p| p.into_inner()).recv();
                        let Ok((index, loaded, read_bytes)) = job else { return };
                        let _ = events.send(Event::Starting(index));
                        let first = !profiled.swap(true, Ordering::SeqCst);
                        let file = files.get(index).map(PathBuf::as_path);
                        let (record, pending, report) = runner.compute(app, file, Some(loaded), first);
                        if let Some(r) = report {
                            let _ = events.send(Event::Profiled(r));
                        }
                        if !sized.swap(true, Ordering::SeqCst) {
                            // Values read, their device copy and each output with its encoding: the first file's
                            // host footprint sets how many may be in flight.
                            let outputs: u64 = pending.iter().map(PendingOutput::bytes).sum();
                            let most = 2 * threads + lanes.len();
                            gate.set_limit(Gate::size_for(2 * read_bytes + 2 * outputs, budget, most));
                        }
                        // A writer takes it; were they all gone, it is written here.
                        if let Err(unsent) = write_tx.send(ToWrite { index, record, pending }) {
                            let ToWrite { index, mut record, pending } = unsent.0;
                            super::run::save_all(&mut record, pending);
                            gate.leave();
                            let _ = events.send(Event::Finished(index, record));
                        }
                    }
                });
            }
            drop((events, write_tx));
            for event in heard {
                match event {
                    Event::Starting(index) => {
                        if let Some(f) = files.get(index) {
                            progress(Progress::Starting(f));
                        }
                    }
                    Event::Finished(index, record) => {
                        progress(Progress::Finished(&record));
                        if let Some(slot) = records.get_mut(index) {
                            *slot = Some(record);
                        }
                    }
                    Event::Profiled(r) => {
                        report.get_or_insert(r);
                    }
                }
            }
        });
        let records =
            records.into_iter().zip(files).map(|(record, file)| record.unwrap_or_else(|| lost(file))).collect();
        Ok(Outcome { records, report })
    }
}

/// A reader thread: takes the next file of the batch, waits for room, reads and converts it, hands it on.
fn read_ahead(files: &[PathBuf], next: &AtomicUsize, gate: &Gate, loader: &Loader<'_>, loaded: Sender<Loaded>) {
    loop {
        let index = next.fetch_add(1, Ordering::SeqCst);
        let Some(file) = files.get(index) else { return };
        gate.enter();
        let result = loader.load(file);
        let bytes = result.as_ref().map_or(0, |(_, image)| image.array.bytes());
        if loaded.send((index, result, bytes)).is_err() {
            gate.leave();
            return;
        }
    }
}

/// A writer thread: writes each finished run's outputs and reports the record.
fn write_behind(work: &Mutex<Receiver<ToWrite>>, gate: &Gate, events: Sender<Event>) {
    loop {
        let job = work.lock().unwrap_or_else(|p| p.into_inner()).recv();
        let Ok(ToWrite { index, mut record, pending }) = job else { return };
        super::run::save_all(&mut record, pending);
        gate.leave();
        if events.send(Event::Finished(index, record)).is_err() {
            return;
        }
    }
}

/// The record of a file whose run never came back (a thread of the batch stopped early).
fn lost(file: &Path) -> RunRecord {
    let error = crate::Error::invalid("batch", format!("{} was not run", file.display()));
    RunRecord::failed(Some(file.to_path_buf()), error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_files_in_flight_fit_half_the_budget_between_one_and_the_threads() {
        assert_eq!(Gate::size_for(100, 1000, 9), 5);
        assert_eq!(Gate::size_for(100, 10_000, 9), 9, "never more than the threads can use");
        assert_eq!(Gate::size_for(1000, 100, 9), 1, "one file even when it alone is over half the budget");
        assert_eq!(Gate::size_for(0, 100, 9), 9);
    }

    #[test]
    fn records_come_back_in_the_batchs_order_with_a_failing_file_named_on_two_lanes() {
        let dir = std::env::temp_dir().join(format!("cliper-overlap-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut files = Vec::new();
        for k in 0..7 {
            let path = dir.join(format!("f{k}.npy"));
            if k == 3 {
                std::fs::write(&path, b"not an npy file").unwrap();
            } else {
                let a = ndarray::ArrayD::from_shape_fn(ndarray::IxDyn(&[5 + k, 7]), |i| (i[0] * 7 + i[1] + k) as f32);
                crate::write_npy(&path, &crate::HostArray::F32(a)).unwrap();
            }
            files.push(path);
        }
        let out = dir.join("out");
        let text = format!(
            "input = {{ x = 'in/' }}\n[[step]]\nop = 'threshold'\nvalue = 20\nin = 'x'\nout = 'y'\n[output]\ny = '{}/'",
            out.display()
        );
        let chain = Chain::from_toml(&text, &dir.join("t.toml")).unwrap();
        let lanes = [ClApp::new().unwrap(), ClApp::new().unwrap()];
        let batch = BatchInput { input: 0, files: files.clone() };
        let mut heard = Vec::new();
        let outcome = chain
            .run_on_lanes(&lanes, &batch, false, |p| {
                if let Progress::Finished(r) = p {
                    heard.push(r.input.clone());
                }
            })
            .unwrap();
        assert_eq!(heard.len(), 7, "every file is heard of once");
        let inputs: Vec<_> = outcome.records.iter().map(|r| r.input.clone().unwrap()).collect();
        assert_eq!(inputs, files, "records in the batch's order");
        for (k, record) in outcome.records.iter().enumerate() {
            assert_eq!(record.error.is_some(), k == 3, "file {k}: {:?}", record.error);
            if k != 3 {
                let written = crate::read_file(out.join(format!("f{k}.npy"))).unwrap();
                assert_eq!((written.dtype(), written.shape()), (crate::Dtype::U8, &[5 + k, 7][..]));
            }
        }
        std::fs::remove_dir_all(&dir).ok();
    }
}
