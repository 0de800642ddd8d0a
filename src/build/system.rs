//! What the machine offers and what a killed run left behind: free disk, physical memory, and
//! stale temporary files.

use crate::store::file_name;
use crate::table::{Material, Metric};
use std::path::Path;

/// Bytes free to an unprivileged writer on the file system holding `dir`.
#[cfg(unix)]
pub fn free_disk(dir: &Path) -> std::io::Result<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).map_err(|_| {
        std::io::Error::new(std::io::ErrorKind::InvalidInput, "path contains a NUL byte")
    })?;
    // SAFETY: all-zero bytes are a valid `statvfs` (a struct of plain integers, no pointers,
    // no niches).
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a valid NUL-terminated path that outlives the call and `st` a writable,
    // properly aligned statvfs; statvfs only writes into `st`. Exercised by every `generate`
    // that checks the disk, e.g. tests/cli_generate.rs `no_deps_builds_only_the_named_tables`,
    // and with a full disk by `full_disk_is_refused_or_fails_cleanly` (where a tmpfs can be
    // mounted).
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok((st.f_bavail as u64).saturating_mul(st.f_frsize as u64))
}

/// Bytes free on the file system holding `dir` (unknown here: unlimited).
#[cfg(not(unix))]
pub fn free_disk(_dir: &Path) -> std::io::Result<u64> {
    Ok(u64::MAX)
}

/// Physical memory of this machine in bytes, if known.
pub fn physical_memory() -> Option<u64> {
    #[cfg(unix)]
    {
        // SAFETY: sysconf takes an integer and touches no memory of ours; it has no
        // preconditions and returns -1 for unknown names. Exercised by every `generate`
        // without `--memory-limit` (the default limit is physical memory), e.g.
        // tests/cli_generate.rs `no_deps_builds_only_the_named_tables`.
        let (pages, page) = unsafe {
            (
                libc::sysconf(libc::_SC_PHYS_PAGES),
                libc::sysconf(libc::_SC_PAGESIZE),
            )
        };
        if pages > 0 && page > 0 {
            return Some(pages as u64 * page as u64);
        }
    }
    None
}

/// Is the process `pid` still running?
fn process_alive(pid: u32) -> bool {
    #[cfg(unix)]
    {
        let Ok(pid) = libc::pid_t::try_from(pid) else {
            return false;
        };
        // SAFETY: kill takes integers and touches no memory of ours; with signal 0 it sends
        // nothing and only checks that the process exists. Exercised by
        // tests/cli_generate.rs `no_deps_builds_only_the_named_tables` (a stale temporary of
        // a process id that does not run).
        let r = unsafe { libc::kill(pid, 0) };
        r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        true
    }
}

/// Remove `M.{wdl,dtz,dtw}.tmp.<pid>` files (and writers' spools, `….tmp.<pid>.<n>`, and a
/// run's side files, [`super::SIDES_DIR`]`.tmp.<pid>`) in `dir` whose writer no longer runs
/// (a killed build); returns how many were removed. Files of running writers (a parallel
/// `make -j`) stay. With `only`, just the temporaries of those tables.
pub fn remove_stale_temporaries(dir: &Path, only: Option<&[Material]>) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(name) = name.to_str() else { continue };
        // `NAME.tmp.PID`, or a writer's spool `NAME.tmp.PID.N`.
        let Some((stem, pid)) = name.rsplit_once(".tmp.") else {
            continue;
        };
        let pid = pid.split_once('.').map_or(pid, |(pid, _)| pid);
        // A run's side files ([`super::SIDES_DIR`]), a directory.
        if stem == super::SIDES_DIR {
            if let (None, Ok(pid)) = (only, pid.parse::<u32>())
                && pid != std::process::id()
                && !process_alive(pid)
                && std::fs::remove_dir_all(e.path()).is_ok()
            {
                removed += 1;
            }
            continue;
        }
        let ours = match only {
            None => Metric::ALL
                .iter()
                .any(|k| stem.ends_with(&format!(".{}", k.extension()))),
            Some(tables) => tables
                .iter()
                .any(|&m| Metric::ALL.iter().any(|&k| stem == file_name(m, k))),
        };
        if let (true, Ok(pid)) = (ours, pid.parse::<u32>())
            && pid != std::process::id()
            && !process_alive(pid)
            && std::fs::remove_file(e.path()).is_ok()
        {
            removed += 1;
        }
    }
    removed
}

/// What one table's build took, measured on this process: CPU time (all threads, user and
/// system) and peak resident memory, in all and per [`Phase`]. Either is `None` where the
/// system does not tell.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Measured {
    pub cpu: Option<std::time::Duration>,
    pub peak_rss: Option<u64>,
    /// The build's phases in order, each measured on its own: where the peak lies (solver or
    /// writer) and what each costs, to set against the parts of an [`super::Estimate`].
    pub phases: Vec<Phase>,
}

/// One phase of a table's build, measured: from the end of the phase before (or the start)
/// to its own end.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Phase {
    pub metric: Metric,
    pub step: Step,
    pub cpu: Option<std::time::Duration>,
    /// Of a solve's CPU time, what its first passes took (timed from the solver's progress):
    /// every slot decoded, capture positions valued by search, quiet ones given their best
    /// zeroing move. The rest is its levels. `None` for a write.
    pub init_cpu: Option<std::time::Duration>,
    /// The resident set when the phase began, and its peak during the phase: the difference
    /// is what the phase itself added.
    pub start_rss: Option<u64>,
    pub peak_rss: Option<u64>,
}

