//! Gitignore-aware parallel directory walk, built on the `ignore` crate (ripgrep's).
//!
//! Results are regular files as paths relative to the root, sorted by their bytes
//! (for UTF-8 names that is code-point order, like Python's `sorted`), so the
//! output never depends on thread timing. `.git` is never entered. Symbolic links
//! are skipped unless `follow_links` is set, so a link cannot lead a walk (or an
//! agent) out of the repository by accident.

use crate::cancel::Cancel;
use crate::errors::{io_failure, NativeFailure, NativeResult};
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use ignore::{WalkBuilder, WalkState};
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc};

#[derive(Debug, Clone, Default)]
pub struct WalkOptions {
    /// Keep only files matching one of these globs (all files when empty).
    pub include: Vec<String>,
    /// Skip files and whole directories matching one of these globs.
    pub exclude: Vec<String>,
    /// Also walk hidden (dot) files and directories.
    pub hidden: bool,
    /// Honour `.gitignore`, `.ignore`, `.git/info/exclude` and the global excludes.
    pub respect_ignore: bool,
    /// Deepest level to report; 1 means the root's own files.
    pub max_depth: Option<usize>,
    pub follow_links: bool,
    /// Walker threads; 0 lets the `ignore` crate choose from the CPU count.
    pub threads: usize,
}

/// A set of globs matched against a root-relative path.
///
/// Gitignore-style convention: a glob without `/` matches the file or directory
/// name at any depth (`*.py`, `node_modules`); a glob with `/` matches the whole
/// relative path (`src/**/*.rs`; a leading `/` is dropped). `*` never crosses `/`.
#[derive(Debug, Clone)]
pub struct PathGlobs {
    by_name: GlobSet,
    by_path: GlobSet,
    empty: bool,
}

impl PathGlobs {
    pub fn new(patterns: &[String]) -> NativeResult<Self> {
        let mut by_name = GlobSetBuilder::new();
        let mut by_path = GlobSetBuilder::new();
        for raw in patterns {
            let trimmed = raw.trim_end_matches('/');
            let (pattern, anchored) = match trimmed.strip_prefix('/') {
                Some(rest) => (rest, true),
                None => (trimmed, trimmed.contains('/')),
            };
            let glob = GlobBuilder::new(pattern)
                .literal_separator(true)
                .backslash_escape(true)
                .build()
                .map_err(|err| NativeFailure::InvalidValue(format!("bad glob {raw:?}: {err}")))?;
            if anchored {
                by_path.add(glob);
            } else {
                by_name.add(glob);
            }
        }
        let build = |builder: GlobSetBuilder| {
            builder
                .build()
                .map_err(|err| NativeFailure::InvalidValue(format!("bad glob: {err}")))
        };
        Ok(Self {
            by_name: build(by_name)?,
            by_path: build(by_path)?,
            empty: patterns.is_empty(),
        })
    }

    /// Globs matching every path: `pattern` against the whole relative path.
    pub fn whole_path(pattern: &str) -> NativeResult<Self> {
        let anchored = format!("/{}", pattern.trim_start_matches('/'));
        Self::new(&[anchored])
    }

    pub fn is_empty(&self) -> bool {
        self.empty
    }

    pub fn is_match(&self, relative: &Path) -> bool {
        if self.empty {
            return false; // and no candidate path is built for nothing
        }
        let by_name = relative
            .file_name()
            .is_some_and(|name| self.by_name.is_match(name));
        by_name || self.by_path.is_match(relative)
    }
}

/// Checks that `root` is an existing directory.
pub fn check_root(root: &Path) -> NativeResult<()> {
    let meta = std::fs::metadata(root).map_err(|err| io_failure(root, &err))?;
    if meta.is_dir() {
        Ok(())
    } else {
        Err(NativeFailure::NotADirectory(format!(
            "{}: not a directory",
            root.display()
        )))
    }
}

/// Root-relative paths of the files under `root`, sorted.
pub fn walk(root: &Path, options: &WalkOptions, cancel: &Cancel) -> NativeResult<Vec<PathBuf>> {
    walk_matching(root, options, None, cancel)
}

