//! [`MpiJob`] (the `mpi` cargo feature): a list of inputs spread over the ranks of an MPI job, each rank working
//! through its share with a [`DevicePool`](crate::DevicePool) over its host's devices. Rank 0 hands the inputs out one at a time as
//! ranks ask for them (a faster rank takes more) and gathers one report per input; nothing but input indices and
//! reports travel, so every rank must see the same input list (a shared file system: [`MpiJob::agree`] checks).
//!
//! Only the thread that joined the job talks MPI (`MPI_THREAD_FUNNELED`): the pool's workers ask it for inputs
//! through a channel, and it answers between their results (docs/scaling.md).

/// Environment variables through which MPI launchers tell a process how many ranks its job has: Open MPI,
/// MPICH and Intel MPI (Hydra, PMI), PMIx, MVAPICH.
const SIZE_VARIABLES: [&str; 4] = ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MV2_COMM_WORLD_SIZE"];

/// How many ranks the MPI job this process was launched in has, read from the launcher's environment without
/// starting MPI (`None` when no launcher started it). Works in every build, so a program built without the
/// `mpi` feature can refuse to run a batch once per rank.
///
/// ```
/// // Not under mpirun here, unless the doctests are.
/// let ranks = cliper::mpi_launcher_ranks();
/// assert!(ranks.is_none() || ranks >= Some(1));
/// ```
pub fn mpi_launcher_ranks() -> Option<usize> {
    SIZE_VARIABLES.iter().find_map(|v| std::env::var(v).ok()?.trim().parse().ok())
}

/// One input's report gathered on rank 0: which rank and device ran it, how long it took, whether it succeeded,
/// and the text the caller made of its result (a log line, a JSON record).
///
/// ```
/// let r = cliper::RankReport { input: 2, rank: 1, device: "0:0 cpu".into(), seconds: 0.1, ok: true, text: "{}".into() };
/// assert_eq!(r.rank, 1);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct RankReport {
    /// The input's index in the list.
    pub input: usize,
    /// The rank that ran it.
    pub rank: usize,
    /// The device of that rank that ran it (`P:D` and name).
    pub device: String,
    /// Seconds it took there.
    pub seconds: f64,
    /// Whether it succeeded (as the caller's `report` said).
    pub ok: bool,
    /// What the caller's `report` made of the result.
    pub text: String,
}

#[cfg(feature = "mpi")]
pub use with_mpi::{MpiJob, MpiOutcome};

#[cfg(feature = "mpi")]
mod with_mpi {
    use super::super::cl_app::ClApp;
    use super::super::pool::{Counter, DevicePool, Handout, PoolResult, not_started};
    use super::*;
    use crate::error::{Error, Result};
    use mpi::collective::SystemOperation;
    use mpi::topology::SimpleCommunicator;
    use mpi::traits::*;
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::mpsc::{Receiver, Sender, channel};

    /// Message tags: a rank asks for an input, rank 0 assigns one, a rank reports a finished input, a rank has
    /// finished.
    const WANT: i32 = 1;
    const ASSIGN: i32 = 2;
    const REPORT: i32 = 3;
    const BYE: i32 = 4;
    /// "No input left" in an assignment.
    const NONE_LEFT: u64 = u64::MAX;

    /// What a spread run gave this rank: the results it ran itself, and on rank 0 every input's report in input
    /// order; `failed` (on every rank) counts the inputs that failed anywhere.
    ///
    /// ```
    /// let outcome = cliper::MpiOutcome::<f32> { local: Vec::new(), reports: Vec::new(), failed: 0 };
    /// assert_eq!(outcome.failed, 0);
    /// ```
    #[derive(Debug)]
    pub struct MpiOutcome<O> {
        /// The inputs this rank ran, in the order they finished.
        pub local: Vec<PoolResult<O>>,
        /// On rank 0, one report per input, in input order; empty on the other ranks.
        pub reports: Vec<RankReport>,
        /// Inputs that failed, on whichever rank (the same number on every rank).
        pub failed: usize,
    }

    /// This process's place in an MPI job (`mpirun -n R …`): MPI is started by [`MpiJob::init`] and finished when
    /// the job value is dropped.
    ///
    /// ```
    /// use cliper::{DevicePool, MpiJob, XData};
    /// // Under `mpirun -n R` each rank runs this; started alone, the job has one rank.
    /// let job = MpiJob::init()?;
    /// let pool = DevicePool::new(cliper::ClApp::all()?)?;
    /// let inputs: Vec<f32> = (0..100).map(|i| i as f32).collect();
    /// job.agree("inputs", inputs.len() as u64)?;
    /// let outcome = job.map(&pool, &inputs, |_| Ok(()), |_, app, &x| {
    ///     Ok(XData::from_slice(app, &[1], &[x])?.to_vec()?[0] * 2.0)
    /// }, |done| (done.result.is_ok(), format!("{:?}", done.result.as_ref().ok())), |_| {})?;
    /// if job.rank() == 0 {
    ///     assert_eq!(outcome.reports.len(), 100);
    /// }
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub struct MpiJob {
        world: SimpleCommunicator,
        // Finalises MPI when dropped, after the communicator.
        _universe: mpi::environment::Universe,
    }

