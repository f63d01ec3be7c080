//! The memory store (re-facts §5 "Memory model", "MemoryObject"): one owner for the bytes of every
//! memory location, created lazily and reading 0xFF (the reference's uninitialised marker) where
//! nothing was written.
//!
//! A buffer costs what it holds: it starts as zeroed pages the OS maps on first touch, and each
//! 64 KiB granule (2 KiB in PSUM: one bank of one partition, what a Matmult touches) is filled
//! with 0xFF only when first touched by an access that does not overwrite it whole. Pages never written and never read are never materialised. A location whose last use
//! has passed can be freed, and a whole-location copy out of a dying location can move the buffer
//! instead of copying it (the executor decides both; see `exec`).
//!
//! Locations marked `allocated` in SB or PSUM live in one shared arena per space (128 partitions ×
//! the arch's bytes per partition), so post-allocation dumps that reuse SBUF space see each other's
//! bytes where they overlap. Every other location (unallocated SB/PSUM, DRAM, Input, Output) has a
//! private buffer: packed rows, or flat bytes.

use crate::alloc::{self, OutOfMemory};
use access_pattern::Layout;
use bir_ir::{LocId, MemoryLocation, MemoryType, NUM_PARTITIONS, PSUM_BYTES_PER_PARTITION, Validated};

/// Which buffer a location lives in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Home {
    Private(LocId),
    SbArena,
    PsumArena,
}

/// Bytes per lazily materialised granule.
const GRANULE: usize = 1 << 16;

/// Bytes per granule of a PSUM buffer: one 2 KiB bank of one partition, so a Matmult's START
/// clear (whole banks) makes its granules valid without filling them first, and its write
/// fills nothing beyond the banks it touches.
const PSUM_GRANULE: usize = 2048;

/// Buffers at least this large are anonymous mappings with transparent huge pages requested:
/// the OS hands out zeroed memory on first touch, 2 MiB at a time instead of 4 KiB, so a first
/// write costs what it costs NumPy (or a C loop into `MADV_HUGEPAGE` memory).
const MAPPED: usize = HUGE_PAGE;

/// The transparent huge page size (x86-64 and aarch64 with 4 KiB base pages). A mapping's
/// bytes start at a multiple of it, so even a buffer of exactly one huge page gets one.
const HUGE_PAGE: usize = 2 << 20;

/// A buffer's bytes: a heap vector, or an anonymous mapping for large buffers (its bytes
/// start `off` bytes in, at a huge-page boundary).
#[derive(Debug)]
enum Bytes {
    Heap(Vec<u8>),
    Mapped { map: memmap2::MmapMut, off: usize, len: usize },
}

impl Bytes {
    /// `n` zero bytes, not yet resident. A mapping that cannot be made falls back to the heap;
    /// a host that has neither is an [`OutOfMemory`] error, not an abort.
    fn zeroed(n: usize) -> Result<Bytes, OutOfMemory> {
        // One huge page more than asked, so the bytes can start on a huge-page boundary (the
        // spare address space is never touched, so it costs nothing).
        if n >= MAPPED
            && let Some(padded) = n.checked_add(HUGE_PAGE)
            && let Ok(map) = memmap2::MmapMut::map_anon(padded)
        {
            let off = (HUGE_PAGE - map.as_ptr() as usize % HUGE_PAGE) % HUGE_PAGE;
            #[cfg(target_os = "linux")]
            let _ = map.advise(memmap2::Advice::HugePage); // a hint; without it pages are 4 KiB
            return Ok(Bytes::Mapped { map, off, len: n });
        }
        alloc::filled(n, 0).map(Bytes::Heap)
    }
}

impl std::ops::Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Heap(v) => v,
            Bytes::Mapped { map, off, len } => map.get(*off..*off + *len).unwrap_or_default(),
        }
    }
}

impl std::ops::DerefMut for Bytes {
    fn deref_mut(&mut self) -> &mut [u8] {
        match self {
            Bytes::Heap(v) => v,
            Bytes::Mapped { map, off, len } => map.get_mut(*off..*off + *len).unwrap_or_default(),
        }
    }
}

/// Which bytes of a buffer an instruction or a load ever wrote (the uninitialised-read checker,
/// re-facts §5 `checkUninitMemReadHelper`; docs/fidelity.md B10): nothing yet, every byte, or
/// one bit per byte in zeroed pages the OS maps on first touch, so it costs what was written.
#[derive(Debug, Default)]
enum WrittenBits {
    #[default]
    Nothing,
    All,
    Bits(Bytes),
}

