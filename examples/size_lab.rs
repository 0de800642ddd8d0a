//! Size lab: how many bytes would a table's WDL and DTZ files take under other storage choices?
//! Reads existing ≤4-piece files, re-encodes them in memory and prints sizes and decode costs.
//! Usage: size_lab DIR MATERIAL...

use antitb::format::ReadOptions;
use antitb::index::Index;
use antitb::material::Material;
use antitb::probe::Tablebase;
use antitb::store::FileKind;
use antitb::value::Value;
use rayon::prelude::*;
use std::collections::HashMap;
use std::time::Instant;

const INVALID: u8 = 0;
const CAPTURE: u8 = 1;
const QUIET: u8 = 2;

fn fill_prev(vals: &[u16], mask: &[u8], keep: impl Fn(usize) -> bool) -> Vec<u16> {
    let mut last = 0;
    let mut out = Vec::with_capacity(vals.len());
    for i in 0..vals.len() {
        if mask[i] == QUIET && keep(i) {
            last = vals[i];
        }
        out.push(last);
    }
    out
}


/// Reorder slot values: digits (base 64, digit 0 = leading, most significant) permuted by
/// `perm` (new digit j = old digit perm[j]); `fm` transposes squares to file-major order.
fn permute<T: Copy + Default>(vals: &[T], k: usize, perm: &[usize], fm: bool) -> Vec<T> {
    let mut out = vec![T::default(); vals.len()];
    let lead = vals.len() >> (6 * (k - 1));
    for (i, &v) in vals.iter().enumerate() {
        let mut d = [0usize; 8];
        let mut r = i;
        for j in (1..k).rev() {
            d[j] = r % 64;
            if fm {
                d[j] = (d[j] % 8) * 8 + d[j] / 8;
            }
            r /= 64;
        }
        d[0] = r;
        let _ = lead;
        let mut o = d[perm[0]];
        for j in 1..k {
            o = o * 64 + d[perm[j]];
        }
        out[o] = v;
    }
    out
}

fn pack5(v: &[u8]) -> Vec<u8> {
    v.chunks(3)
        .map(|c| c.iter().rev().fold(0u8, |a, &x| a * 5 + x))
        .collect()
}

fn perms(n: usize) -> Vec<Vec<usize>> {
    if n == 0 {
        return vec![vec![]];
    }
    let mut out = Vec::new();
    for p in perms(n - 1) {
        for pos in 0..=p.len() {
            let mut q = p.clone();
            q.insert(pos, n - 1);
            out.push(q);
        }
    }
    out
}

struct Enc {
    bytes: u64,
    blocks: u64,
    decode_ns: f64,
}

