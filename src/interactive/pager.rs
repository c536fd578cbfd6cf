//! A sorted view of one directory's children that holds a few pages at a time.
//!
//! `ncdu` and `browse` must show a directory of millions of entries at once and
//! scroll through it without reading it whole: the pager keeps a window of
//! consecutive rows of the order (at most [`Pager::MAX_PAGES`] pages) and fills it
//! with keyset queries on the parent indexes ([`Index::children_page`]): the page
//! after its last row, the page before its first, the first page, the last page.
//! Subdirectories and files come from two tables, each read in the same order, and
//! are merged as they are read. The number of children comes from the directory's
//! statistics (`num_subdirs + num_files`); if they are wrong (a damaged index) the
//! count is corrected as soon as a page finds the real end.
//!
//! [`Index::children_page`]: crate::core::index::Index::children_page

use std::cmp::Ordering;
use std::collections::VecDeque;

use crate::core::archive::Archive;
use crate::core::error::Result;
use crate::core::index::ncdu::{Bound, Child, ChildSort, PageSpec};

/// How the children are ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Order {
    /// By size, file count or name.
    pub sort: ChildSort,
    /// Largest (or, by name, last) first.
    pub descending: bool,
    /// All subdirectories before all files.
    pub dirs_first: bool,
}

impl Order {
    /// Compare two children in this order (ties by path, ascending).
    pub fn cmp(&self, a: &Child, b: &Child) -> Ordering {
        if self.dirs_first && a.is_dir != b.is_dir {
            return b.is_dir.cmp(&a.is_dir);
        }
        let by_key = match self.sort {
            ChildSort::Name => a.path.cmp(&b.path),
            s => a.key(s).cmp(&b.key(s)),
        };
        let by_key = if self.descending {
            by_key.reverse()
        } else {
            by_key
        };
        by_key
            .then_with(|| a.path.cmp(&b.path))
            .then_with(|| b.is_dir.cmp(&a.is_dir))
    }
}

/// The children of one directory, a window of them at a time.
pub struct Pager {
    dir: String,
    order: Order,
    page: usize,
    /// Index (in the order) of the first row of the window.
    start: usize,
    rows: VecDeque<Child>,
    /// Number of children (from the statistics, corrected when an end is found).
    total: usize,
}

impl Pager {
    /// At most this many pages are held.
    pub const MAX_PAGES: usize = 4;

    /// The children of `dir` (`total` of them, from its statistics) in `order`,
    /// `page` rows per query; the first page is read.
    pub fn new(
        archive: &Archive,
        dir: &str,
        total: u64,
        order: Order,
        page: usize,
    ) -> Result<Pager> {
        let mut p = Pager {
            dir: dir.to_string(),
            order,
            page: page.max(1),
            start: 0,
            rows: VecDeque::new(),
            total: total as usize,
        };
        p.load_first(archive)?;
        Ok(p)
    }

    /// The directory whose children are shown.
    pub fn dir(&self) -> &str {
        &self.dir
    }

    /// How the children are ordered.
    pub fn order(&self) -> Order {
        self.order
    }

    /// Number of children.
    pub fn len(&self) -> usize {
        self.total
    }

    /// True when the directory has no children.
    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// The window: the index of its first row and its rows.
    pub fn window(&self) -> (usize, usize) {
        (self.start, self.rows.len())
    }

    /// Read one page in `backwards` direction from `bound` (both tables, merged).
    fn fetch(
        &self,
        archive: &Archive,
        backwards: bool,
        bound: Option<&Child>,
    ) -> Result<Vec<Child>> {
        let o = self.order;
        let mut tables: Vec<Vec<Child>> = Vec::with_capacity(2);
        for dirs in [true, false] {
            // With directories first, no directory comes after a file and no file
            // before a directory.
            let skip = o.dirs_first
                && bound.is_some_and(|b| {
                    if backwards {
                        b.is_dir && !dirs
                    } else {
                        !b.is_dir && dirs
                    }
                });
            if skip {
                continue;
            }
            // A bound in the other table of a dirs-first order: the whole table.
            let table_bound = match bound {
                Some(b) if !(o.dirs_first && b.is_dir != dirs) => Bound::After(b),
                _ => Bound::Open,
            };
            let spec = PageSpec {
                sort: o.sort,
                descending: o.descending,
                backwards,
                bound: table_bound,
                limit: self.page,
            };
            tables.push(archive.with_index(|i| i.children_page(&self.dir, dirs, &spec))?);
        }
        // Merge (each table is in reading order) and keep a page.
        let mut out = Vec::with_capacity(self.page);
        let mut at = vec![0usize; tables.len()];
        while out.len() < self.page {
            let mut best: Option<usize> = None;
            for k in 0..tables.len() {
                let Some(c) = tables[k].get(at[k]) else {
                    continue;
                };
                let better = match best {
                    None => true,
                    Some(b) => {
                        let ord = o.cmp(c, &tables[b][at[b]]);
                        let ord = if backwards { ord.reverse() } else { ord };
                        ord == Ordering::Less
                    }
                };
                if better {
                    best = Some(k);
                }
            }
            let Some(b) = best else { break };
            out.push(tables[b][at[b]].clone());
            at[b] += 1;
        }
        Ok(out)
    }

