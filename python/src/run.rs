//! `_native.run`: one program run the way `birsim run` does it (crates/simulator/src/bin/birsim.rs
//! `run`): validate with the run's limits, resolve and check every input before anything runs,
//! refuse missing inputs, keep only the requested outputs alive, run, read the outputs back.
//!
//! Everything between the checked inputs and the read outputs happens in [`execute`], on plain
//! Rust data, with the GIL released and inside `catch_unwind`.

use crate::convert;
use crate::{InternalError, Program, input_error, program_error};
use bir_ir::{Function, TensorKind, ValidateOptions, validate};
use numerics::Profile;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyDict, PyList, PyString};
use simulator::{Outcome, Simulator, TraceEntry, io};

/// True for the allocation kinds the CLI needs an `--input` for.
pub(crate) fn is_input(kind: TensorKind) -> bool {
    matches!(kind, TensorKind::ExternalInput | TensorKind::ExternalInputParameter | TensorKind::Input)
}

/// A function with nothing in it (the stand-in `Program::entry` never needs).
pub(crate) fn empty_function() -> Function {
    Function {
        name: String::new(),
        attributes: bir_ir::JsonValue::Null,
        allocations: Vec::new(),
        locations: Vec::new(),
        body: Vec::new(),
    }
}

/// A panic payload as text.
pub(crate) fn panic_text(payload: Box<dyn std::any::Any + Send>) -> String {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_default();
    format!("birsim internal error (please report): panic: {what}")
}

/// The run's settings, from the Python wrapper's keyword arguments.
#[derive(Debug)]
struct Config {
    profile: Profile,
    options: simulator::Options,
    validate: ValidateOptions,
    trace: bool,
    allow_uninit_inputs: bool,
    /// Elements (tensor name, C-order flat indices) whose last writer the run reports.
    watch: Vec<(String, Vec<u64>)>,
}

/// The keyword arguments `run` takes besides `inputs`, `outputs` and the simulator options
/// (`simulator::Options::NAMES`: `oob`, `threads`, ..., spelled and checked there).
const OWN_NAMES: &[&str] = &["profile", "trace", "fp8_saturate", "allow_uninit_inputs", "watch"];

/// Every option name `run` accepts.
fn option_names() -> Vec<&'static str> {
    OWN_NAMES.iter().copied().chain(simulator::Options::NAMES.iter().map(|s| s.name)).collect()
}

/// A simulator option's Python value as `simulator::Options::set` takes it: a `str` for an
/// option of words, an integer for a number (an `int` or anything with `__index__`, such as a
/// NumPy integer; not a bool); `Err` holds the value's repr otherwise.
fn option_text(spec: &simulator::OptionSpec, v: &Bound<'_, PyAny>) -> PyResult<Result<String, String>> {
    Ok(match spec.values {
        simulator::OptionValues::Words(_) if v.is_instance_of::<PyString>() => Ok(v.str()?.to_string()),
        simulator::OptionValues::Number(_) if !v.is_instance_of::<PyBool>() && v.hasattr("__index__")? => {
            Ok(v.call_method0("__index__")?.str()?.to_string())
        }
        _ => Err(v.repr()?.to_string()),
    })
}

