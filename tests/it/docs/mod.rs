//! What the repository says about itself holds: man pages and completions, the
//! README's examples, the list of test peers, and the module layers.

mod layers;
mod man;
mod peers_audit;
mod readme;
