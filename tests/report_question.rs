//! `dedupbench report DIR --n N --memory SIZE --fpr P` re-asks the run's question of the same results:
//! on a copy of the committed reference run, the first screen must state the question it answers and
//! whether it was re-asked, lead with a pick for the n asked, and the regime map must mark that n and
//! budget; `analysis.json` stays the run's. Every page, re-asked or the run's own, speaks one unit family
//! (no decimal gigabytes), one rate format (no scientific notation) and ISO 8601 dates.

mod common;

use std::path::{Path, PathBuf};

fn reference() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("reports/reference")
}

/// A fresh folder holding the reference run's results only.
fn copy_of_the_reference() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        reference().join("results.jsonl"),
        dir.path().join("results.jsonl"),
    )
    .unwrap();
    dir
}

/// `dedupbench report DIR ARGS`: its exit code and stderr.
fn report(dir: &Path, args: &[&str]) -> (Option<i32>, String) {
    let out = common::dedupbench()
        .arg("report")
        .arg(dir)
        .args(args)
        .output()
        .unwrap();
    (out.status.code(), common::stderr(&out))
}

/// The first screen's markup: the answer section.
fn answer_section(html: &str) -> &str {
    let start = html
        .find("<section id=\"answer\">")
        .expect("an answer section");
    let end = start + html[start..].find("</section>").expect("its end");
    &html[start..end]
}

/// The page's text: tags dropped, the style sheet too, entities of the escaper undone.
fn text_of(html: &str) -> String {
    let body = &html[html.find("</style>").map_or(0, |i| i + 8)..];
    let mut text = String::with_capacity(body.len());
    let mut in_tag = false;
    for c in body.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => {
                in_tag = false;
                text.push(' ');
            }
            _ if !in_tag => text.push(c),
            _ => {}
        }
    }
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&")
}

/// What the page's text says in another unit family or format than the page's own: decimal byte units
/// (`25 GB`, `5GB`), numbers in scientific notation (`1.00e-2`), Unix times and "1 in 18.4G" rates.
fn leaks(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let words: Vec<&str> = text.split_whitespace().collect();
    let number = |w: &str| {
        let w = w.trim_start_matches(['(', '[', '≈']);
        !w.is_empty() && w.chars().all(|c| c.is_ascii_digit() || c == '.')
    };
    for (i, word) in words.iter().enumerate() {
        let bare = word.trim_end_matches([',', '.', ';', ':', ')', ']']);
        for unit in ["kB", "MB", "GB", "TB"] {
            let glued = bare
                .strip_suffix(unit)
                .is_some_and(|n| number(n) && !n.is_empty());
            let spaced = bare == unit && i > 0 && number(words[i - 1]);
            if glued || spaced {
                found.push(format!(
                    "decimal unit: {} {word}",
                    words[i.saturating_sub(1)]
                ));
            }
        }
        let chars: Vec<char> = bare.chars().collect();
        for at in 1..chars.len().saturating_sub(2) {
            let sign = chars[at + 1] == '-' || chars[at + 1] == '+';
            if chars[at] == 'e'
                && chars[at - 1].is_ascii_digit()
                && sign
                && chars[at + 2].is_ascii_digit()
            {
                found.push(format!("scientific notation: {word}"));
            }
        }
        if *word == "Unix" && words.get(i + 1) == Some(&"time") {
            found.push("a Unix time".into());
        }
        // "1 in 18.4G" is a rate; "1 in 20" in a sentence is not.
        let count_with_suffix = |w: &str| {
            let w = w.trim_end_matches([',', '.', ';', ')']);
            w.starts_with(|c: char| c.is_ascii_digit()) && w.ends_with(['k', 'M', 'G', 'T'])
        };
        if *word == "1"
            && words.get(i + 1) == Some(&"in")
            && words.get(i + 2).is_some_and(|w| count_with_suffix(w))
        {
            found.push(format!("a '1 in' rate: 1 in {}", words[i + 2]));
        }
    }
    found
}

#[test]
fn the_leak_scan_finds_what_it_looks_for() {
    let bad =
        "budget 25 GB and 5GB; rate 1.00e-2, [0, 1.921e-6] at Unix time 1796552334, 1 in 18.4G";
    let found = leaks(bad);
    assert_eq!(found.len(), 6, "{found:?}");
    assert!(leaks("23.0 GiB, 1.00%, 251 per million, 2026-12-07T02:54:57Z, 1 in 20.").is_empty());
}

