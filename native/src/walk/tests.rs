use super::*;
use std::fs;

fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for (path, text) in files {
        let full = dir.path().join(path);
        fs::create_dir_all(full.parent().expect("parent")).expect("mkdir");
        fs::write(full, text).expect("write");
    }
    dir
}

fn names(paths: Vec<PathBuf>) -> Vec<String> {
    paths
        .into_iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect()
}

fn respecting() -> WalkOptions {
    WalkOptions {
        respect_ignore: true,
        ..WalkOptions::default()
    }
}

#[test]
fn gitignore_rules_apply_inside_a_repository() {
    let dir = tree(&[
        (".git/HEAD", "ref: refs/heads/main\n"),
        (".git/info/exclude", "excluded.txt\n"),
        (".gitignore", "*.log\nbuild/\n"),
        ("src/.gitignore", "generated.rs\n"),
        ("src/main.rs", ""),
        ("src/generated.rs", ""),
        ("app.log", ""),
        ("build/out.o", ""),
        ("excluded.txt", ""),
        (".hidden", ""),
        ("README", ""),
    ]);
    let found = names(walk(dir.path(), &respecting(), &Cancel::new()).expect("walk"));
    assert_eq!(found, ["README", "src/main.rs"]);
    let hidden = WalkOptions {
        hidden: true,
        ..respecting()
    };
    let found = names(walk(dir.path(), &hidden, &Cancel::new()).expect("walk"));
    assert_eq!(
        found,
        [
            ".gitignore",
            ".hidden",
            "README",
            "src/.gitignore",
            "src/main.rs"
        ]
    );
}

#[test]
fn without_ignore_files_everything_but_git_and_hidden_is_listed() {
    let dir = tree(&[
        (".git/HEAD", ""),
        (".gitignore", "*.log\n"),
        ("app.log", ""),
        ("b/c.txt", ""),
    ]);
    let options = WalkOptions::default();
    let found = names(walk(dir.path(), &options, &Cancel::new()).expect("walk"));
    assert_eq!(found, ["app.log", "b/c.txt"]);
    let hidden = WalkOptions {
        hidden: true,
        ..options
    };
    let found = names(walk(dir.path(), &hidden, &Cancel::new()).expect("walk"));
    assert_eq!(found, [".gitignore", "app.log", "b/c.txt"]);
}

#[test]
fn include_exclude_and_depth() {
    let dir = tree(&[
        ("a.py", ""),
        ("a.txt", ""),
        ("pkg/b.py", ""),
        ("pkg/deep/c.py", ""),
        ("node_modules/x.py", ""),
    ]);
    let options = WalkOptions {
        include: vec!["*.py".into()],
        exclude: vec!["node_modules".into(), "pkg/deep/".into()],
        ..WalkOptions::default()
    };
    let found = names(walk(dir.path(), &options, &Cancel::new()).expect("walk"));
    assert_eq!(found, ["a.py", "pkg/b.py"]);
    let shallow = WalkOptions {
        max_depth: Some(1),
        ..WalkOptions::default()
    };
    let found = names(walk(dir.path(), &shallow, &Cancel::new()).expect("walk"));
    assert_eq!(found, ["a.py", "a.txt"]);
}

#[test]
fn glob_matches_the_whole_relative_path() {
    let dir = tree(&[("a.py", ""), ("pkg/b.py", ""), ("pkg/sub/c.py", "")]);
    let options = WalkOptions::default();
    let cancel = Cancel::new();
    let top = names(glob(dir.path(), "*.py", &options, &cancel).expect("glob"));
    assert_eq!(top, ["a.py"]);
    let all = names(glob(dir.path(), "**/*.py", &options, &cancel).expect("glob"));
    assert_eq!(all, ["a.py", "pkg/b.py", "pkg/sub/c.py"]);
    let one = names(glob(dir.path(), "pkg/*.py", &options, &cancel).expect("glob"));
    assert_eq!(one, ["pkg/b.py"]);
}

#[test]
fn errors_name_the_problem() {
    let dir = tree(&[("file", "")]);
    let options = WalkOptions::default();
    let missing = walk(&dir.path().join("nope"), &options, &Cancel::new());
    assert!(matches!(missing, Err(NativeFailure::NotFound(_))));
    let file = walk(&dir.path().join("file"), &options, &Cancel::new());
    assert!(matches!(file, Err(NativeFailure::NotADirectory(_))));
    let bad = WalkOptions {
        include: vec!["a[".into()],
        ..WalkOptions::default()
    };
    assert!(matches!(
        walk(dir.path(), &bad, &Cancel::new()),
        Err(NativeFailure::InvalidValue(_))
    ));
}

#[test]
fn a_cancelled_walk_reports_interrupted() {
    let dir = tree(&[("a", "")]);
    let cancel = Cancel::new();
    cancel.cancel();
    assert_eq!(
        walk(dir.path(), &WalkOptions::default(), &cancel),
        Err(NativeFailure::Interrupted)
    );
}

#[cfg(unix)]
#[test]
fn symlinks_are_skipped_unless_followed() {
    let dir = tree(&[("real/a.txt", "")]);
    std::os::unix::fs::symlink(dir.path().join("real"), dir.path().join("link")).expect("link");
    let found = names(walk(dir.path(), &WalkOptions::default(), &Cancel::new()).expect("walk"));
    assert_eq!(found, ["real/a.txt"]);
    let follow = WalkOptions {
        follow_links: true,
        ..WalkOptions::default()
    };
    let found = names(walk(dir.path(), &follow, &Cancel::new()).expect("walk"));
    assert_eq!(found, ["link/a.txt", "real/a.txt"]);
}
