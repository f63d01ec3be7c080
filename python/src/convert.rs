//! Simulator results as Python objects: a [`simulator::Fault`] as a `birsim.Fault` exception
//! whose attributes are the typed cause's fields, and trace entries as dicts with the keys of
//! the CLI's JSONL `--trace` lines.
//!
//! The field mapping matches on every `FaultCause` variant (no wildcard), so a new cause does
//! not compile until it is given its fields here. Names follow the Rust fields; a slot becomes
//! `slot` (`"ins[1]"`), `slot_side` (`"ins"`/`"outs"`) and `slot_index`; a nested error's
//! `Display` is `error` and its variant `error_kind`, its own fields flattened beside.

use access_pattern::ApError;
use indirection::IndirectError;
use numerics::NumericsError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyList, PyString};
use simulator::{FaultCause, Slot, TraceEntry};

/// A field value.
pub(crate) enum Val {
    /// Absent (`None`).
    None,
    /// An integer.
    Int(i128),
    /// A float.
    Float(f64),
    /// Text.
    Str(String),
}

impl<'py> IntoPyObject<'py> for &Val {
    type Target = PyAny;
    type Output = Bound<'py, PyAny>;
    type Error = PyErr;

    fn into_pyobject(self, py: Python<'py>) -> Result<Self::Output, Self::Error> {
        Ok(match self {
            Val::None => py.None().into_bound(py),
            Val::Int(v) => v.into_pyobject(py)?.into_any(),
            Val::Float(v) => v.into_pyobject(py)?.into_any(),
            Val::Str(v) => v.into_pyobject(py)?.into_any(),
        })
    }
}

