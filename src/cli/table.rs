//! Text tables: columns as wide as their widest cell, so long ids (`qfilter-resizable`,
//! `redis-bloom-scaling`) never push a row out of line.

/// Pads every column of `rows` to its widest cell (the columns in `right` to the right, the others to
/// the left), two spaces apart, each line indented by `indent`. A row shorter than the widest one ends
/// in a cell that spills past the columns (a reason in place of figures): that cell does not widen its
/// column.
pub fn aligned(rows: &[Vec<String>], right: &[usize], indent: &str) -> Vec<String> {
    let full = rows.iter().map(Vec::len).max().unwrap_or(0);
    let counted = |r: &Vec<String>| {
        if r.len() == full {
            r.len()
        } else {
            r.len().saturating_sub(1)
        }
    };
    let widths: Vec<usize> = (0..full)
        .map(|c| {
            rows.iter()
                .filter(|r| c < counted(r))
                .map(|r| r[c].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    rows.iter()
        .map(|r| {
            let cells: Vec<String> = r
                .iter()
                .enumerate()
                .map(|(c, cell)| {
                    if c >= counted(r) {
                        return cell.clone();
                    }
                    let pad = " ".repeat(widths[c] - cell.chars().count());
                    if right.contains(&c) {
                        format!("{pad}{cell}")
                    } else {
                        format!("{cell}{pad}")
                    }
                })
                .collect();
            format!("{indent}{}", cells.join("  ").trim_end())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(cells: &[&str]) -> Vec<String> {
        cells.iter().map(|c| c.to_string()).collect()
    }

    #[test]
    fn columns_line_up_whatever_the_name_lengths() {
        let lines = aligned(
            &[row(&["a", "1"]), row(&["qfilter-resizable", "12345"])],
            &[1],
            "",
        );
        assert_eq!(lines[0], "a                      1");
        assert_eq!(lines[1], "qfilter-resizable  12345");
    }

    #[test]
    fn a_short_rows_last_cell_spills_without_widening_its_column() {
        let lines = aligned(
            &[
                row(&["bloom", "1 MiB", "9.6"]),
                row(&["redis-bloom", "unavailable: no server"]),
            ],
            &[1, 2],
            "",
        );
        assert_eq!(lines[0], "bloom        1 MiB  9.6");
        assert_eq!(lines[1], "redis-bloom  unavailable: no server");
    }
}
