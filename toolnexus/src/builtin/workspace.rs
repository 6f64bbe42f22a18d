//! Where the file built-ins may reach (the Python port's `base_dir` and
//! `confine_to_base_dir`): a relative path means `base_dir/path`, and with confinement on,
//! a path whose real location — every symlink resolved, also for a file that does not exist
//! yet — lies outside the base is refused before anything is opened.

use std::ffi::OsString;
use std::io;
use std::path::{Component, Path, PathBuf};

/// More symlinks than this while resolving one path is a loop (Linux's own limit).
const MAX_LINKS: usize = 40;

/// The Python port's words for confinement without a base.
pub(crate) const NO_BASE: &str = "confine_to_base_dir is set but base_dir is empty";

/// The base directory and the confinement switch, fixed when the tools are built.
#[derive(Clone, Debug, Default)]
pub(super) struct Workspace {
    /// As configured, for messages.
    shown: Option<String>,
    /// Made absolute when the tools were built, so a later `chdir` does not move it.
    base: Option<PathBuf>,
    confine: bool,
}

impl Workspace {
    pub(super) fn new(base: Option<&Path>, confine: bool) -> Self {
        let base = base.filter(|b| !b.as_os_str().is_empty());
        Self {
            shown: base.map(|b| b.display().to_string()),
            base: base.map(|b| std::path::absolute(b).unwrap_or_else(|_| b.to_path_buf())),
            confine,
        }
    }

    /// The directory a tool works in when the call names none: the base, else the process
    /// working directory. Returns it with the text to show for it.
    pub(super) fn dir(&self, tool: &str) -> Result<(PathBuf, String), String> {
        match (&self.base, &self.shown) {
            (Some(base), Some(shown)) if self.confine => {
                let real = real_path(base).map_err(|e| format!("{tool}: cannot resolve {shown}: {e}"))?;
                Ok((real, shown.clone()))
            }
            (Some(base), Some(shown)) => Ok((base.clone(), shown.clone())),
            _ if self.confine => Err(format!("{tool}: {NO_BASE}")),
            _ => Ok((PathBuf::from("."), ".".to_owned())),
        }
    }

    /// Map a path a model gave onto the filesystem: relative to the base (when there is
    /// one), and — with confinement on — resolved to its real location, which must lie
    /// inside the base's real location. A confined path comes back resolved, so the tool
    /// acts on exactly what was checked.
    pub(super) fn resolve(&self, tool: &str, path: &str) -> Result<PathBuf, String> {
        self.locate(tool, path, real_path)
    }

    /// Like [`resolve`](Self::resolve), except that a symlink at the end of the path is
    /// the entry itself — what removing the path removes — rather than its target.
    pub(super) fn resolve_entry(&self, tool: &str, path: &str) -> Result<PathBuf, String> {
        self.locate(tool, path, real_entry)
    }

    fn locate(
        &self,
        tool: &str,
        path: &str,
        real: fn(&Path) -> io::Result<PathBuf>,
    ) -> Result<PathBuf, String> {
        let full = match &self.base {
            Some(base) if Path::new(path).is_relative() => base.join(path),
            _ => PathBuf::from(path),
        };
        if !self.confine {
            return Ok(full);
        }
        let (Some(base), Some(shown)) = (&self.base, &self.shown) else {
            return Err(format!("{tool}: {NO_BASE}"));
        };
        let unresolvable = |e: io::Error| format!("{tool}: cannot resolve {path}: {e}");
        let base = real_path(base).map_err(unresolvable)?;
        let target = real(&full).map_err(unresolvable)?;
        if target.starts_with(&base) {
            Ok(target)
        } else {
            Err(format!("{tool}: {path} resolves outside baseDir {shown}"))
        }
    }
}

/// One step of a path walk.
enum Step {
    /// Start again from this root (`/`, or a Windows prefix and root).
    Root(PathBuf),
    Parent,
    Name(OsString),
}

fn steps(path: &Path) -> Vec<Step> {
    let mut root = PathBuf::new();
    let mut steps = Vec::new();
    for c in path.components() {
        match c {
            Component::Prefix(_) | Component::RootDir => root.push(c.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => steps.push(Step::Parent),
            Component::Normal(name) => steps.push(Step::Name(name.to_owned())),
        }
    }
    if !root.as_os_str().is_empty() {
        steps.insert(0, Step::Root(root));
    }
    steps
}

/// The real location of `path`, resolved the way the kernel walks it: component by
/// component, each symlink replaced by its target and `..` applied to what is real so far
/// (a lexical `a/link/..` would be `a`; the kernel goes to the link target's parent). A part
/// that does not exist is kept as written, so a file about to be created resolves through
/// its deepest existing ancestor.
pub(super) fn real_path(path: &Path) -> io::Result<PathBuf> {
    let mut todo = steps(&std::path::absolute(path)?);
    todo.reverse();
    let mut out = PathBuf::new();
    let mut links = 0;
    while let Some(step) = todo.pop() {
        match step {
            Step::Root(root) => out = root,
            Step::Parent => {
                out.pop();
            }
            Step::Name(name) => {
                out.push(name);
                let is_link = std::fs::symlink_metadata(&out).is_ok_and(|m| m.file_type().is_symlink());
                if is_link {
                    links += 1;
                    if links > MAX_LINKS {
                        return Err(io::Error::other("too many levels of symbolic links"));
                    }
                    let target = std::fs::read_link(&out)?;
                    out.pop();
                    todo.extend(steps(&target).into_iter().rev());
                }
            }
        }
    }
    Ok(out)
}

/// The real location of the directory entry `path` names: its parent resolved, its last
/// component kept even when it is a symlink.
pub(super) fn real_entry(path: &Path) -> io::Result<PathBuf> {
    let absolute = std::path::absolute(path)?;
    match (absolute.parent(), absolute.file_name()) {
        (Some(parent), Some(name)) => Ok(real_path(parent)?.join(name)),
        _ => real_path(&absolute),
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn real_path_follows_links_before_parent_steps() {
        let dir = tempfile::tempdir().unwrap();
        let root = real_path(dir.path()).unwrap();
        std::fs::create_dir_all(root.join("a/deep")).unwrap();
        symlink(root.join("a/deep"), root.join("link")).unwrap();
        // link/.. is a, not the directory holding link.
        assert_eq!(real_path(&root.join("link/../x")).unwrap(), root.join("a/x"));
        // A file not created yet resolves through its deepest existing ancestor.
        assert_eq!(
            real_path(&root.join("link/new/f.txt")).unwrap(),
            root.join("a/deep/new/f.txt")
        );
        // Relative link targets resolve against the link's directory.
        symlink("a/deep", root.join("rel")).unwrap();
        assert_eq!(real_path(&root.join("rel/./y")).unwrap(), root.join("a/deep/y"));
        // A dangling link resolves to where a write through it would land.
        symlink("/nonexistent-tnx/target", root.join("dangling")).unwrap();
        assert_eq!(
            real_path(&root.join("dangling")).unwrap(),
            Path::new("/nonexistent-tnx/target")
        );
        symlink(root.join("loop2"), root.join("loop1")).unwrap();
        symlink(root.join("loop1"), root.join("loop2")).unwrap();
        assert_eq!(
            real_path(&root.join("loop1")).unwrap_err().to_string(),
            "too many levels of symbolic links"
        );
        assert_eq!(real_path(Path::new("/../..")).unwrap(), Path::new("/"));
    }
}
