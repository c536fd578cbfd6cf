//! Reading the files' extents for a defragmentation: pages of the address-ordered
//! scan (forwards or backwards), strictly checked, and the check of every extent
//! against the shard files (inside its shard, no overlap).

use super::*;

/// The place of one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ext {
    pub(crate) rowid: i64,
    pub(crate) shard: u64,
    pub(crate) offset: u64,
    pub(crate) size: u64,
}

impl Ext {
    pub(crate) fn end(&self) -> u64 {
        self.offset + self.size
    }
    pub(crate) fn at(&self) -> (u64, u64) {
        (self.shard, self.offset)
    }
    /// Its place in the address-ordered scan.
    pub(crate) fn key(&self) -> (u64, u64, i64) {
        (self.shard, self.offset, self.rowid)
    }
}

/// Hand `f` the file rows in address order, `window` at a time (see
/// `extents_page`). The scan goes on after each page's last row as it was read, so
/// `f` may move the files of its page to earlier places.
pub(crate) fn each_extent_page(
    i: &Index,
    window: usize,
    mut f: impl FnMut(Vec<Ext>) -> Result<()>,
) -> Result<()> {
    let mut after = None;
    loop {
        let page = extents_page(i, after, window, Direction::Up)?;
        let full = page.len() == window;
        after = page.last().map(Ext::key);
        if !page.is_empty() {
            f(page)?;
        }
        if !full {
            return Ok(());
        }
    }
}

/// Files per page of the address-ordered scan; a full defragmentation holds one
/// page of places and targets at a time (48 bytes a file).
pub(super) const WINDOW: usize = 65536;

/// Which way a page of the address-ordered scan goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direction {
    /// Address order, after the key.
    Up,
    /// Address order, from the key on (the key's own row first).
    UpFrom,
    /// Reverse address order, before the key.
    Down,
}

/// Up to `limit` file rows in address order after the key `after` (shard, offset,
/// rowid) or from it on, or in reverse address order before it, with strict
/// checks: a row without a sound place (NULL, negative, past 2^63) is refused, for
/// a defragmentation only runs on a sound index.
pub(crate) fn extents_page(
    i: &Index,
    after: Option<(u64, u64, i64)>,
    limit: usize,
    dir: Direction,
) -> Result<Vec<Ext>> {
    // The first page has no bound, so that rows with a NULL place (which sort
    // first and compare with nothing) are seen and refused.
    let spec = ScanSpec::new(Table::Files, ScanOrder::Address)
        .columns(Columns::Extent)
        .reversed(dir == Direction::Down);
    let key = after.map(|(s, o, r)| {
        let k = ScanKey::after_address(s as i64, o as i64, r);
        if dir == Direction::UpFrom {
            k.inclusive()
        } else {
            k
        }
    });
    let p = i.path();
    let mut out = Vec::new();
    i.scan_rows(&spec, key.as_ref(), limit, &mut |r| {
        let int = |k: usize| -> Option<u64> {
            match r.get_ref(k) {
                Ok(ValueRef::Integer(v)) if v >= 0 => Some(v as u64),
                Ok(ValueRef::Null) if k == 3 => Some(0),
                _ => None,
            }
        };
        let rowid = spec.rowid_of(r).map_err(|e| Error::sqlite(p, e))?;
        match (int(1), int(2), int(3)) {
            (Some(shard), Some(offset), Some(size))
                if offset
                    .checked_add(size)
                    .is_some_and(|e| e <= i64::MAX as u64) =>
            {
                out.push(Ext {
                    rowid,
                    shard,
                    offset,
                    size,
                });
                Ok(())
            }
            _ => {
                let path = r.get::<_, String>(0).unwrap_or_default();
                Err(Error::corrupt(
                    p,
                    format!("row {path:?} has a bad shard, offset or size; run barecat-verify"),
                ))
            }
        }
    })?;
    Ok(out)
}

/// The shard files (contiguous from 0) and their lengths, checked against the file
/// rows one at a time in address order: every extent must lie inside its shard and
/// no two non-empty files may overlap (a defragmentation only runs on a sound index).
pub(crate) struct ExtentCheck {
    /// The shard files (contiguous from 0), their lengths and whether each is a
    /// symbolic link.
    pub(crate) shards: Vec<(PathBuf, u64, bool)>,
    covered: Option<(u64, u64)>,
}

impl ExtentCheck {
    pub(crate) fn new(layout: &Layout) -> Result<ExtentCheck> {
        let mut shards = Vec::new();
        for s in &layout.contiguous_shards()? {
            let len = crate::core::shards::shard_len(&s.path)?;
            shards.push((s.path.clone(), len, s.is_symlink));
        }
        Ok(ExtentCheck {
            shards,
            covered: None,
        })
    }

    pub(crate) fn check(&mut self, layout: &Layout, e: &Ext) -> Result<()> {
        let Some((path, len, _)) = self.shards.get(e.shard as usize) else {
            return Err(Error::MissingShard {
                path: layout.shard_path(e.shard),
                shard: e.shard,
                detail: format!(
                    "the index refers to it but only {} shard file(s) exist",
                    self.shards.len()
                ),
            });
        };
        if e.end() > *len {
            return Err(Error::corrupt(
                layout.index(),
                format!(
                    "a file extends past the end of {} ({len} bytes); run barecat-verify",
                    path.display()
                ),
            ));
        }
        if e.size > 0 {
            if let Some((shard, end)) = self.covered {
                if shard == e.shard && e.offset < end {
                    return Err(Error::corrupt(
                        layout.index(),
                        format!(
                            "files overlap in {} at byte {}; run barecat-verify",
                            path.display(),
                            e.offset
                        ),
                    ));
                }
            }
            self.covered = Some((e.shard, e.end()));
        }
        Ok(())
    }
}
