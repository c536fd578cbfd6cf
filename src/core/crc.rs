//! CRC-32C (Castagnoli), the checksum stored in `files.crc32c` (docs/FORMAT.md §7.3).
//!
//! Stored as the unsigned 32-bit value; the CRC of empty content is 0.

/// CRC-32C of `data`.
pub fn crc32c(data: &[u8]) -> u32 {
    crc32c::crc32c(data)
}

/// Incremental CRC-32C.
#[derive(Debug, Clone, Copy, Default)]
pub struct Crc32c(u32);

impl Crc32c {
    /// A CRC of no bytes yet.
    pub fn new() -> Crc32c {
        Crc32c(0)
    }

    /// Add `data` to what was summed.
    pub fn update(&mut self, data: &[u8]) {
        self.0 = crc32c::crc32c_append(self.0, data);
    }

    /// The CRC-32C of everything added so far.
    pub fn value(&self) -> u32 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_values() {
        // docs/FORMAT.md §7.3 check value and the Python `crc32c` package's value.
        assert_eq!(crc32c(b"123456789"), 3808858755);
        assert_eq!(crc32c(b"hello world"), 3381945770);
        assert_eq!(crc32c(b""), 0);
        let mut c = Crc32c::new();
        c.update(b"hello ");
        c.update(b"world");
        assert_eq!(c.value(), 3381945770);
    }
}
