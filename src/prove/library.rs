//! A proof library: a directory of proofs kept between runs, one file per position, so that a
//! long line is proven over several runs (a run killed or stopped loses only the move it was
//! searching) and a position proven for one line serves every other line that reaches it.
//!
//! A proof is a forced win that never relies on a repetition (the search counts a repetition
//! as a failure for the prover, and a proof is an acyclic graph), so it holds whatever the path
//! to its root: proofs are the path-independent results the library may keep. Disproofs are
//! not kept (one that rests on a repetition depends on the path).
//!
//! Files are binary proofs (`FORMAT.md`, "Binary format"), named after the Zobrist key of their
//! root (`<16 hex digits>.proofb`), written to a temporary name and renamed. A library written
//! before the binary format holds text proofs (`<key>.proof`): they are still read, the binary
//! file first when a position has both. A stored proof is used only after the checker of its
//! format ([`check_binary::check`], [`check::check`]) accepts it and its root is the position
//! asked for; a file that fails either is reported and proven again, and the new proof is
//! written in binary (the text file of its position is then removed).

use super::Oracle;
use super::binary::{read_binary, write_binary_proof};
use super::check;
use super::check_binary;
use super::hash;
use super::proof::{Proof, write_replacing};
use crate::rules::Position;
use std::io;
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

    /// The file of `pos`'s proof, as [`ProofLibrary::put`] writes it (binary).
    pub fn path(&self, pos: &Position) -> PathBuf {
        self.dir.join(format!("{:016x}.proofb", hash::key(pos)))
    }

    /// The text file of `pos`'s proof, as libraries written before the binary format hold it.
    pub fn text_path(&self, pos: &Position) -> PathBuf {
        self.dir.join(format!("{:016x}.proof", hash::key(pos)))
    }

    /// The stored proof of `pos`, checked with `oracle`'s tables: the binary file if there is
    /// one, else the text file.
    pub fn get(&self, pos: &Position, oracle: &dyn Oracle) -> Stored {
        let path = self.path(pos);
        match std::fs::read(&path) {
            Ok(bytes) => return Self::get_binary(&path, &bytes, pos, oracle),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Stored::Rejected(format!("cannot read {}: {e}", path.display())),
        }
        let path = self.text_path(pos);
        match std::fs::read_to_string(&path) {
            Ok(text) => Self::get_text(&path, &text, pos, oracle),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Stored::Absent,
            Err(e) => Stored::Rejected(format!("cannot read {}: {e}", path.display())),
        }
    }

    fn get_binary(path: &Path, bytes: &[u8], pos: &Position, oracle: &dyn Oracle) -> Stored {
        let checked = match check_binary::check(io::Cursor::new(bytes), oracle) {
            Ok(c) => c,
            Err(e) => return Stored::Rejected(format!("{} rejected: {e}", path.display())),
        };
        if let Some(why) = another_root(path, &checked.root, pos) {
            return Stored::Rejected(why);
        }
        match read_binary(bytes) {
            Ok(r) => Stored::Proof(r.proof),
            Err(e) => Stored::Rejected(format!("{}: {e}", path.display())),
        }
    }

    fn get_text(path: &Path, text: &str, pos: &Position, oracle: &dyn Oracle) -> Stored {
        let checked = match check::check(text, oracle) {
            Ok(c) => c,
            Err(e) => return Stored::Rejected(format!("{} rejected: {e}", path.display())),
        };
        if let Some(why) = another_root(path, &checked.root, pos) {
            return Stored::Rejected(why);
        }
        match Proof::from_text(text) {
            Ok(p) => Stored::Proof(p),
            Err(e) => Stored::Rejected(format!("{}: {e}", path.display())),
        }
    }

    /// The keys of the positions with a proof file (binary or text), from the file names; an
    /// unreadable directory has none.
    pub fn keys(&self) -> std::collections::HashSet<u64> {
        let Ok(dir) = std::fs::read_dir(&self.dir) else {
            return Default::default();
        };
        dir.filter_map(|e| {
            let name = e.ok()?.file_name();
            let (stem, ext) = name.to_str()?.split_once('.')?;
            if stem.len() != 16 || !(ext == "proofb" || ext == "proof") {
                return None;
            }
            u64::from_str_radix(stem, 16).ok()
        })
        .collect()
    }

    /// Add `proof` in binary (replacing any file of its root; a text file of it is removed).
    pub fn put(&self, proof: &Proof, comment: &str) -> Result<(), String> {
        let path = self.path(&proof.root);
        write_binary_proof(&path, proof, comment)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        // The binary file is read first, so a text file left behind would never be used.
        let text = self.text_path(&proof.root);
        match std::fs::remove_file(&text) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => {
                Err(format!("cannot remove {}: {e}", text.display()))
            }
            _ => Ok(()),
        }
    }
}

/// Why a checked proof of `root` cannot serve `pos`, if it cannot.
fn another_root(path: &Path, root: &Position, pos: &Position) -> Option<String> {
    (root.without_counters() != pos.without_counters())
        .then(|| format!("{} is a proof of another position ({root})", path.display()))
}

/// Write a text proof to `path` through a temporary file in the same directory, synced and
/// renamed into place once complete (`proof::write_replacing`): a failed write never leaves a
/// truncated proof under the name.
pub fn write_proof(path: &Path, proof: &Proof, comment: &str) -> io::Result<()> {
    write_replacing(path, &mut |w| proof.write(w, comment))
}
