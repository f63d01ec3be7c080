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
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyList};
use simulator::{Outcome, Simulator, TraceEntry, io};

/// True for the allocation kinds the CLI needs an `--input` for.
pub(crate) fn is_input(kind: TensorKind) -> bool {
    matches!(kind, TensorKind::ExternalInput | TensorKind::ExternalInputParameter | TensorKind::Input)
}

/// A function with nothing in it (the stand-in `Program::entry` never needs).
pub(crate) fn empty_function() -> Function {
    Function {
        name: String::new(),
        attributes: serde_json::Value::Null,
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
}

/// The option names `run` accepts (besides `inputs` and `outputs`).
const OPTION_NAMES: &[&str] = &[
    "profile",
    "threads",
    "trace",
    "fp8_saturate",
    "tsc_reverse",
    "oob",
    "dma_block_in_stream",
    "max_instructions",
    "memory_cap",
    "allow_uninit_inputs",
];

fn config(py: Python<'_>, options: &Bound<'_, PyDict>) -> PyResult<Config> {
    for key in options.keys() {
        let key: String = key.extract()?;
        if !OPTION_NAMES.contains(&key.as_str()) {
            return Err(PyTypeError::new_err(format!(
                "run() got an unexpected keyword argument '{key}' (options: {})",
                OPTION_NAMES.join(", ")
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
    let word = |key: &str, allowed: &[&str]| -> PyResult<Option<String>> {
        let v: Option<String> = get(options, key)
            .map_err(|_| bad(format!("{key}: expected a string ({})", allowed.join(" or "))))?;
        match v {
            Some(v) if !allowed.contains(&v.as_str()) => {
                Err(bad(format!("{key}={v:?}: expected {}", allowed.join(" or "))))
            }
            v => Ok(v),
        }
    };
    let profile_name = word("profile", &["refsim", "nki"])?.unwrap_or_else(|| "refsim".into());
    let mut profile = Profile::named(&profile_name).unwrap_or_else(Profile::refsim);
    let flag = |key: &str| -> PyResult<Option<bool>> {
        get::<bool>(options, key).map_err(|_| bad(format!("{key}: expected True or False")))
    };
    let count = |key: &str| -> PyResult<Option<u64>> {
        get::<u64>(options, key).map_err(|_| bad(format!("{key}: expected a non-negative integer")))
    };
    if let Some(sat) = flag("fp8_saturate")? {
        profile.fp8_saturate = sat;
    }
    let mut o = simulator::Options::default();
    let mut v = ValidateOptions::default();
    if let Some(n) = count("threads")? {
        if n == 0 {
            return Err(bad("threads=0: expected a number of threads (1 or more), or None".into()));
        }
        o.parallelism.threads = usize::try_from(n).unwrap_or(usize::MAX);
    }
    if let Some(d) = word("tsc_reverse", &["direction", "operands"])? {
        o.reverse_flags_reverse_scan = d == "direction";
    }
    if let Some(d) = word("oob", &["fault", "skip"])? {
        o.indirect_oob =
            if d == "skip" { simulator::IndirectOob::Skip } else { simulator::IndirectOob::Fault };
    }
    if let Some(d) = word("dma_block_in_stream", &["skip", "run"])? {
        o.dma_block_in_stream = simulator::DmaBlockInStream::from_name(&d).unwrap_or(o.dma_block_in_stream);
    }
    if let Some(n) = count("max_instructions")? {
        o.max_instructions = n;
        v.max_instructions = n;
    }
    if let Some(cap) = count("memory_cap")? {
        o.memory_cap = cap;
        v.memory_cap_bytes = cap;
    }
    Ok(Config {
        profile,
        options: o,
        validate: v,
        trace: flag("trace")?.unwrap_or(false),
        allow_uninit_inputs: flag("allow_uninit_inputs")?.unwrap_or(false),
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
        fault: Option<simulator::Fault>,
        executed: u64,
        outputs: Vec<Output>,
        trace: Option<Vec<TraceEntry>>,
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

    let mut sim = Simulator::new(valid, c.profile);
    let keep: Vec<bir_ir::LocId> = wanted.iter().map(|(_, t)| t.loc).collect();
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
    let fault = match sim.run() {
        Ok(Outcome::Finished) => None,
        Ok(Outcome::Faulted(fault)) => Some(fault),
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
    Ran::Done { fault, executed, outputs: read, trace }
}

/// `run(program, inputs, outputs, options)`: `inputs` is a list of `(name, descr, shape,
/// bytes)`, `outputs` a list of names or None (every output allocation). Returns `(outputs,
/// trace)`: a list of `(name, dtype, shape, bytearray)` and a list of dicts (or None).
#[pyfunction]
#[pyo3(signature = (program, inputs, outputs, options))]
pub(crate) fn run<'py>(
    py: Python<'py>,
    program: &Bound<'py, Program>,
    inputs: Vec<(String, String, Vec<u64>, Bound<'py, PyBytes>)>,
    outputs: Option<Vec<String>>,
    options: &Bound<'py, PyDict>,
) -> PyResult<(Bound<'py, PyList>, Option<Bound<'py, PyList>>)> {
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
        Ran::Done { fault, executed, outputs, trace } => {
            let out = PyList::empty(py);
            for o in outputs {
                out.append((o.name, o.dtype, o.shape, PyByteArray::new(py, &o.data)))?;
            }
            let trace = trace.map(|t| convert::trace(py, &t)).transpose()?;
            match fault {
                None => Ok((out, trace)),
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
