//! The shipped filter: each savable structure's file on the wire (bits per key) beside its save and load
//! times, and whether the loaded copy answered as the saved one.

use super::*;

pub struct Shipping;

impl Figure for Shipping {
    fn stem(&self) -> &'static str {
        "shipping"
    }
    fn title(&self) -> &'static str {
        "Shipped filter: bits per key on the wire (labels: save / load milliseconds)"
    }
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>, r: &Results) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        if r.shipping.is_empty() {
            return empty(
                area,
                self.title(),
                "the shipping experiment did not run (bench --workload shipped runs it)",
            );
        }
        let bits =
            |s: &crate::results::ShippingRecord| s.file_bytes as f64 * 8.0 / s.n.max(1) as f64;
        let top = r.shipping.iter().map(bits).fold(0.0, f64::max) * 1.25;
        let count = r.shipping.len() as f64;
        let mut chart = ChartBuilder::on(area)
            .caption(self.title(), ("sans-serif", 20))
            .margin(15)
            .x_label_area_size(30)
            .y_label_area_size(70)
            .build_cartesian_2d(0.0..count, 0.0..top.max(1.0))?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .y_desc("bits per key in the file")
            .label_style(("sans-serif", 14))
            .draw()?;
        for (i, s) in r.shipping.iter().enumerate() {
            let x0 = i as f64 + 0.15;
            chart.draw_series(std::iter::once(Rectangle::new(
                [(x0, 0.0), (x0 + 0.7, bits(s))],
                colour(&s.structure).filled(),
            )))?;
            for (line, text) in [
                s.structure.clone(),
                format!("{:.1} / {:.1} ms", s.save_ms, s.load_ms),
            ]
            .into_iter()
            .enumerate()
            {
                chart.draw_series(std::iter::once(Text::new(
                    text,
                    (x0, bits(s) + top * (0.08 - 0.04 * line as f64)),
                    ("sans-serif", 12).into_font(),
                )))?;
            }
        }
        Ok(())
    }
    fn verdict(&self, r: &Results) -> String {
        let Some(smallest) = r.shipping.iter().min_by(|a, b| {
            (a.file_bytes as f64 / a.n.max(1) as f64)
                .total_cmp(&(b.file_bytes as f64 / b.n.max(1) as f64))
        }) else {
            return "The shipping experiment did not run (bench --workload shipped runs it)."
                .into();
        };
        let differing: u64 = r.shipping.iter().map(|s| s.answers_differing).sum();
        format!(
            "Of the {} structures that can be saved, {} ships the fewest bytes at the run's rate: {} for {} keys ({:.1} bits per key), saved in {:.0} ms and loaded in {:.0} ms. {}",
            r.shipping.len(),
            smallest.structure,
            human_bytes(smallest.file_bytes as f64),
            human_count(smallest.n as f64),
            smallest.file_bytes as f64 * 8.0 / smallest.n.max(1) as f64,
            smallest.save_ms,
            smallest.load_ms,
            if differing == 0 {
                "Every loaded copy answered every compared key as the saved one did.".to_string()
            } else {
                format!("{differing} answers of loaded copies DIFFERED from the saved ones.")
            }
        )
    }
    fn tables(&self, r: &Results) -> Result<String> {
        #[derive(serde::Serialize)]
        struct Row<'a> {
            structure: &'a str,
            n: String,
            file: String,
            bits_per_key: String,
            held: String,
            build_ns: String,
            save_ms: String,
            load_ms: String,
            keys_compared: u64,
            differing: u64,
        }
        #[derive(serde::Serialize)]
        struct Rows<'a> {
            rows: Vec<Row<'a>>,
        }
        let rows = r
            .shipping
            .iter()
            .map(|s| Row {
                structure: &s.structure,
                n: human_count(s.n as f64),
                file: human_bytes(s.file_bytes as f64),
                bits_per_key: format!("{:.2}", s.file_bytes as f64 * 8.0 / s.n.max(1) as f64),
                held: human_bytes(s.bytes_held as f64),
                build_ns: format!("{:.1}", s.build_ns_per_key),
                save_ms: format!("{:.1}", s.save_ms),
                load_ms: format!("{:.1}", s.load_ms),
                keys_compared: s.keys_compared,
                differing: s.answers_differing,
            })
            .collect();
        template::render("figures/shipping.html", &Rows { rows })
    }
}
