//! `petrel [path/to/petrel.conf] [--name value ...]`

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().is_some_and(|a| a == "-v" || a == "--version") {
        println!(
            "Petrel v={} (Redis {} compatible)",
            commands::PETREL_VERSION,
            commands::REDIS_VERSION
        );
        return;
    }
    if args.first().is_some_and(|a| a == "-h" || a == "--help") {
        println!("Usage: petrel [/path/to/petrel.conf] [--name value ...]\n       petrel --port 7777 --threads 2\n       petrel -v | --version");
        return;
    }
    let (settings, file) = match commands::config::load_from_args(&args) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("\n{e}");
            std::process::exit(1);
        }
    };
    if let Err(e) = server::run(settings, file) {
        eprintln!("{e}");
        std::process::exit(1);
    }
}
