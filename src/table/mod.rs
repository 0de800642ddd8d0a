//! What a table is, before any file or solver: material signatures, the position ↔ index map,
//! the value of a position, the capture search that values any position from the quiet ones,
//! and one table's values held in memory. Pure: no I/O, no threads.
//!
//! Every layer above uses these: the solver ([`crate::gen`]) fills a [`Table`], the file layer
//! ([`crate::store`]) writes and reads one, the prober and the verifier value positions with
//! [`resolve`].

mod captures;
pub mod index;
pub mod material;
mod memory;
mod metric;
mod searched;
pub mod value;
mod wdl;

pub use captures::{
    dtw_by_search, dtw_by_search_among, dtw_of_left_out, resolve, resolve_with, searches_captures,
    short_dtz,
};
pub use index::{Index, LeadCache, Placement, Row, SlotScan, transform_square};
pub use material::{MAX_PIECES, Material, MaterialError, MaterialHasher};
pub use memory::{FRAME, NOT_STORED, Table, TableValues};
pub use metric::{Metric, UnknownMetric};
pub use searched::SearchedSide;
pub(crate) use searched::{keep_capture, kept_capture};
pub use value::{MAX_DISTANCE, Value};
pub use wdl::{Dtw, Dtz, Wdl};
