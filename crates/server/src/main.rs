//! `petrel [path/to/petrel.conf] [--name value ...]`

/// jemalloc, counting every block by its size class so `used_memory` is
/// exact (see `server::alloc`).
#[global_allocator]
static GLOBAL: server::alloc::Counting = server::alloc::Counting;

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
    let (settings, file) = match commands::registry::load_config(&args) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("\n{e}");
            std::process::exit(1);
        }
    };
    server::alloc::install_memory_probe();
    server::alloc_defrag::install();
    // `jemalloc-bg-thread yes` (the default): jemalloc returns freed pages
    // to the OS from its own thread, so RSS follows used memory without
    // purging work on the workers (a table split frees whole segments).
    (commands::kernel::memprobe::probe().background_thread)(settings.jemalloc_bg_thread);
    if let Err(e) = server::run(settings, file) {
        eprintln!("{e}");
        std::process::exit(1);
    }
}
