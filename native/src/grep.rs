//! Regex or literal search over a walk, built on ripgrep's `grep-*` crates.
//!
//! Two phases: the parallel walk produces the sorted file list, then worker
//! threads search the files in that order. Knowing the order lets a total match
//! limit stop early and still return exactly the first N matches by path, so the
//! result never depends on thread timing.

mod file;

use crate::cancel::Cancel;
use crate::errors::{NativeFailure, NativeResult};
use crate::walk::{path_order, walk, walk_visit, WalkOptions};
use grep_matcher::LineTerminator;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

pub use file::{search_bytes, LineMatch};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CaseMode {
    #[default]
    Sensitive,
    Insensitive,
    /// Insensitive unless the pattern has an upper-case letter (ripgrep's `-S`).
    Smart,
}

#[derive(Debug, Clone, Default)]
pub struct GrepOptions {
    /// Match the pattern as a literal string, not a regex.
    pub fixed: bool,
    pub case: CaseMode,
    /// Only matches that are whole words.
    pub word: bool,
    pub before: usize,
    pub after: usize,
    /// At most this many matching lines per file.
    pub max_per_file: Option<u64>,
    /// At most this many matching lines in all (the first ones by path order).
    pub max_total: Option<usize>,
    pub walk: WalkOptions,
}

/// The matching lines of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileMatches {
    pub path: PathBuf,
    pub lines: Vec<LineMatch>,
}

/// Compiles `pattern` the way `grep` uses it: a match never spans a line end.
pub fn build_matcher(pattern: &str, options: &GrepOptions) -> NativeResult<RegexMatcher> {
    RegexMatcherBuilder::new()
        .case_insensitive(options.case == CaseMode::Insensitive)
        .case_smart(options.case == CaseMode::Smart)
        .fixed_strings(options.fixed)
        .word(options.word)
        .line_terminator(Some(b'\n'))
        .crlf(true)
        .build(pattern)
        .map_err(|err| NativeFailure::InvalidValue(format!("bad pattern {pattern:?}: {err}")))
}

pub fn build_searcher(options: &GrepOptions) -> Searcher {
    SearcherBuilder::new()
        // Line numbers are counted by our sink, only in files with matches.
        .line_number(false)
        // Must agree with the matcher's `crlf(true)`.
        .line_terminator(LineTerminator::crlf())
        .before_context(options.before)
        .after_context(options.after)
        .max_matches(options.max_per_file)
        // Binary files are detected (a NUL anywhere) before the searcher sees them.
        .binary_detection(BinaryDetection::none())
        .bom_sniffing(false)
        .build()
}

/// Searches every file of the walk of `root`; files in path order, lines in order.
pub fn grep(
    root: &Path,
    pattern: &str,
    options: &GrepOptions,
    cancel: &Cancel,
) -> NativeResult<Vec<FileMatches>> {
    let matcher = build_matcher(pattern, options)?;
    let Some(limit) = options.max_total else {
        return search_while_walking(root, &matcher, options, cancel);
    };
    let paths = walk(root, &options.walk, cancel)?;
    let mut found = search_paths(root, &paths, &matcher, options, cancel)?;
    truncate_total(&mut found, limit);
    Ok(found)
}

/// Without a total limit the order of the search does not matter: each walker
/// thread searches the files it finds at once (as ripgrep does), and the files with
/// matches are sorted by path at the end.
fn search_while_walking(
    root: &Path,
    matcher: &RegexMatcher,
    options: &GrepOptions,
    cancel: &Cancel,
) -> NativeResult<Vec<FileMatches>> {
    let found: Mutex<Vec<FileMatches>> = Mutex::new(Vec::new());
    let failure: Mutex<Option<NativeFailure>> = Mutex::new(None);
    walk_visit(root, &options.walk, None, cancel, || {
        let (mut searcher, mut buffer) = (build_searcher(options), Vec::new());
        let (found, failure) = (&found, &failure);
        move |relative: &Path, path: &Path| match search_file(
            path,
            matcher,
            &mut searcher,
            &mut buffer,
        ) {
            Ok(lines) if lines.is_empty() => {}
            Ok(lines) => lock(found).push(FileMatches {
                path: relative.to_path_buf(),
                lines,
            }),
            Err(err) => {
                lock(failure).get_or_insert(err);
            }
        }
    })?;
    if let Some(err) = lock(&failure).take() {
        return Err(err);
    }
    let mut found = found
        .into_inner()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    found.sort_unstable_by(|a, b| path_order(&a.path, &b.path));
    Ok(found)
}

