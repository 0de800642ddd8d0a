//! The `antitb` command line: parses arguments with clap, turns them into the library's own
//! types, and maps errors to one-line messages and exit codes. No tablebase logic lives here.

mod cli;

fn main() {
    std::process::exit(cli::run());
}
