//! Reading and writing NumPy `.npy` files (format versions 1.0–3.0, little-endian, C order): the
//! tensor exchange format of the `birsim` CLI and the program conformance suites.

/// An array: its dtype descriptor (e.g. `<f4`), shape and raw little-endian data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Npy {
    /// NumPy dtype string, normalised to its little-endian form (`<f4`, `|u1`, …).
    pub descr: String,
    /// Shape.
    pub shape: Vec<u64>,
    /// Element bytes, C order.
    pub data: Vec<u8>,
}

/// Why bytes are not a usable `.npy`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NpyError {
    /// Not an .npy file.
    #[error("not an .npy file (bad magic or version)")]
    Magic,
    /// The header does not parse.
    #[error("malformed .npy header: {0}")]
    Header(String),
    /// Fortran order is not supported.
    #[error("Fortran-order arrays are not supported; save the array with C order")]
    Fortran,
    /// The data length does not match the header.
    #[error("the .npy data has {got} bytes; its header promises {want}")]
    Length {
        /// Bytes the header implies.
        want: u64,
        /// Bytes present.
        got: u64,
    },
    /// The stream holds more data than the header promises (it is read no further).
    #[error("the .npy data is longer than the {want} bytes its header promises")]
    Longer {
        /// Bytes the header implies.
        want: u64,
    },
    /// The stream could not be read.
    #[error("cannot read the .npy data: {0}")]
    Read(String),
    /// The data does not fit in the host's memory.
    #[error("the .npy data does not fit in memory: {0}")]
    OutOfMemory(#[from] crate::alloc::OutOfMemory),
}

/// Bytes per element of a descriptor, if it is one we know.
pub fn descr_size(descr: &str) -> Option<u64> {
    let kind = descr.get(1..2)?;
    let n: u64 = descr.get(2..)?.parse().ok()?;
    matches!(kind, "f" | "u" | "i" | "b").then_some(n)
}

fn normalise(descr: &str) -> String {
    // A one-byte type has no byte order: NumPy writes `|u1`; accept `<u1` too.
    match descr.strip_prefix(['<', '|', '=']) {
        Some(rest) if rest.ends_with('1') && !rest.starts_with('f') => format!("|{rest}"),
        Some(rest) => format!("<{rest}"),
        None => descr.to_owned(),
    }
}

/// An array's header: dtype descriptor (normalised), shape, and where the data starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// NumPy dtype string, little-endian form.
    pub descr: String,
    /// Shape.
    pub shape: Vec<u64>,
    /// Byte offset of the data in the file.
    pub data_offset: u64,
}

impl Header {
    /// Data bytes the header promises.
    pub fn data_len(&self) -> u64 {
        let size = descr_size(&self.descr).unwrap_or(1);
        self.shape.iter().try_fold(size, |a, d| a.checked_mul(*d)).unwrap_or(u64::MAX)
    }
}

/// Reads an `.npy` header, leaving `r` at the first data byte.
pub fn read_header(r: &mut impl std::io::Read) -> Result<Header, NpyError> {
    let mut pre = [0u8; 10];
    r.read_exact(&mut pre).map_err(|_| NpyError::Magic)?;
    if &pre[..6] != b"\x93NUMPY" {
        return Err(NpyError::Magic);
    }
    let (header_len, start) = match pre[6] {
        1 => (usize::from(u16::from_le_bytes([pre[8], pre[9]])), 10),
        2 | 3 => {
            let mut more = [0u8; 2];
            r.read_exact(&mut more).map_err(|_| NpyError::Magic)?;
            (u32::from_le_bytes([pre[8], pre[9], more[0], more[1]]) as usize, 12)
        }
        _ => return Err(NpyError::Magic),
    };
    if header_len > 1 << 20 {
        return Err(NpyError::Header(format!("a {header_len}-byte header is implausible")));
    }
    let mut h = crate::alloc::filled(header_len, 0u8)?;
    r.read_exact(&mut h).map_err(|_| NpyError::Header("truncated".into()))?;
    let header = std::str::from_utf8(&h).map_err(|_| NpyError::Header("not UTF-8".into()))?;
    parse_header(header, (start + header_len) as u64)
}