    fn load_first(&mut self, archive: &Archive) -> Result<()> {
        let rows = self.fetch(archive, false, None)?;
        if rows.len() < self.page {
            self.total = rows.len();
        } else {
            self.total = self.total.max(rows.len());
        }
        self.start = 0;
        self.rows = rows.into();
        Ok(())
    }

    fn load_last(&mut self, archive: &Archive) -> Result<()> {
        let mut rows = self.fetch(archive, true, None)?;
        rows.reverse();
        if rows.len() < self.page {
            self.total = rows.len();
        } else {
            self.total = self.total.max(rows.len());
        }
        self.start = self.total - rows.len();
        self.rows = rows.into();
        Ok(())
    }

    fn extend_forward(&mut self, archive: &Archive) -> Result<bool> {
        let Some(last) = self.rows.back().cloned() else {
            return Ok(false);
        };
        let rows = self.fetch(archive, false, Some(&last))?;
        let got = rows.len();
        self.rows.extend(rows);
        let end = self.start + self.rows.len();
        if got < self.page {
            self.total = end;
        } else {
            self.total = self.total.max(end);
        }
        while self.rows.len() > Self::MAX_PAGES * self.page {
            self.rows.pop_front();
            self.start += 1;
        }
        Ok(got > 0)
    }

    fn extend_backward(&mut self, archive: &Archive) -> Result<bool> {
        let Some(first) = self.rows.front().cloned() else {
            return Ok(false);
        };
        let rows = self.fetch(archive, true, Some(&first))?;
        let got = rows.len();
        for r in rows {
            self.rows.push_front(r);
        }
        if got < self.page || got > self.start {
            // The real beginning: renumber from 0.
            let real_start = if got < self.page {
                0
            } else {
                self.start.saturating_sub(got)
            };
            let shift = self.start as isize - got as isize - real_start as isize;
            self.start = real_start;
            self.total = (self.total as isize - shift).max(self.rows.len() as isize) as usize;
        } else {
            self.start -= got;
        }
        while self.rows.len() > Self::MAX_PAGES * self.page {
            self.rows.pop_back();
        }
        Ok(got > 0)
    }

    /// The child at position `i` of the order, reading pages as needed; `None` past
    /// the end.
    pub fn get(&mut self, archive: &Archive, i: usize) -> Result<Option<&Child>> {
        if i >= self.total {
            return Ok(None);
        }
        if self.rows.is_empty() {
            self.load_first(archive)?;
        }
        if i < self.start {
            if i < self.page {
                self.load_first(archive)?;
            } else {
                while i < self.start {
                    if !self.extend_backward(archive)? {
                        break;
                    }
                }
            }
        } else if i >= self.start + self.rows.len() {
            if self.total - i <= self.page {
                self.load_last(archive)?;
            } else {
                while i >= self.start + self.rows.len() {
                    if !self.extend_forward(archive)? {
                        break;
                    }
                }
            }
        }
        if i < self.start {
            return Ok(None);
        }
        Ok(self.rows.get(i - self.start))
    }

    /// The position of the child at `path` (a directory when `is_dir`), with the
    /// window moved to it; `None` when it is not a child.
    pub fn seek(&mut self, archive: &Archive, path: &str, is_dir: bool) -> Result<Option<usize>> {
        let o = self.order;
        let probe = archive.with_index(|i| {
            Ok(if is_dir {
                i.dir(path)?.map(|d| Child {
                    path: d.path.clone(),
                    is_dir: true,
                    size: d.size_tree,
                    count: d.num_files_tree,
                })
            } else {
                i.file(path)?.map(|f| Child {
                    path: f.path.clone(),
                    is_dir: false,
                    size: f.size as i64,
                    count: 1,
                })
            })
        })?;
        let Some(probe) = probe else { return Ok(None) };
        let mut before = 0u64;
        for dirs in [true, false] {
            if o.dirs_first && dirs != is_dir {
                // Every directory precedes a file; no file precedes a directory.
                if dirs {
                    before += archive.with_index(|i| {
                        Ok(i.dir(&self.dir)?.map_or(0, |d| d.num_subdirs.max(0) as u64))
                    })?;
                }
                continue;
            }
            before += archive
                .with_index(|i| i.children_before(&self.dir, dirs, o.sort, o.descending, &probe))?;
        }
        let pos = before as usize;
        // A window that starts at the child.
        let mut rows = vec![probe.clone()];
        rows.extend(self.fetch(archive, false, Some(&probe))?);
        self.start = pos;
        self.total = self.total.max(pos + rows.len());
        self.rows = rows.into();
        Ok(Some(pos))
    }
}
