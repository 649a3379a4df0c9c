//! The page's markup: the templates of `templates/` (compiled in), rendered by one minijinja environment.
//!
//! Invariants: every value a template prints is escaped here, by the environment's formatter, and nowhere
//! else: `&`, `<`, `>` and `"` (the set the page has always used; minijinja's own HTML escaping also
//! rewrites `'` and `/`, which would change every committed page). Only [`markup`] — HTML this module
//! rendered — passes unescaped. Block tags on their own lines leave no blank line (`trim_blocks`,
//! `lstrip_blocks`) and a template's last newline is kept, so a template reads like the lines it writes.
//! A missing variable is an error, never an empty string.

use crate::{Error, Result};
use minijinja::value::{Serde, Value};
use minijinja::{AutoEscape, Environment, UndefinedBehavior};
use std::sync::OnceLock;

/// `(name, source)` of each named file of `templates/`, compiled in.
macro_rules! templates {
    ($($name:literal),* $(,)?) => {
        &[$(($name, include_str!(concat!("../../templates/", $name)))),*]
    };
}

/// Every template, by name; `.html` ones are escaped.
const TEMPLATES: &[(&str, &str)] = templates![
    "page.html",
    "answer.html",
    "targets.html",
    "hashes.html",
    "external.html",
    "dedup_cli.html",
    "shared.html",
    "speed.html",
    "figures/memory.html",
    "figures/rates.html",
    "figures/points.html",
    "figures/churn.html",
    "figures/shipping.html",
    "figures/saturation.html",
    "figures/expiry.html",
    "figures/throughput.html",
];

/// The page's style sheet, one rule per line; the page holds it on one line.
const CSS: &str = include_str!("../../templates/report.css");

/// The environment with every template, built once (a template that does not parse: its name and why).
fn environment() -> Result<&'static Environment<'static>> {
    static ENVIRONMENT: OnceLock<std::result::Result<Environment<'static>, (String, String)>> =
        OnceLock::new();
    ENVIRONMENT
        .get_or_init(|| {
            let mut env = Environment::new();
            let syntax = minijinja::syntax::SyntaxConfig::builder()
                .trim_blocks(true)
                .lstrip_blocks(true)
                .keep_trailing_newline(true)
                .build()
                .map_err(|e| ("syntax".to_string(), format!("{e:#}")))?;
            env.set_syntax(syntax);
            env.set_undefined_behavior(UndefinedBehavior::Strict);
            env.set_formatter(|out, state, value| {
                if *state.auto_escape() == AutoEscape::Html && !value.is_safe() {
                    let text = match value.as_str() {
                        Some(text) => escape(text),
                        None => escape(&value.to_string()),
                    };
                    out.write_str(&text).map_err(minijinja::Error::from)
                } else {
                    minijinja::escape_formatter(out, state, value)
                }
            });
            for (name, source) in TEMPLATES {
                env.add_template(name, source)
                    .map_err(|e| (name.to_string(), format!("{e:#}")))?;
            }
            Ok(env)
        })
        .as_ref()
        .map_err(|(name, message)| Error::Template {
            name: name.clone(),
            message: message.clone(),
        })
}

/// `text` with the characters HTML gives meaning to escaped.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
    out
}

/// Renders the template `name` with the fields of `view`.
pub(super) fn render(name: &str, view: &impl serde::Serialize) -> Result<String> {
    let failed = |e: minijinja::Error| Error::Template {
        name: name.to_string(),
        message: format!("{e:#}"),
    };
    environment()?
        .get_template(name)
        .map_err(failed)?
        .render(Value::from(Serde(view)))
        .map_err(failed)
}

/// HTML rendered by [`render`], to place in another template as it is.
pub(super) fn markup(html: String) -> Value {
    Value::from_safe_string(html)
}

/// The style sheet as the page holds it: its lines joined.
pub(super) fn css() -> Value {
    Value::from_safe_string(CSS.lines().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_escaped_once_and_markup_is_not() {
        let mut env = environment().unwrap().clone();
        env.add_template("t.html", "{{ text }}|{{ html }}").unwrap();
        let out = env
            .get_template("t.html")
            .unwrap()
            .render(minijinja::context! {
                text => "a < b & \"c\" it's x/y",
                html => markup("<b>&amp;</b>".into()),
            })
            .unwrap();
        assert_eq!(out, "a &lt; b &amp; &quot;c&quot; it's x/y|<b>&amp;</b>");
    }

    #[test]
    fn a_missing_variable_is_an_error() {
        let mut env = environment().unwrap().clone();
        env.add_template("t.html", "{{ nothing }}").unwrap();
        assert!(env.get_template("t.html").unwrap().render(()).is_err());
    }
}
