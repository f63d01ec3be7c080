//! `birsim._native`: the extension module behind the pure-Python `birsim` package (issue #15
//! item 4; README "Python", docs/fidelity.md P1–P9).
//!
//! It moves raw little-endian bytes only: the Python side maps NumPy / ml_dtypes arrays to
//! `(descr, shape, bytes)` with the CLI's `.npy` rule (`simulator::npy::descr_for`) and back, and
//! checks dtypes and shapes first so its errors name the tensor with both dtypes; this module
//! checks them again with `simulator::io::check_header`, the CLI's own check, before a byte is
//! loaded. A run happens with the GIL released (`Python::detach`) and inside `catch_unwind`, so
//! a birsim bug is an `InternalError`, never a crash of the interpreter.
//!
//! Exceptions: [`Fault`] (a guest fault, its typed fields as attributes), [`InputError`] (a
//! `ValueError`: a bad tensor, name or option), [`ProgramError`] (an `InputError`: the program
//! does not load or validate, its located diagnostics attached) and [`InternalError`] (a
//! `RuntimeError`: a birsim bug).

mod convert;
mod run;

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

create_exception!(
    birsim,
    Fault,
    PyException,
    "The program faulted while running (a guest fault: an out-of-bounds index, an unsupported op \
     or opcode, a run limit). Attributes: kind, cause, instruction, opcode, at, message, executed, \
     fields (every typed field of the cause, also set as attributes), outputs, trace."
);
create_exception!(
    birsim,
    InputError,
    PyValueError,
    "Bad input: an array of the wrong dtype or shape, a non-contiguous array, an unknown tensor \
     name, a missing input, a bad option value. Attribute `tensor` names the tensor (or None)."
);
create_exception!(
    birsim,
    ProgramError,
    InputError,
    "The program is not valid BIR JSON or does not validate. Attribute `diagnostics` lists every \
     located problem as a dict (kind, location, message)."
);
create_exception!(
    birsim,
    InternalError,
    PyRuntimeError,
    "A birsim bug (an internal invariant failed, or a panic): never the program's fault. Please \
     report it."
);

/// An [`InputError`] whose `tensor` attribute names the tensor concerned.
pub(crate) fn input_error(py: Python<'_>, tensor: Option<&str>, message: String) -> PyErr {
    let err = InputError::new_err(message);
    // Setting an attribute on a fresh exception instance cannot fail in practice; if it did, the
    // error would still be an InputError with its message.
    let _ = err.value(py).setattr("tensor", tensor);
    err
}

/// A [`ProgramError`] carrying the located diagnostics.
pub(crate) fn program_error(py: Python<'_>, what: &str, d: &bir_ir::Diagnostics) -> PyErr {
    let mut text = format!("{what}: {} problem(s):", d.0.len());
    for line in d.to_string().lines() {
        text.push_str("\n  ");
        text.push_str(line);
    }
    let err = ProgramError::new_err(text);
    let list = PyList::empty(py);
    for diag in &d.0 {
        let entry = PyDict::new(py);
        let _ = entry.set_item("kind", diag.kind.name());
        let _ = entry.set_item("location", diag.location());
        let _ = entry.set_item("context", &diag.context);
        let _ = entry.set_item("field", &diag.field);
        let _ = entry.set_item("message", &diag.message);
        let _ = list.append(entry);
    }
    let _ = err.value(py).setattr("diagnostics", list);
    let _ = err.value(py).setattr("tensor", py.None());
    err
}

/// A loaded (not yet validated) BIR program. Validation happens per run, with that run's
/// `memory_cap` and `max_instructions`.
#[pyclass(frozen, module = "birsim", name = "Program")]
pub struct Program {
    pub(crate) program: bir_ir::Program,
}

#[pymethods]
impl Program {
    /// Parses BIR JSON text (UTF-8 bytes); a `ProgramError` lists every located problem.
    #[new]
    fn new(py: Python<'_>, text: &Bound<'_, PyBytes>) -> PyResult<Program> {
        let bytes = text.as_bytes();
        let parsed = py
            .detach(|| std::panic::catch_unwind(|| bir_ir::json::load_slice(bytes)).map_err(run::panic_text));
        match parsed {
            Ok(Ok(program)) => {
                if program.functions.is_empty() {
                    let mut d = bir_ir::Diagnostics::default();
                    d.push(bir_ir::ErrorKind::Structure, "", "functions", "the program has no function");
                    return Err(program_error(py, "the program does not load", &d));
                }
                Ok(Program { program })
            }
            Ok(Err(e)) => Err(program_error(py, "the program does not load", &e.diagnostics())),
            Err(panic) => Err(InternalError::new_err(panic)),
        }
    }

