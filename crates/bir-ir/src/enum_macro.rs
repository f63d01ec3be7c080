//! The `bir_enum!` macro: one declaration per BIR enum gives its variants, reference ordinals and
//! every accepted BIR JSON spelling, and derives the lookups from that single list.

/// Lookups shared by every enum declared with `bir_enum!`, so the JSON reader decodes them generically.
pub trait BirEnum: Sized + Copy + 'static {
    /// What the enum is called in error messages (e.g. `"dtype"`).
    const WHAT: &'static str;
    /// Every variant, in ordinal order.
    const ALL: &'static [Self];
    /// The reference interpreter's ordinal (or bit value, for `MemoryType`).
    fn ordinal(self) -> u8;
    /// The variant with this ordinal.
    fn from_ordinal(n: u64) -> Option<Self>;
    /// The canonical BIR JSON spelling (what the writer emits).
    fn name(self) -> &'static str;
    /// The variant one of whose BIR JSON spellings is `s` (exact, case-sensitive).
    fn from_name(s: &str) -> Option<Self>;
    /// The canonical spellings of all variants, comma separated, for "expected one of" messages.
    fn expected() -> String {
        Self::ALL.iter().map(|v| v.name()).collect::<Vec<_>>().join(", ")
    }
}

/// Declares a BIR enum: `Variant = ordinal => ["canonical", "alias", ...]`.
macro_rules! bir_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident ($what:literal) {
            $( $(#[$vmeta:meta])* $variant:ident = $ord:literal => [$first:literal $(, $alias:literal)* $(,)?] ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u8)]
        pub enum $name {
            $( $(#[$vmeta])* $variant = $ord ),+
        }

        impl $crate::enum_macro::BirEnum for $name {
            const WHAT: &'static str = $what;
            const ALL: &'static [Self] = &[$(Self::$variant),+];
            fn ordinal(self) -> u8 {
                self as u8
            }
            fn from_ordinal(n: u64) -> Option<Self> {
                match n {
                    $( $ord => Some(Self::$variant), )+
                    _ => None,
                }
            }
            fn name(self) -> &'static str {
                match self {
                    $( Self::$variant => $first, )+
                }
            }
            fn from_name(s: &str) -> Option<Self> {
                match s {
                    $( $first $(| $alias)* => Some(Self::$variant), )+
                    _ => None,
                }
            }
        }

        impl $name {
            /// The reference interpreter's ordinal.
            pub const fn ordinal(self) -> u8 {
                self as u8
            }
            /// The canonical BIR JSON spelling.
            pub fn name(self) -> &'static str {
                <Self as $crate::enum_macro::BirEnum>::name(self)
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}
pub(crate) use bir_enum;
