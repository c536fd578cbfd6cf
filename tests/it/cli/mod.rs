//! The command-line programs as such: options shared by every command, the reading
//! commands and the multicall `barecat`, Python barecat's spellings, editing in place.

mod compat_aliases;
mod consistency;
mod edit;
mod read;