fn config(py: Python<'_>, options: &Bound<'_, PyDict>) -> PyResult<Config> {
    let names = option_names();
    for key in options.keys() {
        let key: String = key.extract()?;
        if !names.contains(&key.as_str()) {
            return Err(PyTypeError::new_err(format!(
                "run() got an unexpected keyword argument '{key}' (options: {})",
                names.join(", ")
            )));
        }
    }
    let bad = |what: String| input_error(py, None, what);
    // An option that is absent or None.
    // The extraction error is replaced by a message naming the option, so it is dropped here.
    fn get<'py, T: FromPyObjectOwned<'py>>(o: &Bound<'py, PyDict>, key: &str) -> Result<Option<T>, ()> {
        match o.get_item(key) {
            Ok(Some(v)) if !v.is_none() => v.extract::<T>().map(Some).map_err(|_| ()),
            Ok(_) => Ok(None),
            Err(_) => Err(()),
        }
    }
    let profile_name: Option<String> =
        get(options, "profile").map_err(|_| bad("profile: expected a string (refsim or nki)".into()))?;
    let profile_name = profile_name.unwrap_or_else(|| "refsim".into());
    let mut profile = Profile::named(&profile_name)
        .ok_or_else(|| bad(format!("profile={profile_name:?}: expected refsim or nki")))?;
    let flag = |key: &str| -> PyResult<Option<bool>> {
        get::<bool>(options, key).map_err(|_| bad(format!("{key}: expected True or False")))
    };
    if let Some(sat) = flag("fp8_saturate")? {
        profile.fp8_saturate = sat;
    }
    // The simulator options: their names, values and error texts are simulator::Options::set's.
    let mut o = simulator::Options::default();
    for spec in simulator::Options::NAMES {
        let Some(v) = options.get_item(spec.name)?.filter(|v| !v.is_none()) else { continue };
        match option_text(spec, &v)? {
            Ok(text) => o.set(spec.name, &text).map_err(|e| bad(e.to_string()))?,
            Err(repr) => return Err(bad(spec.refuse(&repr).to_string())),
        }
    }
    let watch: Vec<(String, Vec<u64>)> = get(options, "watch")
        .map_err(|_| bad("watch: expected a dict of tensor name -> list of flat element indices".into()))?
        .unwrap_or_default();
    Ok(Config {
        profile,
        options: o,
        validate: o.validate_options(),
        trace: flag("trace")?.unwrap_or(false),
        allow_uninit_inputs: flag("allow_uninit_inputs")?.unwrap_or(false),
        watch,
    })
}

/// One input as the wrapper hands it over: name, `.npy` descr, shape, C-order bytes.
struct Input<'a> {
    name: String,
    descr: String,
    shape: Vec<u64>,
    data: &'a [u8],
}

/// One output read back.
struct Output {
    name: String,
    dtype: &'static str,
    shape: Vec<u64>,
    data: Vec<u8>,
}

/// How [`execute`] ended.
enum Ran {
    /// The run finished or faulted; outputs are what memory held at the end.
    Done {
        fault: Option<Box<simulator::Fault>>,
        executed: u64,
        outputs: Vec<Output>,
        trace: Option<Vec<TraceEntry>>,
        /// One line per instruction whose Activation inputs left the valid range (fidelity E6).
        warnings: Vec<String>,
        /// The last writer of each watched element, in `Config::watch` order.
        writers: Vec<Option<simulator::Writer>>,
    },
    /// A bad input (the tensor, the message).
    Input(Option<String>, String),
    /// The program does not validate.
    Invalid(bir_ir::Diagnostics),
    /// A birsim bug.
    Bug(String),
}

