//! Whether the shadow may write, and what.

/// Whether the shadow may write at all (`--write`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WritePolicy {
    ReadOnly,
    AllowListed,
}