fn parse_header(header: &str, data_offset: u64) -> Result<Header, NpyError> {
    let field = |key: &str| -> Result<&str, NpyError> {
        let k = header.find(&format!("'{key}'")).ok_or_else(|| NpyError::Header(format!("no '{key}'")))?;
        let rest = &header[k + key.len() + 2..];
        let colon = rest.find(':').ok_or_else(|| NpyError::Header(format!("no value for '{key}'")))?;
        Ok(rest[colon + 1..].trim_start())
    };
    let descr_v = field("descr")?;
    let descr = descr_v
        .strip_prefix('\'')
        .and_then(|r| r.split('\'').next())
        .ok_or_else(|| NpyError::Header("descr is not a string".into()))?;
    if descr.starts_with('>') {
        return Err(NpyError::Header(format!("big-endian dtype {descr} is not supported")));
    }
    if field("fortran_order")?.starts_with("True") {
        return Err(NpyError::Fortran);
    }
    let shape_v = field("shape")?;
    let inner = shape_v
        .strip_prefix('(')
        .and_then(|r| r.split(')').next())
        .ok_or_else(|| NpyError::Header("shape is not a tuple".into()))?;
    let shape = inner
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| {
            s.trim_end_matches('L').parse::<u64>().map_err(|_| NpyError::Header(format!("bad dimension {s}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let descr = normalise(descr);
    descr_size(&descr).ok_or_else(|| NpyError::Header(format!("unsupported dtype {descr}")))?;
    Ok(Header { descr, shape, data_offset })
}

impl Npy {
    /// Parses an `.npy` file held in memory.
    pub fn parse(bytes: &[u8]) -> Result<Npy, NpyError> {
        let mut r = bytes;
        let h = read_header(&mut r)?;
        let want = h.data_len();
        if want != r.len() as u64 {
            return Err(NpyError::Length { want, got: r.len() as u64 });
        }
        Ok(Npy { descr: h.descr, shape: h.shape, data: crate::alloc::copied(r)? })
    }

    /// Reads an `.npy` file from a stream without holding more than it should: the header
    /// first, which `accept` sees (and may refuse: a caller checks the dtype and shape it
    /// expects) before any data is read, then exactly the data the header promises, and one
    /// byte more to see that the stream ends there. So memory is bounded by what `accept`
    /// allows, and an endless stream (`/dev/zero`, a pipe) is refused at once.
    pub fn read<R: std::io::Read, E: From<NpyError>>(
        mut r: R,
        accept: impl FnOnce(&Header) -> Result<(), E>,
    ) -> Result<Npy, E> {
        let h = read_header(&mut r)?;
        accept(&h)?;
        let want = h.data_len();
        let n = usize::try_from(want)
            .map_err(|_| NpyError::OutOfMemory(crate::alloc::OutOfMemory::host(want)))?;
        let mut data = crate::alloc::filled(n, 0u8).map_err(NpyError::from)?;
        let mut got = 0;
        while got < n {
            match r.read(&mut data[got..]) {
                Ok(0) => return Err(NpyError::Length { want, got: got as u64 }.into()),
                Ok(k) => got += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(NpyError::Read(e.to_string()).into()),
            }
        }
        let mut one = [0u8; 1];
        loop {
            match r.read(&mut one) {
                Ok(0) => break,
                Ok(_) => return Err(NpyError::Longer { want }.into()),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(NpyError::Read(e.to_string()).into()),
            }
        }
        Ok(Npy { descr: h.descr, shape: h.shape, data })
    }

    /// The file bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = header_bytes(&self.descr, &self.shape);
        out.extend_from_slice(&self.data);
        out
    }
}

/// A format 1.0 header for an array (data then follows on a 64-byte boundary).
pub fn header_bytes(descr: &str, shape: &[u64]) -> Vec<u8> {
    let shape = match shape.len() {
        1 => format!("({},)", shape[0]),
        _ => format!("({})", shape.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")),
    };
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    // Version 1.0 stores the header length in 16 bits; a longer header (a shape with thousands
    // of dims) takes version 2.0's 32-bit length, which NumPy reads too.
    let v1 = header.len() + 64 <= usize::from(u16::MAX);
    let prefix = if v1 { 10 } else { 12 };
    // Pad so the data starts on a 64-byte boundary, ending the header with a newline.
    let total = prefix + header.len() + 1;
    header.push_str(&" ".repeat((64 - total % 64) % 64));
    header.push('\n');
    let mut out = Vec::with_capacity(prefix + header.len());
    if v1 {
        out.extend_from_slice(b"\x93NUMPY\x01\x00");
        out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    } else {
        out.extend_from_slice(b"\x93NUMPY\x02\x00");
        out.extend_from_slice(&(header.len() as u32).to_le_bytes());
    }
    out.extend_from_slice(header.as_bytes());
    out
}

/// The `.npy` descriptor for a BIR dtype: floats NumPy has natively (`<f4`, `<f2`), integers as
/// themselves, and every other format (bf16, fp8, fp32r, packed `_x4`, e8m0) as an unsigned
/// integer of its container width holding the raw bits.
pub fn descr_for(dt: bir_ir::Dtype) -> &'static str {
    use bir_ir::Dtype::*;
    match dt {
        Float32 => "<f4",
        Float16 => "<f2",
        Int8 => "|i1",
        Int16 => "<i2",
        Int32 => "<i4",
        Int64 => "<i8",
        Uint8 => "|u1",
        Uint16 => "<u2",
        Uint32 => "<u4",
        Uint64 => "<u8",
        other => match other.size() {
            1 => "|u1",
            2 => "<u2",
            4 => "<u4",
            _ => "<u8",
        },
    }
}
