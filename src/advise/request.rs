//! One `advise` request answered whole: the expiry window's advice, the ranked structures with their
//! thresholds, the node plan, the recommended structures' speed verdicts from a run's `analysis.json`,
//! and the standing of the tool in use. The command line only parses into a [`Request`] and prints the
//! [`Answer`].

use super::rates::{price_rates, RateAsk, DEFAULT_FPR};
use super::{advise, Advice, Demand};
use crate::expiry::{advise_window, measured_skips, WindowAdvice, WindowTiming};
use crate::results::Results;
use crate::units::{KeyRange, WindowArg};
use crate::workload::Workload;
use crate::{Error, Result};
use std::path::{Path, PathBuf};

/// What `advise` was asked.
#[derive(Clone, Debug)]
pub struct Request {
    pub n: Option<KeyRange>,
    pub window: Option<WindowArg>,
    /// URLs let through per second, re-crawls included (turns a duration window into admissions).
    pub admissions_per_sec: Option<f64>,
    /// The rate asked (`--fpr`): one, a range the table spans, or none.
    pub rate: RateAsk,
    /// The workload: what the structure is asked to do.
    pub workload: Workload,
    /// What one false positive costs, in nanoseconds: the cost model picks the size and so the rate.
    pub fp_cost_ns: Option<f64>,
    pub memory_bytes: u64,
    pub deletes: bool,
    pub growth_unknown: bool,
    pub shared: bool,
    /// A bench run's folder (or its `results.jsonl`) whose measurements to use.
    pub results: Option<PathBuf>,
    /// The structure in use today, to set beside the advice.
    pub current: Option<String>,
    pub node_memory_bytes: u64,
    pub inserts_per_sec: Option<f64>,
    /// The machines that crawl, when more than this one (`--machines`).
    pub fleet: Option<super::fleet::Fleet>,
    /// Whether a regime map was asked for (`--map`).
    pub map: bool,
}

/// The answer: the window's advice when a window was given, the structures' when keys were.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Answer {
    pub window: Option<WindowAdvice>,
    pub advice: Option<Advice>,
    /// The run read, with the label it is quoted by.
    #[serde(skip)]
    pub run: Option<(Results, String)>,
    #[serde(skip)]
    pub workload: Option<Demand>,
}

