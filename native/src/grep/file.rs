//! Searching one file's bytes and turning the searcher's callbacks into records.

use grep_matcher::Matcher;
use grep_regex::RegexMatcher;
use grep_searcher::{Searcher, Sink, SinkContext, SinkMatch};
use std::fs::File;
use std::io::Read;
use std::path::Path;

/// How much of a file is read before the first binary check: most binary files
/// show a NUL byte at once, so they cost one small read, not a whole one.
const FIRST_CHUNK: u64 = 64 * 1024;

/// One matching line with its context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineMatch {
    /// 1-based.
    pub line_number: u64,
    /// 1-based, in characters, of the first match on the line.
    pub column: usize,
    /// The line without its `\n` (or `\r\n`); invalid UTF-8 becomes U+FFFD.
    pub text: String,
    /// Up to `before` lines just above, in order.
    pub before: Vec<String>,
    /// Up to `after` lines just below, in order.
    pub after: Vec<String>,
}

/// Reads `path` (a regular file, as the walk found it) into `buffer`; `Ok(false)`
/// for a binary file (a NUL byte anywhere).
///
/// No `fstat`: the walk already knows the file type, and anything swapped in since
/// cannot hurt — a FIFO is opened non-blocking, a directory fails to read.
pub fn read_text(path: &Path, buffer: &mut Vec<u8>) -> std::io::Result<bool> {
    buffer.clear();
    let mut file = open_nonblocking(path)?;
    let first = (&mut file).take(FIRST_CHUNK).read_to_end(buffer)?;
    if memchr::memchr(0, buffer).is_some() {
        return Ok(false);
    }
    if (first as u64) < FIRST_CHUNK {
        return Ok(true); // the whole file, without another read to find its end
    }
    file.read_to_end(buffer)?;
    Ok(memchr::memchr(0, &buffer[first..]).is_none())
}

/// Opening with O_NONBLOCK means a FIFO swapped in after the walk cannot hang us.
#[cfg(unix)]
fn open_nonblocking(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
}

#[cfg(not(unix))]
fn open_nonblocking(path: &Path) -> std::io::Result<File> {
    File::open(path)
}

/// The matching lines of `bytes` (with context, as configured on `searcher`).
///
/// Our sink never fails, so an error means the searcher and matcher disagree
/// about their configuration (a bug, reported rather than hidden).
pub fn search_bytes(
    matcher: &RegexMatcher,
    searcher: &mut Searcher,
    bytes: &[u8],
) -> std::io::Result<Vec<LineMatch>> {
    let mut seen = Seen {
        matcher,
        haystack: bytes,
        counted: (0, 1),
        lines: Vec::new(),
        matches_left: searcher.max_matches().unwrap_or(u64::MAX),
    };
    searcher.search_slice(matcher, bytes, &mut seen)?;
    Ok(records(
        &seen.lines,
        searcher.before_context(),
        searcher.after_context(),
    ))
}

/// A line the searcher reported: a match (with its column) or context.
struct SeenLine {
    number: u64,
    text: String,
    column: Option<usize>,
}

struct Seen<'m> {
    matcher: &'m RegexMatcher,
    /// The searched bytes, and how far line numbers are counted in them (offset,
    /// line number there). The searcher does not count lines (that would be a
    /// pass over every file); we count only up to the lines it reports.
    haystack: &'m [u8],
    counted: (usize, u64),
    lines: Vec<SeenLine>,
    /// The searcher stops after its limit but reports the after-context lines
    /// that also match as matches; past the limit they are context.
    matches_left: u64,
}

impl Seen<'_> {
    /// The 1-based number of the line starting at `offset` (reported lines come in
    /// order, so counting resumes where it stopped).
    fn line_number(&mut self, offset: u64) -> u64 {
        let offset =
            usize::try_from(offset).map_or(self.haystack.len(), |o| o.min(self.haystack.len()));
        let (from, number) = self.counted;
        let number = if offset >= from {
            number + memchr::memchr_iter(b'\n', &self.haystack[from..offset]).count() as u64
        } else {
            1 + memchr::memchr_iter(b'\n', &self.haystack[..offset]).count() as u64
        };
        self.counted = (offset, number);
        number
    }

    fn push(&mut self, offset: u64, raw: &[u8], is_match: bool) {
        let number = self.line_number(offset);
        let is_match = is_match && self.matches_left > 0;
        if is_match {
            self.matches_left -= 1;
        }
        let line = strip_terminator(raw);
        let column = is_match.then(|| self.column(line));
        self.lines.push(SeenLine {
            number,
            text: String::from_utf8_lossy(line).into_owned(),
            column,
        });
    }

    fn column(&self, line: &[u8]) -> usize {
        let start = match self.matcher.find(line) {
            Ok(Some(found)) => found.start(),
            _ => 0,
        };
        String::from_utf8_lossy(&line[..start]).chars().count() + 1
    }
}

impl Sink for Seen<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, found: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        self.push(found.absolute_byte_offset(), found.bytes(), true);
        Ok(true)
    }

    fn context(&mut self, _: &Searcher, context: &SinkContext<'_>) -> Result<bool, Self::Error> {
        self.push(context.absolute_byte_offset(), context.bytes(), false);
        Ok(true)
    }
}

fn strip_terminator(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// Turns the reported lines into one record per match, each with its own context.
fn records(lines: &[SeenLine], before: usize, after: usize) -> Vec<LineMatch> {
    let mut out = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        let Some(column) = line.column else { continue };
        out.push(LineMatch {
            line_number: line.number,
            column,
            text: line.text.clone(),
            before: neighbours(lines[..index].iter().rev(), line.number, before, |n| {
                n.checked_sub(1)
            })
            .into_iter()
            .rev()
            .collect(),
            after: neighbours(lines[index + 1..].iter(), line.number, after, |n| {
                n.checked_add(1)
            }),
        });
    }
    out
}

/// Up to `limit` lines that directly follow `from` in the direction `step` goes.
fn neighbours<'a>(
    lines: impl Iterator<Item = &'a SeenLine>,
    from: u64,
    limit: usize,
    step: impl Fn(u64) -> Option<u64>,
) -> Vec<String> {
    let mut expected = step(from);
    let mut out = Vec::new();
    for line in lines.take(limit) {
        if Some(line.number) != expected {
            break;
        }
        out.push(line.text.clone());
        expected = step(line.number);
    }
    out
}
