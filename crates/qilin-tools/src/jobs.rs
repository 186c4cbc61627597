//! Background jobs started by `bash` with `background: true`: the [`JobTable`] service that
//! owns them, and what a job reports.
//!
//! Every job runs through the session's sandbox in its own process group and writes all its
//! output to a log file under the session's data folder. [`JobTable::end_all`], and dropping
//! the table, kill every job's whole process tree, so jobs die with the session and leave no
//! orphans (in the sandbox's `off` mode, a process that left its job's group survives).

use crate::process_group::{GroupGuard, spawn_shell};
use nix::sys::signal::Signal;
use parking_lot::Mutex;
use qilin_sandbox::Sandbox;
use schemars::JsonSchema;
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::io::AsyncReadExt;
use tokio::sync::watch;
use tokio::time::Instant;

/// How long output may keep arriving after a command's shell exits before its group is killed.
pub(crate) const DRAIN_GRACE: Duration = Duration::from_millis(300);

/// The background jobs of a session. A host service: put one in the session's
/// [`qilin_tool::Services`]; without it `bash` with `background: true` is refused.
#[derive(Default)]
pub struct JobTable {
    next_id: AtomicU64,
    jobs: Mutex<BTreeMap<String, Arc<Job>>>,
}

/// One background job.
pub struct Job {
    id: String,
    command: String,
    started: Instant,
    log_path: PathBuf,
    /// The log, opened when it was created: read back by position, never by its path.
    log: std::fs::File,
    group: Mutex<GroupGuard>,
    written: AtomicU64,
    read_offset: Mutex<u64>,
    status: watch::Receiver<JobStatus>,
}

/// Where a job stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum JobState {
    /// Still running.
    Running,
    /// Its shell exited on its own (see `exit_code`).
    Exited,
    /// It was ended by a signal (see `signal`), e.g. by `job_kill`.
    Killed,
}

/// A job's state with its exit code or signal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobStatus {
    /// Running, exited or killed.
    pub state: JobState,
    /// The shell's exit code, once it exited.
    pub exit_code: Option<i32>,
    /// The signal that ended it, e.g. `SIGKILL`.
    pub signal: Option<String>,
    /// How long it ran, once it ended.
    pub ran_for: Option<Duration>,
}

/// What `bash` returns for a job it started in the background.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct JobReceipt {
    /// The job's id, for `job_output` and `job_kill`.
    pub job_id: String,
    /// The command as given.
    pub command: String,
    /// The folder it runs in, relative to the workspace (`.` for the root).
    pub cwd: String,
    /// The process id leading its process group: the sandbox helper's, or the shell's when
    /// the sandbox is off.
    pub pid: i32,
    /// The file that receives all of its output.
    pub log_path: String,
}

/// Why a job operation failed.
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    /// No job has that id.
    #[error("no background job has the id `{id}`; {}", known_jobs(.known))]
    Unknown {
        /// The id asked for.
        id: String,
        /// The ids that exist.
        known: Vec<String>,
    },
    /// The command could not be started or its log written.
    #[error("the background job could not be started: {0}")]
    Start(#[from] std::io::Error),
}

fn known_jobs(known: &[String]) -> String {
    if known.is_empty() {
        "no job has been started in this session".to_string()
    } else {
        format!("the jobs are: {}", known.join(", "))
    }
}

impl JobTable {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts `command` with `bash -c` in `cwd` through `sandbox`, its output logged under
    /// `data_dir/jobs/`.
    pub fn start(
        &self,
        command: &str,
        cwd: &Path,
        cwd_shown: &str,
        data_dir: &Path,
        sandbox: &Sandbox,
    ) -> Result<JobReceipt, JobError> {
        let id = format!("job-{}", self.next_id.fetch_add(1, Ordering::Relaxed) + 1);
        let log_path = data_dir.join("jobs").join(format!("{id}.log"));
        // Never through a link a command planted: the log is created afresh, exclusively,
        // and read back through the same open file.
        let mut log = qilin_tool::create_private_file(&log_path)?;
        let reader = log.try_clone()?;
        let process = spawn_shell(command, cwd, sandbox)?;
        let pid = process.group.id();
        let (status_tx, status_rx) = watch::channel(JobStatus {
            state: JobState::Running,
            exit_code: None,
            signal: None,
            ran_for: None,
        });
        let job = Arc::new(Job {
            id: id.clone(),
            command: command.to_string(),
            started: Instant::now(),
            log_path: log_path.clone(),
            log: reader,
            group: Mutex::new(process.group),
            written: AtomicU64::new(0),
            read_offset: Mutex::new(0),
            status: status_rx,
        });
        let monitored = Arc::clone(&job);
        let mut child = process.child;
        let mut output = process.output;
        tokio::spawn(async move {
            let mut buf = vec![0u8; 16 * 1024];
            let mut open = true;
            let exit = loop {
                tokio::select! {
                    read = output.read(&mut buf), if open => match read {
                        Ok(0) | Err(_) => open = false,
                        Ok(n) => monitored.append(&mut log, &buf[..n]),
                    },
                    exit = child.wait() => break exit,
                }
            };
            let drain_until = Instant::now() + DRAIN_GRACE;
            while open {
                match tokio::time::timeout_at(drain_until, output.read(&mut buf)).await {
                    Ok(Ok(n)) if n > 0 => monitored.append(&mut log, &buf[..n]),
                    _ => open = false,
                }
            }
            monitored.group.lock().kill();
            let ran_for = Some(monitored.started.elapsed());
            let status = match exit {
                Ok(status) => exit_status(status, ran_for),
                Err(err) => {
                    monitored.append(&mut log, format!("\n[qilin: {err}]\n").as_bytes());
                    JobStatus {
                        state: JobState::Exited,
                        exit_code: None,
                        signal: None,
                        ran_for,
                    }
                }
            };
            let _ = status_tx.send(status);
        });
        self.jobs.lock().insert(id.clone(), job);
        Ok(JobReceipt {
            job_id: id,
            command: command.to_string(),
            cwd: cwd_shown.to_string(),
            pid,
            log_path: log_path.to_string_lossy().into_owned(),
        })
    }

