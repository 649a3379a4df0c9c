//! The registry's promise, checked on the source: outside a kind's own file, the registry (`src/registry/`)
//! and tests, no structure is named. A structure is named by its id as a string literal (`"bloom"`), by
//! its module's `ID` constant (`bloom::ID`) or by its registry entry type (`BloomKind`). Code that needs a
//! particular structure asks the registry for the role it plays (`registry::role(Role::ReferenceBloom)`).
//! A line that quotes an id for another meaning says so with the comment `not a registry id`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The file's lines before its unit-test module (tests may name what they test).
fn code_lines(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("#[cfg(test)]") {
            break;
        }
        let code = line.split("//").next().unwrap_or("");
        if !line.contains("not a registry id") {
            out.push((i + 1, code));
        }
    }
    out
}

/// Whether `name` occurs in `line` as a whole word (not inside a longer identifier).
fn has_word(line: &str, name: &str) -> bool {
    line.match_indices(name).any(|(at, _)| {
        let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
        let before = line[..at].chars().next_back().is_none_or(|c| !word(c));
        let after = line[at + name.len()..]
            .chars()
            .next()
            .is_none_or(|c| !word(c));
        before && after
    })
}

#[test]
fn no_structure_is_named_outside_its_own_file_and_the_registry() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    let texts: BTreeMap<PathBuf, String> = files
        .iter()
        .map(|p| (p.clone(), std::fs::read_to_string(p).unwrap()))
        .collect();

    // Where each name is defined: an id's file is the one that holds its literal where the kind is
    // declared; a module's `ID` and an entry type belong to the file that declares them.
    let mut owners: Vec<(String, PathBuf)> = Vec::new();
    for id in dedupbench::registry::ids() {
        let literal = format!("\"{id}\"");
        // Declared as `… ID: &str = "id"`, or as the first argument of a constructor on its own line.
        let declares = |t: &str| {
            let lines: Vec<&str> = t.lines().map(str::trim).collect();
            lines.iter().enumerate().any(|(i, l)| {
                (l.contains(": &str = ") && l.ends_with(&format!("{literal};")))
                    || (*l == format!("{literal},") && i > 0 && lines[i - 1].ends_with("::new("))
            })
        };
        let owner = texts
            .iter()
            .find(|(_, t)| declares(t))
            .map(|(p, _)| p.clone())
            .unwrap_or_else(|| panic!("no file declares the id {id}"));
        owners.push((literal, owner));
    }
    for (path, text) in &texts {
        for line in text.lines() {
            let line = line.trim();
            // `pub const ID: &str` and the other ids a file declares (`SCALING_ID`, `PY_SET_ID`, …).
            if let Some(rest) = line.strip_prefix("pub const ") {
                let name = rest.split(':').next().unwrap_or("");
                if (name == "ID" || name.ends_with("_ID")) && rest.contains(": &str") {
                    let stem = path.file_stem().unwrap().to_string_lossy().to_string();
                    let module = if stem == "mod" {
                        let parent = path.parent().unwrap().file_name().unwrap();
                        parent.to_string_lossy().to_string()
                    } else {
                        stem
                    };
                    owners.push((format!("{module}::{name}"), path.clone()));
                }
            }
            if let Some(rest) = line.strip_prefix("impl Kind for ") {
                let name = rest.split_whitespace().next().unwrap_or("").to_string();
                if name.ends_with("Kind") && name != "ExternalKind" {
                    owners.push((name, path.clone()));
                }
            }
        }
    }
    // The macro-declared entry types (`kind!(RedisBloomKind, …)`).
    for (path, text) in &texts {
        let mut lines = text.lines();
        while let Some(line) = lines.next() {
            if line.trim() == "kind!(" {
                if let Some(name) = lines.next() {
                    owners.push((name.trim().trim_end_matches(',').to_string(), path.clone()));
                }
            }
        }
    }
    assert!(
        owners.len() >= 2 * dedupbench::registry::ids().len(),
        "{owners:?}"
    );

    let mut leaks = Vec::new();
    for (path, text) in &texts {
        if path.starts_with(root.join("src/registry")) {
            continue;
        }
        for (number, line) in code_lines(text) {
            for (name, owner) in &owners {
                let found = if name.starts_with('"') {
                    line.contains(name.as_str())
                } else {
                    has_word(line, name)
                };
                if found && owner != path {
                    leaks.push(format!(
                        "{}:{number}: {name}: {}",
                        path.strip_prefix(root).unwrap().display(),
                        line.trim()
                    ));
                }
            }
        }
    }
    assert!(
        leaks.is_empty(),
        "structures named outside their own file and the registry (ask the registry for a role):\n{}",
        leaks.join("\n")
    );
}

/// The check itself finds a leak: a line naming `bloom::ID` in another file is reported.
#[test]
fn the_check_sees_a_name_as_a_word() {
    assert!(has_word("if id == bloom::ID {", "bloom::ID"));
    assert!(!has_word("if id == xbloom::ID {", "bloom::ID"));
    assert!(has_word("&BloomKind,", "BloomKind"));
    assert!(!has_word("&ScalableBloomKind,", "BloomKind"));
}
