//! What the repository says about itself holds: man pages and completions, the
//! README's examples, and the list of test peers.

mod man;
mod peers_audit;
mod readme;