/// The CPU time of a solve's first passes (phases 1–2 of [`crate::gen`]), told apart from its
/// levels by the solver's progress: from each unit's `"captures"` (its start) to its `"init"`
/// (its slots decoded and valued up to the levels), summed over the units. The process's CPU
/// time, so it is the solve's own only while nothing else runs (`--jobs 1`).
#[derive(Default, Debug)]
pub(crate) struct InitClock {
    started: Option<std::time::Duration>,
    total: Option<std::time::Duration>,
}

impl InitClock {
    /// Note a progress phase of the solve ([`crate::gen::Progress::phase`]).
    pub(crate) fn note(&mut self, phase: &str) {
        match phase {
            "captures" => self.started = cpu_time(),
            "init" => {
                if let Some(d) = since(self.started.take(), cpu_time()) {
                    *self.total.get_or_insert_default() += d;
                }
            }
            _ => {}
        }
    }

    /// The first passes' CPU time over the units noted; `None` where the system does not tell.
    pub(crate) fn total(&self) -> Option<std::time::Duration> {
        self.total
    }
}

/// What a [`Phase`] of a build does.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Reading the smaller tables and solving one metric.
    Solve,
    /// Compressing and writing that metric's files.
    Write,
}

impl Step {
    pub fn name(self) -> &'static str {
        match self {
            Step::Solve => "solve",
            Step::Write => "write",
        }
    }
}

/// A measurement in progress: [`Meter::start`] notes the CPU time so far and resets the
/// process's peak-RSS mark (Linux: `/proc/self/clear_refs`), [`Meter::lap`] ends a phase (and
/// resets the mark again), [`Meter::stop`] ends the whole.
pub(crate) struct Meter {
    cpu0: Option<std::time::Duration>,
    /// CPU time and resident set at the end of the last phase.
    lap_cpu: Option<std::time::Duration>,
    lap_rss: Option<u64>,
    peak_reset: bool,
    phases: Vec<Phase>,
}

/// Reset the process's peak-RSS mark to its current resident set; false where that fails.
fn reset_peak() -> bool {
    // Writing 5 resets the high-water mark of the resident set to the current size
    // (proc(5), Linux ≥ 4.0); where it fails, the peak is the process's so far.
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

impl Meter {
    pub(crate) fn start() -> Meter {
        let peak_reset = reset_peak();
        let cpu0 = cpu_time();
        Meter {
            cpu0,
            lap_cpu: cpu0,
            lap_rss: rss_now(),
            peak_reset,
            phases: Vec::new(),
        }
    }

    /// The peak resident set since the last reset, if the mark was reset.
    fn peak_since_reset(&self) -> Option<u64> {
        if self.peak_reset { peak_rss() } else { None }
    }

    /// End the phase `step` of `metric`, begun where the last one ended (of a solve, what its
    /// first passes took: `init_cpu`).
    pub(crate) fn lap(
        &mut self,
        metric: Metric,
        step: Step,
        init_cpu: Option<std::time::Duration>,
    ) {
        let cpu = cpu_time();
        let peak_rss = self.peak_since_reset();
        self.phases.push(Phase {
            metric,
            step,
            cpu: since(self.lap_cpu, cpu),
            init_cpu,
            start_rss: self.lap_rss,
            peak_rss,
        });
        self.lap_cpu = cpu;
        self.lap_rss = rss_now();
        self.peak_reset = self.peak_reset && reset_peak();
    }

    pub(crate) fn stop(self) -> Measured {
        // The mark was reset after each phase: the whole's peak is the largest of theirs and
        // of what came after the last.
        let phases = self.phases.iter().filter_map(|p| p.peak_rss).max();
        let peak_rss = self.peak_since_reset().map(|p| p.max(phases.unwrap_or(0)));
        Measured {
            cpu: since(self.cpu0, cpu_time()),
            peak_rss,
            phases: self.phases,
        }
    }
}

/// CPU time from `a` to `b`.
fn since(
    a: Option<std::time::Duration>,
    b: Option<std::time::Duration>,
) -> Option<std::time::Duration> {
    Some(b?.saturating_sub(a?))
}

/// Hands the memory the allocator holds free back to the system, between a build's phases:
/// glibc keeps freed buffers below its (growing) map threshold in its heaps, so that one
/// phase's sections and lists stayed in the next one's resident set (KKKBvP's DTW write
/// started at 289 MiB, 59 MiB once they are handed back). Does nothing on other allocators.
pub(crate) fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim takes no pointer and only returns free pages of glibc's own heaps to
    // the system; it is thread-safe (it locks each arena). Exercised by every `generate`.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// CPU time of this process so far (user + system, all threads).
fn cpu_time() -> Option<std::time::Duration> {
    #[cfg(unix)]
    {
        // SAFETY: getrusage only writes into `ru`; all-zero bytes are a valid `rusage` (plain
        // integers); `ru` is a writable, aligned `rusage` that outlives the call. Exercised by
        // every `generate` (tests/cli_generate.rs, e.g. `no_deps_builds_only_the_named_tables`).
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
            return None;
        }
        let tv = |t: libc::timeval| {
            std::time::Duration::new(t.tv_sec.max(0) as u64, (t.tv_usec.max(0) as u32) * 1000)
        };
        Some(tv(ru.ru_utime) + tv(ru.ru_stime))
    }
    #[cfg(not(unix))]
    None
}

/// The process's peak resident set since start or the last reset (`VmHWM`), in bytes.
fn peak_rss() -> Option<u64> {
    status_bytes("VmHWM:")
}

/// The process's resident set now (`VmRSS`), in bytes.
fn rss_now() -> Option<u64> {
    status_bytes("VmRSS:")
}

/// A size in kB from `/proc/self/status`, in bytes.
fn status_bytes(key: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(key))?;
    let kb: u64 = line
        .trim_start_matches(key)
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kb * 1024)
}
