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
    let whole = 0..m.span_of(LocId(4));
    let (data, shadow, layout) =
        m.buffer_and_shadow_mut(LocId(4), std::slice::from_ref(&whole), false).unwrap();
    assert!(data.iter().all(|x| *x == UNINIT) && shadow.iter().all(|x| *x == 0));
    let at = layout.address(3, 4).unwrap();
    shadow[at] = 0xFF;
    let (_, shadow, _) = m.buffer_and_shadow_mut(LocId(4), &[], false).unwrap();
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

fn big() -> bir_ir::Program {
    // Two flat DRAM locations of 1 MiB and one of 4 KiB.
    let text = r#"{"functions":[{"name":"f","allocations":[
      {"name":"a","dtype":"uint8","memorylocations":[{"name":"a","type":"DRAM","dims":[1,1048576]}]},
      {"name":"b","dtype":"uint8","memorylocations":[{"name":"b","type":"DRAM","dims":[1,1048576]}]},
      {"name":"c","dtype":"uint8","memorylocations":[{"name":"c","type":"DRAM","dims":[1,4096]}]}],"blocks":[]}]}"#;
    json::load_str(text).unwrap()
}

#[test]
fn untouched_bytes_cost_nothing_and_read_uninitialised() {
    use simulator::memory::Touch;
    let p = big();
    let v = validate(&p, &ValidateOptions::default()).unwrap();
    let mut m = Memory::new(&v);
    let a = LocId(0);
    // A covering write of 16 bytes in the middle: only its 64 KiB granule becomes resident, and
    // the granule's other bytes read 0xFF (the write did not cover them).
    let at = 700_000;
    let (buf, _) = m.buffer_for(a, &Touch { range: Some(at..at + 16), covers: true });
    buf[at..at + 16].fill(7);
    assert_eq!(m.resident_bytes(), 65536);
    let (buf, _) = m.buffer_for(a, &Touch { range: Some(at - 4..at + 20), covers: false });
    assert_eq!(buf[at - 4..at + 20], [&[UNINIT; 4][..], &[7; 16], &[UNINIT; 4]].concat()[..]);
    // A covering write of a whole granule is not filled first; everything else still reads 0xFF.
    let (buf, _) = m.buffer_for(a, &Touch { range: Some(0..65536), covers: true });
    buf[..65536].fill(1);
    let dump = m.dump(&p.functions[0].locations[0], a, 1_048_576).unwrap();
    assert!(dump[..65536].iter().all(|x| *x == 1));
    assert!(dump[65536..at].iter().all(|x| *x == UNINIT));
    assert_eq!(dump[at], 7);
    assert!(dump[at + 16..].iter().all(|x| *x == UNINIT));
}

#[test]
fn free_and_move() {
    let p = big();
    let v = validate(&p, &ValidateOptions::default()).unwrap();
    let f = &p.functions[0];
    let mut m = Memory::new(&v);
    let (a, b, c) = (LocId(0), LocId(1), LocId(2));
    m.load(&f.locations[0], a, &[5u8; 1_048_576]).unwrap();
    assert!(!m.move_buffer(a, c), "different spans do not move");
    assert!(m.move_buffer(a, b));
    assert!(!m.is_touched(a) && m.is_touched(b));
    assert!(m.dump(&f.locations[1], b, 1_048_576).unwrap().iter().all(|x| *x == 5));
    assert!(
        m.dump(&f.locations[0], a, 16).unwrap().iter().all(|x| *x == UNINIT),
        "a moved-from location reads uninitialised"
    );
    assert!(m.free(b));
    assert!(!m.is_touched(b));
}