/// Answers `request`.
pub fn answer(request: &Request) -> Result<Answer> {
    let window_fpr = match request.rate {
        RateAsk::Fixed { fpr } => fpr,
        RateAsk::Default => DEFAULT_FPR,
        RateAsk::Range { .. } if request.window.is_some() => {
            return Err(Error::invalid(
                "--fpr",
                "a window is advised at one rate: give --fpr P, not a range",
            ))
        }
        RateAsk::Range { high, .. } => high,
    };
    if let Some(arg) = &request.window {
        return window_answer(request, arg, window_fpr);
    }
    if request.workload == Workload::Window && request.window.is_none() {
        return Err(Error::invalid(
            "--workload",
            "the window workload needs --window (a count of URLs or a duration with --admissions-per-sec)",
        ));
    }
    if request.fp_cost_ns.is_some() && matches!(request.rate, RateAsk::Fixed { .. }) {
        return Err(Error::invalid(
            "--fp-cost",
            "picks the rate: give --fpr LOW..HIGH to bound it, or --fpr P without --fp-cost",
        ));
    }
    if request.fp_cost_ns.is_some() && request.n.is_none() {
        return Err(Error::invalid(
            "--fp-cost",
            "needs --n: the cost model sizes structures for n keys",
        ));
    }
    let Some(KeyRange { low, high }) = request.n else {
        return Err(Error::invalid(
            "--n",
            "give N or LOW..HIGH (or --window alone)",
        ));
    };
    let mut workload = Demand {
        n_low: low,
        n_high: high,
        fpr: DEFAULT_FPR,
        memory_bytes: request.memory_bytes,
        deletes: request.deletes,
        growth_unknown: request.growth_unknown,
        shared: request.shared,
        workload: request.workload,
    };
    let run = match &request.results {
        Some(dir) => Some((
            crate::results::read_results(dir)?,
            dir.display().to_string(),
        )),
        None => None,
    };
    let run_ref = || run.as_ref().map(|(r, label)| (r, label.as_str()));
    let cost = request
        .fp_cost_ns
        .map(|fp_cost_ns| super::costs(&workload, fp_cost_ns, run_ref()));
    workload.validate()?;
    let prices = price_rates(&workload, request.rate, cost.as_ref(), run_ref())?;
    workload.fpr = prices.picked_fpr;
    let mut advice = advise(&workload, run.as_ref().map(|(r, label)| (r, label.clone())))?;
    if cost.is_some() && run.is_none() {
        advice.notes.push(
            "--fp-cost without --results: no lookup time is known, so the cost model would always take the largest size in the budget; the rate is the headroom's pick instead (give --results DIR)"
                .into(),
        );
    }
    advice.rates = Some(prices);
    advice.cost = cost;
    if request
        .inserts_per_sec
        .is_some_and(|r| !(r.is_finite() && r > 0.0))
    {
        return Err(Error::invalid(
            "--inserts-per-sec",
            "must be a positive number",
        ));
    }
    if request.node_memory_bytes == 0 {
        return Err(Error::invalid("--node-memory", "must be more than 0 bytes"));
    }
    advice.nodes = Some(crate::analysis::nodes::node_plan(
        workload.n_high,
        workload.fpr,
        request.node_memory_bytes,
        request.inserts_per_sec,
        run.as_ref().map(|(r, label)| (r, label.as_str())),
    ));
    if let Some(fleet) = &request.fleet {
        if workload.workload != Workload::Crawl {
            return Err(Error::invalid(
                "--machines",
                format!(
                    "the fleet is priced for a crawl (URLs split between machines); not for --workload {}",
                    workload.workload
                ),
            ));
        }
        advice.fleet = Some(super::fleet::plan(
            &workload,
            fleet,
            request.rate,
            request.node_memory_bytes,
            run_ref(),
        )?);
    }
    if let Some(dir) = &request.results {
        advice.speed_ratios = speed_of_recommended(dir, &mut advice)?;
    }
    if let (Some(id), Some((results, _))) = (&request.current, &run) {
        advice.current = Some(super::current_tool(&workload, results, id)?);
    }
    Ok(Answer {
        window: None,
        advice: Some(advice),
        run,
        workload: Some(workload),
    })
}

