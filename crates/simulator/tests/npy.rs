//! `.npy` headers: version 1.0 for ordinary shapes, version 2.0 when the header outgrows 1.0's
//! 16-bit length (hostile-input catalogue: "corrupt .npy headers").
#![allow(clippy::unwrap_used, reason = "test code")]

use simulator::npy::{header_bytes, read_header};

#[test]
fn npy_header_over_65535_bytes_uses_version_2() {
    // 25,000 dims of size 1: a header of about 75 KB, past version 1.0's 16-bit length.
    let shape = vec![1u64; 25_000];
    let h = header_bytes("<f4", &shape);
    assert_eq!(&h[..8], b"\x93NUMPY\x02\x00", "version 2.0");
    let len = u32::from_le_bytes([h[8], h[9], h[10], h[11]]) as usize;
    assert_eq!(12 + len, h.len(), "the 32-bit length covers the whole header");
    assert!(len > 65_535);
    assert_eq!(h.len() % 64, 0, "data starts on a 64-byte boundary");
    assert_eq!(*h.last().unwrap(), b'\n');
    let parsed = read_header(&mut &h[..]).unwrap();
    assert_eq!(parsed.shape, shape);
    assert_eq!(parsed.data_offset, h.len() as u64);
}

#[test]
fn small_headers_stay_version_1() {
    let h = header_bytes("<f4", &[128, 512]);
    assert_eq!(&h[..8], b"\x93NUMPY\x01\x00");
    assert_eq!(usize::from(u16::from_le_bytes([h[8], h[9]])) + 10, h.len());
    assert_eq!(h.len() % 64, 0);
    // NumPy's own text for this header (np.lib.format), worked by hand.
    assert!(
        std::str::from_utf8(&h[10..])
            .unwrap()
            .starts_with("{'descr': '<f4', 'fortran_order': False, 'shape': (128, 512), }")
    );
}
