//! What the local server keeps between runs, in a directory of the person's own (owner-only
//! files): its signing key, the connection the person approved (its client and refresh token),
//! and each pairing's grants and presence credential, so an agent app that starts it again goes on with no new code.
//! The relay's core decides everything about them as on the Worker (a refresh rotates the token
//! through the token endpoint's saga; the pairing checks the grant); this only keeps bytes.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

/// The directory: `--state`, `TABRELAY_LOCAL_STATE`, else `$XDG_STATE_HOME/tabrelay-local` or
/// `~/.local/state/tabrelay-local`; "none" (or no home): nothing is kept.
#[must_use]
pub fn dir(said: Option<&str>) -> Option<PathBuf> {
    let env = |name| std::env::var(name).ok().filter(|v| !v.is_empty());
    let chosen = said.map(str::to_owned).or_else(|| env("TABRELAY_LOCAL_STATE"));
    match chosen.as_deref() {
        Some("none") => None,
        Some(dir) => Some(PathBuf::from(dir)),
        None => env("XDG_STATE_HOME")
            .map(PathBuf::from)
            .or_else(|| env("HOME").map(|h| Path::new(&h).join(".local/state")))
            .map(|d| d.join("tabrelay-local")),
    }
}

/// Writes `text` to `file` (made owner-only, its directory too), whole or not at all.
fn write(file: &Path, text: &str) {
    use std::io::Write as _;
    use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
    if let Some(parent) = file.parent() {
        let _ = std::fs::DirBuilder::new().recursive(true).mode(0o700).create(parent);
    }
    let partial = file.with_extension("partial");
    let made = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&partial)
        .and_then(|mut f| f.write_all(text.as_bytes()));
    if made.is_ok() {
        let _ = std::fs::rename(&partial, file);
    }
}

fn read(file: &Path) -> Option<Value> {
    serde_json::from_slice(&std::fs::read(file).ok()?).ok()
}

/// The signing key kept in `dir` (made on first use); a new one each run without a directory.
#[must_use]
pub fn key(dir: Option<&Path>, fresh: impl FnOnce() -> String) -> String {
    let Some(file) = dir.map(|d| d.join("key")) else { return fresh() };
    match std::fs::read_to_string(&file) {
        Ok(kept) if kept.trim().len() >= 43 => kept.trim().to_owned(),
        _ => {
            let key = fresh();
            write(&file, &key);
            key
        }
    }
}

/// The connection the person approved: the agent app's name, its registered client, its
/// refresh token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Connection {
    pub name: String,
    pub client_id: String,
    pub refresh: String,
}

/// The file the connection of the agent app named `name` is kept in (its name's bytes in hex:
/// each agent app its own, with the same state directory).
fn connection_file(dir: &Path, name: &str) -> PathBuf {
    let hex: String = name.bytes().map(|b| format!("{b:02x}")).collect();
    dir.join(format!("connection-{hex}.json"))
}

impl Connection {
    /// The connection of the agent app named `name` kept in `dir`, if any.
    #[must_use]
    pub fn kept(dir: Option<&Path>, name: &str) -> Option<Self> {
        let v = read(&connection_file(dir?, name))?;
        let field = |name: &str| v.get(name)?.as_str().map(str::to_owned);
        Some(Self {
            name: field("name")?,
            client_id: field("client_id")?,
            refresh: field("refresh")?,
        })
    }

    /// Keeps it in `dir`.
    pub fn keep(&self, dir: Option<&Path>) {
        let Some(dir) = dir else { return };
        let v = json!({ "name": self.name, "client_id": self.client_id, "refresh": self.refresh });
        write(&connection_file(dir, &self.name), &v.to_string());
    }

    /// Forgets the connection of the agent app named `name` kept in `dir`.
    pub fn forget(dir: Option<&Path>, name: &str) {
        if let Some(dir) = dir {
            let _ = std::fs::remove_file(connection_file(dir, name));
        }
    }
}

/// The file a pairing's grants are kept in (its id is hex: a file name as it is).
#[must_use]
pub fn grants_file(dir: Option<&Path>, pairing: &str) -> Option<PathBuf> {
    let hex = pairing.bytes().all(|b| b.is_ascii_hexdigit());
    dir.filter(|_| hex).map(|d| d.join(format!("grants-{pairing}.json")))
}

/// A pairing's grants (id and stored body, in order) kept in `file`.
#[must_use]
pub fn grants(file: Option<&Path>) -> Vec<(String, String)> {
    let Some(Value::Array(rows)) = file.and_then(read) else { return Vec::new() };
    let row = |r: &Value| Some((r.get(0)?.as_str()?.to_owned(), r.get(1)?.as_str()?.to_owned()));
    rows.iter().filter_map(row).collect()
}

