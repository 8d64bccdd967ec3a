//! Charts as inline SVG, built on the server (no JavaScript). Shapes that
//! SVG writes as `<line .../>` are written `<line ...></line>`, which HTML
//! parses the same.

use std::fmt::Write as _;

use croupier_store::web::HistoryPoint;

use crate::html::{html, Markup};

const W: f64 = 720.0;
const H: f64 = 260.0;
const LEFT: f64 = 44.0;
const RIGHT: f64 = 12.0;
const TOP: f64 = 14.0;
const BOTTOM: f64 = 28.0;

/// A coordinate with one decimal.
fn f1(v: f64) -> String {
    format!("{v:.1}")
}

/// Round tick values between `lo` and `hi`, at least `min_step` apart.
fn nice_ticks(lo: f64, hi: f64, min_step: f64) -> Vec<f64> {
    let span = (hi - lo).max(1e-9);
    let raw = span / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * mag)
        .find(|s| span / s <= 6.0)
        .unwrap_or(10.0 * mag)
        .max(min_step);
    let mut t = (lo / step).ceil() * step;
    let mut out = Vec::new();
    while t <= hi + 1e-9 && out.len() < 12 {
        out.push(t);
        t += step;
    }
    out
}

/// A tick value without a sign on zero (`-0` reads as a bug).
fn tick(t: f64) -> String {
    let r = t.round();
    if r == 0.0 {
        "0".into()
    } else {
        format!("{r:.0}")
    }
}

/// A small line of μ − 3σ over a bot's last games, for leaderboard rows:
/// green when it ends higher than it began, red when lower.
pub fn sparkline(points: &[HistoryPoint]) -> Markup {
    if points.len() < 2 {
        return html! {};
    }
    let (w, h) = (80.0, 20.0);
    let vals: Vec<f64> = points.iter().map(|p| p.mu - 3.0 * p.sigma).collect();
    let lo = vals.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let span = (hi - lo).max(1e-9);
    let n = vals.len();
    let mut pts = String::new();
    for (i, v) in vals.iter().enumerate() {
        let _ = write!(
            pts,
            "{:.1},{:.1} ",
            w * i as f64 / (n - 1) as f64,
            1.0 + (h - 2.0) * (hi - v) / span
        );
    }
    let colour = if vals[n - 1] >= vals[0] {
        "#1e7b45"
    } else {
        "#b3261e"
    };
    let label = format!(
        "μ − 3σ over the last {n} games: {:.1} to {:.1}",
        vals[0],
        vals[n - 1]
    );
    html! {
        svg class="spark" viewBox={ "0 0 " (w) " " (h) } width=(w) height=(h) role="img" aria-label=(label) {
            polyline points=(pts) fill="none" stroke=(colour) stroke-width="1.5" {}
        }
    }
}

/// A bot's rating over its last games: the mean as a line, ±σ as a band,
/// μ − 3σ dashed.
pub fn rating_chart(points: &[HistoryPoint], label: &str) -> Markup {
    if points.is_empty() {
        return html! { p class="empty" { "No rated games yet." } };
    }
    let lo = points
        .iter()
        .map(|p| p.mu - 3.0 * p.sigma)
        .fold(f64::INFINITY, f64::min);
    let hi = points
        .iter()
        .map(|p| p.mu + p.sigma)
        .fold(f64::NEG_INFINITY, f64::max);
    let (lo, hi) = if hi - lo < 1.0 {
        (lo - 0.5, hi + 0.5)
    } else {
        (lo, hi)
    };
    let n = points.len();
    let x = |i: usize| LEFT + (W - LEFT - RIGHT) * (i as f64) / ((n.max(2) - 1) as f64);
    let y = |v: f64| TOP + (H - TOP - BOTTOM) * (hi - v) / (hi - lo);
    let line = |f: &dyn Fn(&HistoryPoint) -> f64| polyline(points, &x, &y, f);
    html! {
        svg class="chart" viewBox={ "0 0 " (W) " " (H) } role="img" aria-label=(label) {
            (y_grid(lo, hi, &y))
            polygon points=(band(points, &x, &y)) fill="#0f5132" fill-opacity="0.12" {}
            polyline points=(line(&|p| p.mu - 3.0 * p.sigma)) fill="none" stroke="#b3261e" stroke-width="1.2" stroke-dasharray="4 3" {}
            polyline points=(line(&|p| p.mu)) fill="none" stroke="#0f5132" stroke-width="2" {}
            (x_labels(points, &x))
        }
    }
}

