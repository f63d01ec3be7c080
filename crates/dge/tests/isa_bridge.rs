//! The ISA bridge (issue #13): random DMA_INDIRECT1D words (gather, scatter, both; every compute
//! op on float and integer dtypes; DRAM, SBUF and PSUM sides; indices in and out of their bound registers; hard and soft
//! bounds; duplicates) on random machines. The descriptors `dge::isa::dma_indirect1d` generates,
//! executed through `MachineMemory`, leave the machine equal to `Machine::run_word` of the same
//! word, or both refuse it. Words are built from the contract's byte offsets (re-facts §8).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use dge::isa::{MachineMemory, dma_indirect1d};
use indirection::isa::machine::{BoundRule, IsaOptions, Machine};
use indirection::isa::{DmaIndirect1d, Generation, Word};
use test_rng::XorShift64Star;

const DRAM_A: u64 = 0x10_0000;
const DRAM_B: u64 = 0x20_0000;
const REGION: usize = 2048;

/// An ADDR8-IMM of a side: DRAM region A or B, or an on-chip address (bit 55 + ADDR4 form).
fn addr8(rng: &mut XorShift64Star) -> u64 {
    match rng.below(4) {
        0 => DRAM_A + rng.below(256),
        1 => DRAM_B + rng.below(256),
        // On chip (X3): SBUF partition << 18; PSUM bit 25 | partition << 15.
        2 => (1 << 55) | (rng.below(4) + 1) << 18 | rng.below(512),
        _ => (1 << 55) | 1 << 25 | (rng.below(4) + 1) << 15 | rng.below(512),
    }
}

/// fp32, bf16, uint8: the dtypes (ISA code, bytes) of the first bridge test.
const MIXED: &[(u8, u16)] = &[(0x0A, 4), (0x06, 2), (0x03, 1)];

/// Every integer dtype (ISA codes: int8 2, uint8 3, int16 4, uint16 5, int32 8, uint32 9,
/// int64 0xC, uint64 1).
const INTEGERS: &[(u8, u16)] =
    &[(0x02, 1), (0x03, 1), (0x04, 2), (0x05, 2), (0x08, 4), (0x09, 4), (0x0C, 8), (0x01, 8)];

fn word(rng: &mut XorShift64Star, dtypes: &[(u8, u16)]) -> [u8; 64] {
    let mut w = [0u8; 64];
    w[0] = 0xbb;
    w[14] = 128;
    let mode = rng.below(3) as u8;
    let (err, uniq) = (rng.below(3) == 0, rng.below(2) == 0);
    w[15] = mode | u8::from(err) << 2 | u8::from(uniq) << 3;
    let (code, esize) = *dtypes.get(rng.below(dtypes.len() as u64) as usize).unwrap();
    let values = 1 + rng.below(4) as u16;
    let elem = values * esize;
    let n = 1 + rng.below(16) as u16;
    for (base, a) in [(16usize, addr8(rng)), (32, addr8(rng))] {
        w[base..base + 8].copy_from_slice(&a.to_le_bytes());
        let step = 1 + rng.below(2) as i32;
        w[base + 8..base + 12].copy_from_slice(&step.to_le_bytes());
        w[base + 12..base + 14].copy_from_slice(&n.to_le_bytes());
        w[base + 14..base + 16].copy_from_slice(&elem.to_le_bytes());
    }
    // Index tensors in SBUF partition 0: source at byte 0, destination at byte 256.
    w[48..52].copy_from_slice(&0u32.to_le_bytes());
    w[52..56].copy_from_slice(&256u32.to_le_bytes());
    w[56] = code;
    w[57] = code;
    for b in [58, 59] {
        w[b] = match rng.below(3) {
            0 => 0,
            1 => 0x80 | 1,
            _ => 0xC0 | 2,
        };
    }
    // compute_op NONE..MIN on every dtype (X14, G41).
    w[60] = rng.below(5) as u8;
    w
}

