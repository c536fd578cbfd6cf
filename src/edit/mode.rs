//! Permission modes as `chmod(1)` takes them: octal (`644`) or symbolic
//! (`u+x,go-w`). Parsed once, then applied to each entry's stored mode, since
//! symbolic modes depend on the old bits and on whether the entry is a directory
//! (`X`).

use crate::core::error::{Error, Result};

/// A parsed chmod MODE.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModeSpec {
    /// Permission bits given in octal: they replace the old ones.
    Octal(u32),
    /// Clauses applied in turn: (who mask, operator `+`, `-` or `=`, permission
    /// letters).
    Symbolic(Vec<(u32, char, String)>),
}

/// Parse a chmod MODE: octal (`644`, `0755`) or symbolic like chmod(1),
/// `[ugoa...][+-=][rwxXst...]`, several separated by commas.
pub fn parse_mode(s: &str) -> Result<ModeSpec> {
    let bad = || Error::InvalidMode(s.to_string());
    if !s.is_empty() && s.bytes().all(|b| (b'0'..=b'7').contains(&b)) {
        return match u32::from_str_radix(s, 8) {
            Ok(m) if m <= 0o7777 => Ok(ModeSpec::Octal(m)),
            _ => Err(bad()),
        };
    }
    let mut clauses = Vec::new();
    for clause in s.split(',') {
        let op_at = clause.find(['+', '-', '=']).ok_or_else(bad)?;
        let mut who = 0u32;
        for c in clause[..op_at].chars() {
            who |= match c {
                'u' => 0o4700,
                'g' => 0o2070,
                'o' => 0o1007,
                'a' => 0o7777,
                _ => return Err(bad()),
            };
        }
        if who == 0 {
            who = 0o7777;
        }
        // Several operators in one clause (u+x-w) apply in turn.
        let mut rest = &clause[op_at..];
        while let Some(op) = rest.chars().next() {
            let end = rest[1..]
                .find(['+', '-', '='])
                .map_or(rest.len(), |i| i + 1);
            let perms = &rest[1..end];
            if !perms.chars().all(|c| "rwxXst".contains(c)) {
                return Err(bad());
            }
            clauses.push((who, op, perms.to_string()));
            rest = &rest[end..];
        }
    }
    Ok(ModeSpec::Symbolic(clauses))
}

impl ModeSpec {
    /// The new permission bits of an entry that has `old` (and is a directory or
    /// not).
    pub fn apply(&self, old: u32, is_dir: bool) -> u32 {
        match self {
            ModeSpec::Octal(m) => *m,
            ModeSpec::Symbolic(clauses) => {
                let mut mode = old & 0o7777;
                for (who, op, perms) in clauses {
                    let mut bits = 0u32;
                    for c in perms.chars() {
                        bits |= match c {
                            'r' => 0o444,
                            'w' => 0o222,
                            'x' => 0o111,
                            'X' if is_dir || mode & 0o111 != 0 => 0o111,
                            's' => 0o6000,
                            't' => 0o1000,
                            _ => 0,
                        };
                    }
                    bits &= who;
                    mode = match op {
                        '+' => mode | bits,
                        '-' => mode & !bits,
                        _ => (mode & !(who & 0o7777)) | bits,
                    };
                }
                mode
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes() {
        assert_eq!(parse_mode("644").unwrap(), ModeSpec::Octal(0o644));
        assert!(parse_mode("8").is_err());
        assert!(parse_mode("17777").is_err());
        assert!(parse_mode("u+q").is_err());
        assert!(parse_mode("x").is_err());
        let m = |s: &str, old: u32, dir: bool| parse_mode(s).unwrap().apply(old, dir);
        assert_eq!(m("u+x", 0o644, false), 0o744);
        assert_eq!(m("go-w", 0o666, false), 0o644);
        assert_eq!(m("a+rX", 0o600, false), 0o644);
        assert_eq!(m("a+rX", 0o700, true), 0o755);
        assert_eq!(m("a+rX", 0o700, false), 0o755);
        assert_eq!(m("u=rw,go=r", 0o777, false), 0o644);
        assert_eq!(m("+x", 0o600, false), 0o711);
        assert_eq!(m("u+x-w", 0o644, false), 0o544);
        assert_eq!(m("o+t", 0o777, true), 0o1777);
    }

    #[test]
    fn bad_modes_name_themselves() {
        let e = parse_mode("u+q").unwrap_err().to_string();
        assert_eq!(
            e,
            "\"u+q\" is not a mode (octal like 644, or symbolic like u+x,go-w)"
        );
    }
}