/// The run, on plain data (no Python object is touched here).
fn execute(program: &bir_ir::Program, inputs: &[Input<'_>], outputs: Option<&[String]>, c: &Config) -> Ran {
    let valid = match validate(program, &c.validate) {
        Ok(v) => v,
        Err(d) => return Ran::Invalid(d),
    };
    let Some(f) = program.functions.first() else {
        return Ran::Bug("a validated program has no function".into());
    };
    // Resolve and check every input before running anything (the CLI's order).
    let mut tensors = Vec::with_capacity(inputs.len());
    for i in inputs {
        let t = match io::resolve(f, &i.name) {
            Ok(t) => t,
            Err(e) => return Ran::Input(Some(i.name.clone()), e),
        };
        if let Err(e) = io::check_header(&t, &i.name, &i.descr, &i.shape) {
            return Ran::Input(Some(i.name.clone()), e);
        }
        if i.data.len() != t.bytes() {
            let e = format!(
                "'{}': the array holds {} bytes, the tensor needs {}",
                i.name,
                i.data.len(),
                t.bytes()
            );
            return Ran::Input(Some(i.name.clone()), e);
        }
        tensors.push(t);
    }
    let missing: Vec<&str> = f
        .allocations
        .iter()
        .filter(|a| is_input(a.kind) && !a.locations.iter().any(|l| tensors.iter().any(|t| t.loc == *l)))
        .map(|a| a.name.as_str())
        .collect();
    if let (Some(first), false) = (missing.first(), c.allow_uninit_inputs) {
        return Ran::Input(
            Some((*first).to_owned()),
            format!(
                "no input array for {} (pass allow_uninit_inputs=True to run them as uninitialised memory, 0xFF bytes)",
                missing.iter().map(|n| format!("'{n}'")).collect::<Vec<_>>().join(", ")
            ),
        );
    }
    let names: Vec<String> = match outputs {
        Some(names) => names.to_vec(),
        None => f.allocations.iter().filter(|a| a.kind.is_output()).map(|a| a.name.clone()).collect(),
    };
    let mut wanted = Vec::with_capacity(names.len());
    for name in names {
        match io::resolve(f, &name) {
            Ok(t) => wanted.push((name, t)),
            Err(e) => return Ran::Input(Some(name), e),
        }
    }

    let mut watched = Vec::new();
    for (name, indices) in &c.watch {
        let t = match io::resolve(f, name) {
            Ok(t) => t,
            Err(e) => return Ran::Input(Some(name.clone()), e),
        };
        let size = t.dtype.size();
        let count = (t.bytes() / size.max(1)) as u64;
        for &k in indices {
            if k >= count {
                let e = format!("watch '{name}': element {k} is past the tensor's {count} elements");
                return Ran::Input(Some(name.clone()), e);
            }
            watched.push((t.clone(), k as usize * size, size));
        }
    }

    let mut sim = Simulator::new(valid, c.profile);
    let keep: Vec<bir_ir::LocId> =
        wanted.iter().map(|(_, t)| t.loc).chain(watched.iter().map(|(t, _, _)| t.loc)).collect();
    sim.free_dead_locations(&keep);
    sim.set_options(c.options);
    if c.trace {
        sim.enable_trace();
    }
    for (i, t) in inputs.iter().zip(&tensors) {
        let Some(loc) = f.locations.get(t.loc.index()) else {
            return Ran::Bug(format!("input '{}' resolves to a location that does not exist", i.name));
        };
        if let Err(e) = sim.memory_mut().load(loc, t.loc, i.data) {
            return Ran::Input(Some(i.name.clone()), e);
        }
    }
    if !watched.is_empty() {
        // Write provenance (docs/fidelity.md V3): the byte range of each watched element.
        let ranges = watched
            .iter()
            .map(|(t, at, size)| {
                let r = f
                    .locations
                    .get(t.loc.index())
                    .and_then(|l| sim.memory().tensor_range(l, t.loc, t.bytes(), *at, *size));
                (t.loc, r.unwrap_or(0..0))
            })
            .collect();
        sim.watch(ranges);
    }
    let fault = match sim.run() {
        Ok(Outcome::Finished) => None,
        Ok(Outcome::Faulted(fault)) => Some(Box::new(fault)),
        Err(e) => return Ran::Bug(e.to_string()),
    };
    let executed = sim.executed();
    let mut read = Vec::with_capacity(wanted.len());
    for (name, t) in wanted {
        match io::read(&mut sim, &t) {
            Ok(npy) => read.push(Output { name, dtype: t.dtype.name(), shape: t.shape, data: npy.data }),
            // Out of host memory while copying an output back: a bad input, like the CLI's exit 2.
            Err(e) => return Ran::Input(Some(name), e),
        }
    }
    let trace = c.trace.then(|| sim.trace().to_vec());
    let warnings = sim.warnings();
    let writers = if watched.is_empty() { Vec::new() } else { sim.writers().to_vec() };
    Ran::Done { fault, executed, outputs: read, trace, warnings, writers }
}

/// What `run` returns to the wrapper: outputs, the trace (when asked), the watched writers.
type RunResult<'py> = (Bound<'py, PyList>, Option<Bound<'py, PyList>>, Bound<'py, PyList>);

