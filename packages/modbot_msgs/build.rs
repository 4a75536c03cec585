//! Generates the Rust message types from the `.msg` files: this package's own `msg/` and
//! `srv/`, and the standard interfaces the nodes use, under `interfaces/<package>/{msg,srv}/`. No
//! hand-written struct can drift from its `.msg`: the structs exist only as this script's
//! output. The parser and emitter are the `modbot_msgs_gen` crate; a file it refuses stops
//! the build with the file, line and reason.

fn main() {
    let root = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    for dir in ["msg", "srv", "interfaces"] {
        println!("cargo::rerun-if-changed={dir}");
    }
    let generated = match modbot_msgs_gen::generate_package(&root, "modbot_msgs") {
        Ok(g) => g,
        Err(e) => {
            // The message cargo shows for a failed build script.
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    };
    for path in &generated.inputs {
        println!("cargo::rerun-if-changed={}", path.display());
    }
    let dest = std::path::PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("generated.rs");
    if let Err(e) = std::fs::write(&dest, generated.code) {
        eprintln!("error: {}: {e}", dest.display());
        std::process::exit(1);
    }
}
