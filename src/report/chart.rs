//! Shared drawing helpers: palette, log ranges, rendering one figure to PNG and SVG.

use crate::{Error, Result};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;

/// Pixel size of every chart.
pub const SIZE: (u32, u32) = (960, 600);

/// The error type chart functions return.
pub type DrawResult = std::result::Result<(), Box<dyn std::error::Error>>;

/// One figure of the report.
pub trait Figure {
    /// File stem of the images.
    fn stem(&self) -> &'static str;
    /// Title shown above the chart and in the HTML.
    fn title(&self) -> &'static str;
    /// Pixel size of the images (charts split into panels are taller).
    fn size(&self, _results: &crate::results::Results) -> (u32, u32) {
        SIZE
    }
    /// Draws the figure; must not panic on empty or partial data.
    fn draw<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        results: &crate::results::Results,
    ) -> DrawResult
    where
        DB::ErrorType: 'static;
    /// The plain-language verdict under the figure, computed from the results.
    fn verdict(&self, results: &crate::results::Results) -> String;
    /// Tables of the numbers behind the figure (HTML rendered from its template; empty: none).
    fn tables(&self, _results: &crate::results::Results) -> Result<String> {
        Ok(String::new())
    }
}

/// Renders a figure as `stem.png` and `stem.svg` in `dir`.
pub fn render<F: Figure>(dir: &Path, figure: &F, results: &crate::results::Results) -> Result<()> {
    let chart_error = |e: Box<dyn std::error::Error>| Error::Chart {
        chart: figure.stem().to_string(),
        message: e.to_string(),
    };
    let png = dir.join(format!("{}.png", figure.stem()));
    {
        let area = BitMapBackend::new(&png, figure.size(results)).into_drawing_area();
        area.fill(&WHITE).map_err(|e| chart_error(e.into()))?;
        figure.draw(&area, results).map_err(chart_error)?;
        area.present().map_err(|e| chart_error(e.into()))?;
    }
    let svg = dir.join(format!("{}.svg", figure.stem()));
    {
        let area = SVGBackend::new(&svg, figure.size(results)).into_drawing_area();
        area.fill(&WHITE).map_err(|e| chart_error(e.into()))?;
        figure.draw(&area, results).map_err(chart_error)?;
        area.present().map_err(|e| chart_error(e.into()))?;
    }
    Ok(())
}

/// A stable colour per structure id (registry order): the same structure has the same colour on every
/// chart, and no two registered in-process structures or Redis backends share one (black is the target's).
pub fn colour(id: &str) -> RGBColor {
    const PALETTE: &[RGBColor] = &[
        RGBColor(31, 119, 180),
        RGBColor(255, 127, 14),
        RGBColor(44, 160, 44),
        RGBColor(214, 39, 40),
        RGBColor(148, 103, 189),
        RGBColor(140, 86, 75),
        RGBColor(227, 119, 194),
        RGBColor(127, 127, 127),
        RGBColor(188, 189, 34),
        RGBColor(23, 190, 207),
        RGBColor(128, 0, 64),
        RGBColor(120, 60, 0),
        RGBColor(0, 90, 90),
        RGBColor(255, 200, 0),
        RGBColor(90, 0, 150),
        RGBColor(0, 150, 100),
        RGBColor(180, 120, 0),
        RGBColor(0, 100, 0),
        RGBColor(200, 60, 120),
        RGBColor(70, 130, 70),
        RGBColor(100, 100, 255),
        RGBColor(90, 90, 40),
        RGBColor(160, 40, 200),
        RGBColor(178, 24, 43),
        RGBColor(0, 60, 140),
    ];
    // Each language's tools in one colour family: Python blues, Java oranges.
    const PYTHON: &[RGBColor] = &[
        RGBColor(8, 48, 107),
        RGBColor(33, 113, 181),
        RGBColor(107, 174, 214),
        RGBColor(0, 128, 128),
        RGBColor(65, 105, 225),
    ];
    const JAVA: &[RGBColor] = &[RGBColor(230, 85, 13), RGBColor(253, 141, 60)];
    if let Some(language) = crate::registry::find(id)
        .ok()
        .and_then(|k| k.external())
        .map(|e| e.language)
    {
        let family = match language {
            crate::kind::Language::Python => PYTHON,
            crate::kind::Language::Java => JAVA,
        };
        let index = crate::registry::external_kinds()
            .filter(|k| k.external().is_some_and(|e| e.language == language))
            .position(|k| k.id() == id)
            .unwrap_or(0);
        return family[index % family.len()];
    }
    let index = crate::registry::ids()
        .iter()
        .position(|i| *i == id)
        .unwrap_or_else(|| id.bytes().map(|b| b as usize).sum::<usize>() % PALETTE.len());
    PALETTE[index % PALETTE.len()]
}