impl WrittenBits {
    /// Marks `range` of a buffer of `n` bytes written.
    fn mark(&mut self, range: std::ops::Range<usize>, n: usize) -> Result<(), OutOfMemory> {
        if range.is_empty() || matches!(self, WrittenBits::All) {
            return Ok(());
        }
        if range.start == 0 && range.end >= n {
            *self = WrittenBits::All;
            return Ok(());
        }
        if matches!(self, WrittenBits::Nothing) {
            *self = WrittenBits::Bits(Bytes::zeroed(n.div_ceil(8))?);
        }
        let WrittenBits::Bits(bits) = self else { return Ok(()) };
        let (start, end) = (range.start, range.end.min(n));
        let (mut b, full_from, full_to) = (start, start.div_ceil(8), end / 8);
        if full_from >= full_to {
            for x in start..end {
                bits[x / 8] |= 1 << (x % 8);
            }
            return Ok(());
        }
        while b < full_from * 8 {
            bits[b / 8] |= 1 << (b % 8);
            b += 1;
        }
        bits[full_from..full_to].fill(0xFF);
        for x in full_to * 8..end {
            bits[x / 8] |= 1 << (x % 8);
        }
        Ok(())
    }

    /// The first byte of `range` never written, if any.
    fn first_unwritten(&self, range: std::ops::Range<usize>) -> Option<usize> {
        match self {
            WrittenBits::All => None,
            WrittenBits::Nothing => (!range.is_empty()).then_some(range.start),
            WrittenBits::Bits(bits) => {
                let unset = |x: usize| bits.get(x / 8).is_none_or(|w| w & (1 << (x % 8)) == 0);
                let (start, end) = (range.start, range.end);
                let (full_from, full_to) = (start.div_ceil(8), end / 8);
                if full_from >= full_to {
                    return (start..end).find(|&x| unset(x));
                }
                if let Some(x) = (start..full_from * 8).find(|&x| unset(x)) {
                    return Some(x);
                }
                if let Some(k) = bits.get(full_from..full_to).and_then(|w| w.iter().position(|b| *b != 0xFF))
                {
                    let base = (full_from + k) * 8;
                    return (base..base + 8).find(|&x| unset(x));
                }
                (full_to * 8..end).find(|&x| unset(x))
            }
        }
    }
}

/// One buffer: its bytes and which granules are valid (0xFF-filled or written).
#[derive(Debug)]
struct Buf {
    data: Bytes,
    /// Bytes per granule.
    granule: usize,
    /// One bit per granule; set once the granule holds real bytes.
    ready: Vec<u64>,
    /// Granules not ready yet (0: the whole buffer is valid).
    pending: usize,
}

impl Buf {
    /// `n` bytes; PSUM's (`psum`) in bank-sized granules.
    fn new(n: usize, psum: bool) -> Result<Buf, OutOfMemory> {
        let granule = if psum { PSUM_GRANULE } else { GRANULE };
        let granules = n.div_ceil(granule);
        // Zeroed mappings come from the OS as untouched pages: nothing is resident yet.
        Ok(Buf {
            data: Bytes::zeroed(n)?,
            granule,
            ready: alloc::filled(granules.div_ceil(64), 0)?,
            pending: granules,
        })
    }

    /// Makes `range` valid: every granule it touches that nobody touched before becomes 0xFF,
    /// except granules the caller overwrites whole (`covers`).
    fn prepare(&mut self, range: std::ops::Range<usize>, covers: bool) {
        if self.pending == 0 || range.is_empty() {
            return;
        }
        let (end, size) = (range.end.min(self.data.len()), self.granule);
        for g in range.start / size..end.div_ceil(size) {
            let (word, bit) = (g / 64, 1u64 << (g % 64));
            if self.ready[word] & bit != 0 {
                continue;
            }
            let gr = g * size..((g + 1) * size).min(self.data.len());
            if !(covers && range.start <= gr.start && gr.end <= end) {
                self.data[gr].fill(UNINIT);
            }
            self.ready[word] |= bit;
            self.pending -= 1;
        }
    }

    /// A zero-length buffer (the stand-in when a buffer could not be made).
    fn empty() -> Buf {
        Buf { data: Bytes::Heap(Vec::new()), granule: GRANULE, ready: Vec::new(), pending: 0 }
    }
}