    impl std::fmt::Debug for MpiJob {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "MpiJob {{ rank: {}, ranks: {} }}", self.rank(), self.ranks())
        }
    }

    impl MpiJob {
        /// Joins the MPI job this process was launched in (a process started without a launcher is a job of
        /// one rank). Fails if MPI was started already in this process, or if the MPI library cannot let another
        /// thread than the caller's run beside MPI calls (`MPI_THREAD_FUNNELED`).
        pub fn init() -> Result<MpiJob> {
            let (universe, threading) = mpi::initialize_with_threading(mpi::Threading::Funneled)
                .ok_or_else(|| Error::invalid("MpiJob::init", "MPI was already started in this process"))?;
            if threading < mpi::Threading::Funneled {
                return Err(Error::invalid(
                    "MpiJob::init",
                    format!("the MPI library gives {threading:?} threading; a device pool needs Funneled"),
                ));
            }
            Ok(MpiJob { world: universe.world(), _universe: universe })
        }

        /// This process's rank, from 0.
        pub fn rank(&self) -> usize {
            self.world.rank().max(0) as usize
        }

        /// The number of ranks in the job.
        pub fn ranks(&self) -> usize {
            self.world.size().max(1) as usize
        }

        /// Checks that every rank sees the same `fingerprint` of `what` as rank 0 (a hash of the input list), so
        /// that an index means the same input everywhere. Every rank gets the same answer (a collective call).
        pub fn agree(&self, what: &str, fingerprint: u64) -> Result<()> {
            let mut theirs = fingerprint;
            self.world.process_at_rank(0).broadcast_into(&mut theirs);
            let mine_differs = u64::from(theirs != fingerprint);
            let mut differing = 0u64;
            self.world.all_reduce_into(&mine_differs, &mut differing, SystemOperation::sum());
            if differing > 0 {
                return Err(Error::invalid(
                    "MpiJob::agree",
                    format!(
                        "{differing} of {} ranks see different {what} than rank 0 (this is rank {}): are they on \
                         the same file system, with the same arguments?",
                        self.ranks(),
                        self.rank()
                    ),
                ));
            }
            Ok(())
        }

        /// Runs `work` on every input across the job: each rank's `pool` works as [`DevicePool::map`] does, but
        /// takes its inputs from rank 0 one at a time. `report` turns each result into `(succeeded, text)` on the
        /// rank that ran it; rank 0 gathers the reports and tells `on_report` of each as it arrives (its own and
        /// the other ranks'). Every rank must call this with the same `inputs` (see [`MpiJob::agree`]).
        pub fn map<I, S, O>(
            &self,
            pool: &DevicePool,
            inputs: &[I],
            setup: impl Fn(&ClApp) -> Result<S> + Sync,
            work: impl Fn(&mut S, &ClApp, &I) -> Result<O> + Sync,
            report: impl Fn(&PoolResult<O>) -> (bool, String),
            on_report: impl FnMut(&RankReport),
        ) -> Result<MpiOutcome<O>>
        where
            I: Sync,
            O: Send,
        {
            let rank = self.rank();
            let mut reports: Vec<RankReport> = Vec::new();
            let local = if rank == 0 {
                let counter = Counter::new(inputs.len());
                // Both the local results and the other ranks' messages add reports, on this thread.
                let gathered = std::cell::RefCell::new((Vec::<RankReport>::new(), on_report));
                let add = |r: RankReport| {
                    let mut g = gathered.borrow_mut();
                    (g.1)(&r);
                    g.0.push(r);
                };
                let finished = std::cell::Cell::new(0usize);
                let first_error: std::cell::RefCell<Option<Error>> = std::cell::RefCell::new(None);
                let handle = |message: Vec<u8>, from: usize, tag: i32| {
                    let result = match tag {
                        WANT => {
                            let index = counter.next().map_or(NONE_LEFT, |i| i as u64);
                            let answer = [index.to_le_bytes(), (counter.remaining() as u64).to_le_bytes()].concat();
                            self.world.process_at_rank(from as i32).send_with_tag(&answer[..], ASSIGN);
                            Ok(())
                        }
                        REPORT => decode(&message, from).map(add),
                        BYE => {
                            finished.set(finished.get() + 1);
                            Ok(())
                        }
                        other => {
                            Err(Error::invalid("MpiJob", format!("rank {from} sent a message of unknown tag {other}")))
                        }
                    };
                    if let Err(e) = result {
                        first_error.borrow_mut().get_or_insert(e);
                    }
                };
                let (ran, failed_setups) = pool.work_through(
                    inputs,
                    &counter,
                    &setup,
                    &work,
                    |done| {
                        let (ok, text) = report(done);
                        let device = done.device.clone();
                        add(RankReport { input: done.input, rank: 0, device, seconds: done.seconds, ok, text });
                    },
                    || {
                        while let Some(status) = self.world.any_process().immediate_probe() {
                            let from = status.source_rank();
                            let (message, status) =
                                self.world.process_at_rank(from).receive_vec_with_tag::<u8>(status.tag());
                            handle(message, from.max(0) as usize, status.tag());
                        }
                    },
                );
                // The local workers are done: answer the other ranks until each has said it finished.
                while finished.get() + 1 < self.ranks() {
                    let (message, status) = self.world.any_process().receive_vec::<u8>();
                    handle(message, status.source_rank().max(0) as usize, status.tag());
                }
                if let Some(e) = first_error.into_inner() {
                    return Err(e);
                }
                // Inputs nobody took: no device of any rank could start.
                let mut seen = vec![false; inputs.len()];
                for r in &gathered.borrow().0 {
                    if let Some(s) = seen.get_mut(r.input) {
                        *s = true;
                    }
                }
                for (input, _) in seen.iter().enumerate().filter(|(_, s)| !**s) {
                    let (ok, text) = report(&not_started::<O>(input, &failed_setups));
                    add(RankReport { input, rank: 0, device: "no device".into(), seconds: 0.0, ok, text });
                }
                reports = gathered.into_inner().0;
                reports.sort_by_key(|r| r.input);
                ran
            } else {
                let (asks, answers): (Sender<Reply>, Receiver<Reply>) = channel();
                let handout = RankZero { asks: Mutex::new(asks), remaining: AtomicUsize::new(inputs.len()) };
                let zero = self.world.process_at_rank(0);
                let (ran, _) = pool.work_through(
                    inputs,
                    &handout,
                    &setup,
                    &work,
                    |done| {
                        let (ok, text) = report(done);
                        zero.send_with_tag(&encode(done.input, &done.device, done.seconds, ok, &text)[..], REPORT);
                    },
                    || {
                        while let Ok(reply) = answers.try_recv() {
                            zero.send_with_tag(&[0u8][..], WANT);
                            let (answer, _) = zero.receive_vec_with_tag::<u8>(ASSIGN);
                            let word = |k: usize| {
                                answer.get(8 * k..8 * k + 8).and_then(|b| b.try_into().ok()).map(u64::from_le_bytes)
                            };
                            handout.remaining.store(word(1).unwrap_or(0) as usize, Ordering::Relaxed);
                            let index = word(0).filter(|&i| i != NONE_LEFT).map(|i| i as usize);
                            // A worker that stopped waiting has nothing to be told.
                            let _ = reply.send(index);
                        }
                    },
                );
                zero.send_with_tag(&[0u8][..], BYE);
                ran
            };
            let mut failed = reports.iter().filter(|r| !r.ok).count() as u64;
            self.world.process_at_rank(0).broadcast_into(&mut failed);
            Ok(MpiOutcome { local, reports, failed: failed as usize })
        }
    }

    /// Where the thread that talks MPI sends a worker the input rank 0 assigned it (`None`: none left).
    type Reply = Sender<Option<usize>>;

    /// The inputs as rank 0 hands them out, asked for through the thread that talks MPI.
    struct RankZero {
        asks: Mutex<Sender<Reply>>,
        remaining: AtomicUsize,
    }

    impl Handout for RankZero {
        fn remaining(&self) -> usize {
            self.remaining.load(Ordering::Relaxed)
        }

        fn next(&self) -> Option<usize> {
            let (reply, answer) = channel();
            self.asks.lock().unwrap_or_else(|p| p.into_inner()).send(reply).ok()?;
            answer.recv().ok().flatten()
        }
    }

    /// A report as bytes: input, seconds, success, then the device's and the text's lengths and bytes.
    fn encode(input: usize, device: &str, seconds: f64, ok: bool, text: &str) -> Vec<u8> {
        let mut out = Vec::with_capacity(33 + device.len() + text.len());
        out.extend_from_slice(&(input as u64).to_le_bytes());
        out.extend_from_slice(&seconds.to_le_bytes());
        out.push(u8::from(ok));
        out.extend_from_slice(&(device.len() as u64).to_le_bytes());
        out.extend_from_slice(device.as_bytes());
        out.extend_from_slice(&(text.len() as u64).to_le_bytes());
        out.extend_from_slice(text.as_bytes());
        out
    }

    /// The report [`encode`] made, from rank `rank`.
    fn decode(bytes: &[u8], rank: usize) -> Result<RankReport> {
        let bad = || Error::invalid("MpiJob", format!("rank {rank} sent a report that does not decode"));
        let mut rest = bytes;
        let mut take = |n: usize| -> Result<&[u8]> {
            let (part, after) = rest.split_at_checked(n).ok_or_else(bad)?;
            rest = after;
            Ok(part)
        };
        let word = |b: &[u8]| -> Result<u64> { Ok(u64::from_le_bytes(b.try_into().map_err(|_| bad())?)) };
        let input = word(take(8)?)? as usize;
        let seconds = f64::from_bits(word(take(8)?)?);
        let ok = take(1)? == [1];
        let n = word(take(8)?)? as usize;
        let device = String::from_utf8_lossy(take(n)?).into_owned();
        let n = word(take(8)?)? as usize;
        let text = String::from_utf8_lossy(take(n)?).into_owned();
        Ok(RankReport { input, rank, device, seconds, ok, text })
    }
}