/// The window's answer: a window is advised alone, per process; flags it would ignore are refused.
fn window_answer(request: &Request, arg: &WindowArg, fpr: f64) -> Result<Answer> {
    let refused = [
        (request.shared, "--shared", "windows are per process: each worker's windowed filter forgets on its own count of admissions, and no filter shared on Redis forgets (partition the URLs between workers, one window each)"),
        (request.deletes, "--deletes", "a window forgets by itself; --deletes is for the structures advised with --n alone"),
        (request.growth_unknown, "--growth", "a window holds W admissions whatever the crawl's size"),
        (request.fleet.is_some(), "--machines", "the fleet is priced for a crawl without a window"),
        (request.fp_cost_ns.is_some(), "--fp-cost", "the cost model prices structures advised with --n alone"),
        (request.inserts_per_sec.is_some(), "--inserts-per-sec", "sizes a shared filter's nodes; windows are per process"),
        (request.map, "--map", "the regime map is drawn for structures advised with --n alone"),
        (request.current.is_some(), "--current", "the tool in use is set beside the structures advised with --n alone"),
        (!matches!(request.workload, Workload::Window | Workload::Crawl), "--workload", "a window is the window workload"),
    ];
    if let Some((_, flag, why)) = refused.iter().find(|(given, _, _)| *given) {
        return Err(Error::invalid(
            *flag,
            format!("is not taken with --window: {why}"),
        ));
    }
    let live = request.n.map(|r| r.high);
    // A duration without a rate: with --n, every live URL comes back once per window.
    let rate = match (request.admissions_per_sec, arg.seconds(), live) {
        (Some(rate), _, _) => Some(rate),
        (None, Some(seconds), Some(n)) => Some(n as f64 / seconds),
        _ => None,
    };
    let mut advice = advise_window(arg.urls(rate)?, fpr, request.memory_bytes as f64);
    if let Some(rate) = rate {
        let seconds = advice.window_keys as f64 / rate;
        advice.timing = Some(WindowTiming {
            admissions_per_sec: rate,
            window_seconds: seconds,
            lag_seconds: advice.lag_admissions as f64 / rate,
        });
    }
    if let (Some(n), Some(seconds), Some(rate)) = (live, arg.seconds(), rate) {
        let floor = n as f64 / seconds;
        if rate < floor * 0.999 {
            return Err(Error::invalid(
                "--admissions-per-sec",
                format!(
                    "{rate:.2}/s is below the {floor:.0}/s that {} live URLs each re-crawled once per {} admit; at {rate:.2}/s a window of {} admissions passes in {}. Give the rate of every URL let through (re-crawls included), or leave it out to take n per window",
                    crate::units::human_count(n as f64),
                    crate::units::human_seconds(seconds),
                    crate::units::human_count((seconds * rate).round()),
                    crate::units::human_seconds(seconds * rate / floor)
                ),
            ));
        }
        // Every live URL comes back one window after its admission: exactly when the windowed filter
        // may still hold it.
        let lag = advice.lag_admissions as f64;
        advice.notes.push(format!(
            "re-crawled every {}, each URL comes back when its window ends, while the windowed filter may still hold it for up to {} more: a due re-crawl is skipped until then. A window shorter by one generation ({}) lets URLs back up to a generation early instead",
            crate::units::human_seconds(seconds),
            crate::units::human_seconds(lag / rate),
            crate::units::human_seconds((advice.window_keys as f64 - lag).max(0.0) / rate)
        ));
    }
    if let (Some(n), WindowArg::Urls(w)) = (live, arg) {
        if *w < n {
            advice.notes.push(format!(
                "a window of {} admissions is shorter than one pass over {} live URLs: a URL re-crawled once a pass is always past its window",
                crate::units::human_count(*w as f64),
                crate::units::human_count(n as f64)
            ));
        }
    }
    if matches!(request.rate, RateAsk::Default) {
        advice.notes.push(format!(
            "p = {}: the default for a window (--fpr P sets it)",
            crate::units::human_rate(fpr)
        ));
    }
    let run = match &request.results {
        Some(dir) => Some((
            crate::results::read_results(dir)?,
            dir.display().to_string(),
        )),
        None => None,
    };
    if let Some((results, _)) = &run {
        advice.measured = measured_skips(results);
    }
    Ok(Answer {
        window: Some(advice),
        advice: None,
        run,
        workload: None,
    })
}

/// The paired speed ratios of the recommended structures, read from `dir`'s `analysis.json` (written by
/// `bench` and `report`; for an older folder without one, a note says how to write it): those that carry
/// a target, at the analysis's headline size (the speed group nearest 10⁷ keys).
fn speed_of_recommended(
    dir: &Path,
    advice: &mut Advice,
) -> Result<Vec<crate::analysis::SpeedRatio>> {
    use crate::analysis::{Analysis, ANALYSIS_FILE};
    // --results takes a folder or its results.jsonl; analysis.json sits beside the latter.
    let dir = if dir.is_file() {
        dir.parent().unwrap_or(Path::new("."))
    } else {
        dir
    };
    if !dir.join(ANALYSIS_FILE).is_file() {
        advice.notes.push(format!(
            "{} holds no {ANALYSIS_FILE} (a run from before it was written), so no speed verdict is shown; `dedupbench report {}` writes it",
            dir.display(),
            dir.display()
        ));
        return Ok(Vec::new());
    }
    let analysis = Analysis::read(dir)?;
    Ok(analysis
        .headline()
        .filter(|q| advice.recommended.iter().any(|c| c.id == q.ours))
        .cloned()
        .collect())
}
