//! Named choices (a model, a winch mode, a speed profile, …): each enum of the core that a user
//! picks by name says once, here, which names it has and what each means. Every face reads
//! them from this trait: the command line builds its possible values and help from it, Python
//! and the sweep spec parse with [`Choice::from_name`], the viewer lists [`Choice::all`].

/// A value picked by name.
pub trait Choice: Copy + PartialEq + Sized + 'static {
    /// What the choice is called in messages and as an option ("model", "profile").
    const WHAT: &'static str;

    /// Every value, in the order they are listed.
    fn all() -> Vec<Self>;

    /// The value's name (command line, files, Python).
    fn name(self) -> &'static str;

    /// One line saying what the value means.
    fn help(self) -> &'static str;

    /// Every value's name, in order.
    fn names() -> Vec<&'static str> {
        Self::all().into_iter().map(Self::name).collect()
    }

    /// The value named `name` (ASCII case ignored), or an error listing the names.
    fn from_name(name: &str) -> Result<Self, UnknownChoice> {
        let wanted = name.trim();
        Self::all()
            .into_iter()
            .find(|v| v.name().eq_ignore_ascii_case(wanted))
            .ok_or_else(|| UnknownChoice {
                what: Self::WHAT,
                given: name.to_string(),
                known: Self::names(),
            })
    }
}

/// A name that is not one of a choice's.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("`{given}` is not a {what}: {}", or_list(known))]
pub struct UnknownChoice {
    pub what: &'static str,
    pub given: String,
    pub known: Vec<&'static str>,
}

/// "a, b or c".
pub fn or_list(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => (*one).to_string(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

/// Implements [`Choice`] (and `Display`) for a fieldless enum from one table of
/// `Variant => "name", "help"` rows.
/// Implements [`Choice`] (and `Display`, and inherent `name`/`help`) for a fieldless enum
/// from one table of `Variant => "name", "help"` rows.
#[macro_export]
macro_rules! named_choice {
    ($ty:ty, $what:literal, { $($variant:ident => $name:literal, $help:literal;)+ }) => {
        impl $ty {
            /// The name used on the command line, in files and in Python.
            pub fn name(self) -> &'static str {
                match self { $(<$ty>::$variant => $name),+ }
            }
            /// One line saying what it means.
            pub fn help(self) -> &'static str {
                match self { $(<$ty>::$variant => $help),+ }
            }
        }
        impl $crate::choice::Choice for $ty {
            const WHAT: &'static str = $what;
            fn all() -> Vec<Self> {
                vec![$(<$ty>::$variant),+]
            }
            fn name(self) -> &'static str {
                <$ty>::name(self)
            }
            fn help(self) -> &'static str {
                <$ty>::help(self)
            }
        }
        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(<$ty>::name(*self))
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, Copy, PartialEq)]
    enum Fruit {
        Apple,
        Pear,
    }
    named_choice!(Fruit, "fruit", {
        Apple => "apple", "round";
        Pear => "pear", "not round";
    });

    #[test]
    fn names_parse_back_case_blind_and_unknown_names_list_the_known_ones() {
        assert_eq!(Fruit::from_name("Pear"), Ok(Fruit::Pear));
        assert_eq!(Fruit::from_name(" apple "), Ok(Fruit::Apple));
        assert_eq!(Fruit::Pear.to_string(), "pear");
        let e = Fruit::from_name("plum").unwrap_err();
        assert_eq!(e.to_string(), "`plum` is not a fruit: apple or pear");
        assert_eq!(or_list(&["a", "b", "c"]), "a, b or c");
        assert_eq!(or_list(&["a"]), "a");
    }
}