type Fields = Vec<(&'static str, Val)>;

fn int(v: impl Into<i128>) -> Val {
    Val::Int(v.into())
}

fn uint(v: u64) -> Val {
    Val::Int(i128::from(v))
}

fn size(v: usize) -> Val {
    Val::Int(i128::try_from(v).unwrap_or(i128::MAX))
}

fn text(v: impl ToString) -> Val {
    Val::Str(v.to_string())
}

fn slot(s: &Slot) -> Fields {
    let (side, k) = match s {
        Slot::In(k) => ("ins", *k),
        Slot::Out(k) => ("outs", *k),
    };
    vec![("slot", text(s)), ("slot_side", text(side)), ("slot_index", size(k))]
}

fn numerics(e: &NumericsError) -> Fields {
    let mut f = vec![("error", text(e))];
    match e {
        NumericsError::UnsupportedReduceDtype(dtype, op) => f.extend([
            ("error_kind", text("unsupported_reduce_dtype")),
            ("dtype", text(dtype.name())),
            ("reduce_op", text(op.name())),
        ]),
        NumericsError::UnsupportedOp { op, table } => f.extend([
            ("error_kind", text("unsupported_op")),
            ("op", text(op.name())),
            ("table", text(table)),
        ]),
        NumericsError::NotInteger { dtype, op } => f.extend([
            ("error_kind", text("not_integer")),
            ("dtype", text(dtype.name())),
            ("op", text(op.name())),
        ]),
        NumericsError::NoMemoryReduction(op) => {
            f.extend([("error_kind", text("no_memory_reduction")), ("op", text(op.name()))])
        }
        NumericsError::LengthMismatch { src, src_values, dst, dst_values } => f.extend([
            ("error_kind", text("length_mismatch")),
            ("src", text(src.name())),
            ("src_values", size(*src_values)),
            ("dst", text(dst.name())),
            ("dst_values", size(*dst_values)),
        ]),
    }
    f
}

fn access(e: &ApError) -> Fields {
    let mut f = vec![("error", text(e))];
    match e {
        ApError::TooManyDims { dims } => {
            f.extend([("error_kind", text("too_many_dims")), ("dims", size(*dims))])
        }
        ApError::NoDims => f.push(("error_kind", text("no_dims"))),
        ApError::BadNum { dim, num } => {
            f.extend([("error_kind", text("bad_num")), ("dim", size(*dim)), ("num", int(*num))])
        }
        ApError::Overflow { dim } => f.extend([("error_kind", text("overflow")), ("dim", size(*dim))]),
        ApError::OutOfBounds { dim, index, element, capacity } => f.extend([
            ("error_kind", text("out_of_bounds")),
            ("dim", dim.map_or(Val::None, size)),
            ("index", int(*index)),
            ("element", int(*element)),
            ("capacity", uint(*capacity)),
        ]),
        ApError::FlatSize { want, got } => {
            f.extend([("error_kind", text("flat_size")), ("want", size(*want)), ("got", size(*got))])
        }
        ApError::Buffer { need, have } => {
            f.extend([("error_kind", text("buffer")), ("need", size(*need)), ("have", size(*have))])
        }
    }
    f
}

/// A bad index: `position`, `value` as its dtype reads it (what the message prints; an int32 −1
/// is −1) and `decoded`, the row or offset it decoded to.
fn index_value(position: u64, decoded: u64, stored: Option<i128>) -> Fields {
    vec![
        ("position", uint(position)),
        ("value", Val::Int(stored.unwrap_or(i128::from(decoded)))),
        ("decoded", uint(decoded)),
    ]
}

fn indirect(e: &IndirectError) -> Fields {
    let index_slot = |operand: usize| slot(&Slot::In(operand));
    let mut f = vec![("error", text(e))];
    match e {
        IndirectError::IndexDtype { operand, dtype, expected } => {
            f.push(("error_kind", text("index_dtype")));
            f.extend(index_slot(*operand));
            f.extend([("dtype", text(dtype.name())), ("expected", text(expected))]);
        }
        IndirectError::OutOfBounds { operand, position, value, stored, bound } => {
            f.push(("error_kind", text("out_of_bounds")));
            f.extend(index_slot(*operand));
            f.extend(index_value(*position, *value, *stored));
            f.push(("bound", uint(*bound)));
        }
        IndirectError::LeavesLocation { operand, position, value, stored, lo, hi, capacity } => {
            f.push(("error_kind", text("leaves_location")));
            f.extend(index_slot(*operand));
            f.extend(index_value(*position, *value, *stored));
            f.extend([("lo", int(*lo)), ("hi", int(*hi)), ("capacity", uint(*capacity))]);
        }
        IndirectError::RunOutside { operand, position, value, stored, len, per } => {
            f.push(("error_kind", text("run_outside")));
            f.extend(index_slot(*operand));
            f.extend(index_value(*position, *value, *stored));
            f.extend([("len", uint(*len)), ("per", uint(*per))]);
        }
        IndirectError::WrapOverflow { operand, position, value, stored, n, hi } => {
            f.push(("error_kind", text("wrap_overflow")));
            f.extend(index_slot(*operand));
            f.extend(index_value(*position, *value, *stored));
            f.extend([("n", uint(*n)), ("hi", uint(*hi))]);
        }
        IndirectError::InsufficientIndices { num_indices, available } => f.extend([
            ("error_kind", text("insufficient_indices")),
            ("num_indices", uint(*num_indices)),
            ("available", uint(*available)),
        ]),
        IndirectError::Shape(_) => f.push(("error_kind", text("shape"))),
        IndirectError::Numerics(n) => {
            let mut inner = numerics(n);
            inner.retain(|(k, _)| *k != "error");
            f.extend(inner);
        }
        IndirectError::Access(a) => {
            let mut inner = access(a);
            inner.retain(|(k, _)| *k != "error");
            f.extend(inner);
        }
    }
    f
}

/// The cause's name (snake case of the `FaultCause` variant) and its fields.
pub(crate) fn cause(c: &FaultCause) -> (&'static str, Fields) {
    let with = |s: &Slot, rest: Fields| {
        let mut f = slot(s);
        f.extend(rest);
        f
    };
    match c {
        FaultCause::NotImplemented { feature } => ("not_implemented", vec![("feature", text(feature))]),
        FaultCause::OpcodeNotImplemented(op) => (
            "opcode_not_implemented",
            vec![("feature", text(op.name())), ("unsupported_opcode", text(op.name()))],
        ),
        FaultCause::Numerics { slot: s, error } => ("numerics", with(s, numerics(error))),
        FaultCause::NotReducible { slot: s, dtype, acc } => {
            ("not_reducible", with(s, vec![("dtype", text(dtype.name())), ("acc", text(acc.name()))]))
        }
        FaultCause::Op { field, error } => {
            let mut f = vec![("field", text(field))];
            f.extend(numerics(error));
            ("op", f)
        }
        FaultCause::UnsupportedOp { what, op } => {
            ("unsupported_op", vec![("what", text(what)), ("op", text(op.name()))])
        }
        FaultCause::UnsupportedActivation { func } => ("unsupported_activation", vec![("func", text(func))]),
        FaultCause::OutOfRange { func, range, count, example } => (
            "out_of_range",
            vec![
                ("func", text(func)),
                ("range", text(range)),
                ("count", uint(*count)),
                ("example", Val::Float(f64::from(f32::from_bits(*example)))),
                ("example_bits", uint(u64::from(*example))),
            ],
        ),
        FaultCause::Access { slot: s, error } => ("access", with(s, access(error))),
        FaultCause::Count { slot: s, expected, actual, why } => (
            "count",
            with(s, vec![("expected", uint(*expected)), ("actual", uint(*actual)), ("why", text(why))]),
        ),
        FaultCause::ScalarCount { slot: s, scalars, elements } => {
            ("scalar_count", with(s, vec![("scalars", uint(*scalars)), ("elements", uint(*elements))]))
        }
        FaultCause::OperandKind { slot: s, want } => ("operand_kind", with(s, vec![("want", text(want))])),
        FaultCause::Dims { slot: s, why } => ("dims", with(s, vec![("why", text(why))])),
        FaultCause::DynamicOutOfBounds { slot: s, field, index, bound, leaves } => (
            "dynamic_out_of_bounds",
            with(
                s,
                vec![
                    ("field", text(field)),
                    ("index", int(*index)),
                    ("bound", int(*bound)),
                    ("leaves", int(i8::from(*leaves))),
                ],
            ),
        ),
        FaultCause::BadPredicate { slot: s, index, value } => (
            "bad_predicate",
            with(
                s,
                vec![
                    ("index", uint(*index)),
                    ("value", Val::Float(f64::from(value.get()))),
                    ("value_bits", uint(u64::from(value.0))),
                ],
            ),
        ),
        FaultCause::TooLarge { slot: s, elements, bytes, cap } => (
            "too_large",
            with(s, vec![("elements", uint(*elements)), ("bytes", uint(*bytes)), ("cap", uint(*cap))]),
        ),
        FaultCause::OutOfMemory { bytes } => ("out_of_memory", vec![("bytes", uint(*bytes))]),
        FaultCause::ScratchOverCap { bytes, cap } => {
            ("scratch_over_cap", vec![("bytes", uint(*bytes)), ("cap", uint(*cap))])
        }
        FaultCause::InstructionBudget { limit } => ("instruction_budget", vec![("limit", uint(*limit))]),
        FaultCause::Indirect(e) => ("indirect", indirect(e)),
        FaultCause::DgeIndexOutOfBounds { slot: s, element, value, bound } => (
            "dge_index_out_of_bounds",
            with(s, vec![("element", uint(*element)), ("value", uint(*value)), ("bound", uint(*bound))]),
        ),
        FaultCause::DgeRowOutside { slot: s, element, value, lo, hi, capacity } => (
            "dge_row_outside",
            with(
                s,
                vec![
                    ("element", uint(*element)),
                    ("value", uint(*value)),
                    ("lo", int(*lo)),
                    ("hi", int(*hi)),
                    ("capacity", uint(*capacity)),
                ],
            ),
        ),
        FaultCause::InDescriptor { block, index, descriptor, opcode, cause: inner } => {
            let (inner_name, inner_fields) = cause(inner);
            let mut f = vec![
                ("block", text(block)),
                ("descriptor_index", size(*index)),
                ("descriptor", text(descriptor)),
                ("descriptor_opcode", text(opcode.name())),
                ("descriptor_cause", text(inner_name)),
            ];
            f.extend(inner_fields.into_iter().filter(|(k, _)| {
                !matches!(
                    *k,
                    "block" | "descriptor_index" | "descriptor" | "descriptor_opcode" | "descriptor_cause"
                )
            }));
            ("in_descriptor", f)
        }
        FaultCause::BadField { field, why } => {
            ("bad_field", vec![("field", text(field)), ("why", text(why))])
        }
        FaultCause::UninitializedRegister { name, engine } => {
            ("uninitialized_register", vec![("register", text(name)), ("engine", text(engine.name()))])
        }
        FaultCause::DivisionByZero { op, a } => {
            ("division_by_zero", vec![("op", text(op.name())), ("a", uint(u64::from(*a)))])
        }
        FaultCause::NoProgress { what } => ("no_progress", vec![("what", text(what))]),
        FaultCause::CallDepth { what, limit } => {
            ("call_depth", vec![("what", text(what)), ("limit", uint(*limit as u64))])
        }
        FaultCause::UninitializedRead { slot: s, location, element } => {
            ("uninitialized_read", with(s, vec![("location", text(location)), ("element", uint(*element))]))
        }
        FaultCause::NonFiniteOutput { slot: s, location, element, value_bits } => (
            "non_finite_output",
            with(
                s,
                vec![
                    ("location", text(location)),
                    ("element", uint(*element)),
                    ("value", Val::Float(f64::from(f32::from_bits(*value_bits)))),
                    ("value_bits", uint(u64::from(*value_bits))),
                ],
            ),
        ),
        FaultCause::LoopBudget { passes, left, limit } => (
            "loop_budget",
            vec![
                ("passes", uint(u64::try_from(*passes).unwrap_or(u64::MAX))),
                ("left", uint(*left)),
                ("limit", uint(*limit)),
            ],
        ),
        FaultCause::LoopStride { stride, lb, ub } => {
            ("loop_stride", vec![("stride", int(*stride)), ("lb", int(*lb)), ("ub", int(*ub))])
        }
    }
}

/// Attributes every `birsim.Fault` has; a cause field of the same name is kept in `fields` only.
const RESERVED: &[&str] = &[
    "kind",
    "cause",
    "instruction",
    "opcode",
    "at",
    "message",
    "executed",
    "fields",
    "outputs",
    "trace",
    "args",
];

/// A `birsim.Fault` for a guest fault, with `outputs` (the requested tensors as memory held
/// them at the fault, same form as `run`'s) and `trace` (or None) attached.
pub(crate) fn fault<'py>(
    py: Python<'py>,
    f: &simulator::Fault,
    executed: u64,
    outputs: Bound<'py, PyList>,
    trace: Option<Bound<'py, PyList>>,
) -> PyErr {
    let err = crate::Fault::new_err(format!("the program faulted after {executed} instruction(s): {f}"));
    let set = || -> PyResult<()> {
        let v = err.value(py);
        let (name, fields) = cause(&f.cause);
        let dict = PyDict::new(py);
        for (k, val) in &fields {
            dict.set_item(*k, val)?;
            if !RESERVED.contains(k) {
                v.setattr(*k, val)?;
            }
        }
        v.setattr("kind", f.kind.name())?;
        v.setattr("cause", name)?;
        v.setattr("instruction", &f.instruction)?;
        v.setattr("opcode", f.opcode.name())?;
        v.setattr("at", &f.at)?;
        v.setattr("message", f.message())?;
        v.setattr("executed", executed)?;
        v.setattr("fields", dict)?;
        v.setattr("outputs", outputs)?;
        v.setattr("trace", trace)?;
        Ok(())
    };
    match set() {
        Ok(()) => err,
        Err(e) => e,
    }
}

