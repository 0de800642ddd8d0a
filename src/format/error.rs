//! [`FormatError`]: everything that can go wrong writing or reading a table file.
//!
//! Every variant names the file, and where it applies the block, so that a one-line message
//! (its `Display`) is enough to find the damage. Malformed bytes always end here, never in a
//! panic.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// The part of a file a checksum covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Region {
    /// The header: fixed fields, metadata, section, offset and block-checksum tables.
    Header,
    /// One block, numbered from 0 across all sections: in a zstd file its decompressed
    /// values, in a pairs file a chunk of 4 KiB of small blocks' compressed bytes.
    Block(u64),
    /// The whole file up to its final 8 bytes.
    File,
}

impl fmt::Display for Region {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Region::Header => f.write_str("header"),
            Region::Block(b) => write!(f, "block {b}"),
            Region::File => f.write_str("whole file"),
        }
    }
}

/// An error writing or reading a table file.
#[derive(Debug)]
#[non_exhaustive]
pub enum FormatError {
    /// An operating-system error; `op` says what was being done (`"open"`, `"write"`, ...).
    Io {
        /// The file or directory the operation was on.
        path: PathBuf,
        /// What was being done.
        op: &'static str,
        /// The underlying error.
        source: io::Error,
    },
    /// The file does not start with the format's magic bytes: not a table file.
    BadMagic {
        /// The file.
        path: PathBuf,
    },
    /// A table file of a format version this reader does not know.
    UnsupportedVersion {
        /// The file.
        path: PathBuf,
        /// The version in the file.
        found: u32,
    },
    /// The file is shorter than its header says (an interrupted copy or download).
    Truncated {
        /// The file.
        path: PathBuf,
        /// The length the file should have.
        expected: u64,
        /// The length it has.
        actual: u64,
    },
    /// Stored and computed checksums differ.
    BadChecksum {
        /// The file.
        path: PathBuf,
        /// What the checksum covers.
        region: Region,
        /// The checksum stored in the file.
        stored: u64,
        /// The checksum of the bytes as they are.
        computed: u64,
    },
    /// A block's offset lies outside the range the layout allows (`min..=max`).
    OffsetOutOfRange {
        /// The file.
        path: PathBuf,
        /// The block whose start offset is wrong (`block_count` means the end offset).
        block: u64,
        /// The offset found.
        offset: u64,
        /// The smallest allowed value.
        min: u64,
        /// The largest allowed value.
        max: u64,
    },
    /// Any other inconsistency: bad field value, undecodable block, wrong block length.
    Corrupt {
        /// The file.
        path: PathBuf,
        /// The block, when the damage is in one.
        block: Option<u64>,
        /// What is wrong.
        reason: String,
    },
    /// A probe outside the table: no such section, or index past its end (a caller bug).
    OutOfBounds {
        /// The file.
        path: PathBuf,
        /// The section asked for.
        section: usize,
        /// The index asked for.
        index: u64,
        /// The section's length (0 when the section does not exist).
        len: u64,
    },
    /// The writer was given something it cannot store (bad options, oversized metadata).
    InvalidInput {
        /// The file being written.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The values to write could not be had from where they are made (a solver's scratch
    /// file, for a table written section by section).
    Values {
        /// The file being written.
        path: PathBuf,
        /// Why.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl FormatError {
    /// The file (or directory) the error is about.
    pub fn path(&self) -> &Path {
        match self {
            FormatError::Io { path, .. }
            | FormatError::BadMagic { path }
            | FormatError::UnsupportedVersion { path, .. }
            | FormatError::Truncated { path, .. }
            | FormatError::BadChecksum { path, .. }
            | FormatError::OffsetOutOfRange { path, .. }
            | FormatError::Corrupt { path, .. }
            | FormatError::OutOfBounds { path, .. }
            | FormatError::InvalidInput { path, .. }
            | FormatError::Values { path, .. } => path,
        }
    }

    /// The block the error is in, when it is in one.
    pub fn block(&self) -> Option<u64> {
        match self {
            FormatError::BadChecksum {
                region: Region::Block(b),
                ..
            } => Some(*b),
            FormatError::OffsetOutOfRange { block, .. } => Some(*block),
            FormatError::Corrupt { block, .. } => *block,
            _ => None,
        }
    }

    pub(crate) fn io(path: &Path, op: &'static str, source: io::Error) -> FormatError {
        FormatError::Io {
            path: path.to_path_buf(),
            op,
            source,
        }
    }

    pub(crate) fn corrupt(path: &Path, block: Option<u64>, reason: impl Into<String>) -> Self {
        FormatError::Corrupt {
            path: path.to_path_buf(),
            block,
            reason: reason.into(),
        }
    }

    pub(crate) fn invalid(path: &Path, reason: impl Into<String>) -> FormatError {
        FormatError::InvalidInput {
            path: path.to_path_buf(),
            reason: reason.into(),
        }
    }
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.path().display())?;
        match self {
            FormatError::Io { op, source, .. } => write!(f, "{op}: {source}"),
            FormatError::BadMagic { .. } => f.write_str("not an antitb table file (bad magic)"),
            FormatError::UnsupportedVersion { found, .. } => write!(
                f,
                "unsupported format version {found} (this reader knows versions {} and {}{})",
                super::VERSION_ZSTD,
                super::FORMAT_VERSION,
                if *found < super::VERSION_ZSTD {
                    "; versions 1 to 3 are an older antitb's, with another index: regenerate the table"
                } else {
                    ""
                }
            ),
            FormatError::Truncated {
                expected, actual, ..
            } => write!(
                f,
                "truncated: file is {actual} bytes, header says {expected}"
            ),
            FormatError::BadChecksum {
                region,
                stored,
                computed,
                ..
            } => write!(
                f,
                "{region}: checksum mismatch (stored {stored:016x}, computed {computed:016x})"
            ),
            FormatError::OffsetOutOfRange {
                block,
                offset,
                min,
                max,
                ..
            } => write!(
                f,
                "block {block}: offset {offset} out of range {min}..={max}"
            ),
            FormatError::Corrupt {
                block: Some(b),
                reason,
                ..
            } => write!(f, "block {b}: corrupt: {reason}"),
            FormatError::Corrupt {
                block: None,
                reason,
                ..
            } => write!(f, "corrupt: {reason}"),
            FormatError::OutOfBounds {
                section,
                index,
                len,
                ..
            } => write!(
                f,
                "probe out of bounds: section {section} index {index} (section length {len})"
            ),
            FormatError::InvalidInput { reason, .. } => write!(f, "invalid input: {reason}"),
            FormatError::Values { source, .. } => write!(f, "values to write: {source}"),
        }
    }
}

impl std::error::Error for FormatError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            FormatError::Io { source, .. } => Some(source),
            FormatError::Values { source, .. } => Some(source.as_ref()),
            _ => None,
        }
    }
}