fn machine(rng: &mut XorShift64Star) -> Machine {
    let mut m = Machine::new(Generation::V2);
    let mut bytes = |n: usize| (0..n).map(|_| rng.next_u64() as u8).collect::<Vec<u8>>();
    let (a, b) = (bytes(REGION), bytes(REGION));
    m.add_dram("a", DRAM_A, a).unwrap();
    m.add_dram("b", DRAM_B, b).unwrap();
    let pb = m.partition_bytes(indirection::isa::Space::Sbuf);
    let fill = bytes(6 * 1024);
    for p in 1..6 {
        m.sbuf_mut()[p * pb..p * pb + 1024].copy_from_slice(&fill[p * 1024..(p + 1) * 1024]);
    }
    let ppb = m.partition_bytes(indirection::isa::Space::Psum);
    for p in 1..6 {
        m.psum_mut()[p * ppb..p * ppb + 1024].copy_from_slice(&fill[p * 1024..(p + 1) * 1024]);
    }
    // Indices: mostly small (rows of up to 16 bytes in 2 KiB regions), some far out.
    let mut idx = Vec::new();
    for _ in 0..128 {
        let v: u32 = match rng.below(8) {
            0 => 100 + rng.below(200) as u32,
            1 => u32::MAX - rng.below(4) as u32,
            _ => rng.below(40) as u32,
        };
        idx.extend(v.to_le_bytes());
    }
    m.sbuf_mut()[..512].copy_from_slice(&idx);
    m.registers[1] = 30 + rng.below(20) as u32;
    m.registers[2] = rng.below(60) as u32;
    m
}

fn first_difference(a: &Machine, b: &Machine) -> String {
    let pairs = [("sbuf", a.sbuf(), b.sbuf()), ("psum", a.psum(), b.psum())];
    for (name, x, y) in pairs {
        if let Some(i) = x.iter().zip(y).position(|(p, q)| p != q) {
            return format!(
                "{name} byte {i}: {:02x?} vs {:02x?}",
                &x[i..(i + 8).min(x.len())],
                &y[i..(i + 8).min(y.len())]
            );
        }
    }
    for (r, s) in a.dram().iter().zip(b.dram()) {
        if let Some(i) = r.bytes.iter().zip(&s.bytes).position(|(p, q)| p != q) {
            return format!(
                "dram {} byte {i}: {:02x?} vs {:02x?}",
                r.name,
                &r.bytes[i..(i + 8).min(r.bytes.len())],
                &s.bytes[i..(i + 8).min(s.bytes.len())]
            );
        }
    }
    "no byte differs".into()
}

/// Runs `cases` random words of `dtypes` both ways; returns (equal, both refused, descriptors).
fn bridge(seed: u64, cases: usize, dtypes: &[(u8, u16)]) -> (usize, usize, usize) {
    let mut rng = XorShift64Star::new(seed);
    let (mut ok, mut refused, mut descs) = (0, 0, 0usize);
    for case in 0..cases {
        let raw = word(&mut rng, dtypes);
        let w = DmaIndirect1d::decode(&raw).unwrap();
        let m0 = machine(&mut rng);
        let o = IsaOptions {
            bound_rule: if case % 3 == 0 { BoundRule::ReFacts } else { BoundRule::Seed },
            ..IsaOptions::default()
        };
        let mut direct = m0.clone();
        let d = direct.run_word(&Word::DmaIndirect(w), &o);
        let mut via = m0.clone();
        let v = dma_indirect1d(&w, &m0, &o).map_err(|e| e.to_string()).and_then(|list| {
            descs += list.len();
            let np = o.numerics();
            dge::execute_with(&list, &mut MachineMemory { machine: &mut via }, &np).map_err(|e| e.to_string())
        });
        match (&d, &v) {
            (Ok(()), Ok(())) => {
                assert!(
                    direct == via,
                    "case {case}: {}\nword {raw:02x?}\n{w:?}",
                    first_difference(&direct, &via)
                );
                ok += 1;
            }
            (Err(_), Err(_)) => {
                assert!(via == m0, "case {case}: a refused word changed the machine");
                refused += 1;
            }
            _ => panic!("case {case}: datapath {d:?}, descriptors {v:?}\nword {raw:02x?}\n{w:?}"),
        }
    }
    (ok, refused, descs)
}

#[test]
fn descriptors_equal_the_dma_indirect_datapath() {
    let (ok, refused, descs) = bridge(0x15A_B41D, 150, MIXED);
    assert!(ok > 50 && refused > 30, "ok {ok}, refused {refused}");
    assert!(descs > 400, "{descs} descriptors");
}

/// Integer compute words (X14 on the datapath, G41 on the descriptors): every integer dtype and
/// compute op, the rest random as above.
#[test]
fn integer_compute_words_equal_the_datapath() {
    let (ok, refused, descs) = bridge(0x641_0C0DE, 150, INTEGERS);
    assert!(ok > 50 && refused > 30, "ok {ok}, refused {refused}");
    assert!(descs > 400, "{descs} descriptors");
}