/// Keeps a pairing's grants in `file` (none: the file goes).
pub fn keep_grants(file: Option<&Path>, rows: &[(String, String)]) {
    let Some(file) = file else { return };
    if rows.is_empty() {
        let _ = std::fs::remove_file(file);
        return;
    }
    let rows: Vec<Value> = rows.iter().map(|(id, body)| json!([id, body])).collect();
    write(file, &Value::Array(rows).to_string());
}

/// The file a pairing's presence credential is kept in (the pairing's `presence` row, as the
/// relay's storage keeps it), so no one can enrol another in its place at the next run.
#[must_use]
pub fn presence_file(dir: Option<&Path>, pairing: &str) -> Option<PathBuf> {
    let hex = pairing.bytes().all(|b| b.is_ascii_hexdigit());
    dir.filter(|_| hex).map(|d| d.join(format!("presence-{pairing}.json")))
}

/// The presence row kept in `file`, as stored (JSON text).
#[must_use]
pub fn presence(file: Option<&Path>) -> Option<String> {
    file.and_then(read).map(|v| v.to_string())
}

/// Keeps a pairing's presence row in `file` (none: the file goes).
pub fn keep_presence(file: Option<&Path>, row: Option<&str>) {
    let Some(file) = file else { return };
    match row {
        Some(row) => write(file, row),
        None => {
            let _ = std::fs::remove_file(file);
        }
    }
}

/// Where the first `tabrelay-local` on `port` writes the secret later ones join it with: the
/// user's runtime directory (`XDG_RUNTIME_DIR`), else the system's temporary one.
#[must_use]
pub fn agents_secret_file(port: u16) -> PathBuf {
    let dir = std::env::var("XDG_RUNTIME_DIR").ok().filter(|d| !d.is_empty());
    dir.map_or_else(std::env::temp_dir, PathBuf::from).join(format!("tabrelay-local-{port}.secret"))
}

/// Keeps `key` as the signing key in `dir` (a joined one takes the serving one's: the tokens
/// kept for it are that one's).
pub fn keep_key(dir: Option<&Path>, key: &str) {
    if let Some(dir) = dir {
        write(&dir.join("key"), key);
    }
}

/// Writes the secret later agent apps join with (owner-only).
pub fn keep_secret(file: &Path, secret: &str) {
    write(file, secret);
}

/// The secret in `file`, only when it is a file no one else may read (else another user's
/// program could have put it there, to be joined in the person's place; a file of another user
/// that only its owner may read does not read here).
#[must_use]
pub fn own_secret(file: &Path) -> Option<String> {
    use std::os::unix::fs::PermissionsExt as _;
    let meta = std::fs::symlink_metadata(file).ok()?;
    let own = meta.is_file() && meta.permissions().mode() & 0o077 == 0;
    own.then(|| std::fs::read_to_string(file).ok()).flatten().map(|s| s.trim().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp() -> PathBuf {
        let dir = std::env::temp_dir().join(format!("tabrelay-local-state-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn what_is_kept_reads_back_owner_only_and_goes_when_forgotten() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = temp();
        let key = key(Some(&dir), || "k".repeat(64));
        assert_eq!(key, "k".repeat(64));
        assert_eq!(super::key(Some(&dir), || "other".into()), key, "the same key next run");
        let mode = std::fs::metadata(dir.join("key")).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let c = Connection { name: "Cursor".into(), client_id: "cid".into(), refresh: "r".into() };
        c.keep(Some(&dir));
        assert_eq!(Connection::kept(Some(&dir), "Cursor"), Some(c));
        assert_eq!(Connection::kept(Some(&dir), "Claude Code"), None, "each agent app its own");
        Connection::forget(Some(&dir), "Cursor");
        assert_eq!(Connection::kept(Some(&dir), "Cursor"), None);
        let file = grants_file(Some(&dir), "ab12");
        keep_grants(file.as_deref(), &[("g1".into(), "{}".into())]);
        assert_eq!(grants(file.as_deref()), [("g1".to_owned(), "{}".to_owned())]);
        keep_grants(file.as_deref(), &[]);
        assert!(grants(file.as_deref()).is_empty());
        assert_eq!(grants_file(Some(&dir), "../x"), None, "only a hex pairing id names a file");
        let file = presence_file(Some(&dir), "ab12");
        keep_presence(file.as_deref(), Some(r#"{"credential":"c"}"#));
        assert_eq!(presence(file.as_deref()).as_deref(), Some(r#"{"credential":"c"}"#));
        keep_presence(file.as_deref(), None);
        assert_eq!(presence(file.as_deref()), None);
        assert_eq!(presence_file(Some(&dir), "../x"), None);
        let secret = dir.join("agents.secret");
        keep_secret(&secret, "s3cret");
        assert_eq!(own_secret(&secret).as_deref(), Some("s3cret"));
        let open = std::fs::Permissions::from_mode(0o644);
        std::fs::set_permissions(&secret, open).unwrap();
        assert_eq!(own_secret(&secret), None, "a secret others may read is none");
        assert_eq!(super::dir(Some("none")), None);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
