//! A proof library: a directory of proofs kept between runs, one file per position, so that a
//! long line is proven over several runs (a run killed or stopped loses only the move it was
//! searching) and a position proven for one line serves every other line that reaches it.
//!
//! A proof is a forced win that never relies on a repetition (the search counts a repetition
//! as a failure for the prover, and a proof is an acyclic graph), so it holds whatever the path
//! to its root: proofs are the path-independent results the library may keep. Disproofs are
//! not kept (one that rests on a repetition depends on the path).
//!
//! Files are the text proofs of `FORMAT.md`, named after the Zobrist key of their root
//! (`<16 hex digits>.proof`), written to a temporary name and renamed. A stored proof is used
//! only after [`check::check`] accepts it and its root is the position asked for; a file that
//! fails either is reported and proven again (and replaced).

use super::Oracle;
use super::check;
use super::hash;
use super::proof::Proof;
use crate::rules::Position;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// A directory of proofs (see the module documentation).
pub struct ProofLibrary {
    dir: PathBuf,
}

/// What the library holds for a position.
#[derive(Debug)]
pub enum Stored {
    /// No proof of it.
    Absent,
    /// A proof the checker accepts.
    Proof(Proof),
    /// A file that could not be used: why.
    Rejected(String),
}

impl ProofLibrary {
    /// Open (and create if needed) a library directory.
    pub fn open(dir: &Path) -> Result<ProofLibrary, String> {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create the proof library {}: {e}", dir.display()))?;
        // Fail now, not after an hour of search, where the directory cannot be written.
        let probe = dir.join(format!(".write-test{}", std::process::id()));
        std::fs::write(&probe, b"")
            .map_err(|e| format!("cannot write to the proof library {}: {e}", dir.display()))?;
        let _ = std::fs::remove_file(&probe);
        Ok(ProofLibrary {
            dir: dir.to_path_buf(),
        })
    }

    /// The file of `pos`'s proof.
    pub fn path(&self, pos: &Position) -> PathBuf {
        self.dir.join(format!("{:016x}.proof", hash::key(pos)))
    }

    /// The stored proof of `pos`, checked with `oracle`'s tables.
    pub fn get(&self, pos: &Position, oracle: &dyn Oracle) -> Stored {
        let path = self.path(pos);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Stored::Absent,
            Err(e) => return Stored::Rejected(format!("cannot read {}: {e}", path.display())),
        };
        let checked = match check::check(&text, oracle) {
            Ok(c) => c,
            Err(e) => return Stored::Rejected(format!("{} rejected: {e}", path.display())),
        };
        if checked.root.without_counters() != pos.without_counters() {
            return Stored::Rejected(format!(
                "{} is a proof of another position ({})",
                path.display(),
                checked.root
            ));
        }
        match Proof::from_text(&text) {
            Ok(p) => Stored::Proof(p),
            Err(e) => Stored::Rejected(format!("{}: {e}", path.display())),
        }
    }

    /// Add `proof` (replacing any file of its root).
    pub fn put(&self, proof: &Proof, comment: &str) -> Result<(), String> {
        let path = self.path(&proof.root);
        write_proof(&path, proof, comment)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
    }
}

/// Write a proof to `path` through a temporary file in the same directory, synced and renamed
/// into place once complete: a failed write never leaves a truncated proof under the name.
pub fn write_proof(path: &Path, proof: &Proof, comment: &str) -> io::Result<()> {
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a file name"))?;
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(".tmp{}", std::process::id()));
    let tmp = path.with_file_name(tmp_name);
    let written = (|| {
        let file = std::fs::File::create(&tmp)?;
        let mut w = io::BufWriter::new(file);
        proof.write(&mut w, comment)?;
        w.flush()?;
        w.into_inner().map_err(|e| e.into_error())?.sync_all()
    })();
    if let Err(e) = written.and_then(|_| std::fs::rename(&tmp, path)) {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    Ok(())
}