/// The trace as a list of dicts, one per executed instruction, with the keys and values of the
/// CLI's JSONL `--trace` lines (`index`, `name`, `opcode`, `bytes_written`, `checksums` as
/// `fnv1a64:` + 16 hex digits, `elapsed_ns`, `regions`): the same `simulator::trace::TraceRecord`
/// the CLI writes, so the two cannot drift apart.
pub(crate) fn trace<'py>(py: Python<'py>, entries: &[TraceEntry]) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for e in entries {
        list.append(json_to_py(py, &simulator::trace::TraceRecord::from(e).to_json())?)?;
    }
    Ok(list)
}

/// A JSON value as the Python object `json.loads` would give (integers stay exact).
fn json_to_py<'py>(py: Python<'py>, v: &serde_json::Value) -> PyResult<Bound<'py, PyAny>> {
    use serde_json::Value;
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => u.into_pyobject(py)?.into_any(),
            (None, Some(i)) => i.into_pyobject(py)?.into_any(),
            _ => n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any(),
        },
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(a) => {
            let l = PyList::empty(py);
            for x in a {
                l.append(json_to_py(py, x)?)?;
            }
            l.into_any()
        }
        Value::Object(o) => {
            let d = PyDict::new(py);
            for (k, x) in o {
                d.set_item(k, json_to_py(py, x)?)?;
            }
            d.into_any()
        }
    })
}
