//! `birsim dump PROGRAM.json`: a readable listing of a program's allocations (kind, dtype,
//! shape, memory locations) and its body (blocks, loops, instructions with their operands).

use super::common::{Limits, load};
use super::{Exit, emit};
use bir_ir::{Function, Node, Operand};
use std::fmt::Write;
use std::path::PathBuf;

/// List a program's allocations and instructions
///
/// Prints, per function, every allocation (kind, dtype, tensor shape) with its memory
/// locations (memory type, dims, base, address), then the body: blocks, loops (variable,
/// bounds, step) and each instruction as `#K NAME OPCODE [ENGINE] OUTS <- INS`, an access
/// pattern written `location:dtype@offset[step,num]...`. The program is loaded, not validated.
#[derive(clap::Args, Debug)]
pub struct DumpArgs {
    /// The BIR JSON program
    #[arg(value_name = "PROGRAM.json")]
    pub program: PathBuf,
}

/// Runs `birsim dump`.
pub fn dump(args: &DumpArgs) -> Result<(), Exit> {
    let p = load(&args.program, &Limits::default())?;
    let mut out = String::new();
    listing(&mut out, &p).map_err(|e| Exit(3, format!("internal error (please report): {e}")))?;
    emit(&out)
}

/// The listing (formatting into a `String` cannot fail).
fn listing(out: &mut String, p: &bir_ir::Program) -> std::fmt::Result {
    writeln!(out, "arch {} · version {}", p.arch, p.version)?;
    for f in &p.functions {
        writeln!(out, "\nfunction {}", f.name)?;
        writeln!(out, "  allocations:")?;
        for a in &f.allocations {
            writeln!(out, "    {} {} {} {}", a.name, a.kind, a.dtype, shape_str(&a.tensor_shape))?;
            for l in a.locations.iter().filter_map(|id| f.location(*id)) {
                writeln!(
                    out,
                    "      {} {} dims [{}, {}] base {} addr {}{}",
                    l.name,
                    l.mem_type,
                    l.partitions,
                    l.bytes_per_partition,
                    l.base,
                    l.addr,
                    if l.allocated { " allocated" } else { "" }
                )?;
            }
        }
        writeln!(out, "  body:")?;
        list(out, f, &f.body, 4)?;
    }
    Ok(())
}

fn operand(f: &Function, a: &Operand) -> String {
    match a {
        Operand::Ap(ap) => {
            let name = f.location(ap.loc).map_or("?", |l| l.name.as_str());
            let pairs: Vec<String> = ap.pairs.iter().map(|p| format!("[{},{}]", p.step, p.num)).collect();
            let dynamic = if ap.dynamic.is_some() { " +dyn" } else { "" };
            format!("{name}:{}@{}{}{dynamic}", ap.dtype, ap.offset, pairs.join(""))
        }
        Operand::Imm { dtype, value } => format!("imm {dtype} {value:?}"),
        other => other.kind_name().to_owned(),
    }
}

fn list(out: &mut String, f: &Function, nodes: &[Node], indent: usize) -> std::fmt::Result {
    let pad = " ".repeat(indent);
    for (k, n) in nodes.iter().enumerate() {
        match n {
            Node::Block(b) => {
                writeln!(out, "{pad}block {}", b.name)?;
                list(out, f, &b.body, indent + 2)?;
            }
            Node::Loop(l) => {
                writeln!(out, "{pad}loop {} for {} in {}..{} step {}", l.name, l.var, l.lb, l.ub, l.stride)?;
                list(out, f, &l.body, indent + 2)?;
            }
            Node::Inst(i) => {
                let ins: Vec<String> = i.ins.iter().map(|a| operand(f, a)).collect();
                let outs: Vec<String> = i.outs.iter().map(|a| operand(f, a)).collect();
                writeln!(
                    out,
                    "{pad}#{k} {} {} [{}] {} <- {}",
                    i.name,
                    i.opcode(),
                    i.engine.name(),
                    outs.join(", "),
                    ins.join(", ")
                )?;
            }
        }
    }
    Ok(())
}

fn shape_str(s: &[u64]) -> String {
    format!("({})", s.iter().map(u64::to_string).collect::<Vec<_>>().join(", "))
}
