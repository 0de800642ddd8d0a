//! A [`Plan`] as a Slurm submission: a bash script that submits one `sbatch` job per table to
//! build (`antitb generate --no-deps MATERIAL`), each with `--dependency=afterok:` on exactly the
//! jobs of the tables it reads and `--kill-on-invalid-dep=yes`, so a failed job cancels its
//! dependants instead of leaving them pending forever.
//!
//! * Tables already present (every file there and passing its checksums) are left out, and so
//!   are the dependencies on them. A table whose dependency is present but reads a missing table
//!   further down (deleted since) waits for that table's job instead: a job's dependencies are
//!   the nearest tables to build below it among those it reads (the tables its solver reads).
//! * `--mem` is the plan's memory estimate times a margin, rounded up to a memory class
//!   (256 MiB, 384, 512, 768, 1 GiB, 1.5, 2, … : powers of two and their halfway points);
//!   `--time` the single-core time estimate over the threads, times a margin, rounded up to a
//!   time class (15 minutes doubled); `--cpus-per-task` the threads of each job.
//! * Tables with the same jobs to wait for, memory class and time class go into one job array
//!   (every task of an array shares its `--mem`, `--time` and `--dependency`), at most
//!   `max_array_size` tasks each (Slurm's default `MaxArraySize` of 1001 allows indices 0 to
//!   1000). A dependant waits for the one task of its table (`afterok:ARRAYID_TASK`). Tables
//!   alone in their group are single jobs named by their material.
//!
//! The script itself (see `slurm_submit.sh`) runs on a login node with bash and the Slurm client
//! commands only: it records `MATERIAL JOBID` lines in `LOGS/jobs`, does not submit a table
//! again whose last job is still in the queue (it waits for that job instead), can stop after
//! `--max-jobs N` submissions (a per-user submit limit: run it again later), and prints what it
//! would submit with `--dry-run`.

use super::estimate::source_tables;
use super::plan::Plan;
use super::{human_bytes, is_present, metrics};
use crate::table::Material;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

/// How the jobs are submitted.
#[derive(Clone, Debug)]
pub struct SlurmOptions {
    /// The antitb binary as the compute nodes see it.
    pub antitb: PathBuf,
    /// Where the jobs write tables (and read them), on a file system shared by the nodes.
    pub tables: PathBuf,
    /// More directories the jobs read tables from.
    pub with_tables: Vec<PathBuf>,
    /// Threads of each job (`--cpus-per-task` and `generate --threads`).
    pub threads: usize,
    /// `--mem` is the memory estimate times this, rounded up to a class.
    pub mem_margin: f64,
    /// `--time` is the time estimate times this, rounded up to a class.
    pub time_margin: f64,
    /// Most tasks in one job array.
    pub max_array_size: usize,
}

impl SlurmOptions {
    /// Defaults: one thread, memory margin 1.25 (the estimate is already 20–30% above measured
    /// peaks), time margin 3 (the time estimate is a rough guide), arrays of at most 1001 tasks.
    pub fn new(antitb: impl Into<PathBuf>, tables: impl Into<PathBuf>) -> SlurmOptions {
        SlurmOptions {
            antitb: antitb.into(),
            tables: tables.into(),
            with_tables: Vec::new(),
            threads: 1,
            mem_margin: 1.25,
            time_margin: 3.0,
            max_array_size: 1001,
        }
    }
}

/// One `sbatch` call: a single job (one table) or a job array (several).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Submission {
    /// The tables it builds, in task order.
    pub tables: Vec<Material>,
    /// The tables whose jobs it waits for (`afterok`), in build order.
    pub deps: Vec<Material>,
    /// `--mem`, in MiB.
    pub mem_mib: u64,
    /// `--time`, in minutes.
    pub minutes: u64,
}

/// The submissions of a plan, in an order where each comes after those it waits for.
#[derive(Clone, Debug)]
pub struct SlurmPlan {
    pub submissions: Vec<Submission>,
    /// Tables of the plan already present (not submitted).
    pub present: usize,
    /// Single-core seconds of the tables to build, estimated.
    pub cpu_seconds: f64,
    pub dtw: bool,
    pub opts: SlurmOptions,
}

/// Smallest memory class.
pub const MIN_MEM_MIB: u64 = 256;
/// Shortest time class.
pub const MIN_MINUTES: u64 = 15;

