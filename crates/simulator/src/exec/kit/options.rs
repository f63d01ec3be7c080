//! The run's semantic switches and limits ([`Options`], each naming a docs/fidelity.md choice or
//! a resource bound), and the run options by name: the one spelling of every switch a user sets, its
//! values, and the text of its errors. `birsim run`'s flags (`--oob skip`), the Python
//! package's keyword arguments (`oob="skip"`) and the `.expect` files' `option:` lines
//! (`option: oob=skip`) all go through [`Options::set`] and list [`Options::NAMES`].
//!
//! The numerics profile and its FP8 override are not here: they are a [`numerics::Profile`],
//! not [`Options`].

use super::Parallelism;

/// Semantic switches the sources leave open, beside the numerics [`numerics::Profile`]
/// (docs/fidelity.md names each).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// TensorScalarCache: a set `reverse0` or `reverse1` runs the scan from the last element to
    /// the first (seed 000 §4 prose, ASSUMED S14). When false the flags only swap operands (the
    /// seed's pseudocode).
    pub reverse_flags_reverse_scan: bool,
    /// Threads per kernel and the smallest chunk worth one; results are identical for every
    /// setting.
    pub parallelism: Parallelism,
    /// The most instructions a run executes (loop iterations counted) before it stops with a
    /// `budget` fault; validation refuses programs that statically exceed its own budget.
    pub max_instructions: u64,
    /// The most bytes one operand's buffers may take (default: validation's 4 GiB memory cap);
    /// an instruction that would need more stops with a `budget` fault before allocating.
    pub memory_cap: u64,
    /// What an indirect instruction does with an index that is not −1 but lands outside its
    /// table (docs/fidelity.md I2): fault (default) or skip it like −1.
    pub indirect_oob: indirection::Oob,
    /// What a DMABlock met in the instruction stream does (docs/fidelity.md G4): skip it (a
    /// definition; default) or run its descriptors once there. Fired blocks run either way.
    pub dma_block_in_stream: ::dge::swdge::BlockInStream,
    /// How a Matmult sums its products (docs/fidelity.md M3): ascending fp32 adds of fp32
    /// products (default) or a fused multiply-add chain.
    pub matmul_order: numerics::matmul::MatmulOrder,
    /// An Activation input outside its function's documented valid range (docs/fidelity.md
    /// E6): counted and warned about (false, default), or a `numerics` fault (true).
    pub ranges_fault: bool,
    /// What reading a register never written does (docs/fidelity.md B2): a fault (default) or
    /// 0xFFFFFFFF, the reference's start value.
    pub uninit_registers: super::UninitRegisters,
    /// What an instruction reading memory nothing wrote does (docs/fidelity.md B10): a warning
    /// (default), a fault, or not checked.
    pub uninit_reads: super::Check,
    /// Whether instructions whose float outputs hold NaN or ±Inf are reported (docs/fidelity.md
    /// B11): off (default), a warning, or a fault.
    pub nan_outputs: super::Check,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            reverse_flags_reverse_scan: true,
            parallelism: Parallelism::default(),
            max_instructions: bir_ir::ValidateOptions::default().max_instructions,
            memory_cap: bir_ir::ValidateOptions::default().memory_cap_bytes,
            indirect_oob: indirection::Oob::Fault,
            dma_block_in_stream: ::dge::swdge::BlockInStream::Skip,
            matmul_order: numerics::matmul::MatmulOrder::Ascending,
            ranges_fault: false,
            uninit_registers: super::UninitRegisters::Fault,
            uninit_reads: super::Check::Warn,
            nan_outputs: super::Check::Off,
        }
    }
}

/// One value word of an option, and what it does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OptionWord {
    /// The word (`skip`).
    pub word: &'static str,
    /// One line on what it does.
    pub help: &'static str,
}

