//! Fuzzy file-path finding ("open the file named like …"), fzf-style.
//!
//! Scoring is nucleo's (the matcher behind the Helix editor, fzf's algorithm with
//! path-aware bonuses). The query is fzf syntax: space-separated terms that must
//! all match; `'exact`, `^prefix`, `suffix$` and `!negated` terms are understood.
//! Ties are broken by shorter path, then by path order, so rankings are stable.

use crate::cancel::Cancel;
use crate::errors::NativeResult;
use crate::walk::{walk, WalkOptions};
use nucleo_matcher::pattern::{CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher, Utf32Str};
use std::path::Path;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scored {
    pub path: String,
    pub score: u32,
    /// Character positions in `path` that the query matched, ascending.
    pub positions: Vec<u32>,
}

/// The best `limit` paths for `query`, best first.
pub fn rank(paths: impl IntoIterator<Item = String>, query: &str, limit: usize) -> Vec<Scored> {
    let pattern = Pattern::parse(query, CaseMatching::Smart, Normalization::Smart);
    let mut matcher = Matcher::new(Config::DEFAULT.match_paths());
    let mut buffer = Vec::new();
    let mut scored: Vec<(u32, usize, String)> = paths
        .into_iter()
        .filter_map(|path| {
            let score = pattern.score(Utf32Str::new(&path, &mut buffer), &mut matcher)?;
            Some((score, path.chars().count(), path))
        })
        .collect();
    scored.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    scored.truncate(limit);
    scored
        .into_iter()
        .map(|(score, _, path)| {
            let mut positions = Vec::new();
            pattern.indices(
                Utf32Str::new(&path, &mut buffer),
                &mut matcher,
                &mut positions,
            );
            positions.sort_unstable();
            positions.dedup();
            Scored {
                path,
                score,
                positions,
            }
        })
        .collect()
}

/// Walks `root` and ranks its files against `query`.
pub fn find_files(
    root: &Path,
    query: &str,
    options: &WalkOptions,
    limit: usize,
    cancel: &Cancel,
) -> NativeResult<Vec<Scored>> {
    let paths = walk(root, options, cancel)?;
    let names = paths
        .into_iter()
        .map(|path| path.to_string_lossy().into_owned());
    Ok(rank(names, query, limit))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(list: &[&str]) -> Vec<String> {
        list.iter().map(|p| p.to_string()).collect()
    }

    #[test]
    fn abbreviations_rank_the_intended_file_first() {
        let list = paths(&[
            "tasks_app/models.py",
            "tasks_app/workers.py",
            "tasks_app/tasks.py",
            "docs/workflows.md",
            "sf_web/wsgi.py",
            "agents_app/runtime/workspace.py",
        ]);
        let ranked = rank(list, "wkrs py", 10);
        assert_eq!(ranked[0].path, "tasks_app/workers.py");
        assert!(ranked.iter().all(|r| r.path.ends_with(".py")));
    }

    #[test]
    fn every_term_must_match_and_positions_point_at_it() {
        let ranked = rank(paths(&["src/main.rs", "src/lib.rs"]), "main", 10);
        assert_eq!(ranked.len(), 1);
        assert_eq!(ranked[0].positions, [4, 5, 6, 7]);
        assert!(rank(paths(&["src/main.rs"]), "main zzz", 10).is_empty());
    }

    #[test]
    fn ties_break_by_length_then_path_and_limit_applies() {
        let ranked = rank(paths(&["b/x.txt", "a/x.txt", "aa/x.txt"]), "x", 2);
        let order: Vec<&str> = ranked.iter().map(|r| r.path.as_str()).collect();
        assert_eq!(order, ["a/x.txt", "b/x.txt"]);
    }

    #[test]
    fn an_empty_query_lists_short_paths_first() {
        let ranked = rank(paths(&["long/path.txt", "a.txt"]), "", 10);
        assert_eq!(ranked[0].path, "a.txt");
        assert_eq!(ranked[0].score, 0);
    }
}