/// Horizontal grid lines with their values, for a y scale over `lo..hi`.
fn y_grid(lo: f64, hi: f64, y: &dyn Fn(f64) -> f64) -> Markup {
    html! {
        @for t in nice_ticks(lo, hi, 1.0) {
            line x1=(LEFT) x2=(W - RIGHT) y1=(f1(y(t))) y2=(f1(y(t))) stroke="#e3e0d8" {}
            text x=(LEFT - 6.0) y=(f1(y(t) + 4.0)) text-anchor="end" { (tick(t)) }
        }
    }
}

/// Up to six game labels along the x axis: the first and last game and
/// evenly spaced ones between, each anchored so it stays inside the chart.
fn x_labels(points: &[HistoryPoint], x: &dyn Fn(usize) -> f64) -> Markup {
    let n = points.len();
    let labels = if n == 1 { 1 } else { n.min(6) };
    html! {
        @for k in 0..labels {
            @let i = if labels == 1 { 0 } else { k * (n - 1) / (labels - 1) };
            @let anchor = match (k, labels - 1 - k) {
                (0, _) => "start",
                (_, 0) => "end",
                _ => "middle",
            };
            text x=(f1(x(i))) y=(H - 8.0) text-anchor=(anchor) { "#" (points[i].game_id) }
        }
    }
}

/// A polyline through `f` of each point.
fn polyline(
    points: &[HistoryPoint],
    x: &dyn Fn(usize) -> f64,
    y: &dyn Fn(f64) -> f64,
    f: &dyn Fn(&HistoryPoint) -> f64,
) -> String {
    let mut s = String::new();
    for (i, p) in points.iter().enumerate() {
        let _ = write!(s, "{:.1},{:.1} ", x(i), y(f(p)));
    }
    s
}

/// A ±σ band: upper edge forwards, lower edge backwards.
fn band(points: &[HistoryPoint], x: &dyn Fn(usize) -> f64, y: &dyn Fn(f64) -> f64) -> String {
    let mut band = String::new();
    for (i, p) in points.iter().enumerate() {
        let _ = write!(band, "{:.1},{:.1} ", x(i), y(p.mu + p.sigma));
    }
    for (i, p) in points.iter().enumerate().rev() {
        let _ = write!(band, "{:.1},{:.1} ", x(i), y(p.mu - p.sigma));
    }
    band
}

/// The two colours of [`pair_chart`], first bot then second.
pub const PAIR_COLOURS: [&str; 2] = ["#0f5132", "#8e3b6b"];

/// Two bots' ratings over their shared games (`a[i]` and `b[i]` hold the
/// ratings after the same game): each μ as a line with its ±σ band.
pub fn pair_chart(a: &[HistoryPoint], b: &[HistoryPoint], label: &str) -> Markup {
    let n = a.len().min(b.len());
    if n == 0 {
        return html! { p class="empty" { "No rated games together yet." } };
    }
    let (a, b) = (&a[..n], &b[..n]);
    let both = || a.iter().chain(b.iter());
    let lo = both().map(|p| p.mu - p.sigma).fold(f64::INFINITY, f64::min);
    let hi = both()
        .map(|p| p.mu + p.sigma)
        .fold(f64::NEG_INFINITY, f64::max);
    let (lo, hi) = if hi - lo < 1.0 {
        (lo - 0.5, hi + 0.5)
    } else {
        (lo, hi)
    };
    let x = |i: usize| LEFT + (W - LEFT - RIGHT) * (i as f64) / ((n.max(2) - 1) as f64);
    let y = |v: f64| TOP + (H - TOP - BOTTOM) * (hi - v) / (hi - lo);
    html! {
        svg class="chart" viewBox={ "0 0 " (W) " " (H) } role="img" aria-label=(label) {
            (y_grid(lo, hi, &y))
            @for (points, colour) in [(a, PAIR_COLOURS[0]), (b, PAIR_COLOURS[1])] {
                polygon points=(band(points, &x, &y)) fill=(colour) fill-opacity="0.10" {}
                polyline points=(polyline(points, &x, &y, &|p| p.mu)) fill="none" stroke=(colour) stroke-width="2" {}
            }
            (x_labels(a, &x))
        }
    }
}