/// A log-axis range covering `values` (positive ones), padded to whole decades.
pub fn log_range(values: impl IntoIterator<Item = f64>) -> std::ops::Range<f64> {
    let (mut low, mut high) = (f64::INFINITY, 0.0f64);
    for v in values.into_iter().filter(|v| *v > 0.0 && v.is_finite()) {
        low = low.min(v);
        high = high.max(v);
    }
    if !low.is_finite() || high <= 0.0 {
        return 1.0..10.0;
    }
    let low = 10f64.powf(low.log10().floor());
    let mut high = 10f64.powf(high.log10().ceil());
    if high <= low {
        high = low * 10.0;
    }
    low..high
}

/// Writes a centred message on an empty chart.
pub fn empty<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    message: &str,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let (w, h) = area.dim_in_pixel();
    area.draw(&Text::new(
        title.to_string(),
        (20, 20),
        ("sans-serif", 24).into_font(),
    ))?;
    area.draw(&Text::new(
        message.to_string(),
        (w as i32 / 2 - 150, h as i32 / 2),
        ("sans-serif", 18).into_font(),
    ))?;
    Ok(())
}

/// Formats an axis value in engineering style (1k, 10M; below 1, 1e-3: rates have [`rate_label`]).
pub fn axis_label(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    if v >= 1000.0 {
        return crate::units::human_count(v);
    }
    if v >= 1.0 {
        return format!("{v:.0}");
    }
    format!("{v:.0e}")
}

/// Formats bytes on an axis in IEC units, as the page does ("1 GiB", "256 MiB", "1.5 TiB"); byte axes
/// on a log scale put their ticks on powers of two ([`YAxis::Bytes`]), so the labels come out round.
pub fn bytes_label(v: f64) -> String {
    trim_number(&crate::units::human_bytes(v))
}

/// Formats a rate on an axis: [`crate::units::human_rate`]'s rule, trailing zeros dropped ("1%",
/// "0.1%", "10 per million").
pub fn rate_label(v: f64) -> String {
    trim_number(&crate::units::human_rate(v))
}

/// `text` with trailing zeros after the decimal point of its leading number dropped ("1.50 GiB" →
/// "1.5 GiB", "1.00%" → "1%").
pub fn trim_number(text: &str) -> String {
    let end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, rest) = text.split_at(end);
    if number.contains('.') {
        format!(
            "{}{rest}",
            number.trim_end_matches('0').trim_end_matches('.')
        )
    } else {
        text.to_string()
    }
}

/// The IEC unit a linear byte axis reading up to `top_bytes` is drawn in: its size in bytes and name
/// (ticks then fall on round numbers of that unit).
pub fn bytes_unit(top_bytes: f64) -> (f64, &'static str) {
    let units = [
        (1099511627776.0, "TiB"),
        (1073741824.0, "GiB"),
        (1048576.0, "MiB"),
        (1024.0, "KiB"),
    ];
    units
        .into_iter()
        .find(|(size, _)| top_bytes >= *size)
        .unwrap_or((1.0, "B"))
}

/// What a chart's y axis holds: how its ticks are labelled, and on a log scale where they fall.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum YAxis {
    /// Counts, times, bits: engineering style ([`axis_label`]), ticks on powers of ten.
    Plain,
    /// False-positive rates ([`rate_label`]), ticks on powers of ten.
    Rate,
    /// Bytes ([`bytes_label`]), ticks on powers of two.
    Bytes,
}

impl YAxis {
    /// The tick label of `v`.
    pub fn label(self, v: f64) -> String {
        match self {
            YAxis::Plain => axis_label(v),
            YAxis::Rate => rate_label(v),
            YAxis::Bytes => bytes_label(v),
        }
    }

    /// The base of a log axis's ticks.
    pub fn log_base(self) -> f64 {
        match self {
            YAxis::Bytes => 2.0,
            YAxis::Plain | YAxis::Rate => 10.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axis_labels_share_the_pages_units() {
        assert_eq!(bytes_label((1u64 << 30) as f64), "1 GiB");
        assert_eq!(bytes_label(1.5 * (1u64 << 20) as f64), "1.5 MiB");
        assert_eq!(bytes_label(256.0 * (1u64 << 20) as f64), "256 MiB");
        assert_eq!(rate_label(0.01), "1%");
        assert_eq!(rate_label(1e-3), "0.1%");
        assert_eq!(rate_label(1e-5), "10 per million");
        assert_eq!(rate_label(1e-6), "1 per million");
        assert_eq!(bytes_unit(3e9), (1073741824.0, "GiB"));
        assert_eq!(bytes_unit(10.0), (1.0, "B"));
    }

    #[test]
    fn registered_structures_have_distinct_colours_and_none_is_black() {
        let ids: Vec<&str> = crate::registry::ids()
            .into_iter()
            .filter(|id| crate::registry::find(id).is_ok_and(|k| k.external().is_none()))
            .collect();
        for (i, a) in ids.iter().enumerate() {
            assert_ne!(colour(a), plotters::style::BLACK, "{a}");
            for b in &ids[i + 1..] {
                assert_ne!(colour(a), colour(b), "{a} and {b}");
            }
        }
    }
}
