//! Issue 14, "apply_patch is atomic as the SPEC says": every operation planned first (two
//! spellings of one file are one file), nothing written unless all succeed, then committed
//! with renames. On real files in temp dirs.

use std::os::unix::fs::symlink;
use std::path::Path;

use serde_json::json;
use toolnexus::builtin::{self, BuiltinsConfig};
use toolnexus::{ToolContext, ToolResult, Toolkit};

/// `apply_patch` with relative paths meaning `dir`.
async fn patch(dir: &Path, text: &str) -> ToolResult {
    let tk = Toolkit::new(builtin::select(&BuiltinsConfig::default().with_base_dir(dir)));
    tk.execute("apply_patch", json!({"patchText": text}), ToolContext::default())
        .await
}

/// Every path under `dir`, relative, sorted, with `/` after directories.
fn tree(dir: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path.strip_prefix(root).unwrap().to_str().unwrap().to_owned();
            if path.is_dir() && !path.is_symlink() {
                out.push(format!("{rel}/"));
                walk(root, &path, out);
            } else {
                out.push(rel);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// The issue's reproduction: an error after `Add File` left the new file behind.
#[tokio::test]
async fn an_error_after_add_file_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("keep.txt"), "keep\n").unwrap();
    let cases = [
        (
            "*** Begin Patch\n*** Add File: d/new.txt\n+new\n*** Update File: missing.txt\n-a\n+b\n*** End Patch",
            "apply_patch: file not found: missing.txt",
        ),
        (
            "*** Begin Patch\n*** Add File: d/new.txt\n+new\n*** Add File: d/new.txt/x.txt\n+x\n*** End Patch",
            "apply_patch: d/new.txt cannot be a file and also the directory of d/new.txt/x.txt",
        ),
        (
            "*** Begin Patch\n*** Add File: d/new.txt\n+new\n*** Add File: keep.txt/x.txt\n+x\n*** End Patch",
            "apply_patch: a parent of keep.txt/x.txt is a file, not a directory",
        ),
        (
            "*** Begin Patch\n*** Add File: d/new.txt\n+new\n*** Update File: keep.txt\n-nope\n+x\n*** End Patch",
            "apply_patch: hunk does not match file contents",
        ),
        (
            "*** Begin Patch\n*** Add File: d/new.txt\n+new\n*** Delete File: d\n*** End Patch",
            "apply_patch: file not found: d",
        ),
    ];
    for (text, want) in cases {
        let r = patch(dir.path(), text).await;
        assert_eq!(
            r.to_json(),
            json!({"output": want, "isError": true}).to_string(),
            "{text}"
        );
        assert_eq!(tree(dir.path()), ["keep.txt"], "{text}");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("keep.txt")).unwrap(),
            "keep\n"
        );
    }
}

/// The issue's reproduction: two spellings of one path corrupted it (each update read the
/// original, the last write won).
#[tokio::test]
async fn two_spellings_of_one_file_are_one_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "one\ntwo\nthree\n").unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    symlink(dir.path().join("a.txt"), dir.path().join("alias.txt")).unwrap();
    let text = "*** Begin Patch\n\
                *** Update File: a.txt\n-one\n+ONE\n\
                *** Update File: ./a.txt\n-two\n+TWO\n\
                *** Update File: sub/../a.txt\n-three\n+THREE\n\
                *** Update File: alias.txt\n+four\n\
                *** End Patch";
    let r = patch(dir.path(), text).await;
    assert_eq!(
        r.to_json(),
        r#"{"output":"Applied patch: 4 file operations","isError":false,"metadata":{"added":0,"updated":4,"deleted":0,"#.to_owned()
            // One file in the change metadata too, named as the patch first named it.
            + r#""files":[{"path":"a.txt","status":"modified","additions":4,"deletions":3}],"#
            + r#""diff":"--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,4 @@\n-one\n-two\n-three\n+ONE\n+TWO\n+THREE\n+four\n\\ No newline at end of file\n"}}"#
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "ONE\nTWO\nTHREE\nfour"
    );
    // The update went through the symlink, which is still one.
    assert!(
        std::fs::symlink_metadata(dir.path().join("alias.txt"))
            .unwrap()
            .is_symlink()
    );
    // Add then update, delete then add: each sees what the patch did before it.
    let text = "*** Begin Patch\n\
                *** Add File: n.txt\n+x\n\
                *** Update File: ./n.txt\n-x\n+y\n\
                *** Delete File: a.txt\n\
                *** Add File: ./a.txt\n+fresh\n\
                *** End Patch";
    let r = patch(dir.path(), text).await;
    assert_eq!(r.output, "Applied patch: 4 file operations");
    assert_eq!(std::fs::read_to_string(dir.path().join("n.txt")).unwrap(), "y");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "fresh"
    );
    // Adding what the patch already added is caught under either spelling.
    let r = patch(
        dir.path(),
        "*** Begin Patch\n*** Add File: m.txt\n+1\n*** Add File: ./m.txt\n+2\n*** End Patch",
    )
    .await;
    assert_eq!(r.output, "apply_patch: file already exists: ./m.txt");
    assert!(!dir.path().join("m.txt").exists());
    assert_eq!(tree(dir.path()), ["a.txt", "alias.txt", "n.txt", "sub/"]);
}

#[tokio::test]
async fn deleting_a_symlink_deletes_the_link_not_its_target() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("target.txt"), "t\n").unwrap();
    symlink("target.txt", dir.path().join("link.txt")).unwrap();
    let r = patch(
        dir.path(),
        "*** Begin Patch\n*** Delete File: link.txt\n*** End Patch",
    )
    .await;
    assert_eq!(r.output, "Applied patch: 1 file operation");
    assert_eq!(tree(dir.path()), ["target.txt"]);
    // A directory is not a file to delete or update.
    std::fs::create_dir(dir.path().join("d")).unwrap();
    for text in [
        "*** Begin Patch\n*** Delete File: d\n*** End Patch",
        "*** Begin Patch\n*** Update File: d\n+x\n*** End Patch",
    ] {
        let r = patch(dir.path(), text).await;
        assert_eq!(r.output, "apply_patch: d is a directory, not a file");
    }
}

/// Confined, each file of a patch is checked before anything is written.
#[tokio::test]
async fn a_confined_patch_with_one_path_outside_writes_nothing() {
    let base = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    symlink(outside.path(), base.path().join("out")).unwrap();
    let tk = Toolkit::new(builtin::select(
        &BuiltinsConfig::default()
            .with_base_dir(base.path())
            .confined(true),
    ));
    let text = "*** Begin Patch\n*** Add File: ok.txt\n+ok\n*** Add File: out/evil.txt\n+x\n*** End Patch";
    let r = tk
        .execute("apply_patch", json!({"patchText": text}), ToolContext::default())
        .await;
    assert_eq!(
        r.output,
        format!(
            "apply_patch: out/evil.txt resolves outside baseDir {}",
            base.path().display()
        )
    );
    assert_eq!(tree(base.path()), ["out"]);
    assert_eq!(tree(outside.path()), Vec::<String>::new());
}
