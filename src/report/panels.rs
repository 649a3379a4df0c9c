//! Charts a person can read: at most [`MAX_SERIES`] structures per panel (dedupbench's own, the peer
//! crates, other languages' tools and the servers apart, each split further if it holds more), the same
//! colour for a structure on every chart ([`super::chart::colour`]), and the legend in a strip beside the
//! data, never over it.

use super::chart::DrawResult;
use crate::results::Results;
use plotters::coord::Shift;
use plotters::prelude::*;

/// Structures one panel carries at most.
pub const MAX_SERIES: usize = 8;
/// Width of every panelled image, in pixels.
pub const WIDTH: u32 = 1100;
/// Height of one panel, in pixels.
const PANEL_HEIGHT: u32 = 400;
/// Height of the title above the panels.
const TITLE_HEIGHT: u32 = 40;
/// Width of the legend strip on the right of each panel.
const KEY_WIDTH: u32 = 210;

/// How a legend entry is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stroke {
    Solid,
    Dashed,
    /// A filled swatch (a region of a map).
    Area,
}

/// One legend entry.
#[derive(Clone, Debug)]
pub struct Key {
    pub label: String,
    pub colour: RGBColor,
    pub stroke: Stroke,
}

impl Key {
    pub fn solid(label: impl Into<String>, colour: RGBColor) -> Key {
        Key {
            label: label.into(),
            colour,
            stroke: Stroke::Solid,
        }
    }
    pub fn area(label: impl Into<String>, colour: RGBColor) -> Key {
        Key {
            label: label.into(),
            colour,
            stroke: Stroke::Area,
        }
    }
    pub fn dashed(label: impl Into<String>, colour: RGBColor) -> Key {
        Key {
            label: label.into(),
            colour,
            stroke: Stroke::Dashed,
        }
    }
}

/// The family of a structure, which decides its panel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Family {
    Ours,
    Peers,
    OtherLanguages,
    Servers,
}

impl Family {
    fn of(id: &str) -> Family {
        match crate::registry::find(id) {
            Ok(k) if k.external().is_some() => Family::OtherLanguages,
            Ok(k) if k.remote() => Family::Servers,
            Ok(k) if k.peer() => Family::Peers,
            _ => Family::Ours,
        }
    }
    fn title(self) -> &'static str {
        match self {
            Family::Ours => "dedupbench's structures",
            Family::Peers => "peer crates",
            Family::OtherLanguages => "the articles' tools (Python, Java)",
            Family::Servers => "Redis backends",
        }
    }
}

/// One panel: its title and the structures it carries.
#[derive(Clone, Debug, PartialEq)]
pub struct Panel {
    pub title: String,
    pub ids: Vec<String>,
}

/// Splits `ids` (in report order) into panels by family, then into chunks of at most [`MAX_SERIES`].
pub fn panels(ids: &[String]) -> Vec<Panel> {
    let mut out = Vec::new();
    for family in [
        Family::Ours,
        Family::Peers,
        Family::OtherLanguages,
        Family::Servers,
    ] {
        let mine: Vec<String> = ids
            .iter()
            .filter(|id| Family::of(id) == family)
            .cloned()
            .collect();
        let chunks = mine.len().div_ceil(MAX_SERIES);
        for (i, chunk) in mine.chunks(MAX_SERIES).enumerate() {
            out.push(Panel {
                title: if chunks > 1 {
                    format!("{} ({} of {chunks})", family.title(), i + 1)
                } else {
                    family.title().to_string()
                },
                ids: chunk.to_vec(),
            });
        }
    }
    out
}

/// The image size of a chart of `count` panels.
pub fn size(count: usize) -> (u32, u32) {
    (WIDTH, TITLE_HEIGHT + PANEL_HEIGHT * count.max(1) as u32)
}

/// The image size of a panelled chart of the structures `ids_of(results)` would draw.
pub fn size_for(results: &Results, ids: impl Fn(&Results) -> Vec<String>) -> (u32, u32) {
    size(panels(&ids(results)).len())
}

/// Draws `title` over `area`, then one row per panel: `draw(plot_area, panel, keys)` draws the data and
/// pushes its legend entries, which are then drawn in the strip on the right.
pub fn draw_panels<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    panels: &[Panel],
    mut draw: impl FnMut(&DrawingArea<DB, Shift>, &Panel, &mut Vec<Key>) -> DrawResult,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let body = area.titled(title, ("sans-serif", 20))?;
    let rows = body.split_evenly((panels.len().max(1), 1));
    for (row, panel) in rows.iter().zip(panels) {
        let (w, _) = row.dim_in_pixel();
        let (plot, strip) = row.split_horizontally(w.saturating_sub(KEY_WIDTH));
        let mut keys = Vec::new();
        draw(&plot, panel, &mut keys)?;
        draw_keys(&strip, &keys)?;
    }
    Ok(())
}

/// Draws legend entries top-down in a strip of their own.
pub fn draw_keys<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, keys: &[Key]) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let font = ("sans-serif", 14).into_font();
    for (i, key) in keys.iter().enumerate() {
        let y = 30 + 22 * i as i32;
        let style = key.colour.stroke_width(2);
        match key.stroke {
            Stroke::Solid => {
                area.draw(&PathElement::new(vec![(4, y), (30, y)], style))?;
            }
            Stroke::Dashed => {
                for x in [4, 14, 24] {
                    area.draw(&PathElement::new(vec![(x, y), (x + 6, y)], style))?;
                }
            }
            Stroke::Area => {
                area.draw(&Rectangle::new(
                    [(4, y - 7), (30, y + 7)],
                    key.colour.filled(),
                ))?;
            }
        }
        area.draw(&Text::new(key.label.clone(), (36, y - 8), font.clone()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn every_structure_of_the_registry_lands_in_a_panel_of_at_most_eight() {
        let all: Vec<String> = crate::registry::ids()
            .into_iter()
            .map(String::from)
            .collect();
        let split = panels(&all);
        let mut seen: Vec<String> = split.iter().flat_map(|p| p.ids.clone()).collect();
        assert!(split
            .iter()
            .all(|p| !p.ids.is_empty() && p.ids.len() <= MAX_SERIES));
        seen.sort();
        let mut expected = all.clone();
        expected.sort();
        assert_eq!(seen, expected);
    }

    #[cfg(feature = "peers")]
    #[test]
    fn ours_and_peers_go_to_separate_panels() {
        let split = panels(&ids(&["bloom", "fastbloom", "blocked", "sbbf"]));
        assert_eq!(split.len(), 2);
        assert_eq!(split[0].ids, ids(&["bloom", "blocked"]));
        assert_eq!(split[1].ids, ids(&["fastbloom", "sbbf"]));
    }
}