/// `bytes` times `margin`, rounded up to a memory class in MiB: 256, 384, 512, 768, 1024, …
pub fn mem_class_mib(bytes: u64, margin: f64) -> u64 {
    let need = (bytes as f64 * margin / (1u64 << 20) as f64).ceil() as u64;
    let mut c = MIN_MEM_MIB;
    loop {
        if c >= need {
            return c;
        }
        if c / 2 * 3 >= need {
            return c / 2 * 3;
        }
        c *= 2;
    }
}

/// `seconds` times `margin`, rounded up to a time class in minutes: 15, 30, 60, 120, …
pub fn time_class_minutes(seconds: f64, margin: f64) -> u64 {
    let need = (seconds * margin / 60.0).ceil() as u64;
    let mut c = MIN_MINUTES;
    while c < need {
        c *= 2;
    }
    c
}

/// The jobs `m` waits for: its dependencies that are built, and below the present ones, the
/// nearest tables that are built among those `m` reads.
fn job_deps(
    m: Material,
    built: &HashSet<Material>,
    order: &HashMap<Material, usize>,
) -> Vec<Material> {
    let reads: HashSet<Material> = source_tables(m).into_iter().collect();
    let mut out = HashSet::new();
    let mut seen = HashSet::new();
    let mut stack = m.dependencies();
    while let Some(d) = stack.pop() {
        if !seen.insert(d) {
            continue;
        }
        if built.contains(&d) {
            out.insert(d);
        } else {
            stack.extend(d.dependencies().into_iter().filter(|x| reads.contains(x)));
        }
    }
    let mut out: Vec<Material> = out.into_iter().collect();
    out.sort_by_key(|d| order[d]);
    out
}

/// The tables of `plan` present (every file there, passing its checksums) in `opts.tables` or
/// `opts.with_tables`: those the submission leaves out.
pub fn present_tables(plan: &Plan, opts: &SlurmOptions) -> HashSet<Material> {
    let dirs: Vec<&PathBuf> = std::iter::once(&opts.tables)
        .chain(&opts.with_tables)
        .collect();
    plan.jobs
        .iter()
        .map(|j| j.material)
        .filter(|&m| dirs.iter().any(|d| is_present(d, m, metrics(plan.dtw))))
        .collect()
}

/// The submissions for `plan`, leaving out the tables in `present`.
pub fn slurm_plan(plan: &Plan, present: &HashSet<Material>, opts: SlurmOptions) -> SlurmPlan {
    let order: HashMap<Material, usize> = plan
        .jobs
        .iter()
        .enumerate()
        .map(|(i, j)| (j.material, i))
        .collect();
    let todo: Vec<_> = plan
        .jobs
        .iter()
        .filter(|j| !present.contains(&j.material))
        .collect();
    let built: HashSet<Material> = todo.iter().map(|j| j.material).collect();
    // Group by (jobs waited for, memory class, time class), in order of first member.
    let mut groups: Vec<Submission> = Vec::new();
    let mut index: HashMap<(Vec<Material>, u64, u64), usize> = HashMap::new();
    for j in &todo {
        let deps = job_deps(j.material, &built, &order);
        let mem = mem_class_mib(j.estimate.memory, opts.mem_margin);
        let minutes = time_class_minutes(j.cpu_seconds / opts.threads as f64, opts.time_margin);
        let g = *index
            .entry((deps.clone(), mem, minutes))
            .or_insert_with(|| {
                groups.push(Submission {
                    tables: Vec::new(),
                    deps,
                    mem_mib: mem,
                    minutes,
                });
                groups.len() - 1
            });
        groups[g].tables.push(j.material);
    }
    let submissions = groups
        .into_iter()
        .flat_map(|g| {
            g.tables
                .chunks(opts.max_array_size.max(1))
                .map(|chunk| Submission {
                    tables: chunk.to_vec(),
                    ..g.clone()
                })
                .collect::<Vec<_>>()
        })
        .collect();
    SlurmPlan {
        submissions,
        present: plan.jobs.len() - todo.len(),
        cpu_seconds: todo.iter().map(|j| j.cpu_seconds).sum(),
        dtw: plan.dtw,
        opts,
    }
}

/// `90` → `"1h30"`, `2880` → `"2d"`.
fn minutes_text(m: u64) -> String {
    match m {
        0..60 => format!("{m} min"),
        60..1440 if m.is_multiple_of(60) => format!("{}h", m / 60),
        60..1440 => format!("{}h{:02}", m / 60, m % 60),
        _ if m.is_multiple_of(1440) => format!("{}d", m / 1440),
        _ => format!("{}d{}h", m / 1440, m % 1440 / 60),
    }
}