    /// `(dtype, tensor_shape, kind)` of the tensor NAME stands for (an allocation with one memory
    /// location, or a memory location); an `InputError` naming it if there is none.
    fn tensor(&self, py: Python<'_>, name: &str) -> PyResult<(&'static str, Vec<u64>, &'static str)> {
        let f = self.entry();
        let t = simulator::io::resolve(f, name).map_err(|e| input_error(py, Some(name), e))?;
        let alloc = f.locations.get(t.loc.index()).and_then(|l| f.allocations.get(l.alloc.index()));
        Ok((t.dtype.name(), t.shape, alloc.map_or("", |a| a.kind.name())))
    }

    /// Every allocation of the entry function: `(name, kind, dtype, tensor_shape)`.
    fn allocations(&self) -> Vec<(String, &'static str, &'static str, Vec<u64>)> {
        self.entry()
            .allocations
            .iter()
            .map(|a| (a.name.clone(), a.kind.name(), a.dtype.name(), a.tensor_shape.clone()))
            .collect()
    }

    /// The output allocations' names (what `run` returns by default).
    fn output_names(&self) -> Vec<String> {
        self.entry().allocations.iter().filter(|a| a.kind.is_output()).map(|a| a.name.clone()).collect()
    }

    /// `(location, allocation)` for every memory location of an output allocation that has one
    /// location: the second name `run`'s result answers to (the CLI's `--output` takes either).
    fn output_aliases(&self) -> Vec<(String, String)> {
        let f = self.entry();
        f.allocations
            .iter()
            .filter(|a| a.kind.is_output())
            .filter_map(|a| match a.locations.as_slice() {
                [one] => f.location(*one).map(|l| (l.name.clone(), a.name.clone())),
                _ => None,
            })
            .collect()
    }

    /// The input allocations' names (each needs an array unless `allow_uninit_inputs`).
    fn input_names(&self) -> Vec<String> {
        self.entry().allocations.iter().filter(|a| run::is_input(a.kind)).map(|a| a.name.clone()).collect()
    }

    fn __repr__(&self) -> String {
        let f = self.entry();
        let mut n = 0u64;
        f.for_each_instruction(&mut |_| n += 1);
        format!("<birsim.Program '{}': {} allocation(s), {n} instruction(s)>", f.name, f.allocations.len())
    }
}

impl Program {
    /// The entry function (construction guarantees there is one).
    pub(crate) fn entry(&self) -> &bir_ir::Function {
        // `new` refuses a program without functions, so index 0 exists; `first()` keeps this
        // free of indexing all the same.
        static EMPTY: std::sync::OnceLock<bir_ir::Function> = std::sync::OnceLock::new();
        self.program.functions.first().unwrap_or_else(|| EMPTY.get_or_init(run::empty_function))
    }
}

/// `check(program) -> str`: the support report (`simulator::support::check`) as JSON text.
#[pyfunction]
fn check(py: Python<'_>, program: &Bound<'_, Program>) -> PyResult<String> {
    run::check(py, program.get())
}

/// `ops() -> str`: the whole support matrix (`simulator::support::matrix`, what `birsim ops
/// --json` prints) as JSON text.
#[pyfunction]
fn ops() -> PyResult<String> {
    run::ops()
}

/// The module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("Fault", py.get_type::<Fault>())?;
    m.add("InputError", py.get_type::<InputError>())?;
    m.add("ProgramError", py.get_type::<ProgramError>())?;
    m.add("InternalError", py.get_type::<InternalError>())?;
    m.add_class::<Program>()?;
    m.add_function(wrap_pyfunction!(run::run, m)?)?;
    m.add_function(wrap_pyfunction!(check, m)?)?;
    m.add_function(wrap_pyfunction!(ops, m)?)?;
    Ok(())
}
