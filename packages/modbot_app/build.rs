//! Fetches three.js for the replay pages (src/replay.rs) from the npm registry: `npm ci` of
//! `web/package.json` with its lockfile (exact version and sha512 integrity) into OUT_DIR,
//! once per lockfile; or the `three.module.js` that `MODBOT_THREE_JS` names, `three.core.js`
//! beside it (an offline build). Without
//! either the build goes on: runs still record their link poses, and the missing page is
//! reported with the reason given here (decision record 0040).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The files of the three package a page embeds: since r17x three.js ships only as ES
/// modules, `three.module.js` importing `./three.core.js` (its `three.cjs` is a shim that
/// `require`s the module); the page imports both from blob: URLs (web/replay.html).
const THREE_MODULE: &str = "node_modules/three/build/three.module.js";
/// The core `three.module.js` imports, in the same folder.
const THREE_CORE: &str = "three.core.js";
/// The template's placeholders: none may appear in an embedded file.
const PLACEHOLDERS: [&str; 4] = ["/*@THREE_CORE@*/", "/*@THREE_MODULE@*/", "/*@VIEWER@*/", "/*@DATA@*/"];

fn main() {
    println!("cargo::rerun-if-changed=web/package.json");
    println!("cargo::rerun-if-changed=web/package-lock.json");
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=MODBOT_THREE_JS");
    println!("cargo::rustc-check-cfg=cfg(modbot_three)");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let found = match std::env::var_os("MODBOT_THREE_JS") {
        Some(p) => Ok(PathBuf::from(p)),
        None => npm_ci(&manifest.join("web"), &out.join("web")),
    };
    let checked = found.and_then(|module| {
        let core = module.with_file_name(THREE_CORE);
        let mut texts = Vec::new();
        for path in [&module, &core] {
            println!("cargo::rerun-if-changed={}", path.display());
            let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
            // The page holds it as the text of a <script> element: nothing in it may close
            // one or open a comment there, and no placeholder of the template may be in it.
            let lower = text.to_ascii_lowercase();
            if lower.contains("</script") || lower.contains("<!--") || PLACEHOLDERS.iter().any(|p| text.contains(p)) {
                return Err(format!("{} cannot be written into a page", path.display()));
            }
            if path == &module && !text.contains("./three.core.js") {
                return Err(format!("{} does not import ./three.core.js", path.display()));
            }
            texts.push(text);
        }
        Ok(texts)
    });
    match checked {
        Ok(texts) => {
            for (name, text) in ["three.module.js", "three.core.js"].iter().zip(texts) {
                let dest = out.join(name);
                if let Err(e) = std::fs::write(&dest, text) {
                    eprintln!("error: {}: {e}", dest.display());
                    std::process::exit(1);
                }
            }
            println!("cargo::rustc-cfg=modbot_three");
            println!("cargo::rustc-env=MODBOT_THREE_JS_MISSING=");
        }
        Err(why) => {
            let why = why.replace(['\n', '\r'], " ");
            println!("cargo::warning=replay.html pages will not be written: {why}");
            println!("cargo::rustc-env=MODBOT_THREE_JS_MISSING={why}");
        }
    }
}

/// `npm ci` of the package in `src` (its package.json and lockfile copied to `dest`), unless
/// `dest` already holds what that lockfile installs; the path of three's file.
fn npm_ci(src: &Path, dest: &Path) -> Result<PathBuf, String> {
    let lock = std::fs::read(src.join("package-lock.json")).map_err(|e| format!("web/package-lock.json: {e}"))?;
    let file = dest.join(THREE_MODULE);
    let stamp = dest.join("installed-lock.json");
    if file.is_file() && std::fs::read(&stamp).is_ok_and(|s| s == lock) {
        return Ok(file);
    }
    std::fs::create_dir_all(dest).map_err(|e| format!("{}: {e}", dest.display()))?;
    for f in ["package.json", "package-lock.json"] {
        std::fs::copy(src.join(f), dest.join(f)).map_err(|e| format!("web/{f}: {e}"))?;
    }
    let output = Command::new("npm")
        .args(["ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"])
        .current_dir(dest)
        .output()
        .map_err(|e| {
            format!(
                "npm (Node.js) is needed to fetch three.js: {e}; or set MODBOT_THREE_JS to its build/three.module.js"
            )
        })?;
    if !output.status.success() {
        let err = String::from_utf8_lossy(&output.stderr);
        let last: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).rev().take(3).collect();
        return Err(format!(
            "npm ci failed ({}): {}",
            output.status,
            last.into_iter().rev().collect::<Vec<_>>().join(" / ")
        ));
    }
    if !file.is_file() {
        return Err(format!("npm ci did not install {THREE_MODULE}"));
    }
    std::fs::write(&stamp, &lock).map_err(|e| format!("{}: {e}", stamp.display()))?;
    Ok(file)
}