/// The values an option takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OptionValues {
    /// One of these words.
    Words(&'static [OptionWord]),
    /// A whole number in decimal, described by the text (`a number of threads (1 or more)`).
    Number(&'static str),
}

/// One option a user sets by name: an entry of [`Options::NAMES`].
#[derive(Clone, Copy, Debug)]
pub struct OptionSpec {
    /// Its name (`oob`); the CLI flag is the name with dashes (`--oob`).
    pub name: &'static str,
    /// One line on what it sets.
    pub help: &'static str,
    /// The values it takes.
    pub values: OptionValues,
    /// Sets the value (false: not one of `values`).
    set: fn(&mut Options, &str) -> bool,
    /// The value as set, in the spelling [`Options::set`] takes.
    get: fn(&Options) -> String,
}

impl OptionSpec {
    /// What a value must be, as error messages say it: `fault or skip`, `a number of bytes`.
    pub fn expected(&self) -> String {
        match self.values {
            OptionValues::Words(words) => match words.split_last() {
                Some((last, [])) => last.word.to_owned(),
                Some((last, rest)) => {
                    let rest: Vec<&str> = rest.iter().map(|w| w.word).collect();
                    format!("{} or {}", rest.join(", "), last.word)
                }
                None => "nothing".to_owned(),
            },
            OptionValues::Number(what) => what.to_owned(),
        }
    }

    /// The error for `value`, a value this option does not take (written as the caller was
    /// given it: `ignore`, or `'4'` for a Python string where a number belongs).
    pub fn refuse(&self, value: &str) -> OptionError {
        // The value is echoed cut to a few hundred characters (bir_ir::clip), however long.
        let value = bir_ir::clip(value, bir_ir::ECHO_CHARS).into_owned();
        OptionError::Value { name: self.name, value, expected: self.expected() }
    }

    /// The option's value in `options`, spelled as [`Options::set`] takes it.
    pub fn get(&self, options: &Options) -> String {
        (self.get)(options)
    }

    /// The option's default value, spelled as [`Options::set`] takes it.
    pub fn default_value(&self) -> String {
        self.get(&Options::default())
    }
}

/// A name or value [`Options::set`] refuses.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OptionError {
    /// No option has this name.
    #[error("unknown option `{name}` (options: {list})", list = Options::name_list())]
    Unknown {
        /// The name as given.
        name: String,
    },
    /// The option does not take this value.
    #[error("{name}={value}: expected {expected}")]
    Value {
        /// The option's name.
        name: &'static str,
        /// The value as given.
        value: String,
        /// What it must be ([`OptionSpec::expected`]).
        expected: String,
    },
}

/// A whole number in decimal (what `str::parse` takes: digits, an optional leading `+`).
fn number(value: &str) -> Option<u64> {
    value.parse().ok()
}

/// Sets `field` to the value of `word` in `table`; false when `word` is not there.
fn pick<T: Copy>(field: &mut T, word: &str, table: &[(&str, T)]) -> bool {
    match table.iter().find(|(w, _)| *w == word) {
        Some((_, v)) => {
            *field = *v;
            true
        }
        None => false,
    }
}

