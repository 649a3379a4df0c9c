//! Straight-line fits of a structure's measured bytes against n, and where they cross a budget: the one
//! fit every reader (the memory figure, its verdict, the regime ladder) uses.

use crate::results::Results;

/// A straight line bytes = intercept + per_key·n fitted (least squares) to a structure's measured cells.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BytesFit {
    pub intercept_bytes: f64,
    pub bytes_per_key: f64,
    /// Measured cells the line is fitted to.
    pub points: usize,
}

impl BytesFit {
    /// Projected bytes at n keys.
    pub fn at(&self, n: f64) -> f64 {
        self.intercept_bytes + self.bytes_per_key * n
    }
    /// Keys at which the projection reaches `bytes`.
    pub fn keys_at(&self, bytes: f64) -> f64 {
        (bytes - self.intercept_bytes) / self.bytes_per_key
    }
}

/// Fits bytes against n over a structure's measured cells of at least 10⁵ keys (smaller ones are all
/// constant overhead); `None` with fewer than two such cells. With one cell, use its ratio instead.
pub fn fit_bytes(results: &Results, id: &str) -> Option<BytesFit> {
    let points: Vec<(f64, f64)> = results
        .cells
        .iter()
        .filter(|c| c.structure == id && c.n >= 100_000)
        .map(|c| (c.n as f64, c.heap_footprint_bytes as f64))
        .collect();
    if points.len() < 2 {
        return None;
    }
    let k = points.len() as f64;
    let (mx, my) = (
        points.iter().map(|p| p.0).sum::<f64>() / k,
        points.iter().map(|p| p.1).sum::<f64>() / k,
    );
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    if sxx <= 0.0 {
        return None;
    }
    let slope = sxy / sxx;
    (slope > 0.0).then_some(BytesFit {
        intercept_bytes: my - slope * mx,
        bytes_per_key: slope,
        points: points.len(),
    })
}

/// The line of a structure's measured bytes: fitted over its cells of ≥ 10⁵ keys, or through the origin
/// and its largest cell when fewer than two qualify (`points` = 1). `None` without a measured cell.
pub fn measured_line(results: &Results, id: &str) -> Option<BytesFit> {
    if let Some(fit) = fit_bytes(results, id) {
        return Some(fit);
    }
    let cell = results
        .cells
        .iter()
        .filter(|c| c.structure == id)
        .max_by_key(|c| c.n)?;
    Some(BytesFit {
        intercept_bytes: 0.0,
        bytes_per_key: cell.heap_footprint_bytes as f64 / cell.n as f64,
        points: 1,
    })
}

/// Exact-set crossover: the n at which a structure's measured line reaches `budget`. Returns (n, bytes
/// per key).
pub fn exact_crossover(results: &Results, id: &str, budget: f64) -> Option<(f64, f64)> {
    let line = measured_line(results, id)?;
    Some((line.keys_at(budget), line.bytes_per_key))
}