/// Quote `s` for bash (single quotes).
fn quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=:,".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

impl SlurmPlan {
    /// Tables to build (array tasks and single jobs).
    pub fn tables(&self) -> usize {
        self.submissions.iter().map(|s| s.tables.len()).sum()
    }

    /// The job arrays (submissions of more than one table).
    pub fn arrays(&self) -> impl Iterator<Item = &Submission> {
        self.submissions.iter().filter(|s| s.tables.len() > 1)
    }

    /// What the script submits, in a few lines.
    pub fn summary(&self) -> Vec<String> {
        let arrays: Vec<&Submission> = self.arrays().collect();
        let in_arrays: usize = arrays.iter().map(|s| s.tables.len()).sum();
        let singles = self.submissions.len() - arrays.len();
        let mem = self
            .submissions
            .iter()
            .map(|s| s.mem_mib)
            .max()
            .unwrap_or(0);
        let minutes = self
            .submissions
            .iter()
            .map(|s| s.minutes)
            .max()
            .unwrap_or(0);
        let largest_array = arrays.iter().map(|s| s.tables.len()).max().unwrap_or(0);
        let mut mem_classes: Vec<u64> = self.submissions.iter().map(|s| s.mem_mib).collect();
        mem_classes.sort();
        mem_classes.dedup();
        let mut lines = vec![
            format!(
                "{} tables to build ({} already present), {} sbatch submissions: {} single jobs and {} job arrays \
                 with {} tasks (the largest {})",
                self.tables(),
                self.present,
                self.submissions.len(),
                singles,
                arrays.len(),
                in_arrays,
                largest_array
            ),
            format!(
                "--cpus-per-task={}, --mem from {} to {} ({} memory classes), --time up to {}",
                self.opts.threads,
                human_bytes(mem_classes.first().copied().unwrap_or(0) << 20),
                human_bytes(mem << 20),
                mem_classes.len(),
                minutes_text(minutes)
            ),
            format!(
                "estimated single-core time of the tables to build: {}",
                if self.cpu_seconds < 360.0 {
                    format!("{:.0} core-seconds", self.cpu_seconds)
                } else {
                    format!("{:.1} core-hours", self.cpu_seconds / 3600.0)
                }
            ),
        ];
        if let Some(s) = self.submissions.iter().max_by_key(|s| s.mem_mib) {
            lines.push(format!(
                "largest --mem: {} MiB ({}), for {}{}",
                s.mem_mib,
                human_bytes(s.mem_mib << 20),
                s.tables[0],
                if s.tables.len() > 1 {
                    format!(" and {} more", s.tables.len() - 1)
                } else {
                    String::new()
                }
            ));
        }
        lines
    }

