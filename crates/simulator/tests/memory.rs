//! The memory store: lazy 0xFF buffers, shared arenas for allocated SB/PSUM locations, private
//! buffers otherwise, the PSUM written-shadow, and load/dump in tensor order.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use bir_ir::{LocId, ValidateOptions, json, validate};
use simulator::memory::{Memory, UNINIT};

fn program() -> bir_ir::Program {
    let loc = |name: &str, typ: &str, addr: u32, allocated: bool| {
        format!(
            r#"{{"name":"{name}_set","dtype":"float32","memorylocations":[{{"name":"{name}","type":"{typ}","dims":[2,16],"addr":{addr},"base":32,"allocated":{allocated}}}]}}"#
        )
    };
    let text = format!(
        r#"{{"functions":[{{"name":"f","allocations":[{},{},{},{},{}],"blocks":[]}}]}}"#,
        loc("a", "SB", 0, true),
        loc("b", "SB", 8, true),
        loc("c", "SB", 0, false),
        loc("d", "DRAM", 0, false),
        loc("p", "PSUM", 0, true),
    );
    json::load_str(&text).unwrap()
}

#[test]
fn allocated_locations_alias_and_others_do_not() {
    let p = program();
    let v = validate(&p, &ValidateOptions::default()).unwrap();
    let f = &p.functions[0];
    let mut m = Memory::new(&v);
    let (a, b, c) = (LocId(0), LocId(1), LocId(2));
    assert!(!m.is_touched(a), "buffers are created lazily");
    // Write 16 bytes into both partitions of `a`; `b` starts 8 bytes later in the same arena rows.
    m.load(&f.locations[0], a, &(0u8..32).collect::<Vec<_>>()).unwrap();
    assert_eq!(m.dump(&f.locations[1], b, 32).unwrap()[..8], [8, 9, 10, 11, 12, 13, 14, 15]);
    assert_eq!(m.dump(&f.locations[1], b, 32).unwrap()[16..24], [24, 25, 26, 27, 28, 29, 30, 31]);
    // `c` is unallocated: its own buffer, still uninitialised.
    assert!(m.dump(&f.locations[2], c, 32).unwrap().iter().all(|x| *x == UNINIT));
    // The DRAM location is flat and private.
    m.load(&f.locations[3], LocId(3), &[1, 2, 3]).unwrap();
    assert_eq!(m.dump(&f.locations[3], LocId(3), 4).unwrap(), [1, 2, 3, UNINIT]);
}

#[test]
fn psum_has_a_zeroed_written_shadow() {
    let p = program();
    let v = validate(&p, &ValidateOptions::default()).unwrap();
    let mut m = Memory::new(&v);
    let (data, shadow, layout) = m.buffer_and_shadow_mut(LocId(4));
    assert!(data.iter().all(|x| *x == UNINIT) && shadow.iter().all(|x| *x == 0));
    let at = layout.address(3, 4).unwrap();
    shadow[at] = 0xFF;
    let (_, shadow, _) = m.buffer_and_shadow_mut(LocId(4));
    assert_eq!(shadow[at], 0xFF, "the shadow persists");
}

#[test]
fn loading_too_much_is_an_error() {
    let p = program();
    let v = validate(&p, &ValidateOptions::default()).unwrap();
    let f = &p.functions[0];
    let mut m = Memory::new(&v);
    let e = m.load(&f.locations[3], LocId(3), &[0u8; 33]).unwrap_err();
    assert!(e.contains("33 bytes do not fit location 'd' (32 bytes)"), "{e}");
}
