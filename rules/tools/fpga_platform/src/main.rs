//! `fpga-platform check FILE...`: read each platform file (errors name file:line and key);
//! `fpga-platform starlark DIR [--out FILE]`: the Starlark module of every file in DIR;
//! `fpga-platform get FILE KEY`: one fact (`part`, `board_id`, `resources.LUT`, ...), for scripts.

use std::path::PathBuf;

use anyhow::{bail, Result};

fn main() {
    if let Err(e) = run(std::env::args().skip(1).collect()) {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

fn run(args: Vec<String>) -> Result<()> {
    match args.first().map(String::as_str) {
        Some("check") if args.len() > 1 => {
            for f in &args[1..] {
                fpga_platform::Platform::load(&PathBuf::from(f))?;
            }
            Ok(())
        }
        Some("starlark") if args.len() == 2 || (args.len() == 4 && args[2] == "--out") => {
            let all = fpga_platform::load_dir(&PathBuf::from(&args[1]))?;
            let text = fpga_platform::starlark_module(&all);
            match args.get(3) {
                Some(out) => write_atomic(&PathBuf::from(out), &text),
                None => {
                    print!("{text}");
                    Ok(())
                }
            }
        }
        Some("get") if args.len() == 3 => {
            let p = fpga_platform::Platform::load(&PathBuf::from(&args[1]))?;
            let v = match args[2].split_once('.') {
                Some(("resources", r)) => p.resources.get(r).map(f64::to_string),
                _ => match args[2].as_str() {
                    "name" => Some(p.name),
                    "board" => Some(p.board),
                    "board_id" => Some(p.board_id),
                    "part" => Some(p.part),
                    _ => None,
                },
            };
            match v {
                Some(v) => {
                    println!("{v}");
                    Ok(())
                }
                None => bail!("{}: no fact {:?}", args[1], args[2]),
            }
        }
        _ => bail!("usage: fpga-platform check FILE... | starlark DIR [--out FILE] | get FILE KEY"),
    }
}

/// Through a temporary file and a rename: a reader never sees half a module.
fn write_atomic(path: &std::path::Path, text: &str) -> Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)?;
    Ok(())
}