    /// The submission script (bash).
    pub fn to_script(&self) -> String {
        let o = &self.opts;
        let mut generate = vec![
            "generate".to_string(),
            "--no-deps".into(),
            "--tables".into(),
            quote(&o.tables.to_string_lossy()),
        ];
        for w in &o.with_tables {
            generate.push("--with-tables".into());
            generate.push(quote(&w.to_string_lossy()));
        }
        generate.push("--threads".into());
        generate.push(o.threads.to_string());
        if !self.dtw {
            generate.push("--metrics".into());
            generate.push("wdl,dtz".into());
        }
        let mut out = String::new();
        out.push_str("#!/usr/bin/env bash\n");
        out.push_str(
            "# Slurm submission of antitb tables, written by `antitb plan --format slurm`.\n",
        );
        for l in self.summary() {
            out.push_str(&format!("# {l}\n"));
        }
        out.push_str(&format!(
            "#\n#   bash {{this script}} [--dry-run] [--hold] [--max-jobs N] [-- SBATCH_OPTION...]\n#\n\
             set -euo pipefail\n\
             ANTITB=${{ANTITB:-{}}}\n\
             TABLES={}\n\
             LOGS=${{LOGS:-$TABLES/slurm}}\n\
             THREADS={}\n\
             GENERATE=({})\n",
            quote(&o.antitb.to_string_lossy()),
            quote(&o.tables.to_string_lossy()),
            o.threads,
            generate.join(" ")
        ));
        out.push_str(include_str!("slurm_submit.sh"));
        out.push_str("\n# submit MEM_MIB MINUTES 'TABLES WAITED FOR' TABLE...\n");
        for s in &self.submissions {
            let deps: Vec<String> = s.deps.iter().map(|d| d.to_string()).collect();
            let tables: Vec<String> = s.tables.iter().map(|t| t.to_string()).collect();
            out.push_str(&format!(
                "submit {} {} '{}' {}\n",
                s.mem_mib,
                s.minutes,
                deps.join(" "),
                tables.join(" ")
            ));
        }
        out.push_str("finish\n");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::plan::plan;

    fn m(s: &str) -> Material {
        Material::parse(s).unwrap().canonical()
    }

    #[test]
    fn classes_round_up() {
        assert_eq!(mem_class_mib(1, 1.25), 256);
        assert_eq!(mem_class_mib(256 << 20, 1.0), 256);
        assert_eq!(mem_class_mib((256 << 20) + 1, 1.0), 384);
        assert_eq!(mem_class_mib(800 << 20, 1.25), 1024);
        assert_eq!(mem_class_mib(1100 << 20, 1.25), 1536);
        assert_eq!(time_class_minutes(0.0, 3.0), 15);
        assert_eq!(time_class_minutes(301.0, 3.0), 30);
        assert_eq!(time_class_minutes(3600.0, 3.0), 240);
        assert_eq!(minutes_text(90), "1h30");
        assert_eq!(minutes_text(2880), "2d");
    }

    /// With nothing present: every table waits for exactly its dependencies, submitted before.
    fn assert_waits_for_dependencies(s: &SlurmPlan) {
        let mut seen = HashSet::new();
        for sub in &s.submissions {
            for t in &sub.tables {
                let mut want = t.dependencies();
                want.sort();
                let mut got = sub.deps.clone();
                got.sort();
                assert_eq!(got, want, "{t}");
            }
            assert!(sub.deps.iter().all(|d| seen.contains(d)), "order");
            seen.extend(sub.tables.iter().copied());
        }
    }

    #[test]
    fn jobs_wait_for_exactly_their_built_dependencies() {
        let p = plan(&[m("KPvK")], false);
        let none = HashSet::new();
        let s = slurm_plan(&p, &none, SlurmOptions::new("antitb", "/t"));
        assert_eq!(s.tables(), p.jobs.len());
        assert_waits_for_dependencies(&s);
        // KQvK present: KPvK no longer waits for it, and nothing is submitted for it.
        let present: HashSet<Material> = [m("KQvK")].into();
        let s = slurm_plan(&p, &present, SlurmOptions::new("antitb", "/t"));
        assert_eq!(s.tables(), p.jobs.len() - 1);
        let kpvk = s
            .submissions
            .iter()
            .find(|x| x.tables.contains(&m("KPvK")))
            .unwrap();
        assert!(!kpvk.deps.contains(&m("KQvK")));
        // KQvK present but QvK missing (deleted since), which KQvK reads and KPvK too (a capture
        // after the promotion), though it is not one of KPvK's dependencies: KPvK waits for it.
        assert!(!m("KPvK").dependencies().contains(&m("QvK")));
        let present: HashSet<Material> = p
            .jobs
            .iter()
            .map(|j| j.material)
            .filter(|&x| x != m("QvK") && x != m("KPvK"))
            .collect();
        let s = slurm_plan(&p, &present, SlurmOptions::new("antitb", "/t"));
        assert_eq!(s.tables(), 2);
        let kpvk = s
            .submissions
            .iter()
            .find(|x| x.tables.contains(&m("KPvK")))
            .unwrap();
        assert_eq!(kpvk.deps, [m("QvK")]);
    }

    #[test]
    fn arrays_share_dependencies_and_classes_and_respect_the_size_limit() {
        let targets: Vec<Material> = (2..=3).flat_map(Material::all_with_pieces).collect();
        let p = plan(&targets, false);
        let mut opts = SlurmOptions::new("antitb", "/t");
        opts.max_array_size = 5;
        let s = slurm_plan(&p, &HashSet::new(), opts);
        assert_eq!(s.tables(), 147);
        // The 15 pawnless two-piece tables wait for nothing: arrays of at most 5.
        let free: Vec<&Submission> = s.submissions.iter().filter(|x| x.deps.is_empty()).collect();
        assert_eq!(free.iter().map(|x| x.tables.len()).sum::<usize>(), 15);
        assert!(free.iter().all(|x| x.tables.len() <= 5));
        assert_waits_for_dependencies(&s);
        let script = s.to_script();
        assert!(script.contains("submit 256 15 '' "));
        assert!(script.ends_with("finish\n"));
    }
}