/// Score margins as bars around a zero line, oldest game first: above for
/// the first bot's wins, below for its losses.
pub fn margin_strip(margins: &[i64], label: &str) -> Markup {
    // Room on the left for a label such as "−130" at a phone's label size.
    let (w, h, left) = (W, 90.0, 60.0);
    let max = margins.iter().map(|m| m.abs()).max().unwrap_or(0).max(1) as f64;
    let n = margins.len().max(1) as f64;
    let slot = (w - left - RIGHT) / n;
    let mid = h / 2.0;
    html! {
        svg class="chart strip" viewBox={ "0 0 " (w) " " (h) } role="img" aria-label=(label) {
            line x1=(left) x2=(w - RIGHT) y1=(mid) y2=(mid) stroke="#c9c4b6" {}
            // The top label hangs from the top edge, the bottom one sits on
            // the bottom edge: inside the chart whatever the label size.
            text x=(left - 6.0) y="2" dominant-baseline="hanging" text-anchor="end" { (format!("+{max:.0}")) }
            text x=(left - 6.0) y=(f1(mid)) dominant-baseline="central" text-anchor="end" { "0" }
            text x=(left - 6.0) y=(f1(h - 4.0)) text-anchor="end" { (format!("−{max:.0}")) }
            @for (i, m) in margins.iter().enumerate() {
                @let len = (mid - 8.0) * (*m as f64).abs() / max;
                @let (top, colour) = if *m >= 0 { (mid - len, "#1e7b45") } else { (mid, "#b3261e") };
                rect x=(f1(left + slot * i as f64 + 1.0)) y=(f1(top)) width=(f1((slot - 2.0).max(1.0))) height=(f1(len.max(1.0))) fill=(colour) {
                    title { (format!("{m:+}")) }
                }
            }
        }
    }
}