/// The bytes of every memory location of the program (the entry function's, and those of the
/// functions a Call runs).
#[derive(Debug)]
pub struct Memory {
    /// The running function's locations (by its `LocId`s): home and layout.
    homes: Vec<(Home, Layout)>,
    /// The running function's locations' store-wide slots: the entry function's locations are
    /// slots `0..n` in order; a called function's location named like an entry location has
    /// that location's slot, its others slots after them (docs/fidelity.md B14).
    slots: Vec<u32>,
    /// The location tables of the functions not running (their `homes`, `psum_locs`, `slots`),
    /// by function index; the running function's is in the fields.
    frames: Vec<Option<Frame>>,
    /// The running function's index.
    current: usize,
    private: Vec<Option<Buf>>,
    sb: Option<Buf>,
    psum: Option<Buf>,
    sb_row: u64,
    /// Written-shadows (re-facts §5 "MemoryObject"): zero where nothing was written yet, 0xFF
    /// where a tracked write landed; created on demand (zero pages, as a buffer's), for PSUM's
    /// first-write-copies rule.
    shadows: Vec<Option<Bytes>>,
    psum_shadow: Option<Bytes>,
    /// Per location: whether it is in PSUM (its buffer has bank-sized granules).
    psum_locs: Vec<bool>,
    /// Which bytes were ever written, per buffer: private ones by location, then the SB and
    /// PSUM arenas (docs/fidelity.md B10).
    written: Vec<WrittenBits>,
}

/// One function's location table (see [`Memory`]'s fields of the same names).
#[derive(Debug, Default)]
struct Frame {
    homes: Vec<(Home, Layout)>,
    psum_locs: Vec<bool>,
    slots: Vec<u32>,
}

/// Which bytes of a buffer an access touches, and whether it overwrites all of them.
#[derive(Clone, Debug)]
pub struct Touch {
    /// The byte range (`None`: the whole buffer).
    pub range: Option<std::ops::Range<usize>>,
    /// The access writes every byte of `range` before anything reads them.
    pub covers: bool,
}

impl Touch {
    /// The whole buffer, read or partly written.
    pub const ALL: Touch = Touch { range: None, covers: false };
}

/// The uninitialised-memory fill byte.
pub const UNINIT: u8 = 0xFF;

impl Memory {
    /// The store for a validated program: the entry function's locations, and those of the
    /// other functions (a Call runs them; docs/fidelity.md B14). Nothing is allocated until
    /// touched.
    pub fn new(program: &Validated<'_>) -> Memory {
        let p = program.program();
        let sb_row = p.arch.sbuf_bytes_per_partition();
        let entry = p.functions.first().map_or(&[][..], |f| &f.locations[..]);
        let table = |locs: &[MemoryLocation], slots: Vec<u32>| Frame {
            homes: locs.iter().zip(&slots).map(|(l, &k)| home_of(l, LocId(k), sb_row)).collect(),
            psum_locs: locs.iter().map(|l| l.mem_type == MemoryType::Psum).collect(),
            slots,
        };
        let mut frames = vec![Some(table(entry, (0..entry.len() as u32).collect()))];
        let by_name: std::collections::HashMap<&str, u32> =
            entry.iter().enumerate().map(|(k, l)| (l.name.as_str(), k as u32)).collect();
        let mut count = entry.len() as u32;
        for f in p.functions.iter().skip(1) {
            let slots = f
                .locations
                .iter()
                .map(|l| {
                    by_name.get(l.name.as_str()).copied().unwrap_or_else(|| {
                        count += 1;
                        count - 1
                    })
                })
                .collect();
            let mut t = table(&f.locations, slots);
            // A shared location is the entry's: its home too (validation: same type and dims).
            for (k, l) in f.locations.iter().enumerate() {
                if let (Some(&e), Some(Some(entry_table))) = (by_name.get(l.name.as_str()), frames.first()) {
                    t.homes[k] = entry_table.homes[e as usize];
                }
            }
            frames.push(Some(t));
        }
        let n = count as usize;
        let first = frames.first_mut().and_then(Option::take).unwrap_or_default();
        Memory {
            homes: first.homes,
            psum_locs: first.psum_locs,
            slots: first.slots,
            frames,
            current: 0,
            private: (0..n).map(|_| None).collect(),
            shadows: (0..n).map(|_| None).collect(),
            written: (0..n + 2).map(|_| WrittenBits::Nothing).collect(),
            sb: None,
            psum: None,
            sb_row,
            psum_shadow: None,
        }
    }