/// `run(program, inputs, outputs, options)`: `inputs` is a list of `(name, descr, shape,
/// bytes)`, `outputs` a list of names or None (every output allocation). Returns `(outputs,
/// trace, writers)`: a list of `(name, dtype, shape, bytearray)`, a list of dicts (or None),
/// and for each element `options["watch"]` lists (in order) its last writer as a dict
/// `{index, name, opcode}` or None.
#[pyfunction]
#[pyo3(signature = (program, inputs, outputs, options))]
pub(crate) fn run<'py>(
    py: Python<'py>,
    program: &Bound<'py, Program>,
    inputs: Vec<(String, String, Vec<u64>, Bound<'py, PyBytes>)>,
    outputs: Option<Vec<String>>,
    options: &Bound<'py, PyDict>,
) -> PyResult<RunResult<'py>> {
    let c = config(py, options)?;
    let inputs: Vec<Input<'_>> = inputs
        .iter()
        .map(|(name, descr, shape, data)| Input {
            name: name.clone(),
            descr: descr.clone(),
            shape: shape.clone(),
            data: data.as_bytes(),
        })
        .collect();
    let prog = &program.get().program;
    let ran = py.detach(|| {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            execute(prog, &inputs, outputs.as_deref(), &c)
        }))
        .unwrap_or_else(|p| Ran::Bug(panic_text(p)))
    });
    match ran {
        Ran::Done { fault, executed, outputs, trace, warnings, writers } => {
            // Python's own warnings (RuntimeWarning), as the CLI prints its lines.
            for w in warnings {
                let msg = std::ffi::CString::new(w).unwrap_or_default();
                PyErr::warn(py, &py.get_type::<pyo3::exceptions::PyRuntimeWarning>(), &msg, 1)?;
            }
            let out = PyList::empty(py);
            for o in outputs {
                out.append((o.name, o.dtype, o.shape, PyByteArray::new(py, &o.data)))?;
            }
            let trace = trace.map(|t| convert::trace(py, &t)).transpose()?;
            let found = PyList::empty(py);
            for w in writers {
                match w {
                    Some(w) => {
                        let d = PyDict::new(py);
                        d.set_item("index", w.index)?;
                        d.set_item("name", w.name)?;
                        d.set_item("opcode", w.opcode)?;
                        found.append(d)?;
                    }
                    None => found.append(py.None())?,
                }
            }
            match fault {
                None => Ok((out, trace, found)),
                Some(fault) => Err(convert::fault(py, &fault, executed, out, trace)),
            }
        }
        Ran::Input(tensor, message) => Err(input_error(py, tensor.as_deref(), message)),
        Ran::Invalid(d) => Err(program_error(py, "the program does not validate", &d)),
        Ran::Bug(message) => Err(InternalError::new_err(message)),
    }
}

/// `check`: `simulator::support::check(program).to_json()` as JSON text (GIL released).
pub(crate) fn check(py: Python<'_>, program: &Program) -> PyResult<String> {
    let prog = &program.program;
    py.detach(|| {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            simulator::support::check(prog).to_json().to_string()
        }))
        .map_err(panic_text)
    })
    .map_err(InternalError::new_err)
}

/// `ops`: `simulator::support::matrix().to_json()` as JSON text.
pub(crate) fn ops() -> PyResult<String> {
    std::panic::catch_unwind(|| simulator::support::matrix().to_json().to_string())
        .map_err(panic_text)
        .map_err(InternalError::new_err)
}
