use super::*;
use std::fs;

fn search(pattern: &str, text: &str, options: &GrepOptions) -> Vec<LineMatch> {
    let matcher = build_matcher(pattern, options).expect("pattern");
    search_bytes(&matcher, &mut build_searcher(options), text.as_bytes()).expect("search")
}

fn numbers(found: &[LineMatch]) -> Vec<u64> {
    found.iter().map(|m| m.line_number).collect()
}

#[test]
fn finds_lines_columns_and_text() {
    let found = search("b+", "abc\nxyz\néébb\r\n", &GrepOptions::default());
    assert_eq!(numbers(&found), [1, 3]);
    assert_eq!(found[0].column, 2);
    assert_eq!(found[1].column, 3, "columns count characters, not bytes");
    assert_eq!(
        found[1].text, "éébb",
        "the CR of a CRLF line is not part of the text"
    );
}

#[test]
fn case_modes() {
    let text = "Foo\nfoo\nFOO\n";
    let insensitive = GrepOptions {
        case: CaseMode::Insensitive,
        ..GrepOptions::default()
    };
    let smart = GrepOptions {
        case: CaseMode::Smart,
        ..GrepOptions::default()
    };
    assert_eq!(numbers(&search("foo", text, &GrepOptions::default())), [2]);
    assert_eq!(numbers(&search("foo", text, &insensitive)), [1, 2, 3]);
    assert_eq!(numbers(&search("foo", text, &smart)), [1, 2, 3]);
    assert_eq!(numbers(&search("Foo", text, &smart)), [1]);
}

#[test]
fn fixed_strings_and_words() {
    let fixed = GrepOptions {
        fixed: true,
        ..GrepOptions::default()
    };
    assert_eq!(numbers(&search("a.c", "abc\na.c\n", &fixed)), [2]);
    let word = GrepOptions {
        word: true,
        ..GrepOptions::default()
    };
    assert_eq!(numbers(&search("cat", "cats\na cat.\n", &word)), [2]);
}

#[test]
fn context_lines_belong_to_each_match() {
    let text = "1\n2\nm3\n4\nm5\n6\n7\n";
    let options = GrepOptions {
        before: 2,
        after: 1,
        ..GrepOptions::default()
    };
    let found = search("^m", text, &options);
    assert_eq!(found[0].before, ["1", "2"]);
    assert_eq!(found[0].after, ["4"]);
    assert_eq!(
        found[1].before,
        ["m3", "4"],
        "a neighbouring match is context too"
    );
    assert_eq!(found[1].after, ["6"]);
}

#[test]
fn per_file_limit_keeps_trailing_context() {
    let options = GrepOptions {
        max_per_file: Some(1),
        after: 1,
        ..GrepOptions::default()
    };
    let found = search("x", "x1\nx2\nx3\n", &options);
    assert_eq!(numbers(&found), [1]);
    assert_eq!(found[0].after, ["x2"]);
}

#[test]
fn a_pattern_cannot_match_across_lines() {
    assert!(build_matcher("a\nb", &GrepOptions::default()).is_err());
    assert!(search("a\\sb", "a\nb\n", &GrepOptions::default()).is_empty());
    assert!(matches!(
        build_matcher("(", &GrepOptions::default()),
        Err(NativeFailure::InvalidValue(_))
    ));
}

fn tree(files: &[(&str, &[u8])]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for (path, bytes) in files {
        let full = dir.path().join(path);
        fs::create_dir_all(full.parent().expect("parent")).expect("mkdir");
        fs::write(full, bytes).expect("write");
    }
    dir
}

#[test]
fn walks_skip_binary_files_and_keep_path_order() {
    let mut late_nul = b"hit\n".repeat(40_000);
    late_nul.push(0);
    let dir = tree(&[
        ("b.txt", b"hit\nmiss\nhit\n"),
        ("a.txt", b"hit\n"),
        ("bin.dat", b"hit\0\n"),
        ("late.dat", &late_nul),
        ("c/d.txt", b"nothing\n"),
    ]);
    let found = grep(dir.path(), "hit", &GrepOptions::default(), &Cancel::new()).expect("grep");
    let summary: Vec<(String, Vec<u64>)> = found
        .iter()
        .map(|f| (f.path.to_string_lossy().into_owned(), numbers(&f.lines)))
        .collect();
    assert_eq!(
        summary,
        [
            ("a.txt".to_string(), vec![1]),
            ("b.txt".to_string(), vec![1, 3])
        ]
    );
}

#[test]
fn the_total_limit_keeps_the_first_matches_by_path() {
    let files: Vec<(String, Vec<u8>)> = (0..50)
        .map(|i| (format!("f{i:02}.txt"), b"x\nx\n".to_vec()))
        .collect();
    let borrowed: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(p, b)| (p.as_str(), b.as_slice()))
        .collect();
    let dir = tree(&borrowed);
    for threads in [1, 2, 4] {
        let options = GrepOptions {
            max_total: Some(5),
            walk: WalkOptions {
                threads,
                ..WalkOptions::default()
            },
            ..GrepOptions::default()
        };
        let found = grep(dir.path(), "x", &options, &Cancel::new()).expect("grep");
        let paths: Vec<String> = found
            .iter()
            .map(|f| f.path.to_string_lossy().into_owned())
            .collect();
        assert_eq!(paths, ["f00.txt", "f01.txt", "f02.txt"]);
        assert_eq!(found.iter().map(|f| f.lines.len()).sum::<usize>(), 5);
    }
}

#[test]
fn a_cancelled_search_reports_interrupted() {
    let dir = tree(&[("a.txt", b"x\n")]);
    let cancel = Cancel::new();
    cancel.cancel();
    assert_eq!(
        grep(dir.path(), "x", &GrepOptions::default(), &cancel),
        Err(NativeFailure::Interrupted)
    );
}