fn encode(data: &[Vec<u8>], vpb: usize, level: i32, dict_size: usize) -> Enc {
    let chunks: Vec<&[u8]> = data.iter().flat_map(|d| d.chunks(vpb)).collect();
    let dict = if dict_size > 0 && chunks.len() > 8 {
        let total: usize = data.iter().map(|d| d.len()).sum();
        let size = dict_size.min(total / 50).max(256);
        let mut cat = Vec::new();
        let mut sizes = Vec::new();
        for c in &chunks {
            cat.extend_from_slice(c);
            sizes.push(c.len());
        }
        zstd::dict::from_continuous(&cat, &sizes, size).ok()
    } else {
        None
    };
    let comp: Vec<Vec<u8>> = chunks
        .par_iter()
        .map_init(
            || match &dict {
                Some(d) => zstd::bulk::Compressor::with_dictionary(level, d).unwrap(),
                None => zstd::bulk::Compressor::new(level).unwrap(),
            },
            |c, ch| {
                c.set_parameter(zstd::zstd_safe::CParameter::DictIdFlag(false))
                    .unwrap();
                c.compress(ch).unwrap()
            },
        )
        .collect();
    let bytes: u64 = comp.iter().map(|c| c.len() as u64).sum::<u64>()
        + dict.as_ref().map_or(0, |d| d.len() as u64)
        + 12 * comp.len() as u64;
    // decode cost: decode up to 200 blocks spread over the file
    let mut d = match &dict {
        Some(x) => zstd::bulk::Decompressor::with_dictionary(x).unwrap(),
        None => zstd::bulk::Decompressor::new().unwrap(),
    };
    let step = (comp.len() / 200).max(1);
    let mut buf = vec![0u8; vpb];
    let t = Instant::now();
    let mut n = 0;
    for rep in 0..5 {
        let _ = rep;
        for c in comp.iter().step_by(step) {
            d.decompress_to_buffer(c, &mut buf).unwrap();
            n += 1;
        }
    }
    Enc {
        bytes,
        blocks: comp.len() as u64,
        decode_ns: t.elapsed().as_nanos() as f64 / n as f64,
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let tb = Tablebase::open_with(&[&args[1]], ReadOptions::default()).unwrap();
    let mats: Vec<Material> = args[2..].iter().map(|s| s.parse().unwrap()).collect();
    let configs: Vec<(usize, i32, usize)> = if std::env::var("LAB_FULL").is_err() { vec![(32768, 9, 0), (4096, 19, 0)] } else { vec![
        (32768, 9, 0),
        (8192, 19, 0),
        (4096, 19, 0),
        (4096, 19, 16384),
        (2048, 19, 16384),
        (1024, 19, 16384),
        (1024, 19, 32768),
    ]};
    let mut tot: HashMap<String, u64> = HashMap::new();
    let mut dec: HashMap<String, f64> = HashMap::new();
    for m in mats {
        let index = Index::new(m);
        let wdl_t = tb.table(m, FileKind::Wdl).unwrap();
        let dtz_t = tb.table(m, FileKind::Dtz).unwrap();
        let mut wdl = Vec::new();
        let mut dtz = Vec::new();
        let mut mask = Vec::new();
        for side in 0..2 {
            wdl.push(wdl_t.decode_side(side).unwrap());
            dtz.push(dtz_t.decode_side(side).unwrap());
            let mk: Vec<u8> = (0..index.size())
                .into_par_iter()
                .map(|i| match index.decode(side, i) {
                    None => INVALID,
                    Some(p) if p.has_capture() => CAPTURE,
                    Some(_) => QUIET,
                })
                .collect();
            mask.push(mk);
        }
        let syz: u64 = ["gtbw", "gtbz"]
            .iter()
            .map(|e| {
                std::fs::metadata(format!("/work/shared/reference/syzygy/{m}.{e}"))
                    .map(|x| x.len())
                    .unwrap_or(0)
            })
            .sum();
        let syzw = std::fs::metadata(format!("/work/shared/reference/syzygy/{m}.gtbw"))
            .map(|x| x.len())
            .unwrap_or(0);
        *tot.entry("syzygy".into()).or_default() += syz;
        *tot.entry("syzygy_wdl".into()).or_default() += syzw;
        let cur = std::fs::metadata(format!("{}/{m}.wdl", args[1])).unwrap().len()
            + std::fs::metadata(format!("{}/{m}.dtz", args[1])).unwrap().len();
        *tot.entry("current".into()).or_default() += cur;
        let n = index.size() as usize;
        let cnt = |s: usize, k: u8| mask[s].iter().filter(|&&x| x == k).count();
        println!(
            "{m}: slots {n}, quiet {}/{}, capture {}/{}, syzygy {syz} (wdl {syzw}), current {cur}",
            cnt(0, QUIET),
            cnt(1, QUIET),
            cnt(0, CAPTURE),
            cnt(1, CAPTURE)
        );
        // WDL variants
        let w_prev: Vec<Vec<u8>> = (0..2)
            .map(|s| {
                fill_prev(&wdl[s], &mask[s], |_| true)
                    .iter()
                    .map(|&x| x as u8)
                    .collect()
            })
            .collect();
        for &(vpb, lvl, ds) in &configs {
            let e = encode(&w_prev, vpb, lvl, ds);
            let key = format!("wdl prev vpb={vpb} l={lvl} dict={ds}");
            println!(
                "  {key}: {} bytes, {} blocks, decode {:.0} ns",
                e.bytes, e.blocks, e.decode_ns
            );
            *tot.entry(key.clone()).or_default() += e.bytes;
            *dec.entry(key).or_default() += e.decode_ns;
        }


        // WDL fill experiments
        for stride in [0usize] {
            let fill: Vec<Vec<u8>> = (0..2)
                .map(|s| {
                    let mut out: Vec<u8> = Vec::with_capacity(n);
                    let mut last = 0u8;
                    for i in 0..n {
                        let v = if mask[s][i] == QUIET {
                            wdl[s][i] as u8
                        } else if stride > 0 && i >= stride {
                            out[i - stride]
                        } else {
                            last
                        };
                        last = v;
                        out.push(v);
                    }
                    out
                })
                .collect();
            for (vpb, lvl, delta) in [(8192usize, 19, 0usize), (16384, 19, 0), (8192, 19, 64), (8192, 19, 1), (32768,19,64)] {
                let fill: Vec<Vec<u8>> = fill.iter().map(|f| {
                    let mut o = f.clone();
                    if delta > 0 { for i in 0..n { if i % vpb >= delta { o[i] = (f[i] + 5 - f[i-delta]) % 5; } } }
                    o }).collect();
                let e = encode(&fill, vpb, lvl, 0);
                let key = format!("wdl fill{stride} vpb={vpb} l={lvl} delta={delta}");
                println!("  {key}: {} dec {:.0}", e.bytes, e.decode_ns);
                *tot.entry(key.clone()).or_default() += e.bytes;
                *dec.entry(key).or_default() += e.decode_ns;
            }
        }
        // DTZ variants: distance only, draws and W(0) don't care, one side.
        let dist: Vec<Vec<u16>> = (0..2)
            .map(|s| {
                let keep = |i: usize| {
                    let v = Value::from_code(dtz[s][i]).unwrap();
                    v.wdl() != 0 && v.distance() > 0
                };
                let mut last = 0u16;
                let mut out = Vec::with_capacity(n);
                for i in 0..n {
                    if mask[s][i] == QUIET && keep(i) {
                        let d = Value::from_code(dtz[s][i]).unwrap().distance();
                        last = (if d > 100 { d - 100 } else { d }) as u16;
                    }
                    out.push(last);
                }
                out
            })
            .collect();
        // symbol map by frequency
        for &(vpb, lvl, ds) in &configs {
            let mut best = u64::MAX;
            let mut both = 0;
            for s in 0..2 {
                let mut freq: HashMap<u16, u64> = HashMap::new();
                for &x in &dist[s] {
                    *freq.entry(x).or_default() += 1;
                }
                let mut f: Vec<_> = freq.into_iter().collect();
                f.sort_by_key(|&(c, k)| (std::cmp::Reverse(k), c));
                let map: HashMap<u16, u8> =
                    f.iter().enumerate().map(|(i, &(c, _))| (c, i.min(255) as u8)).collect();
                let sym: Vec<u8> = dist[s].iter().map(|x| map[x]).collect();
                let e = encode(&[sym], vpb, lvl, ds);
                best = best.min(e.bytes);
                both += e.bytes;
            }
            let key = format!("dtz1 vpb={vpb} l={lvl} dict={ds}");
            println!("  {key}: one side {best}, both {both}");
            *tot.entry(key).or_default() += best;
            *tot.entry(format!("dtz2 vpb={vpb} l={lvl} dict={ds}")).or_default() += both;
        }
    }
    let mut keys: Vec<_> = tot.keys().cloned().collect();
    keys.sort();
    println!("TOTALS");
    for k in keys {
        println!(
            "{k}: {} {}",
            tot[&k],
            dec.get(&k).map_or(String::new(), |d| format!("decode-sum {d:.0}"))
        );
    }
}
