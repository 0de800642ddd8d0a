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
    // SAFETY: `c` is a valid NUL-terminated path and `st` a writable statvfs; statvfs only
    // writes into `st`. All-zero bytes are a valid `statvfs` (plain integers).
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
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
        // SAFETY: sysconf has no preconditions; it returns -1 for unknown names.
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
        // SAFETY: kill with signal 0 sends nothing; it only checks that the process exists.
        let r = unsafe { libc::kill(pid, 0) };
        r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        true
    }
}

/// Remove `M.{wdl,dtz,dtw}.tmp.<pid>` files in `dir` whose writer no longer runs (a killed
/// build); returns how many were removed. Files of running writers (a parallel `make -j`) stay.
/// With `only`, just the temporaries of those tables.
pub fn remove_stale_temporaries(dir: &Path, only: Option<&[Material]>) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(name) = name.to_str() else { continue };
        let Some((stem, pid)) = name.rsplit_once(".tmp.") else {
            continue;
        };
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
