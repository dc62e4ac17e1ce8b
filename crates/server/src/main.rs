//! `petrel [path/to/petrel.conf] [--name value ...]`

/// jemalloc: size classes keep fragmentation low for many small blocks, and its
/// statistics give INFO memory exact figures.
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn jemalloc_stat(read: fn() -> tikv_jemalloc_ctl::Result<usize>) -> u64 {
    // Statistics are cached per epoch; advancing refreshes them.
    let _ = tikv_jemalloc_ctl::epoch::advance();
    read().unwrap_or(0) as u64
}

fn install_memory_probe() {
    use tikv_jemalloc_ctl::stats;
    commands::info::set_mem_probe(commands::info::MemProbe {
        name: "jemalloc-5.3.0",
        allocated: || jemalloc_stat(stats::allocated::read),
        active: || jemalloc_stat(stats::active::read),
        resident: || jemalloc_stat(stats::resident::read),
    });
}

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
    install_memory_probe();
    // Like Redis's `jemalloc-bg-thread yes`: jemalloc returns freed pages to
    // the OS from its own thread, so RSS follows used memory without purging
    // work on the workers (a table split frees whole segments).
    let _ = tikv_jemalloc_ctl::background_thread::write(true);
    if let Err(e) = server::run(settings, file) {
        eprintln!("{e}");
        std::process::exit(1);
    }
}