/// The word `table` gives `value`.
fn word_of<T: PartialEq>(value: T, table: &[(&'static str, T)]) -> String {
    table.iter().find(|(_, v)| *v == value).map_or("?", |(w, _)| w).to_owned()
}

/// `tsc_reverse`'s words and the [`Options::reverse_flags_reverse_scan`] each sets.
const TSC_REVERSE: &[(&str, bool)] = &[("direction", true), ("operands", false)];
/// `oob`'s words.
const OOB: &[(&str, indirection::Oob)] =
    &[("fault", indirection::Oob::Fault), ("skip", indirection::Oob::Skip)];
/// `matmul`'s words.
const MATMUL: &[(&str, numerics::matmul::MatmulOrder)] =
    &[("ascending", numerics::matmul::MatmulOrder::Ascending), ("fma", numerics::matmul::MatmulOrder::Fma)];
/// `ranges`' words and the [`Options::ranges_fault`] each sets.
const RANGES: &[(&str, bool)] = &[("warn", false), ("fault", true)];
/// `uninit_registers`' words.
const UNINIT_REGISTERS: &[(&str, super::UninitRegisters)] =
    &[("fault", super::UninitRegisters::Fault), ("ones", super::UninitRegisters::Ones)];
/// `uninit_reads`' and `nan_outputs`' words.
const CHECK: &[(&str, super::Check)] =
    &[("warn", super::Check::Warn), ("fault", super::Check::Fault), ("off", super::Check::Off)];
/// `dma_block_in_stream`'s words.
const DMA_BLOCK_IN_STREAM: &[(&str, ::dge::swdge::BlockInStream)] =
    &[("skip", ::dge::swdge::BlockInStream::Skip), ("run", ::dge::swdge::BlockInStream::Run)];

impl Options {
    /// Every option a user sets by name, in the order help lists them.
    pub const NAMES: &'static [OptionSpec] = &[
        OptionSpec {
            name: "tsc_reverse",
            help: "What TensorScalarCache's reverse flags do (docs/fidelity.md S14)",
            values: OptionValues::Words(&[
                OptionWord { word: "direction", help: "Also scan from the last element" },
                OptionWord { word: "operands", help: "Only swap operands" },
            ]),
            set: |o, v| pick(&mut o.reverse_flags_reverse_scan, v, TSC_REVERSE),
            get: |o| word_of(o.reverse_flags_reverse_scan, TSC_REVERSE),
        },
        OptionSpec {
            name: "oob",
            help: "What an indirect instruction does with an index outside its table (docs/fidelity.md I2)",
            values: OptionValues::Words(&[
                OptionWord {
                    word: "fault",
                    help: "An out-of-bounds fault naming the index; nothing written",
                },
                OptionWord { word: "skip", help: "Treated like -1: the destination is left unchanged" },
            ]),
            set: |o, v| pick(&mut o.indirect_oob, v, OOB),
            get: |o| word_of(o.indirect_oob, OOB),
        },
        OptionSpec {
            name: "dma_block_in_stream",
            help: "What a DMABlock met in the instruction stream does (docs/fidelity.md G4)",
            values: OptionValues::Words(&[
                OptionWord { word: "skip", help: "A definition, run only when a DMATrigger fires it" },
                OptionWord { word: "run", help: "Its descriptors also run once where it stands" },
            ]),
            set: |o, v| pick(&mut o.dma_block_in_stream, v, DMA_BLOCK_IN_STREAM),
            get: |o| word_of(o.dma_block_in_stream, DMA_BLOCK_IN_STREAM),
        },
        OptionSpec {
            name: "matmul",
            help: "How a Matmult sums its products (docs/fidelity.md M3)",
            values: OptionValues::Words(&[
                OptionWord {
                    word: "ascending",
                    help: "fp32 products added k = 0, 1, ... from +0, each add rounded (RNE)",
                },
                OptionWord { word: "fma", help: "The same chain through fused multiply-adds" },
            ]),
            set: |o, v| pick(&mut o.matmul_order, v, MATMUL),
            get: |o| word_of(o.matmul_order, MATMUL),
        },
        OptionSpec {
            name: "ranges",
            help: "What an Activation input outside its function's valid range does (docs/fidelity.md E6)",
            values: OptionValues::Words(&[
                OptionWord { word: "warn", help: "Computed; counted per instruction and warned about" },
                OptionWord { word: "fault", help: "A numerics fault naming the value; nothing written" },
            ]),
            set: |o, v| pick(&mut o.ranges_fault, v, RANGES),
            get: |o| word_of(o.ranges_fault, RANGES),
        },
        OptionSpec {
            name: "uninit_registers",
            help: "What reading a register never written does (docs/fidelity.md B2)",
            values: OptionValues::Words(&[
                OptionWord { word: "fault", help: "An uninitialized fault naming the register" },
                OptionWord { word: "ones", help: "Reads 0xFFFFFFFF, the reference's start value" },
            ]),
            set: |o, v| pick(&mut o.uninit_registers, v, UNINIT_REGISTERS),
            get: |o| word_of(o.uninit_registers, UNINIT_REGISTERS),
        },
        OptionSpec {
            name: "uninit_reads",
            help: "What an instruction reading memory nothing wrote does (docs/fidelity.md B10)",
            values: OptionValues::Words(&[
                OptionWord { word: "warn", help: "Runs; one warning per instruction after the run" },
                OptionWord { word: "fault", help: "An uninitialized fault naming the operand and element" },
                OptionWord { word: "off", help: "Not checked" },
            ]),
            set: |o, v| pick(&mut o.uninit_reads, v, CHECK),
            get: |o| word_of(o.uninit_reads, CHECK),
        },
        OptionSpec {
            name: "nan_outputs",
            help: "Whether instructions whose float outputs hold NaN or Inf are reported (docs/fidelity.md B11)",
            values: OptionValues::Words(&[
                OptionWord { word: "off", help: "Not checked" },
                OptionWord { word: "warn", help: "One warning per instruction after the run" },
                OptionWord { word: "fault", help: "A numerics fault naming the operand and element" },
            ]),
            set: |o, v| pick(&mut o.nan_outputs, v, CHECK),
            get: |o| word_of(o.nan_outputs, CHECK),
        },
        OptionSpec {
            name: "threads",
            help: "The most threads a kernel uses (results are bit-identical for every count)",
            values: OptionValues::Number("a number of threads (1 or more)"),
            set: |o, v| match number(v).and_then(|n| usize::try_from(n).ok()) {
                Some(n) if n >= 1 => {
                    o.parallelism.threads = n;
                    true
                }
                _ => false,
            },
            get: |o| o.parallelism.threads.to_string(),
        },
        OptionSpec {
            name: "max_instructions",
            help: "The most instructions a run may execute, loop iterations counted",
            values: OptionValues::Number("a number"),
            set: |o, v| number(v).map(|n| o.max_instructions = n).is_some(),
            get: |o| o.max_instructions.to_string(),
        },
        OptionSpec {
            name: "memory_cap",
            help: "The most bytes of memory the program may make birsim allocate",
            values: OptionValues::Number("a number of bytes"),
            set: |o, v| number(v).map(|n| o.memory_cap = n).is_some(),
            get: |o| o.memory_cap.to_string(),
        },
    ];

    /// The entry of [`Options::NAMES`] called `name`.
    pub fn spec(name: &str) -> Option<&'static OptionSpec> {
        Self::NAMES.iter().find(|s| s.name == name)
    }

    /// Every option name, comma-separated (for messages).
    pub fn name_list() -> String {
        Self::NAMES.iter().map(|s| s.name).collect::<Vec<_>>().join(", ")
    }

    /// Sets option `name` ([`Options::NAMES`]) from its spelling: `set("oob", "skip")`,
    /// `set("threads", "4")`. On an error nothing changes.
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), OptionError> {
        let spec = Self::spec(name).ok_or_else(|| OptionError::Unknown {
            name: bir_ir::clip(name, bir_ir::ECHO_CHARS).into_owned(),
        })?;
        if (spec.set)(self, value) { Ok(()) } else { Err(spec.refuse(value)) }
    }

    /// Option `name`'s value, spelled as [`Options::set`] takes it; `None` for an unknown name.
    pub fn get(&self, name: &str) -> Option<String> {
        Self::spec(name).map(|s| s.get(self))
    }

    /// The validation limits a run under these options needs: its instruction budget and
    /// memory cap (the rest as [`bir_ir::ValidateOptions::default`]).
    pub fn validate_options(&self) -> bir_ir::ValidateOptions {
        bir_ir::ValidateOptions {
            max_instructions: self.max_instructions,
            memory_cap_bytes: self.memory_cap,
            ..bir_ir::ValidateOptions::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every option, a value it takes that is not its default, and values it refuses.
    const CASES: &[(&str, &str, &[&str])] = &[
        ("tsc_reverse", "operands", &["", "Direction", "reverse", "1", "direction "]),
        ("oob", "skip", &["", "ignore", "clamp", "Skip", "-1"]),
        ("dma_block_in_stream", "run", &["", "twice", "Run", "true"]),
        ("matmul", "fma", &["", "FMA", "descending", "ascending "]),
        ("ranges", "fault", &["", "Fault", "strict", "true"]),
        ("uninit_registers", "ones", &["", "Ones", "zero", "0xFFFFFFFF"]),
        ("uninit_reads", "fault", &["", "Warn", "strict", "error"]),
        ("nan_outputs", "warn", &["", "on", "Fault", "true"]),
        ("threads", "61", &["", "0", "-1", "1.5", "four", "0x4", "99999999999999999999"]),
        ("max_instructions", "10", &["", "-1", "1e6", "ten", "18446744073709551616"]),
        ("memory_cap", "1024", &["", "-5", "3GiB", "1.0", "18446744073709551616"]),
    ];

    #[test]
    fn the_cases_cover_every_name_once() {
        let names: Vec<&str> = Options::NAMES.iter().map(|s| s.name).collect();
        let covered: Vec<&str> = CASES.iter().map(|c| c.0).collect();
        assert_eq!(names, covered);
    }

    #[test]
    fn every_name_takes_a_good_value_and_changes_only_its_field() {
        for &(name, value, _) in CASES {
            let mut o = Options::default();
            assert_ne!(o.get(name).as_deref(), Some(value), "{name}: pick a value that is not the default");
            o.set(name, value).unwrap_or_else(|e| panic!("{name}={value}: {e}"));
            assert_eq!(o.get(name).as_deref(), Some(value), "{name}");
            for other in Options::NAMES.iter().filter(|s| s.name != name) {
                assert_eq!(other.get(&o), other.default_value(), "{name}={value} changed {}", other.name);
            }
        }
    }

    #[test]
    fn every_word_round_trips_and_words_differ() {
        for spec in Options::NAMES {
            let OptionValues::Words(words) = spec.values else { continue };
            let mut seen = Vec::new();
            for w in words {
                let mut o = Options::default();
                o.set(spec.name, w.word).unwrap_or_else(|e| panic!("{e}"));
                assert_eq!(spec.get(&o), w.word, "{}", spec.name);
                assert!(!w.help.is_empty());
                seen.push(o);
            }
            for (k, a) in seen.iter().enumerate() {
                assert!(seen[k + 1..].iter().all(|b| a != b), "{}: two words set the same", spec.name);
            }
            // The default is one of the words.
            assert!(words.iter().any(|w| w.word == spec.default_value()), "{}", spec.name);
        }
    }

    #[test]
    fn bad_values_are_refused_naming_option_value_and_what_is_expected() {
        for &(name, _, bad) in CASES {
            let spec = Options::spec(name).unwrap_or_else(|| panic!("{name}"));
            for &v in bad {
                let mut o = Options::default();
                let e = o.set(name, v).expect_err(v);
                assert_eq!(o, Options::default(), "{name}={v}: a refused value changed something");
                assert_eq!(e, spec.refuse(v));
                assert_eq!(e.to_string(), format!("{name}={v}: expected {}", spec.expected()));
            }
        }
    }

    #[test]
    fn error_texts() {
        let mut o = Options::default();
        let text = |r: Result<(), OptionError>| r.map_err(|e| e.to_string()).expect_err("refused");
        assert_eq!(text(o.set("oob", "ignore")), "oob=ignore: expected fault or skip");
        assert_eq!(text(o.set("tsc_reverse", "x")), "tsc_reverse=x: expected direction or operands");
        assert_eq!(
            text(o.set("dma_block_in_stream", "twice")),
            "dma_block_in_stream=twice: expected skip or run"
        );
        assert_eq!(text(o.set("matmul", "fused")), "matmul=fused: expected ascending or fma");
        assert_eq!(text(o.set("threads", "0")), "threads=0: expected a number of threads (1 or more)");
        assert_eq!(text(o.set("max_instructions", "-1")), "max_instructions=-1: expected a number");
        assert_eq!(text(o.set("memory_cap", "3GiB")), "memory_cap=3GiB: expected a number of bytes");
        assert_eq!(
            text(o.set("speed", "11")),
            "unknown option `speed` (options: tsc_reverse, oob, dma_block_in_stream, matmul, ranges, uninit_registers, uninit_reads, nan_outputs, threads, max_instructions, memory_cap)"
        );
        // Names are exact: no dashes, no other case, no old spelling.
        for name in ["dma_block", "dma-block-in-stream", "OOB", "--oob", "grain", "profile", ""] {
            assert!(matches!(o.set(name, "skip"), Err(OptionError::Unknown { .. })), "{name}");
        }
        assert_eq!(o, Options::default());
    }

    #[test]
    fn expected_lists_words_like_prose() {
        let spec =
            |values| OptionSpec { name: "x", help: "", values, set: |_, _| false, get: |_| String::new() };
        const A: OptionWord = OptionWord { word: "a", help: "" };
        const B: OptionWord = OptionWord { word: "b", help: "" };
        const C: OptionWord = OptionWord { word: "c", help: "" };
        assert_eq!(spec(OptionValues::Words(&[])).expected(), "nothing");
        assert_eq!(spec(OptionValues::Words(&[A])).expected(), "a");
        assert_eq!(spec(OptionValues::Words(&[A, B, C])).expected(), "a, b or c");
        assert_eq!(spec(OptionValues::Number("a number")).expected(), "a number");
    }

    #[test]
    fn numbers_take_the_decimal_the_cli_took() {
        let mut o = Options::default();
        o.set("memory_cap", "+4096").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(o.memory_cap, 4096);
        o.set("max_instructions", "18446744073709551615").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(o.max_instructions, u64::MAX);
        o.set("threads", "1").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(o.parallelism.threads, 1);
        let v = o.validate_options();
        assert_eq!((v.max_instructions, v.memory_cap_bytes), (u64::MAX, 4096));
        assert_eq!(v.max_loop_trips, bir_ir::ValidateOptions::default().max_loop_trips);
    }

    #[test]
    fn defaults_are_the_documented_ones() {
        let o = Options::default();
        assert_eq!(o.get("oob").as_deref(), Some("fault"));
        assert_eq!(o.get("dma_block_in_stream").as_deref(), Some("skip"));
        assert_eq!(o.get("tsc_reverse").as_deref(), Some("direction"));
        assert_eq!(o.get("nope"), None);
        assert_eq!(o.validate_options(), bir_ir::ValidateOptions::default());
    }
}
