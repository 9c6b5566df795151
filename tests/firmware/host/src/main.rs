//! Host side of sinew's embedded proof.
//!
//! ```text
//! sinew-firmware-host checksum      # the frame loop natively: "checksum <16 hex digits>"
//! sinew-firmware-host size ELF      # section sizes of a 32-bit little-endian ELF
//! ```
//!
//! `checksum` runs `sinew_firmware_pipeline::run`, the same code the firmware
//! runs, and prints the line the firmware prints. `size` prints
//! `text rodata data bss ram flash` in bytes (`ram` = `.data` + `.bss` +
//! `.uninit`, `flash` = `.vector_table` + `.text` + `.rodata` + `.data`), so
//! CI needs no cross binutils.
use std::process::ExitCode;

use sinew_firmware_pipeline::{run, Buffers, FRAMES, JOINTS};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["checksum"] => checksum(),
        ["size", path] => size(path),
        _ => Err("usage: sinew-firmware-host checksum | size ELF".to_string()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("sinew-firmware-host: {e}");
            ExitCode::from(2)
        }
    }
}

fn checksum() -> Result<(), String> {
    let mut buffers = Box::new(Buffers::ZERO);
    let sum = run(&mut buffers, FRAMES).map_err(|e| e.to_string())?;
    println!("frames {FRAMES} joints {JOINTS}");
    println!("checksum {sum:016x}");
    Ok(())
}

/// Sums of allocated section sizes by name.
#[derive(Default, Debug)]
struct Sizes {
    vector_table: u64,
    text: u64,
    rodata: u64,
    data: u64,
    bss: u64,
    uninit: u64,
}

fn size(path: &str) -> Result<(), String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
    let s = elf32_sizes(&bytes).map_err(|e| format!("{path}: {e}"))?;
    println!(
        "text {} rodata {} data {} bss {} ram {} flash {}",
        s.text,
        s.rodata,
        s.data,
        s.bss,
        s.data + s.bss + s.uninit,
        s.vector_table + s.text + s.rodata + s.data,
    );
    Ok(())
}

fn u16_at(b: &[u8], at: usize) -> Result<u16, String> {
    b.get(at..at + 2)
        .map(|s| u16::from_le_bytes([s[0], s[1]]))
        .ok_or_else(|| format!("truncated at byte {at}"))
}

fn u32_at(b: &[u8], at: usize) -> Result<u32, String> {
    b.get(at..at + 4)
        .map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
        .ok_or_else(|| format!("truncated at byte {at}"))
}

/// Reads the section headers of a 32-bit little-endian ELF file.
fn elf32_sizes(b: &[u8]) -> Result<Sizes, String> {
    if b.get(..6) != Some(&[0x7f, b'E', b'L', b'F', 1, 1][..]) {
        return Err("not a 32-bit little-endian ELF file".into());
    }
    let shoff = u32_at(b, 0x20)? as usize;
    let shentsize = usize::from(u16_at(b, 0x2e)?);
    let shnum = usize::from(u16_at(b, 0x30)?);
    let shstrndx = usize::from(u16_at(b, 0x32)?);
    if shentsize < 40 {
        return Err(format!("section header size {shentsize}"));
    }
    let header = |i: usize| shoff + i * shentsize;
    let strtab = u32_at(b, header(shstrndx) + 16)? as usize;
    let mut sizes = Sizes::default();
    for i in 0..shnum {
        let h = header(i);
        let name_at = strtab + u32_at(b, h)? as usize;
        let name = b
            .get(name_at..)
            .and_then(|s| s.split(|&c| c == 0).next())
            .ok_or_else(|| format!("section {i}: name out of range"))?;
        let size = u64::from(u32_at(b, h + 20)?);
        match name {
            b".vector_table" => sizes.vector_table += size,
            b".text" => sizes.text += size,
            b".rodata" => sizes.rodata += size,
            b".data" => sizes.data += size,
            b".bss" => sizes.bss += size,
            b".uninit" => sizes.uninit += size,
            _ => {}
        }
    }
    Ok(sizes)
}