    /// Makes function `function`'s locations the ones `LocId`s name (a Call's callee, or the
    /// caller again after it), returning the function that ran before. An index outside the
    /// program changes nothing.
    pub fn enter(&mut self, function: usize) -> usize {
        let before = self.current;
        if function == before {
            return before;
        }
        let Some(next) = self.frames.get_mut(function).and_then(Option::take) else { return before };
        let old = Frame {
            homes: std::mem::replace(&mut self.homes, next.homes),
            psum_locs: std::mem::replace(&mut self.psum_locs, next.psum_locs),
            slots: std::mem::replace(&mut self.slots, next.slots),
        };
        if let Some(f) = self.frames.get_mut(before) {
            *f = Some(old);
        }
        self.current = function;
        before
    }

    /// The running function's index (0: the entry function).
    pub fn current(&self) -> usize {
        self.current
    }

    /// A location's store-wide slot (the G9 address space's location ordinal, docs/dge.md).
    pub fn slot_of(&self, loc: LocId) -> usize {
        self.slots[loc.index()] as usize
    }

    /// The running function's location in store-wide slot `slot`, if it names one.
    pub fn local_of(&self, slot: usize) -> Option<LocId> {
        if self.current == 0 {
            return (slot < self.homes.len()).then_some(LocId(slot as u32));
        }
        self.slots.iter().position(|&k| k as usize == slot).map(|k| LocId(k as u32))
    }

    /// How many locations the running function has.
    pub fn location_count(&self) -> usize {
        self.homes.len()
    }

    /// The layout of a location's elements in its buffer.
    pub fn layout(&self, loc: LocId) -> Layout {
        self.homes[loc.index()].1
    }

    fn span(&self, home: Home, layout: Layout) -> usize {
        match home {
            Home::Private(_) => layout.span().unwrap_or(0),
            Home::SbArena => (NUM_PARTITIONS * self.sb_row) as usize,
            Home::PsumArena => (NUM_PARTITIONS * PSUM_BYTES_PER_PARTITION) as usize,
        }
    }

    fn slot(&mut self, home: Home) -> &mut Option<Buf> {
        match home {
            Home::Private(id) => &mut self.private[id.index()],
            Home::SbArena => &mut self.sb,
            Home::PsumArena => &mut self.psum,
        }
    }

    /// Creates a location's buffer if it has none, without aborting when the host cannot
    /// provide it. The executor calls this for every operand of an instruction before the
    /// instruction runs, and the loaders before they fill a location, so the buffer accessors
    /// below never allocate a location's bytes themselves.
    pub fn ensure(&mut self, loc: LocId) -> Result<(), OutOfMemory> {
        let (home, layout) = self.homes[loc.index()];
        let n = self.span(home, layout);
        let psum = self.psum_locs[loc.index()];
        let slot = self.slot(home);
        if slot.as_ref().is_none_or(|b| b.data.len() != n) {
            *slot = Some(Buf::new(n, psum)?);
        }
        Ok(())
    }

    /// The buffer holding a location with the bytes `touch` names made valid, and the
    /// location's layout there. Call [`Memory::ensure`] first: a location without a buffer gets
    /// an empty one here (reading it then fails as out of bounds) rather than an unchecked
    /// allocation.
    pub fn buffer_for(&mut self, loc: LocId, touch: &Touch) -> (&mut [u8], Layout) {
        let (home, layout) = self.homes[loc.index()];
        let n = self.span(home, layout);
        let psum = self.psum_locs[loc.index()];
        let buf = self.slot(home).get_or_insert_with(|| Buf::new(n, psum).unwrap_or_else(|_| Buf::empty()));
        let n = n.min(buf.data.len());
        match &touch.range {
            Some(r) => buf.prepare(r.clone(), touch.covers),
            None => buf.prepare(0..n, false),
        }
        (&mut buf.data, layout)
    }

    /// The buffer holding a location, wholly valid (uninitialised bytes read 0xFF), and its
    /// layout there.
    pub fn buffer_mut(&mut self, loc: LocId) -> (&mut [u8], Layout) {
        self.buffer_for(loc, &Touch::ALL)
    }

