//! Records: an integer-indexed record store (the zrecord design, docs/FORMAT.md §10),
//! standalone and over barecat archives.
//!
//! Why: training code addresses samples by integer (`dataset[i]`), not by path. A
//! fixed 16-byte entry per record in a memory-mapped offset table makes record `i`
//! one pointer computation away, with no SQLite on the read path, and a gather of
//! many indices returns the records in request order, zero-copy when uncompressed.
//!
//! * [`Records`] reads a dataset directory or an archive's record table behind one
//!   `Send + Sync` type: [`Records::get`], [`Records::gather`] (a [`Batch`] that owns
//!   what its slices point into), typed views ([`Batch::typed`]).
//! * [`RecordWriter`] appends, modifies and deletes (one writing process, 1–4 writer
//!   threads each bound to its own chunk), [`RecordWriter::rebalance`] reclaims
//!   garbage.
//! * [`table::build`] writes `P-records` beside an archive `P`; opening it checks
//!   cheaply that it still matches the index ([`table`] explains why that is sound).
//! * [`verify::verify`] checks either kind; [`convert`] copies between the forms.
//!
//! The format is written down in docs/FORMAT.md §10.
//!
//! ```no_run
//! use barecat::records::{DatasetOptions, RecordWriter, Records};
//!
//! let mut w = RecordWriter::create("data.zr", &DatasetOptions::default(), false)?;
//! w.append(b"first")?;
//! w.append(b"second")?;
//! w.finish()?;
//!
//! let r = Records::open("data.zr")?;
//! let batch = r.gather(&[1, 0, 1])?;
//! assert_eq!(batch.get(0), b"second");
//! # Ok::<(), barecat::Error>(())
//! ```

pub mod appender;
pub mod chunks;
pub mod convert;
pub mod format;
pub mod reader;
pub mod rebalance;
pub mod streams;
pub mod table;
pub mod verify;
pub mod writer;

pub use format::{Compress, Dtype, Entry, Meta as DatasetMeta, TableOrder};
pub use reader::{typed, Batch, Element, GatherOptions, OpenOptions, Record, Records, Source};
pub use rebalance::{RebalanceReport, Utilization};
pub use table::{BuildOptions, BuildReport};
pub use writer::{is_dataset, remove_dataset, DatasetOptions, RecordWriter, WriteSummary};

impl Records {
    /// Open a dataset directory, a barecat archive (its record table `P-records`),
    /// or a record table file itself.
    pub fn open(path: impl AsRef<std::path::Path>) -> crate::Result<Records> {
        Self::open_with(path, reader::OpenOptions::default())
    }

    /// [`open`](Self::open) with options: how a remote index is read, whether a table is
    /// checked against the index.
    pub fn open_with(
        path: impl AsRef<std::path::Path>,
        opts: reader::OpenOptions,
    ) -> crate::Result<Records> {
        let path = path.as_ref();
        if path.is_dir() {
            return reader::open_dataset(path);
        }
        // `P-records` names the table of the archive `P`.
        if let Some(base) = path
            .to_str()
            .and_then(|s| s.strip_suffix(crate::records::format::TABLE_SUFFIX))
        {
            if path.is_file() && crate::Layout::exists(base)? {
                return crate::records::table::open_table(std::path::Path::new(base), opts);
            }
        }
        crate::records::table::open_table(path, opts)
    }
}
