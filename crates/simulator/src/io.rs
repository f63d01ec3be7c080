//! Tensors in and out by name: what the CLI's `--input`/`--output` and the program conformance
//! suites share. A NAME is an allocation (with one memory location) or a memory location; its
//! dtype and `tensor_shape` come from the allocation.

use crate::Simulator;
use crate::npy::{Npy, descr_for};
use bir_ir::{Dtype, Function, LocId};

/// The tensor a NAME stands for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tensor {
    /// Its memory location.
    pub loc: LocId,
    /// Element type.
    pub dtype: Dtype,
    /// Shape (in containers for the `_x4` dtypes).
    pub shape: Vec<u64>,
}

impl Tensor {
    /// Its bytes.
    pub fn bytes(&self) -> usize {
        self.shape.iter().product::<u64>() as usize * self.dtype.size()
    }
}

/// The most dimensions an `.npy` array has: NumPy's `NPY_MAXDIMS` (64 since NumPy 2.0), so a
/// tensor of more cannot be exchanged as one, and naming it is refused before a run.
pub const MAX_NPY_DIMS: usize = 64;

/// A shape as messages print it, `(128, 512)`, cut to [`bir_ir::ECHO_CHARS`] characters.
pub fn shape_str(s: &[u64]) -> String {
    format!("({})", dims_str(s))
}

/// A shape's dimensions, `128, 512`, cut after [`bir_ir::ECHO_CHARS`] characters with the count
/// of dimensions (`1, 1, 1, …(1000000 dimensions in all)`).
pub fn dims_str(s: &[u64]) -> String {
    let mut text = String::new();
    for (k, d) in s.iter().enumerate() {
        if k > 0 {
            text.push_str(", ");
        }
        text.push_str(&d.to_string());
        if text.len() > bir_ir::ECHO_CHARS {
            // ASCII only: any byte is a character boundary.
            text.truncate(bir_ir::ECHO_CHARS);
            return format!("{text}…({} dimensions in all)", s.len());
        }
    }
    text
}

/// Resolves a NAME in a function.
pub fn resolve(f: &Function, name: &str) -> Result<Tensor, String> {
    let shown = bir_ir::clip(name, bir_ir::ECHO_CHARS);
    let (alloc, loc) = match f.allocation_by_name(name) {
        Some(a) => {
            let alloc = &f.allocations[a.index()];
            match alloc.locations.as_slice() {
                [one] => (alloc, *one),
                [] => return Err(format!("allocation '{shown}' has no memory location")),
                _ => {
                    return Err(format!(
                        "allocation '{shown}' has {} memory locations; name one of them instead",
                        alloc.locations.len()
                    ));
                }
            }
        }
        None => match f.location_by_name(name) {
            Some(l) => (&f.allocations[f.locations[l.index()].alloc.index()], l),
            None => {
                let names: Vec<&str> = f.allocations.iter().map(|a| a.name.as_str()).collect();
                return Err(format!(
                    "no allocation or memory location is named '{shown}' (allocations: {})",
                    bir_ir::clip(&names.join(", "), bir_ir::ECHO_CHARS)
                ));
            }
        },
    };
    if alloc.tensor_shape.len() > MAX_NPY_DIMS {
        return Err(format!(
            "'{shown}' has a tensor_shape of {} dimensions; an .npy array has at most {MAX_NPY_DIMS} (NumPy's limit)",
            alloc.tensor_shape.len()
        ));
    }
    Ok(Tensor { loc, dtype: alloc.dtype, shape: alloc.tensor_shape.clone() })
}

/// Checks an array's dtype descriptor and shape against the tensor NAME stands for.
pub fn check_header(t: &Tensor, name: &str, descr: &str, shape: &[u64]) -> Result<(), String> {
    let name = bir_ir::clip(name, bir_ir::ECHO_CHARS);
    let descr = bir_ir::clip(descr, bir_ir::ECHO_CHARS);
    let want = descr_for(t.dtype);
    if descr != want {
        return Err(format!("the array has dtype {descr}, but '{name}' is {} and needs {want}", t.dtype));
    }
    if shape != t.shape {
        return Err(format!(
            "the array has shape {}, but '{name}' has tensor_shape {}",
            shape_str(shape),
            shape_str(&t.shape)
        ));
    }
    Ok(())
}

/// Checks an in-memory array against the tensor NAME stands for.
pub fn check_input(t: &Tensor, name: &str, npy: &Npy) -> Result<(), String> {
    check_header(t, name, &npy.descr, &npy.shape)
}

/// Loads a checked in-memory array into the simulator's memory.
pub fn load(sim: &mut Simulator<'_>, t: &Tensor, npy: &Npy) -> Result<(), String> {
    let loc = &sim.function().locations[t.loc.index()];
    sim.memory_mut().load(loc, t.loc, &npy.data)
}

/// An `.npy` input whose header has been read and checked; [`load_input`] streams its data in.
pub struct OpenInput<R> {
    reader: R,
    tensor: Tensor,
}

/// Reads and checks an `.npy` header for NAME from `reader`, nothing more. `total_len` is the
/// whole stream's length (a file's size), so a short or overlong data part is refused before any
/// byte is loaded. The caller opens the file (the library never touches the file system).
pub fn open_input<R: std::io::Read>(
    f: &Function,
    name: &str,
    mut reader: R,
    total_len: u64,
) -> Result<OpenInput<R>, String> {
    let tensor = resolve(f, name)?;
    let h = crate::npy::read_header(&mut reader).map_err(|e| e.to_string())?;
    check_header(&tensor, name, &h.descr, &h.shape)?;
    let data = total_len.saturating_sub(h.data_offset);
    if data != h.data_len() {
        return Err(format!("the file holds {data} data bytes; its header promises {}", h.data_len()));
    }
    Ok(OpenInput { reader, tensor })
}

/// Streams an opened input straight into the simulator's memory (no intermediate copy).
pub fn load_input<R: std::io::Read>(sim: &mut Simulator<'_>, input: OpenInput<R>) -> Result<(), String> {
    let OpenInput { mut reader, tensor: t } = input;
    let loc = &sim.function().locations[t.loc.index()];
    sim.memory_mut().load_with(loc, t.loc, t.bytes(), |dst| {
        reader.read_exact(dst).map_err(|e| format!("reading input: {e}"))
    })
}

/// Streams a tensor from the simulator's memory into `out` as an `.npy` file.
pub fn save(sim: &mut Simulator<'_>, t: &Tensor, out: &mut impl std::io::Write) -> Result<(), String> {
    out.write_all(&crate::npy::header_bytes(descr_for(t.dtype), &t.shape)).map_err(|e| e.to_string())?;
    let loc = &sim.function().locations[t.loc.index()];
    sim.memory_mut().dump_with(loc, t.loc, t.bytes(), |src| out.write_all(src).map_err(|e| e.to_string()))
}

/// Reads a tensor back as an in-memory array.
pub fn read(sim: &mut Simulator<'_>, t: &Tensor) -> Result<Npy, String> {
    let loc = &sim.function().locations[t.loc.index()];
    let data = sim.memory_mut().dump(loc, t.loc, t.bytes())?;
    Ok(Npy { descr: descr_for(t.dtype).to_owned(), shape: t.shape.clone(), data })
}