/// Stacked bars: `bars[i]` holds the count of each series in slot `i`;
/// `labels` name a few slots along the axis; on a phone only every other
/// label between the first and the last shows.
pub fn bar_chart(bars: &[Vec<i64>], colours: &[&str], labels: &[(usize, String)]) -> Markup {
    let max = bars
        .iter()
        .map(|b| b.iter().sum::<i64>())
        .max()
        .unwrap_or(0)
        .max(1) as f64;
    let n = bars.len().max(1) as f64;
    let slot = (W - LEFT - RIGHT) / n;
    let y = |v: f64| TOP + (H - TOP - BOTTOM) * (1.0 - v / max);
    // Each series' segment of each bar: (slot, bottom, top, colour, total).
    let mut segments = Vec::new();
    for (i, b) in bars.iter().enumerate() {
        let mut base = 0.0;
        let total: i64 = b.iter().sum();
        for (s, v) in b.iter().enumerate() {
            if *v <= 0 {
                continue;
            }
            let top = base + *v as f64;
            segments.push((
                i,
                base,
                top,
                colours.get(s).copied().unwrap_or("#888"),
                total,
            ));
            base = top;
        }
    }
    html! {
        svg class="chart" viewBox={ "0 0 " (W) " " (H) } role="img" aria-label="games per minute" {
            @for t in nice_ticks(0.0, max, 1.0) {
                line x1=(LEFT) x2=(W - RIGHT) y1=(f1(y(t))) y2=(f1(y(t))) stroke="#e3e0d8" {}
                text x=(LEFT - 6.0) y=(f1(y(t) + 4.0)) text-anchor="end" { (format!("{t:.0}")) }
            }
            @for (i, base, top, colour, total) in segments {
                rect x=(f1(LEFT + slot * i as f64 + 1.0)) y=(f1(y(top))) width=(f1((slot - 2.0).max(1.0))) height=(f1(y(base) - y(top))) fill=(colour) {
                    title { (total) " games" }
                }
            }
            // The first and last slots' labels are anchored at the chart's
            // edges, so that they stay inside it and clear of the y axis.
            @for (i, text) in labels {
                @let (x, anchor) = match *i {
                    0 => (LEFT, "start"),
                    i if i + 1 == bars.len() => (W - RIGHT, "end"),
                    i => (LEFT + slot * (i as f64 + 0.5), "middle"),
                };
                @let k = labels.iter().position(|l| l.0 == *i).unwrap_or(0);
                @let minor = anchor == "middle" && k % 2 == 1;
                text x=(f1(x)) y=(H - 8.0) text-anchor=(anchor) class=[minor.then_some("minor")] { (text) }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charts_are_svg_and_handle_single_points() {
        let one = [HistoryPoint {
            game_id: 3,
            mu: 25.0,
            sigma: 8.0,
        }];
        let svg = rating_chart(&one, "a <b>").into_string();
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
        assert!(!svg.contains("NaN") && svg.contains("a &lt;b&gt;"));
        let bars = bar_chart(
            &[vec![0, 0], vec![3, 1]],
            &["#111", "#222"],
            &[(1, "now".into())],
        )
        .into_string();
        assert!(bars.contains("<rect") && !bars.contains("NaN"));
        assert!(bar_chart(&[], &[], &[]).into_string().ends_with("</svg>"));
        // Counts get whole, distinct ticks.
        assert_eq!(nice_ticks(0.0, 3.0, 1.0), [0.0, 1.0, 2.0, 3.0]);
        assert_eq!(
            nice_ticks(0.0, 60.0, 1.0),
            [0.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0]
        );
    }

    #[test]
    fn rating_axes_read_zero_unsigned_and_label_several_games() {
        assert_eq!(tick(-0.2), "0");
        assert_eq!(tick(-5.0), "-5");
        // μ − 3σ around zero: the axis crosses 0 and must not say "-0".
        let points: Vec<HistoryPoint> = (0..40)
            .map(|i| HistoryPoint {
                game_id: 100 + i,
                mu: 25.0 + i as f64 * 0.1,
                sigma: 8.5 - i as f64 * 0.05,
            })
            .collect();
        let svg = rating_chart(&points, "r").into_string();
        assert!(!svg.contains(">-0<"), "{svg}");
        assert!(svg.contains(">0<"));
        assert_eq!(svg.matches(">#1").count(), 6, "six game labels");
        assert!(svg.contains(">#100<") && svg.contains(">#139<"));
        let pair = pair_chart(&points, &points[..20], "a and b").into_string();
        assert_eq!(pair.matches("<polyline").count(), 2, "one μ line per bot");
        assert!(
            pair.contains(">#119<") && !pair.contains(">#139<"),
            "shared games only"
        );
        assert!(pair_chart(&[], &points, "x")
            .into_string()
            .contains("No rated games"));
        let strip = margin_strip(&[10, -30, 5], "m").into_string();
        assert_eq!(strip.matches("<rect").count(), 3);
        assert!(strip.contains(">+30<") && strip.contains(">−30<") && strip.contains("#b3261e"));
        let spark = sparkline(&points).into_string();
        assert!(spark.starts_with("<svg class=\"spark\"") && spark.contains("#1e7b45"));
        assert!(sparkline(&points[..1]).into_string().is_empty());
    }
}
