//! Load speed and memory of `json::load_slice` on a flat program of many small instructions
//! (issue "Fast end to end", item 2). Ignored by default; run in release mode:
//!
//! ```text
//! cargo test -p bir-ir --release --test load_speed -- --ignored --nocapture
//! BIR_LOAD_N=1000000 BIR_LOAD_REF=0 cargo test -p bir-ir --release --test load_speed -- --ignored --nocapture
//! ```
//!
//! It prints the instructions per second (of this thread's CPU time, so that other work on
//! shared cores does not count), the heap bytes the loaded IR keeps and the transient
//! peak above that (counted by a wrapping global allocator). No timing is asserted.
#![expect(unsafe_code, reason = "a counting GlobalAlloc wrapper around the system allocator")]

use bir_ir::{Op, json};
use std::alloc::{GlobalAlloc, Layout, System};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// The system allocator, counting live bytes and their peak.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call forwards to `System` with the same arguments; the counters are only
// statistics.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded unchanged.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(live, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded unchanged.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded unchanged.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
            let live = LIVE.fetch_add(new_size, Ordering::Relaxed) + new_size;
            PEAK.fetch_max(live, Ordering::Relaxed);
        }
        p
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// This thread's CPU time in seconds (first field of `/proc/thread-self/schedstat`, in ns), so
/// that other load on shared cores does not count; `None` off Linux.
fn cpu_seconds() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: f64 = text.split_whitespace().next()?.parse().ok()?;
    Some(ns / 1e9)
}

/// A program of `n` TensorScalar instructions on small 2-level APs in one block.
fn flat_program(n: usize) -> String {
    let mut s = String::with_capacity(n * 400 + 1024);
    s.push_str(
        r#"{"arch":"gen3","version":2,"functions":[{"name":"f","allocations":[
        {"name":"a","kind":"Internal","dtype":"float32","memorylocations":[
          {"name":"t0","type":"SB","dims":[128,2048]},{"name":"t1","type":"SB","dims":[128,2048]}]}],
        "blocks":[{"name":"b","instructions":["#,
    );
    for i in 0..n {
        if i > 0 {
            s.push(',');
        }
        let _ = write!(
            s,
            r#"{{"opcode":"TensorScalar","name":"i{i}","engine":"Vector","op0":"add","const0":1.5,"op1":"mult","const1":-2.0,
            "ins":[{{"kind":"physical_ap","memref":"t0","memsetref":"a","dtype":"float32","offset":{o},"ap":[[512,4],[1,8]]}}],
            "outs":[{{"kind":"physical_ap","memref":"t1","memsetref":"a","dtype":"float32","offset":{o},"ap":[[512,4],[1,8]]}}]}}"#,
            o = i % 64
        );
    }
    s.push_str("]}]}]}");
    s
}

#[test]
#[ignore = "timing benchmark; run in release with --ignored --nocapture"]
fn load_flat_program() {
    let n: usize = std::env::var("BIR_LOAD_N").ok().and_then(|v| v.parse().ok()).unwrap_or(100_000);
    let text = flat_program(n);
    // Warm-up and a sanity check on a small prefix-sized program.
    let small = json::load_str(&flat_program(10)).unwrap();
    let mut count = 0;
    small.functions[0]
        .for_each_instruction(&mut |i| count += usize::from(matches!(i.op, Op::TensorScalar(_))));
    assert_eq!(count, 10);

    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let cpu = cpu_seconds();
    let t = Instant::now();
    let program = json::load_slice(text.as_bytes()).unwrap();
    let wall = t.elapsed().as_secs_f64();
    let secs = match (cpu, cpu_seconds()) {
        (Some(a), Some(b)) => b - a,
        _ => wall,
    };
    let after = LIVE.load(Ordering::Relaxed);
    let peak = PEAK.load(Ordering::Relaxed);
    println!(
        "{n} instructions, {:.1} MB of JSON: {:.3} s CPU ({:.3} s wall), {:.0} instructions/s, {:.2} us/instruction",
        text.len() as f64 / 1e6,
        secs,
        wall,
        n as f64 / secs,
        secs * 1e6 / n as f64
    );
    println!(
        "memory: the IR keeps {:.0} B/instruction; the transient peak above that is {:.0} B/instruction",
        after.saturating_sub(before) as f64 / n as f64,
        peak.saturating_sub(after) as f64 / n as f64
    );

    // The writer's output of the same program (pretty-printed, keys sorted).
    let written = json::to_json_string(&program);
    drop(program);
    let cpu = cpu_seconds();
    let again = json::load_str(&written).unwrap();
    let secs = cpu_seconds().zip(cpu).map_or(0.0, |(b, a)| b - a);
    println!(
        "the writer's text ({:.1} MB): {:.3} s CPU, {:.0} instructions/s, {:.2} us/instruction",
        written.len() as f64 / 1e6,
        secs,
        n as f64 / secs,
        secs * 1e6 / n as f64
    );
    drop(again);

    // Floors for reference: serde_json scanning the text without building anything, and
    // building a `serde_json::Value` of it (BIR_LOAD_REF=0 skips them, e.g. for profiling).
    if std::env::var("BIR_LOAD_REF").is_ok_and(|v| v == "0") {
        return;
    }
    let cpu = cpu_seconds();
    let scan = serde_json::from_slice::<serde::de::IgnoredAny>(text.as_bytes()).is_ok();
    let scan_secs = cpu_seconds().zip(cpu).map_or(0.0, |(b, a)| b - a);
    let cpu = cpu_seconds();
    let value = serde_json::from_slice::<serde_json::Value>(text.as_bytes()).is_ok();
    let value_secs = cpu_seconds().zip(cpu).map_or(0.0, |(b, a)| b - a);
    assert!(scan && value);
    println!(
        "reference: serde_json scan {:.2} us/instruction, Value parse {:.2} us/instruction",
        scan_secs * 1e6 / n as f64,
        value_secs * 1e6 / n as f64
    );
}