    /// A location's buffer together with its written-shadow (same size, zero when created) and
    /// its layout: what a tracked write (a matmul into PSUM, seed 000 §1.3) needs to decide per
    /// element between copying and accumulating. The bytes of each of `ranges` are made valid
    /// (overwritten whole by the caller when `covers`); the caller touches no others. Allocated
    /// SB locations share the SB arena's data but keep a private shadow.
    pub fn buffer_and_shadow_mut(
        &mut self,
        loc: LocId,
        ranges: &[std::ops::Range<usize>],
        covers: bool,
    ) -> Result<(&mut [u8], &mut [u8], Layout), OutOfMemory> {
        let (home, layout) = self.homes[loc.index()];
        let n = self.span(home, layout);
        let psum = self.psum_locs[loc.index()];
        let (data, shadow) = match home {
            Home::Private(id) => (&mut self.private[id.index()], &mut self.shadows[id.index()]),
            Home::SbArena => (&mut self.sb, &mut self.shadows[self.slots[loc.index()] as usize]),
            Home::PsumArena => (&mut self.psum, &mut self.psum_shadow),
        };
        if data.is_none() {
            *data = Some(Buf::new(n, psum)?);
        }
        if shadow.is_none() {
            *shadow = Some(Bytes::zeroed(n)?);
        }
        match (data, shadow) {
            (Some(d), Some(s)) => {
                for r in ranges {
                    d.prepare(r.clone(), covers);
                }
                Ok((&mut d.data, s, layout))
            }
            // Both were filled just above.
            _ => Err(OutOfMemory::host(n as u64)),
        }
    }

    /// Drops a location's private buffer (its bytes read 0xFF again if it is ever touched).
    /// Locations in a shared arena are left alone. Returns whether anything was freed.
    pub fn free(&mut self, loc: LocId) -> bool {
        match self.homes[loc.index()].0 {
            Home::Private(id) => {
                self.shadows[id.index()] = None;
                self.written[id.index()] = WrittenBits::Nothing;
                self.private[id.index()].take().is_some()
            }
            _ => false,
        }
    }

    /// Moves `from`'s private buffer to `to` (whose old bytes are dropped) when both are private
    /// and span the same bytes: a whole-location copy out of a location that dies here, at no
    /// cost. `from` then reads as uninitialised. Returns false (and changes nothing) otherwise.
    pub fn move_buffer(&mut self, from: LocId, to: LocId) -> bool {
        let ((hf, lf), (ht, lt)) = (self.homes[from.index()], self.homes[to.index()]);
        let (Home::Private(a), Home::Private(b)) = (hf, ht) else { return false };
        if a == b || self.span(hf, lf) != self.span(ht, lt) {
            return false;
        }
        let Some(buf) = self.private[a.index()].take() else { return false };
        self.private[b.index()] = Some(buf);
        self.shadows[a.index()] = None;
        self.shadows[b.index()] = None;
        self.written[b.index()] = std::mem::take(&mut self.written[a.index()]);
        true
    }

    /// The bytes a location's buffer spans.
    pub fn span_of(&self, loc: LocId) -> usize {
        let (home, layout) = self.homes[loc.index()];
        self.span(home, layout)
    }

    /// Lends `f` a source location's buffer and a distinct destination location's buffer at once
    /// (with their layouts), the bytes each touch names made valid. `None` when both live in the
    /// same buffer (an arena, or one location): the caller then goes through a copy.
    pub fn with_two<R>(
        &mut self,
        (src, src_touch): (LocId, &Touch),
        (dst, dst_touch): (LocId, &Touch),
        f: impl FnOnce(&[u8], Layout, &mut [u8], Layout) -> R,
    ) -> Option<R> {
        let (hs, ls) = self.homes[src.index()];
        let (hd, ld) = self.homes[dst.index()];
        if hs == hd {
            return None;
        }
        // Take the source out (creating it if needed), lend both, put it back.
        self.buffer_for(src, src_touch);
        let taken = self.slot(hs).take()?;
        let (dbuf, _) = self.buffer_for(dst, dst_touch);
        let r = f(&taken.data, ls, dbuf, ld);
        *self.slot(hs) = Some(taken);
        Some(r)
    }

