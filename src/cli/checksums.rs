//! `antitb checksums`: print the SHA-256 of every table file of a directory (`sha256sum`
//! format), or compare them with a published list such as `tables/CHECKSUMS`.

use antitb::build::checksums::{compare, compute, format_list, parse_list, table_files};
use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub struct ChecksumsArgs {
    /// Table directory
    #[arg(long, default_value = "tables")]
    tables: PathBuf,
    /// Compare with this list (e.g. tables/CHECKSUMS) instead of printing
    #[arg(long)]
    against: Option<PathBuf>,
    /// With --against: fail when a listed file is missing too
    #[arg(long, requires = "against")]
    all: bool,
}

pub fn run(args: ChecksumsArgs) -> Result<(), String> {
    let Some(list_path) = &args.against else {
        let names = table_files(&args.tables).map_err(|e| e.to_string())?;
        print!(
            "{}",
            format_list(&compute(&args.tables, &names).map_err(|e| e.to_string())?)
        );
        return Ok(());
    };
    let list = parse_list(list_path).map_err(|e| e.to_string())?;
    let c = compare(&args.tables, None, &list).map_err(|e| e.to_string())?;
    for n in &c.mismatched {
        println!("DIFFERS  {n}");
    }
    println!(
        "{} files match {}, {} differ, {} listed but missing, {} not listed",
        c.matched.len(),
        list_path.display(),
        c.mismatched.len(),
        c.missing.len(),
        c.unlisted.len()
    );
    if !c.ok() {
        return Err(format!(
            "{} table files differ from {}",
            c.mismatched.len(),
            list_path.display()
        ));
    }
    if args.all && !c.missing.is_empty() {
        return Err(format!(
            "{} files of {} are missing (first: {})",
            c.missing.len(),
            list_path.display(),
            c.missing[0]
        ));
    }
    Ok(())
}
