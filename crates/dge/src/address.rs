//! The G9 address space of a BIR program (contract §3, docs/fidelity.md G9, ASSUMED):
//! location ordinal `k` (its index in the entry function's `locations`) gets the 64-bit base
//! `(k + 1) << 40`; an address is that base plus the byte offset inside the location's buffer
//! as its `access_pattern::Layout` maps it (relative to the layout's origin). Address 0 and
//! everything below `1 << 40` belong to no location.

/// Bits of an in-location byte offset (1 TiB per location).
pub const OFFSET_BITS: u32 = 40;

/// The base address of location ordinal `ordinal`; `None` past the 2^24 − 1 locations the space
/// holds.
pub fn location_base(ordinal: usize) -> Option<u64> {
    let k = u64::try_from(ordinal).ok()?.checked_add(1)?;
    if k >= 1 << (64 - OFFSET_BITS) {
        return None;
    }
    Some(k << OFFSET_BITS)
}

/// The location ordinal and in-location byte offset of an address; `None` below the first base.
pub fn split(addr: u64) -> Option<(usize, u64)> {
    let k = addr >> OFFSET_BITS;
    let ordinal = usize::try_from(k.checked_sub(1)?).ok()?;
    Some((ordinal, addr & ((1 << OFFSET_BITS) - 1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bases_and_split_by_hand() {
        // (0 + 1) << 40 = 0x100_0000_0000; (2 + 1) << 40 = 0x300_0000_0000.
        assert_eq!(location_base(0), Some(0x100_0000_0000));
        assert_eq!(location_base(2), Some(0x300_0000_0000));
        assert_eq!(split(0x300_0000_0010), Some((2, 0x10)));
        assert_eq!(split(0xFF_FFFF_FFFF), None);
        assert_eq!(location_base((1 << 24) - 2), Some(0xFFFF_FF00_0000_0000));
        assert_eq!(location_base((1 << 24) - 1), None);
    }
}