    /// Lends `f` the buffers of several source locations (read-only; they may share a buffer)
    /// and of a destination location in another buffer, the touched bytes made valid. `None`
    /// when the destination shares a buffer with any source.
    pub fn with_reads_write<R>(
        &mut self,
        srcs: &[(LocId, &Touch)],
        (dst, dst_touch): (LocId, &Touch),
        f: impl FnOnce(&[&[u8]], &mut [u8]) -> R,
    ) -> Option<R> {
        let hd = self.homes[dst.index()].0;
        if srcs.iter().any(|(s, _)| self.homes[s.index()].0 == hd) {
            return None;
        }
        for (s, t) in srcs {
            self.buffer_for(*s, t);
        }
        self.buffer_for(dst, dst_touch);
        let mut taken = self.slot(hd).take()?;
        let views: Option<Vec<&[u8]>> = srcs
            .iter()
            .map(|(s, _)| {
                let slot = match self.homes[s.index()].0 {
                    Home::Private(id) => &self.private[id.index()],
                    Home::SbArena => &self.sb,
                    Home::PsumArena => &self.psum,
                };
                slot.as_ref().map(|b| &*b.data)
            })
            .collect();
        let r = views.map(|v| f(&v, &mut taken.data));
        *self.slot(hd) = Some(taken);
        r
    }

    /// Whether two locations live in the same buffer (one location, or one shared arena), so
    /// their bytes may overlap.
    pub fn same_buffer(&self, a: LocId, b: LocId) -> bool {
        self.homes[a.index()].0 == self.homes[b.index()].0
    }

    /// Whether a location's buffer exists yet.
    pub fn is_touched(&self, loc: LocId) -> bool {
        match self.homes[loc.index()].0 {
            Home::Private(id) => self.private[id.index()].is_some(),
            Home::SbArena => self.sb.is_some(),
            Home::PsumArena => self.psum.is_some(),
        }
    }

    /// Bytes of buffers currently materialised (granules touched), for `--stats`.
    pub fn resident_bytes(&self) -> u64 {
        let count = |b: &Option<Buf>| {
            b.as_ref().map_or(0, |b| {
                let granules = b.data.len().div_ceil(b.granule);
                ((granules - b.pending) * b.granule).min(b.data.len()) as u64
            })
        };
        self.private.iter().map(count).sum::<u64>() + count(&self.sb) + count(&self.psum)
    }

    /// Fills `len` bytes of a location in tensor order, handing `fill` each destination piece in
    /// turn: a flat location from its byte 0; a partitioned one `len / partitions` bytes per
    /// partition, row by row. Nothing is buffered, so a file can stream straight in.
    pub fn load_with(
        &mut self,
        loc: &MemoryLocation,
        id: LocId,
        len: usize,
        mut fill: impl FnMut(&mut [u8]) -> Result<(), String>,
    ) -> Result<(), String> {
        let pieces = pieces(loc, self.layout(id), len)?;
        self.ensure(id).map_err(|e| format!("location '{}': {e}", loc.name))?;
        pieces.into_iter().try_for_each(|(at, n)| {
            let (buf, _) = self.buffer_for(id, &Touch { range: Some(at..at + n), covers: true });
            fill(&mut buf[at..at + n])?;
            self.mark_written(id, at..at + n).map_err(|e| format!("location '{}': {e}", loc.name))
        })
    }

    /// The slot of a location's buffer in `written`.
    fn written_slot(&self, loc: LocId) -> usize {
        match self.homes[loc.index()].0 {
            Home::Private(id) => id.index(),
            Home::SbArena => self.private.len(),
            Home::PsumArena => self.private.len() + 1,
        }
    }

    /// Marks buffer bytes `range` of a location's buffer as written (docs/fidelity.md B10).
    pub fn mark_written(&mut self, loc: LocId, range: std::ops::Range<usize>) -> Result<(), OutOfMemory> {
        let (slot, n) = (self.written_slot(loc), self.span_of(loc));
        match self.written.get_mut(slot) {
            Some(w) => w.mark(range, n),
            None => Ok(()),
        }
    }

    /// Whether every byte of a location's buffer was written (a load, or a write covering it).
    pub fn fully_written(&self, loc: LocId) -> bool {
        matches!(self.written.get(self.written_slot(loc)), Some(WrittenBits::All))
    }

    /// The first byte of buffer bytes `range` of a location's buffer never written, if any.
    pub fn first_unwritten(&self, loc: LocId, range: std::ops::Range<usize>) -> Option<usize> {
        self.written.get(self.written_slot(loc)).and_then(|w| w.first_unwritten(range))
    }

