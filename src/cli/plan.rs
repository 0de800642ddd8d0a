//! `antitb plan`: the dependency graph of a request, with estimates, as a Makefile or JSON.

use antitb::build::plan::plan;
use antitb::table::Material;

pub struct PlanArgs {
    pub materials: Vec<String>,
    pub max_pieces: Option<usize>,
    pub dtw: bool,
    pub make: bool,
}

/// Largest piece count a plan accepts (material names are limited to this anyway).
const MAX_PLAN_PIECES: usize = antitb::table::MAX_PIECES;

pub fn run(args: PlanArgs) -> Result<(), String> {
    let mut targets = Vec::new();
    for name in &args.materials {
        targets.push(
            Material::parse(name)
                .map_err(|e| e.to_string())?
                .canonical(),
        );
    }
    if let Some(n) = args.max_pieces {
        if !(2..=MAX_PLAN_PIECES).contains(&n) {
            return Err(format!(
                "--max-pieces must be between 2 and {MAX_PLAN_PIECES}, not {n}"
            ));
        }
        targets.extend((2..=n).flat_map(Material::all_with_pieces));
    }
    if targets.is_empty() {
        targets.extend((2..=4).flat_map(Material::all_with_pieces));
    }
    let p = plan(&targets, args.dtw);
    if args.make {
        print!("{}", p.to_makefile());
    } else {
        println!(
            "{}",
            serde_json::to_string_pretty(&p.to_json()).map_err(|e| e.to_string())?
        );
    }
    Ok(())
}
