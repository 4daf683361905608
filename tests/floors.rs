//! The floors hold: no top-level module of `src/` (the Worker's shell aside, which is the top
//! floor and may use anything) reaches, through the `crate::` paths of its code, a module that
//! reaches it back, nor imports a module on a higher floor than docs/architecture.md ("The
//! floors") gives it. Each module's code is read as text (its file and the files under its
//! folder, tests included, comments not); a loop among the modules, or an import upward, fails
//! with the lines that make it.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The floor no module below imports: the Worker's shell.
const TOP: &str = "shell";

/// Every top-level module `src/lib.rs` declares, the shell aside.
fn modules(src: &Path) -> Vec<String> {
    let lib = fs::read_to_string(src.join("lib.rs")).expect("src/lib.rs reads");
    lib.lines()
        .filter_map(|line| {
            let line = line.trim();
            let rest = line.strip_prefix("pub mod ").or_else(|| line.strip_prefix("mod "))?;
            Some(rest.strip_suffix(';')?.trim().to_owned())
        })
        .filter(|name| name != TOP)
        .collect()
}

/// The source files of module `name`: `src/name.rs` and every `.rs` under `src/name/`.
fn files_of(src: &Path, name: &str) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let file = src.join(format!("{name}.rs"));
    if file.is_file() {
        files.push(file);
    }
    let mut folders = vec![src.join(name)];
    while let Some(folder) = folders.pop() {
        let Ok(entries) = fs::read_dir(&folder) else { continue };
        for entry in entries {
            let path = entry.expect("a folder entry reads").path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The top-level modules a line of code names through `crate::` (`crate::a::…`, and each
/// first name of a group `crate::{a, b::c}`).
fn named(line: &str) -> Vec<String> {
    let ident = |s: &str| -> String {
        s.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect()
    };
    let mut names = Vec::new();
    for (at, _) in line.match_indices("crate::") {
        let before = line[..at].chars().next_back();
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$') {
            continue;
        }
        let rest = &line[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let (mut depth, mut start) = (0_usize, true);
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => start = true,
                    c if c.is_whitespace() => {}
                    _ if start => {
                        names.push(ident(&group[i..]));
                        start = false;
                    }
                    _ => {}
                }
            }
        } else {
            names.push(ident(rest));
        }
    }
    names
}

/// Which module reaches which, with the lines that do it (`file:line: code`).
type Edges = BTreeMap<(String, String), Vec<String>>;

fn edges(root: &Path) -> (Vec<String>, Edges) {
    let src = root.join("src");
    let modules = modules(&src);
    let mut edges = Edges::new();
    for module in &modules {
        for file in files_of(&src, module) {
            let text = fs::read_to_string(&file).expect("a source file reads");
            let shown = file.strip_prefix(root).unwrap_or(&file).display().to_string();
            for (n, line) in text.lines().enumerate() {
                let code = line.trim();
                if code.starts_with("//") {
                    continue;
                }
                // A module's code is read under its own file and folder only.
                assert!(!code.starts_with("#[path"), "{shown}:{}: a #[path] module", n + 1);
                for target in named(code) {
                    if target != *module && modules.contains(&target) {
                        let key = (module.clone(), target);
                        edges.entry(key).or_default().push(format!("{shown}:{}: {code}", n + 1));
                    }
                }
            }
        }
    }
    (modules, edges)
}

/// The modules `from` reaches, itself included.
fn reach(from: &str, edges: &Edges) -> BTreeSet<String> {
    let mut seen = BTreeSet::from([from.to_owned()]);
    let mut next = vec![from.to_owned()];
    while let Some(m) = next.pop() {
        for (a, b) in edges.keys() {
            if *a == m && seen.insert(b.clone()) {
                next.push(b.clone());
            }
        }
    }
    seen
}

