//! `lss`: a directory listing that sums up numbered sequences, as Python
//! barecat's shell does: `frame_0001.jpg … frame_1200.jpg` becomes
//! `frame_****.jpg  (1200 files, 0001–1200)`.
//!
//! Names are cut into text and digit runs; names with the same texts and digit
//! run widths form a group; in a group of five or more, the digit run with the
//! most distinct values is summed up over the names that agree on everything
//! else (five or more of them); everything else is listed name by name.

use std::collections::{BTreeMap, BTreeSet};

/// A run of a name: digits or other text.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Shape {
    /// A digit run, by width (sorts before text, as Python's `'num' < 'text'`).
    Num(usize),
    Text(String),
}

/// A name cut into runs: (is a digit run, text).
type Chunks = Vec<(bool, String)>;
/// A name and its runs.
type Named = (String, Chunks);

fn chunks(name: &str) -> Chunks {
    let mut out: Chunks = Vec::new();
    for c in name.chars() {
        let digit = c.is_ascii_digit();
        match out.last_mut() {
            Some((d, s)) if *d == digit => s.push(c),
            _ => out.push((digit, c.to_string())),
        }
    }
    out
}

/// One line of the output: a name, or a summed-up sequence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// A name shown as it is.
    Name(String),
    /// A sequence of names of one shape summed up, shown as
    /// `frame_****.jpg  (1200 files, 0001–1200)`.
    Sequence {
        /// The names with the varying digit run as `*`s (`frame_****.jpg`).
        pattern: String,
        /// How many names it stands for.
        count: usize,
        /// The smallest value of the digit run.
        min: String,
        /// The largest value of the digit run.
        max: String,
    },
}

impl std::fmt::Display for Line {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Line::Name(n) => f.write_str(n),
            Line::Sequence {
                pattern,
                count,
                min,
                max,
            } => write!(f, "{pattern}  ({count} files, {min}\u{2013}{max})"),
        }
    }
}

/// Sum up the file names `files` (sorted).
pub fn group(files: &[String]) -> Vec<Line> {
    let mut by_shape: BTreeMap<Vec<Shape>, Vec<Named>> = BTreeMap::new();
    for name in files {
        let c = chunks(name);
        let shape = c
            .iter()
            .map(|(d, s)| {
                if *d {
                    Shape::Num(s.chars().count())
                } else {
                    Shape::Text(s.clone())
                }
            })
            .collect();
        by_shape.entry(shape).or_default().push((name.clone(), c));
    }
    let mut out = Vec::new();
    for (shape, items) in by_shape {
        let nums: Vec<usize> = shape
            .iter()
            .enumerate()
            .filter(|(_, s)| matches!(s, Shape::Num(_)))
            .map(|(i, _)| i)
            .collect();
        if nums.is_empty() || items.len() < 5 {
            out.extend(items.into_iter().map(|(n, _)| Line::Name(n)));
            continue;
        }
        // The digit run with the most distinct values (the first of equals).
        let mut pos = nums[0];
        let mut most = 0;
        for &p in &nums {
            let distinct: BTreeSet<&str> = items.iter().map(|(_, c)| c[p].1.as_str()).collect();
            if distinct.len() > most {
                most = distinct.len();
                pos = p;
            }
        }
        let mut sub: BTreeMap<Vec<String>, Vec<&Named>> = BTreeMap::new();
        for it in &items {
            let key =
                it.1.iter()
                    .enumerate()
                    .filter(|(i, _)| *i != pos)
                    .map(|(_, (_, s))| s.clone())
                    .collect();
            sub.entry(key).or_default().push(it);
        }
        for (_, members) in sub {
            if members.len() >= 5 {
                let sample = &members[0].1;
                let pattern: String = sample
                    .iter()
                    .enumerate()
                    .map(|(i, (_, s))| {
                        if i == pos {
                            "*".repeat(s.chars().count())
                        } else {
                            s.clone()
                        }
                    })
                    .collect();
                let vals: Vec<&str> = members.iter().map(|m| m.1[pos].1.as_str()).collect();
                out.push(Line::Sequence {
                    pattern,
                    count: members.len(),
                    min: vals.iter().min().copied().unwrap_or("").to_string(),
                    max: vals.iter().max().copied().unwrap_or("").to_string(),
                });
            } else {
                out.extend(members.into_iter().map(|m| Line::Name(m.0.clone())));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn sequences_are_summed_up() {
        let mut files: Vec<String> = (0..12).map(|i| format!("frame_{i:04}.jpg")).collect();
        files.extend(names(&["a.txt", "b1.txt", "b2.txt"]));
        files.sort();
        let got: Vec<String> = group(&files).iter().map(|l| l.to_string()).collect();
        assert_eq!(
            got,
            vec![
                "a.txt",
                "b1.txt",
                "b2.txt",
                "frame_****.jpg  (12 files, 0000\u{2013}0011)"
            ]
        );
    }

    #[test]
    fn the_most_varying_run_is_summed_up() {
        let files: Vec<String> = (0..6)
            .flat_map(|i| (0..2).map(move |c| format!("cam{c}_{i:03}.png")))
            .collect();
        let got: Vec<String> = group(&files).iter().map(|l| l.to_string()).collect();
        assert_eq!(
            got,
            vec![
                "cam0_***.png  (6 files, 000\u{2013}005)",
                "cam1_***.png  (6 files, 000\u{2013}005)"
            ]
        );
    }
}
