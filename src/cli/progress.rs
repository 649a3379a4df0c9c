//! Progress bars for `bench` (indicatif): one bar for the cells, one for the phase under way, with ETA.

use dedupbench::run::Progress;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::sync::Mutex;

/// The bench's progress bars; hidden with `--quiet` or when stderr is not a terminal.
pub struct Bars {
    multi: MultiProgress,
    cells: ProgressBar,
    phase: Mutex<Option<ProgressBar>>,
}

impl Bars {
    pub fn new(quiet: bool, cells: u64) -> Self {
        let target = if quiet {
            ProgressDrawTarget::hidden()
        } else {
            ProgressDrawTarget::stderr()
        };
        let multi = MultiProgress::with_draw_target(target);
        let bar = multi.add(ProgressBar::new(cells));
        bar.set_style(
            ProgressStyle::with_template("cells {pos}/{len} [{elapsed_precise}] {wide_bar}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        Bars {
            multi,
            cells: bar,
            phase: Mutex::new(None),
        }
    }

    pub fn done(&self) {
        self.cells.finish_and_clear();
    }
}

impl Progress for Bars {
    fn cell_done(&self) {
        self.cells.inc(1);
    }

    fn start(&self, label: &str, total: u64) {
        let bar = self.multi.add(ProgressBar::new(total));
        bar.set_style(
            ProgressStyle::with_template("{msg:<48} {bar:30} {human_pos}/{human_len} eta {eta}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar.set_message(label.to_string());
        if let Ok(mut phase) = self.phase.lock() {
            *phase = Some(bar);
        }
    }

    fn advance(&self, steps: u64) {
        if let Ok(phase) = self.phase.lock() {
            if let Some(bar) = phase.as_ref() {
                bar.inc(steps);
            }
        }
    }

    fn finish(&self) {
        if let Ok(mut phase) = self.phase.lock() {
            if let Some(bar) = phase.take() {
                bar.finish_and_clear();
                self.multi.remove(&bar);
            }
        }
    }
}
