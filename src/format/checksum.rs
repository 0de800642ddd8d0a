//! XXH64, the 64-bit xxHash of Yann Collet, seed 0 throughout the format.
//!
//! Chosen because it is fast (several GB/s, so checking a whole table costs little next to
//! reading it), well specified, and available in every language an engine author might use
//! (`xxhash` in C, Python, Go, Rust). zstd itself uses it for its frame checksums, which the
//! unit tests exploit to check this implementation against an independent one.
//!
//! Both a one-shot [`xxh64`] and a streaming [`Xxh64`] (used by the writer to hash the file as
//! it is written) are provided; they agree for any split of the input.

const P1: u64 = 0x9E37_79B1_85EB_CA87;
const P2: u64 = 0xC2B2_AE3D_27D4_EB4F;
const P3: u64 = 0x1656_67B1_9E37_79F9;
const P4: u64 = 0x85EB_CA77_C2B2_AE63;
const P5: u64 = 0x27D4_EB2F_1656_67C5;

#[inline]
fn read_u64(b: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[..8]);
    u64::from_le_bytes(a)
}

#[inline]
fn read_u32(b: &[u8]) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[..4]);
    u32::from_le_bytes(a)
}

#[inline]
const fn round(acc: u64, input: u64) -> u64 {
    acc.wrapping_add(input.wrapping_mul(P2))
        .rotate_left(31)
        .wrapping_mul(P1)
}

#[inline]
const fn merge(acc: u64, val: u64) -> u64 {
    (acc ^ round(0, val)).wrapping_mul(P1).wrapping_add(P4)
}

/// Processes whole 32-byte stripes of `data` into the four lanes; returns the bytes consumed.
#[inline]
fn stripes(v: &mut [u64; 4], data: &[u8]) -> usize {
    let mut chunks = data.chunks_exact(32);
    for c in &mut chunks {
        v[0] = round(v[0], read_u64(&c[0..]));
        v[1] = round(v[1], read_u64(&c[8..]));
        v[2] = round(v[2], read_u64(&c[16..]));
        v[3] = round(v[3], read_u64(&c[24..]));
    }
    data.len() - chunks.remainder().len()
}

/// Final mixing: `h` already holds the lanes' merge (or the short-input seed) plus the length;
/// `tail` is the fewer than 32 bytes left over.
fn finish(mut h: u64, tail: &[u8]) -> u64 {
    let mut t = tail;
    while t.len() >= 8 {
        h ^= round(0, read_u64(t));
        h = h.rotate_left(27).wrapping_mul(P1).wrapping_add(P4);
        t = &t[8..];
    }
    if t.len() >= 4 {
        h ^= u64::from(read_u32(t)).wrapping_mul(P1);
        h = h.rotate_left(23).wrapping_mul(P2).wrapping_add(P3);
        t = &t[4..];
    }
    for &b in t {
        h ^= u64::from(b).wrapping_mul(P5);
        h = h.rotate_left(11).wrapping_mul(P1);
    }
    h ^= h >> 33;
    h = h.wrapping_mul(P2);
    h ^= h >> 29;
    h = h.wrapping_mul(P3);
    h ^ (h >> 32)
}

const fn init_lanes(seed: u64) -> [u64; 4] {
    [
        seed.wrapping_add(P1).wrapping_add(P2),
        seed.wrapping_add(P2),
        seed,
        seed.wrapping_sub(P1),
    ]
}

fn converge(v: &[u64; 4]) -> u64 {
    let mut h = v[0]
        .rotate_left(1)
        .wrapping_add(v[1].rotate_left(7))
        .wrapping_add(v[2].rotate_left(12))
        .wrapping_add(v[3].rotate_left(18));
    for &lane in v {
        h = merge(h, lane);
    }
    h
}