/// The matching lines of one file; none for a binary, unreadable or vanished file
/// (skipped, as rg does). `buffer` is reused from file to file.
fn search_file(
    path: &Path,
    matcher: &RegexMatcher,
    searcher: &mut Searcher,
    buffer: &mut Vec<u8>,
) -> NativeResult<Vec<LineMatch>> {
    if !matches!(file::read_text(path, buffer), Ok(true)) {
        return Ok(Vec::new());
    }
    search_bytes(matcher, searcher, buffer)
        .map_err(|err| NativeFailure::Other(format!("grep: {err}")))
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn worker_count(requested: usize, files: usize) -> usize {
    let available = std::thread::available_parallelism().map_or(1, |n| n.get());
    let wanted = if requested == 0 {
        available.min(12)
    } else {
        requested
    };
    wanted.clamp(1, files.max(1))
}

/// Which files are done, to know when the first N matches are settled.
struct Progress {
    counts: Vec<Option<usize>>,
    settled_files: usize,
    settled_matches: usize,
}

struct Shared<'a> {
    root: &'a Path,
    paths: &'a [PathBuf],
    matcher: &'a RegexMatcher,
    options: &'a GrepOptions,
    next: AtomicUsize,
    enough: AtomicBool,
    progress: Option<Mutex<Progress>>,
    limit: usize,
    cancel: &'a Cancel,
}

fn search_paths(
    root: &Path,
    paths: &[PathBuf],
    matcher: &RegexMatcher,
    options: &GrepOptions,
    cancel: &Cancel,
) -> NativeResult<Vec<FileMatches>> {
    let shared = Shared {
        root,
        paths,
        matcher,
        options,
        next: AtomicUsize::new(0),
        enough: AtomicBool::new(options.max_total == Some(0)),
        progress: options.max_total.map(|_| {
            Mutex::new(Progress {
                counts: vec![None; paths.len()],
                settled_files: 0,
                settled_matches: 0,
            })
        }),
        limit: options.max_total.unwrap_or(usize::MAX),
        cancel,
    };
    let workers = worker_count(options.walk.threads, paths.len());
    let mut found: Vec<(usize, Vec<LineMatch>)> = Vec::new();
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| scope.spawn(|| search_worker(&shared)))
            .collect();
        for handle in handles {
            match handle.join() {
                Ok(part) => found.extend(part?),
                Err(_) => return Err(NativeFailure::Other("a grep worker panicked".into())),
            }
        }
        Ok(())
    })?;
    cancel.check()?;
    found.sort_unstable_by_key(|(index, _)| *index);
    Ok(found
        .into_iter()
        .map(|(index, lines)| FileMatches {
            path: paths[index].clone(),
            lines,
        })
        .collect())
}

type Found = Vec<(usize, Vec<LineMatch>)>;

fn search_worker(shared: &Shared<'_>) -> NativeResult<Found> {
    let mut searcher = build_searcher(shared.options);
    let mut buffer = Vec::new();
    let mut found = Vec::new();
    loop {
        if shared.cancel.is_cancelled() || shared.enough.load(Ordering::Relaxed) {
            break;
        }
        let index = shared.next.fetch_add(1, Ordering::Relaxed);
        let Some(relative) = shared.paths.get(index) else {
            break;
        };
        let path = shared.root.join(relative);
        let lines = search_file(&path, shared.matcher, &mut searcher, &mut buffer)?;
        record_progress(shared, index, lines.len());
        if !lines.is_empty() {
            found.push((index, lines));
        }
    }
    Ok(found)
}

fn record_progress(shared: &Shared<'_>, index: usize, count: usize) {
    let Some(progress) = &shared.progress else {
        return;
    };
    let Ok(mut progress) = progress.lock() else {
        return;
    };
    progress.counts[index] = Some(count);
    while let Some(Some(count)) = progress.counts.get(progress.settled_files).copied() {
        progress.settled_files += 1;
        progress.settled_matches += count;
    }
    if progress.settled_matches >= shared.limit {
        shared.enough.store(true, Ordering::Relaxed);
    }
}

/// Keeps the first `limit` matching lines (files are already in path order).
fn truncate_total(found: &mut Vec<FileMatches>, limit: usize) {
    let mut left = limit;
    found.retain_mut(|file| {
        file.lines.truncate(left);
        left -= file.lines.len();
        !file.lines.is_empty()
    });
}

#[cfg(test)]
mod tests;
