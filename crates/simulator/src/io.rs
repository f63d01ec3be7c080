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

fn shape_str(s: &[u64]) -> String {
    format!("({})", s.iter().map(u64::to_string).collect::<Vec<_>>().join(", "))
}

/// Resolves a NAME in a function.
pub fn resolve(f: &Function, name: &str) -> Result<Tensor, String> {
    let (alloc, loc) = match f.allocation_by_name(name) {
        Some(a) => {
            let alloc = &f.allocations[a.index()];
            match alloc.locations.as_slice() {
                [one] => (alloc, *one),
                [] => return Err(format!("allocation '{name}' has no memory location")),
                _ => {
                    return Err(format!(
                        "allocation '{name}' has {} memory locations; name one of them instead",
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
                    "no allocation or memory location is named '{name}' (allocations: {})",
                    names.join(", ")
                ));
            }
        },
    };
    Ok(Tensor { loc, dtype: alloc.dtype, shape: alloc.tensor_shape.clone() })
}

/// Checks an array against the tensor NAME stands for (dtype descriptor and shape).
pub fn check_input(t: &Tensor, name: &str, npy: &Npy) -> Result<(), String> {
    let want = descr_for(t.dtype);
    if npy.descr != want {
        return Err(format!(
            "the array has dtype {}, but '{name}' is {} and needs {want}",
            npy.descr, t.dtype
        ));
    }
    if npy.shape != t.shape {
        return Err(format!(
            "the array has shape {}, but '{name}' has tensor_shape {}",
            shape_str(&npy.shape),
            shape_str(&t.shape)
        ));
    }
    Ok(())
}

/// Loads a checked array into the simulator's memory.
pub fn load(sim: &mut Simulator<'_>, t: &Tensor, npy: &Npy) -> Result<(), String> {
    let loc = &sim.function().locations[t.loc.index()];
    sim.memory.load(loc, t.loc, &npy.data)
}

/// Reads a tensor back as an array.
pub fn read(sim: &mut Simulator<'_>, t: &Tensor) -> Npy {
    let loc = &sim.function().locations[t.loc.index()];
    let data = sim.memory.dump(loc, t.loc, t.bytes());
    Npy { descr: descr_for(t.dtype).to_owned(), shape: t.shape.clone(), data }
}