/// XXH64 of `data` with the given seed (the format always uses seed 0).
pub fn xxh64(data: &[u8], seed: u64) -> u64 {
    let len = data.len() as u64;
    if data.len() >= 32 {
        let mut v = init_lanes(seed);
        let used = stripes(&mut v, data);
        finish(converge(&v).wrapping_add(len), &data[used..])
    } else {
        finish(seed.wrapping_add(P5).wrapping_add(len), data)
    }
}

/// Streaming XXH64: feed bytes with [`Xxh64::update`], read the hash with [`Xxh64::digest`].
#[derive(Clone, Debug)]
pub struct Xxh64 {
    seed: u64,
    lanes: [u64; 4],
    buf: [u8; 32],
    buf_len: usize,
    total: u64,
}

impl Xxh64 {
    /// A fresh hasher.
    pub const fn new(seed: u64) -> Xxh64 {
        Xxh64 {
            seed,
            lanes: init_lanes(seed),
            buf: [0; 32],
            buf_len: 0,
            total: 0,
        }
    }

    /// Appends `data` to the hashed input.
    pub fn update(&mut self, mut data: &[u8]) {
        self.total += data.len() as u64;
        if self.buf_len > 0 {
            let take = (32 - self.buf_len).min(data.len());
            self.buf[self.buf_len..self.buf_len + take].copy_from_slice(&data[..take]);
            self.buf_len += take;
            data = &data[take..];
            if self.buf_len < 32 {
                return;
            }
            let buf = self.buf;
            stripes(&mut self.lanes, &buf);
            self.buf_len = 0;
        }
        let used = stripes(&mut self.lanes, data);
        let rest = &data[used..];
        self.buf[..rest.len()].copy_from_slice(rest);
        self.buf_len = rest.len();
    }

    /// The hash of everything fed so far (the hasher may go on being fed).
    pub fn digest(&self) -> u64 {
        let h = if self.total >= 32 {
            converge(&self.lanes)
        } else {
            self.seed.wrapping_add(P5)
        };
        finish(h.wrapping_add(self.total), &self.buf[..self.buf_len])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_vectors() {
        assert_eq!(xxh64(b"", 0), 0xEF46_DB37_51D8_E999);
        assert_eq!(xxh64(b"a", 0), 0xD24E_C4F1_A98C_6E5B);
        assert_eq!(xxh64(b"abc", 0), 0x44BC_2CF5_AD77_0999);
        assert_eq!(
            xxh64(b"Nobody inspects the spammish repetition", 0),
            0xFBCE_A83C_8A37_8BF1
        );
    }

    /// zstd's frame checksum is the low 32 bits of XXH64(content, 0): an independent
    /// implementation to compare against, for every length class (tails of 0..31 bytes,
    /// one and many stripes).
    #[test]
    fn agrees_with_zstd_frame_checksum() {
        let mut c = zstd::bulk::Compressor::new(1).unwrap();
        c.set_parameter(zstd::zstd_safe::CParameter::ChecksumFlag(true))
            .unwrap();
        let mut x = 0x1234_5678_9ABC_DEF0u64;
        for len in (0..200).chain([1000, 4095, 65536, 100_003]) {
            let data: Vec<u8> = (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect();
            let frame = c.compress(&data).unwrap();
            let stored = read_u32(&frame[frame.len() - 4..]);
            assert_eq!(stored, xxh64(&data, 0) as u32, "length {len}");
        }
    }

    #[test]
    fn streaming_matches_one_shot() {
        let data: Vec<u8> = (0..300u32).map(|i| (i * 7 + 3) as u8).collect();
        for len in [0, 5, 31, 32, 33, 64, 100, 300] {
            for split in [1, 3, 8, 31, 32, 50] {
                let mut h = Xxh64::new(0);
                for part in data[..len].chunks(split) {
                    h.update(part);
                }
                assert_eq!(
                    h.digest(),
                    xxh64(&data[..len], 0),
                    "len {len} split {split}"
                );
            }
        }
    }
}