    /// Hands `sink` `len` bytes of a location in tensor order (the inverse of [`Memory::load_with`]).
    pub fn dump_with(
        &mut self,
        loc: &MemoryLocation,
        id: LocId,
        len: usize,
        mut sink: impl FnMut(&[u8]) -> Result<(), String>,
    ) -> Result<(), String> {
        let pieces = pieces(loc, self.layout(id), len)?;
        self.ensure(id).map_err(|e| format!("location '{}': {e}", loc.name))?;
        pieces.into_iter().try_for_each(|(at, n)| {
            let (buf, _) = self.buffer_for(id, &Touch { range: Some(at..at + n), covers: false });
            sink(&buf[at..at + n])
        })
    }

    /// The buffer bytes holding bytes `at..at + n` of a `len`-byte tensor stored in a location
    /// (tensor order, as [`Memory::load_with`] lays it out), when they lie in one piece: where a
    /// tensor element sits, for write provenance ([`crate::Simulator::watch`]).
    pub fn tensor_range(
        &self,
        loc: &MemoryLocation,
        id: LocId,
        len: usize,
        at: usize,
        n: usize,
    ) -> Option<std::ops::Range<usize>> {
        let mut skipped = 0;
        for (start, size) in pieces(loc, self.layout(id), len).ok()? {
            if at < skipped + size {
                let from = start + (at - skipped);
                return (at + n <= skipped + size).then_some(from..from + n);
            }
            skipped += size;
        }
        None
    }

    /// Loads a location from bytes in tensor order (see [`Memory::load_with`]).
    pub fn load(&mut self, loc: &MemoryLocation, id: LocId, bytes: &[u8]) -> Result<(), String> {
        let mut rest = bytes;
        self.load_with(loc, id, bytes.len(), |dst| {
            let (head, tail) = rest.split_at(dst.len());
            dst.copy_from_slice(head);
            rest = tail;
            Ok(())
        })
    }

    /// Reads `len` bytes of a location back in tensor order.
    pub fn dump(&mut self, loc: &MemoryLocation, id: LocId, len: usize) -> Result<Vec<u8>, String> {
        let mut out = Vec::new();
        alloc::reserve(&mut out, len).map_err(|e| format!("location '{}': {e}", loc.name))?;
        self.dump_with(loc, id, len, |src| {
            out.extend_from_slice(src);
            Ok(())
        })?;
        Ok(out)
    }
}

/// The (buffer byte, length) pieces holding `len` bytes of a location in tensor order.
fn pieces(loc: &MemoryLocation, layout: Layout, len: usize) -> Result<Vec<(usize, usize)>, String> {
    let start = layout.origin();
    if layout.is_flat() {
        let size = loc.partitions.saturating_mul(loc.bytes_per_partition) as usize;
        if len > size {
            return Err(format!("{len} bytes do not fit location '{}' ({size} bytes)", loc.name));
        }
        return Ok(vec![(start, len)]);
    }
    let parts = loc.partitions as usize;
    if parts == 0 || !len.is_multiple_of(parts) || len / parts > loc.bytes_per_partition as usize {
        return Err(format!(
            "{len} bytes do not split into {parts} partitions of at most {} bytes (location '{}')",
            loc.bytes_per_partition, loc.name
        ));
    }
    let (row, stride) = (len / parts, row_stride(&layout, loc));
    Ok((0..parts).map(|p| (start + p * stride, row)).collect())
}

/// Buffer bytes between a partitioned location's rows.
fn row_stride(layout: &Layout, loc: &MemoryLocation) -> usize {
    match (layout.address(0, 1), layout.address(loc.bytes_per_partition as i64, 1)) {
        (Some(a), Some(b)) => b - a,
        _ => loc.bytes_per_partition as usize,
    }
}

fn home_of(l: &MemoryLocation, id: LocId, sb_row: u64) -> (Home, Layout) {
    let arena = match (l.allocated, l.mem_type) {
        (true, MemoryType::Sb) => Some((Home::SbArena, sb_row)),
        (true, MemoryType::Psum) => Some((Home::PsumArena, PSUM_BYTES_PER_PARTITION)),
        _ => None,
    };
    if let Some((home, row)) = arena
        && let Some(layout) = Layout::in_arena(l, row)
    {
        return (home, layout);
    }
    (Home::Private(id), Layout::private(l))
}