/// Like [`walk`], keeping only files whose whole relative path matches `pattern`.
pub fn glob(
    root: &Path,
    pattern: &str,
    options: &WalkOptions,
    cancel: &Cancel,
) -> NativeResult<Vec<PathBuf>> {
    let whole = PathGlobs::whole_path(pattern)?;
    walk_matching(root, options, Some(whole), cancel)
}

fn walk_matching(
    root: &Path,
    options: &WalkOptions,
    extra: Option<PathGlobs>,
    cancel: &Cancel,
) -> NativeResult<Vec<PathBuf>> {
    let (sender, receiver) = mpsc::channel::<PathBuf>();
    walk_visit(root, options, extra, cancel, || {
        let sender = sender.clone();
        // The receiver outlives the walk, so sending cannot fail.
        move |relative: &Path, _: &Path| {
            let _ = sender.send(relative.to_path_buf());
        }
    })?;
    drop(sender);
    let mut paths: Vec<PathBuf> = receiver.into_iter().collect();
    sort_paths(&mut paths);
    Ok(paths)
}

/// Calls a visitor for every file of the walk (relative path, full path), on the
/// walker's threads and in no particular order: `visitor` makes one per thread.
pub fn walk_visit<M, V>(
    root: &Path,
    options: &WalkOptions,
    extra: Option<PathGlobs>,
    cancel: &Cancel,
    visitor: M,
) -> NativeResult<()>
where
    M: Fn() -> V + Sync,
    V: FnMut(&Path, &Path) + Send,
{
    check_root(root)?;
    let include = PathGlobs::new(&options.include)?;
    let exclude = Arc::new(PathGlobs::new(&options.exclude)?);
    let builder = builder(root, options, exclude);
    builder.build_parallel().run(|| {
        let mut visit = visitor();
        let (include, extra) = (&include, &extra);
        Box::new(move |entry| {
            if cancel.is_cancelled() {
                return WalkState::Quit;
            }
            // Unreadable directories and vanished files are skipped, as rg does.
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            if !entry.file_type().is_some_and(|kind| kind.is_file()) {
                return WalkState::Continue;
            }
            let Ok(relative) = entry.path().strip_prefix(root) else {
                return WalkState::Continue;
            };
            let included = include.is_empty() || include.is_match(relative);
            if included && extra.as_ref().is_none_or(|globs| globs.is_match(relative)) {
                visit(relative, entry.path());
            }
            WalkState::Continue
        })
    });
    cancel.check()
}

fn builder(root: &Path, options: &WalkOptions, exclude: Arc<PathGlobs>) -> WalkBuilder {
    let respect = options.respect_ignore;
    let mut builder = WalkBuilder::new(root);
    builder
        .hidden(!options.hidden)
        .ignore(respect)
        .git_ignore(respect)
        .git_exclude(respect)
        .git_global(respect)
        .parents(respect)
        .require_git(true)
        .follow_links(options.follow_links)
        .max_depth(options.max_depth)
        .threads(options.threads);
    let root = root.to_path_buf();
    builder.filter_entry(move |entry| {
        if entry.file_name() == ".git" {
            return false;
        }
        match entry.path().strip_prefix(&root) {
            Ok(relative) if !relative.as_os_str().is_empty() => !exclude.is_match(relative),
            _ => true,
        }
    });
    builder
}

/// Sorts by the path's bytes: code-point order for UTF-8 names, and stable.
pub fn sort_paths(paths: &mut [PathBuf]) {
    paths.sort_unstable_by(|a, b| path_order(a, b));
}

/// The order of [`sort_paths`].
pub fn path_order(a: &Path, b: &Path) -> std::cmp::Ordering {
    path_bytes(a).cmp(path_bytes(b))
}

#[cfg(unix)]
fn path_bytes(path: &Path) -> &[u8] {
    use std::os::unix::ffi::OsStrExt;
    path.as_os_str().as_bytes()
}

#[cfg(not(unix))]
fn path_bytes(path: &Path) -> &[u8] {
    path.to_str().map(str::as_bytes).unwrap_or_default()
}

#[cfg(test)]
mod tests;
