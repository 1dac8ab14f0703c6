//! Whether the shadow may write, and what: the user's [`WritePolicy`], resolved against the
//! robot file's allow-list once, when the link is made ([`WriteAccess`]) — the names of the
//! outputs do not change after, so nothing is lower-cased or looked up per cycle.

use super::error::ControllerError;
use super::slot::Slot;
use std::collections::HashSet;

/// Whether the shadow may write at all (`--write`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WritePolicy {
    ReadOnly,
    AllowListed,
}

/// A [`WritePolicy`] resolved against the allow-list for the link's output symbols.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum WriteAccess {
    /// Writing was not asked for.
    Disabled,
    /// An output is not on the allow-list: the first, in the order the outputs go out.
    Refused { symbol: String },
    /// Every output ([`Slot::OUTPUTS`]) is on the allow-list.
    Granted,
}

impl WriteAccess {
    /// `policy` for the outputs among `names` (the link's symbols, in slot order), against
    /// `writable` (matched as TwinCAT matches names: ignoring case).
    #[cfg(test)]
    pub(super) fn resolve(
        policy: WritePolicy,
        names: &[String],
        writable: &[String],
    ) -> WriteAccess {
        WriteAccess::resolve_with(policy, names, &[], writable)
    }

    /// `policy` for the outputs among `names` and the optional outputs named (the
    /// interference flag, the drives' symbols written), against `writable` (ignoring case,
    /// as TwinCAT matches names).
    pub(super) fn resolve_with(
        policy: WritePolicy,
        names: &[String],
        extra: &[&String],
        writable: &[String],
    ) -> WriteAccess {
        if policy != WritePolicy::AllowListed {
            return WriteAccess::Disabled;
        }
        let allowed: HashSet<String> = writable.iter().map(|n| n.to_ascii_lowercase()).collect();
        let refused = Slot::OUTPUTS
            .iter()
            .map(|slot| &names[slot.index()])
            .chain(extra.iter().copied())
            .find(|name| !allowed.contains(&name.to_ascii_lowercase()));
        match refused {
            Some(name) => WriteAccess::Refused {
                symbol: name.clone(),
            },
            None => WriteAccess::Granted,
        }
    }

    /// Whether a cycle's outputs may go out: checked before a single byte does, for all four
    /// at once, so that a refused write writes nothing.
    pub(super) fn check(&self) -> Result<(), ControllerError> {
        match self {
            WriteAccess::Granted => Ok(()),
            WriteAccess::Disabled => Err(ControllerError::WriteDisabled),
            WriteAccess::Refused { symbol } => Err(ControllerError::NotWritable {
                symbol: symbol.clone(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policy_is_resolved_once_against_the_allow_list_ignoring_case() {
        let names: Vec<String> = (0..12).map(|k| format!("GVL.s{k}")).collect();
        let outputs: Vec<String> = Slot::OUTPUTS
            .iter()
            .map(|s| names[s.index()].clone())
            .collect();
        let upper: Vec<String> = outputs.iter().map(|n| n.to_ascii_uppercase()).collect();
        assert_eq!(
            WriteAccess::resolve(WritePolicy::AllowListed, &names, &upper),
            WriteAccess::Granted
        );
        assert_eq!(
            WriteAccess::resolve(WritePolicy::ReadOnly, &names, &upper).check(),
            Err(ControllerError::WriteDisabled)
        );
        // The first output missing from the list is named.
        let missing = WriteAccess::resolve(WritePolicy::AllowListed, &names, &upper[2..]);
        assert_eq!(
            missing.check(),
            Err(ControllerError::NotWritable {
                symbol: outputs[0].clone()
            })
        );
    }
}