/// Each set of modules that reach one another (more than one module), with the lines of the
/// imports among them.
fn cycles(modules: &[String], edges: &Edges) -> Vec<(BTreeSet<String>, Vec<String>)> {
    let reaches: BTreeMap<&String, BTreeSet<String>> =
        modules.iter().map(|m| (m, reach(m, edges))).collect();
    let mut found: Vec<(BTreeSet<String>, Vec<String>)> = Vec::new();
    for m in modules {
        let ring: BTreeSet<String> =
            reaches[m].iter().filter(|o| reaches[*o].contains(m)).cloned().collect();
        if ring.len() < 2 || found.iter().any(|(r, _)| r.contains(m)) {
            continue;
        }
        let mut lines = Vec::new();
        for ((a, b), at) in edges {
            if ring.contains(a) && ring.contains(b) {
                lines.push(format!("  {a} -> {b}:"));
                lines.extend(at.iter().map(|l| format!("    {l}")));
            }
        }
        found.push((ring, lines));
    }
    found
}

/// The floor docs/architecture.md gives each module it names (`src/name.rs` or `src/name/`):
/// its section "The floors" lists them from the bottom, a bullet each.
fn floors(root: &Path) -> BTreeMap<String, usize> {
    let doc = fs::read_to_string(root.join("docs/architecture.md")).expect("the doc reads");
    let start = doc.find("## The floors\n").expect("docs/architecture.md has The floors");
    let section = &doc[start..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |end| end + 3)];
    let (mut floors, mut floor, mut at) = (BTreeMap::new(), None, 0_usize);
    for line in section.lines() {
        if line.starts_with("- **") {
            at += 1;
            floor = Some(at);
        } else if !line.starts_with("  ") {
            floor = None;
        }
        let Some(floor) = floor else { continue };
        for named in line.split('`').skip(1).step_by(2) {
            let Some(path) = named.strip_prefix("src/") else { continue };
            let name = path.strip_suffix(".rs").or_else(|| path.strip_suffix('/'));
            let Some(name) = name.filter(|n| !n.contains('/')) else { continue };
            assert!(root.join("src").join(path).exists(), "the floors name {named}: not there");
            floors.entry(name.to_owned()).or_insert(floor);
        }
    }
    floors
}

#[test]
fn each_module_imports_only_its_own_floor_and_those_below() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (modules, edges) = edges(root);
    let floors = floors(root);
    let unplaced: Vec<&String> = modules.iter().filter(|m| !floors.contains_key(*m)).collect();
    assert!(unplaced.is_empty(), "docs/architecture.md's floors do not name {unplaced:?}");
    let mut report = String::new();
    for ((a, b), at) in &edges {
        if floors[b] > floors[a] {
            report.push_str(&format!(
                "\n{a} (floor {}) imports {b} (floor {}):\n",
                floors[a], floors[b]
            ));
            report.push_str(&at.iter().map(|l| format!("  {l}")).collect::<Vec<_>>().join("\n"));
        }
    }
    assert!(report.is_empty(), "a module imports one on a higher floor:{report}");
}

#[test]
fn no_module_imports_one_that_imports_it_back() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (modules, edges) = edges(root);
    assert!(modules.len() > 5 && modules.iter().any(|m| m == "pairing"), "{modules:?}");
    let found = cycles(&modules, &edges);
    let mut report = String::new();
    for (ring, lines) in &found {
        let names: Vec<&str> = ring.iter().map(String::as_str).collect();
        report.push_str(&format!("\nthese modules import one another: {}\n", names.join(", ")));
        report.push_str(&lines.join("\n"));
        report.push('\n');
    }
    assert!(found.is_empty(), "the floors do not hold:{report}");
}

#[test]
fn the_reader_finds_paths_and_groups_and_skips_other_names() {
    assert_eq!(named("use crate::oauth::keys::Keys;"), ["oauth"]);
    assert_eq!(named("use crate::{sentences, tools::list};"), ["sentences", "tools"]);
    assert_eq!(named("x(crate::http::body_cap(\"/\"), crate::limits::A)"), ["http", "limits"]);
    assert_eq!(named("use crate::{a::{b, c}, d};"), ["a", "d"]);
    assert!(named("use tabrelay_crate::x; $crate::y").is_empty());
}