    /// The job with this id.
    pub fn get(&self, id: &str) -> Result<Arc<Job>, JobError> {
        let jobs = self.jobs.lock();
        jobs.get(id).cloned().ok_or_else(|| JobError::Unknown {
            id: id.to_string(),
            known: jobs.keys().cloned().collect(),
        })
    }

    /// Ends every job still running — its whole process tree, processes that left its group
    /// included — as a session does when it ends; returns how many were running.
    pub fn end_all(&self) -> usize {
        let jobs = self.jobs.lock();
        let mut ended = 0;
        for job in jobs.values() {
            if job.status().state == JobState::Running {
                ended += 1;
            }
            job.group.lock().kill();
        }
        ended
    }
}

impl Drop for JobTable {
    fn drop(&mut self) {
        self.end_all();
    }
}

impl Job {
    /// The job's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The command it runs.
    pub fn command(&self) -> &str {
        &self.command
    }

    /// The file holding all of its output.
    pub fn log_path(&self) -> &Path {
        &self.log_path
    }

    /// Its current status.
    pub fn status(&self) -> JobStatus {
        let mut status = self.status.borrow().clone();
        if status.state == JobState::Running {
            status.ran_for = Some(self.started.elapsed());
        }
        status
    }

    /// Waits until the job ends or `limit` passes; returns its status then.
    pub async fn wait(&self, limit: Duration) -> JobStatus {
        let mut status = self.status.clone();
        let _ =
            tokio::time::timeout(limit, status.wait_for(|s| s.state != JobState::Running)).await;
        self.status()
    }

    /// Sends `signal` to the job's whole process group.
    pub fn signal(&self, signal: Signal) -> std::io::Result<()> {
        self.group.lock().signal(signal)
    }

    /// Passes the output written since the previous call to `sink`, in chunks; returns the
    /// log offset it started at.
    pub fn take_new_output(&self, mut sink: impl FnMut(&[u8])) -> std::io::Result<u64> {
        use std::os::unix::fs::FileExt;
        let mut offset = self.read_offset.lock();
        let end = self.written.load(Ordering::Acquire);
        let start = *offset;
        let mut at = start;
        let mut buf = vec![0u8; 64 * 1024];
        while at < end {
            let want = buf
                .len()
                .min(usize::try_from(end - at).unwrap_or(usize::MAX));
            let n = self.log.read_at(&mut buf[..want], at)?;
            if n == 0 {
                break;
            }
            sink(&buf[..n]);
            at += n as u64;
        }
        *offset = at;
        Ok(start)
    }

    fn append(&self, log: &mut std::fs::File, bytes: &[u8]) {
        if log.write_all(bytes).is_ok() {
            self.written
                .fetch_add(bytes.len() as u64, Ordering::Release);
        }
    }
}

/// A finished process's status as a job status.
pub(crate) fn exit_status(
    status: std::process::ExitStatus,
    ran_for: Option<Duration>,
) -> JobStatus {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => JobStatus {
            state: JobState::Exited,
            exit_code: Some(code),
            signal: None,
            ran_for,
        },
        (None, signal) => JobStatus {
            state: JobState::Killed,
            exit_code: None,
            signal: signal.map(signal_name),
            ran_for,
        },
    }
}

/// `SIGKILL` for 9, or the number when the signal has no name.
pub(crate) fn signal_name(number: i32) -> String {
    Signal::try_from(number)
        .map(|signal| signal.as_str().to_string())
        .unwrap_or_else(|_| format!("signal {number}"))
}