#[test]
fn a_re_asked_report_answers_the_question_asked_and_marks_it_on_the_map() {
    let dir = copy_of_the_reference();
    let (code, stderr) = report(dir.path(), &["--n", "2G", "--memory", "16GiB"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("re-asked with --n 2G --memory 16GiB"),
        "{stderr}"
    );
    let html = std::fs::read_to_string(dir.path().join("index.html")).unwrap();
    let first = answer_section(&html);
    // The question, and that it was re-asked with these flags; the rate is the run's.
    for piece in [
        "The answer: Crawl (insert-if-new over a stream), n = 2G, p = 1.00%, memory budget 16.0 GiB",
        "re-asked with <code>--n 2G --memory 16GiB</code>",
        "n = 2G (asked)",
        "p = 1.00% (the run's)",
        "memory budget 16.0 GiB (asked)",
    ] {
        assert!(first.contains(piece), "the first screen lacks {piece:?}: {first}");
    }
    // A pick for it, in words and as the table's first row: 2·10⁹ keys at 1% outgrow 16 GiB as exact
    // sets (≥ 18 bytes per key) and fit as a Bloom filter (1.2 bytes per key).
    assert!(
        first.contains("<p id=\"pick\" class=\"pick\"><b>For n = 2G: bloom</b>"),
        "{first}"
    );
    let rows: Vec<&str> = first.split("<tr").skip(2).collect();
    assert!(
        rows[0].starts_with(" class=\"asked\"><td>2G</td><td>bloom</td>"),
        "the table leads with the n asked: {}",
        rows[0]
    );
    // The developer targets are not on the first screen.
    assert!(!first.contains("id=\"missed\""));
    assert!(html.contains("id=\"missed\""));
    // The map marks the question's point.
    let map = std::fs::read_to_string(dir.path().join("regime_map.svg")).unwrap();
    assert!(
        map.contains("× your question: n = 2G, 16.0 GiB") && !map.contains("(off the map)"),
        "{:.400}",
        map
    );
    assert_eq!(map.matches(r#"r="10""#).count(), 2, "the ringed cross");
    // The analysis is the run's, whatever the question.
    assert_eq!(
        std::fs::read(dir.path().join("analysis.json")).unwrap(),
        std::fs::read(reference().join("analysis.json")).unwrap()
    );
    let found = leaks(&text_of(&html));
    assert!(found.is_empty(), "{found:?}");

    // Without flags the page answers the run's own question again, and its map marks the run's point.
    let (code, stderr) = report(dir.path(), &[]);
    assert_eq!(code, Some(0), "{stderr}");
    let html = std::fs::read_to_string(dir.path().join("index.html")).unwrap();
    let first = answer_section(&html);
    assert!(
        first.contains("The question: this run's own: n = 10M (the run's largest scale), p = 1.00% (the run's), memory budget 23.0 GiB (the run's)"),
        "{first}"
    );
    assert!(!first.contains("re-asked"));
    let map = std::fs::read_to_string(dir.path().join("regime_map.svg")).unwrap();
    assert!(
        map.contains("× this run&apos;s question: n = 10M, 23.0 GiB"),
        "{:.400}",
        map
    );
}

#[test]
fn a_rate_re_asked_is_answered_at_that_rate_and_a_bad_one_is_refused() {
    let dir = copy_of_the_reference();
    let (code, stderr) = report(dir.path(), &["--fpr", "0.02", "--memory", "100MiB"]);
    assert_eq!(code, Some(0), "{stderr}");
    let html = std::fs::read_to_string(dir.path().join("index.html")).unwrap();
    let first = answer_section(&html);
    for piece in [
        "n = 10M (the run's largest scale), p = 2.00% (asked), memory budget 100 MiB (asked)",
        "<b>For n = 10M: bloom</b>",
    ] {
        assert!(
            first.contains(piece),
            "the first screen lacks {piece:?}: {first}"
        );
    }
    // The run's bloom at 10M was built for 1%: its bytes and rate are not this rate's (projected from
    // the formula), its speed is quoted as built for the run's rate.
    let asked = first
        .split("<tr class=\"asked\">")
        .nth(1)
        .and_then(|row| row.split("</tr>").next())
        .expect("the asked row");
    assert!(
        asked.contains("projected") && asked.contains("built for the run's p = 1.00%"),
        "{asked}"
    );
    let map = std::fs::read_to_string(dir.path().join("regime_map.svg")).unwrap();
    assert!(map.contains("Regime map at p = 2.00%"));
    let found = leaks(&text_of(&html));
    assert!(found.is_empty(), "{found:?}");

    // A question no parser accepts is refused before anything is written.
    let before = std::fs::read(dir.path().join("index.html")).unwrap();
    for args in [["--fpr", "2"], ["--n", "0"], ["--memory", "0"]] {
        let (code, stderr) = report(dir.path(), &args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(args[0]), "{stderr}");
    }
    assert_eq!(
        std::fs::read(dir.path().join("index.html")).unwrap(),
        before
    );
}

#[test]
fn the_committed_pages_speak_one_unit_family_and_one_rate_format() {
    for page in [
        reference().join("index.html"),
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/skips-and-scenario/index.html"),
    ] {
        let html = std::fs::read_to_string(&page).unwrap();
        let found = leaks(&text_of(&html));
        assert!(found.is_empty(), "{}: {found:?}", page.display());
        assert!(html.contains("1 GiB = 2³⁰ bytes"), "{}", page.display());
    }
}

/// The design review's fleet: 2·10⁹ URLs over 20 machines of 16 GiB, partitioned by host. The first
/// screen prices each design and leads with exact fingerprints on each machine (≈ 195M keys, a little
/// over 2 GiB each, nothing lost), above the filters that lose pages; a fleet is refused for a run
/// whose workload a fleet does not split, before anything is written.
#[test]
fn a_fleet_re_asked_is_priced_on_the_first_screen() {
    let dir = copy_of_the_reference();
    let args = ["--n", "2G", "--memory", "16GiB", "--machines", "20"];
    let (code, stderr) = report(dir.path(), &args);
    assert_eq!(code, Some(0), "{stderr}");
    let html = std::fs::read_to_string(dir.path().join("index.html")).unwrap();
    let first = answer_section(&html);
    for piece in [
        "re-asked with <code>--n 2G --memory 16GiB --machines 20</code>",
        "crawled by 20 machines of 16.0 GiB each, partitioned by host (asked)",
        "<b>Across 20 machines of 16.0 GiB each, partitioned by host: fingerprint on each machine</b>",
    ] {
        assert!(first.contains(piece), "the first screen lacks {piece:?}: {first}");
    }
    let fleet = &first[first.find("<div id=\"fleet\">").expect("the fleet")..];
    let fleet = &fleet[..fleet.find("</div>").unwrap()];
    // The fleet comes before the ladder and the table of scales: it is the question's answer.
    assert!(first.find("<div id=\"fleet\">") < first.find("id=\"ladder\""));
    let rows: Vec<&str> = fleet.split("<tr>").skip(2).collect();
    assert!(rows.len() >= 4, "{fleet}");
    // Best first: exact on each machine, ranked 1, holding the fullest machine's share (≥ n/M).
    let cells = |row: &str| -> Vec<String> {
        row.split("<td>")
            .skip(1)
            .map(|c| c.split("</td>").next().unwrap_or(c))
            .map(|c| text_of(&format!("</style>{c}")).trim().to_string())
            .collect()
    };
    let best = cells(rows[0]);
    assert!(
        best[0] == "1." && best[1].starts_with("fingerprint on each machine"),
        "{best:?}"
    );
    let keys = dedupbench::units::parse_count(&best[2]).unwrap();
    // The fullest machine's share: 1.95 × 2G/20 (the host skew of a fixed sample), to the page's 3 digits.
    assert_eq!(keys, 195_000_000, "{best:?}");
    assert!(
        best[3].ends_with("GiB") && best[6].starts_with('≈'),
        "{best:?}"
    );
    let lost: f64 = best[6].trim_start_matches("≈ ").parse().unwrap();
    assert!(lost < 1.0, "{best:?}");
    // A Bloom filter on each machine and one shared on Redis lose pages; the shared one's loss is
    // larger (one filter filling to n), and each shared row says the round trips a batch costs.
    let row_of = |prefix: &str| {
        rows.iter()
            .map(|r| cells(r))
            .find(|c| c[1].starts_with(prefix))
            .unwrap_or_else(|| panic!("no {prefix} row: {fleet}"))
    };
    let count = |c: &str| dedupbench::units::parse_count(c.trim_start_matches("≈ ")).unwrap();
    let (local, shared) = (
        row_of("bloom on each machine"),
        row_of("redis-bloom shared"),
    );
    assert!(
        count(&local[6]) > 1_000 && count(&shared[6]) > count(&local[6]),
        "{local:?} {shared:?}"
    );
    assert_eq!(shared[5], "1 per 1024 URLs", "{shared:?}");
    assert!(
        fleet.contains("The fullest machine sees 1.95× n/M (measured: "),
        "{fleet}"
    );
    let found = leaks(&text_of(&html));
    assert!(found.is_empty(), "{found:?}");

    // A run of another workload has no fleet to price: refused, nothing written.
    let blocklist = tempfile::tempdir().unwrap();
    let results = std::fs::read_to_string(reference().join("results.jsonl")).unwrap();
    let results = results.replacen(
        "\"record\":\"run\",",
        "\"record\":\"run\",\"workload\":\"blocklist\",",
        1,
    );
    std::fs::write(blocklist.path().join("results.jsonl"), results).unwrap();
    let (code, stderr) = report(blocklist.path(), &["--machines", "20"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("--machines") && stderr.contains("crawl"),
        "{stderr}"
    );
    assert!(!blocklist.path().join("index.html").exists());
    // --partition and --machine-memory describe the machines: without --machines they are refused.
    let (code, stderr) = report(dir.path(), &["--partition", "url"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("--machines"), "{stderr}");
}
